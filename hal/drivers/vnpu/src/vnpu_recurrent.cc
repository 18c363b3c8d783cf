// SPDX-License-Identifier: Apache-2.0
// RECURRENT (stream 1.8): ONNX LSTM and GRU with the default activations on
// a validated stream, the CPU kernel's algorithm (runtime/src/kernels/
// rnn.cc): per direction, X times W^T for every step in one Sgemm into the
// workspace, then per step H_{t-1} times R^T (uk::SgemmBt) and the gates row
// by row, sigmoid and tanh
// on the micro-kernels' rows. Steps are serial by nature: one worker slot.
#include <cstring>

#include "conv/plan.h"
#include "epctx_uk/elementwise.h"
#include "epctx_uk/sgemm.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {

void Sigmoid(float* x, int64_t n) { uk::ActivateRow(uk::Act::kSigmoid, x, x, n, 1.f, 0.f); }
void Tanh(float* x, int64_t n) { uk::ActivateRow(uk::Act::kTanh, x, x, n, 1.f, 0.f); }

struct Sizes {
  int64_t S, B, I, H, G, D;
};
Sizes SizesOf(const fb::Recurrent* c) {
  return {int64_t(c->seq()),
          int64_t(c->batch()),
          int64_t(c->input()),
          int64_t(c->hidden()),
          c->cell() == fb::RecurrentCell::LSTM ? 4 : 3,
          int64_t(c->directions())};
}

}  // namespace

uint64_t RecurrentWorkFloats(const fb::Recurrent* c) {
  const Sizes z = SizesOf(c);
  const int64_t GH = z.G * z.H;
  const uint64_t ws = uk::SgemmWorkspaceFloats(z.S * z.B, GH, z.I);
  const uint64_t ws2 = uk::SgemmWorkspaceFloats(z.B, GH, z.H);
  // xw [S*B][GH], hr [B][GH], h, c, tmp, hh [B][H] each, the Sgemm's.
  return uint64_t(z.S * z.B * GH + z.B * GH + 4 * z.B * z.H) + (ws > ws2 ? ws : ws2);
}

void RunRecurrent(const Bindings& b, const fb::Recurrent* c) {
  const Sizes z = SizesOf(c);
  const int64_t S = z.S, B = z.B, I = z.I, H = z.H, GH = z.G * z.H;
  const bool lstm = c->cell() == fb::RecurrentCell::LSTM, lbr = c->linear_before_reset();
  float* xw = b.slot(0);
  float* hr = xw + S * B * GH;
  float* h = hr + B * GH;
  float* cs = h + B * H;
  float* tmp = cs + B * H;
  float* hh = tmp + B * H;
  float* ws = hh + B * H;
  const float* x = b.ptr(c->x());
  float* y = c->has_y() ? b.ptr(c->y()) : nullptr;
  for (int64_t d = 0; d < z.D; ++d) {
    const bool rev = c->reverse() || d == 1;
    const float* W = b.ptr(c->w()) + d * GH * I;
    const float* R = b.ptr(c->r()) + d * GH * H;
    const float* bias = b.ptr(c->bias()) + d * GH;
    const float* rbh = c->has_rbh() ? b.ptr(c->rbh()) + d * H : nullptr;
    if (c->has_h0()) memcpy(h, b.ptr(c->h0()) + d * B * H, size_t(B * H) * 4);
    else memset(h, 0, size_t(B * H) * 4);
    if (lstm && c->has_c0()) memcpy(cs, b.ptr(c->c0()) + d * B * H, size_t(B * H) * 4);
    else memset(cs, 0, size_t(B * H) * 4);
    memset(tmp, 0, size_t(B * H) * 4);
    uk::SgemmBt(S * B, GH, I, x, I, W, I, xw, GH, ws);
    const bool gru_late = !lstm && !lbr;
    for (int64_t step = 0; step < S; ++step) {
      const int64_t t = rev ? S - 1 - step : step;
      uk::SgemmBt(B, gru_late ? 2 * H : GH, H, h, H, R, H, hr, GH, ws);
      for (int64_t bi = 0; bi < B; ++bi) {
        float* pre = hr + bi * GH;
        const float* xr = xw + (t * B + bi) * GH;
        float* hb = h + bi * H;
        if (lstm) {
          float *gi = pre, *go = pre + H, *gf = pre + 2 * H, *gc = pre + 3 * H;
          float* cb = cs + bi * H;
          for (int64_t j = 0; j < GH; ++j) pre[j] = pre[j] + xr[j] + bias[j];
          Sigmoid(gi, H);
          Sigmoid(gf, H);
          Tanh(gc, H);
          for (int64_t j = 0; j < H; ++j) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
          Sigmoid(go, H);
          for (int64_t j = 0; j < H; ++j) gc[j] = cb[j];
          Tanh(gc, H);
          for (int64_t j = 0; j < H; ++j) hb[j] = go[j] * gc[j];
          if (y) memcpy(y + ((t * z.D + d) * B + bi) * H, hb, size_t(H) * 4);
          continue;
        }
        float* rh = tmp + bi * H;
        for (int64_t j = 0; j < 2 * H; ++j) pre[j] = pre[j] + xr[j] + bias[j];
        Sigmoid(pre, 2 * H);
        for (int64_t j = 0; j < H; ++j)
          rh[j] = lbr ? pre[H + j] * (pre[2 * H + j] + rbh[j]) : pre[H + j] * hb[j];
      }
      if (lstm) continue;
      if (gru_late) uk::SgemmBt(B, H, H, tmp, H, R + 2 * H * H, H, hh, H, ws);
      for (int64_t bi = 0; bi < B; ++bi) {
        const float* xr = xw + (t * B + bi) * GH;
        float* cand = gru_late ? hh + bi * H : tmp + bi * H;
        const float* zg = hr + bi * GH;
        float* hb = h + bi * H;
        for (int64_t j = 0; j < H; ++j) cand[j] = xr[2 * H + j] + cand[j] + bias[2 * H + j];
        Tanh(cand, H);
        for (int64_t j = 0; j < H; ++j) hb[j] = (1.0f - zg[j]) * cand[j] + zg[j] * hb[j];
        if (y) memcpy(y + ((t * z.D + d) * B + bi) * H, hb, size_t(H) * 4);
      }
    }
    if (c->has_yh()) memcpy(b.ptr(c->yh()) + d * B * H, h, size_t(B * H) * 4);
    if (lstm && c->has_yc()) memcpy(b.ptr(c->yc()) + d * B * H, cs, size_t(B * H) * 4);
  }
}

}  // namespace vnpu
}  // namespace epctx
