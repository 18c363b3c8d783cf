// SPDX-License-Identifier: Apache-2.0
// The vnpu CONV_TRANSPOSE2D unit (ONNX ConvTranspose), scatter form: each
// input pixel adds weight x value into the Cout_g x KH x KW outputs it
// reaches. Rows of the kernel are clipped to the output once per input row,
// so the inner loop over kernel columns has no per-element bounds check
// beyond the column test. Weights [groups][Cin_g][Cout_g][KH][KW] are ONNX's
// own layout; the output starts at the bias and gets the fused activation
// per output plane at the end.
//
// When the kernel tiles the output exactly (kernel == stride, no padding or
// dilation: the 2x2 stride-2 upsampling of detection necks) every output
// pixel comes from one input pixel and one tap, so the op is a GEMM,
// [Cout_g x KH x KW] x [Cin_g] times [Cin_g x pixels], on the micro-kernel
// tile: the ONNX weights are its A in place (row stride 1, K stride
// Cout_g*KH*KW) and the input planes its B (24 pixels of every channel side
// by side), with K in one slice. Each 4 x 24 result is written, not added,
// to its output pixels, so the last block may overlap the one before it
// instead of reading past the input.
#include "epctx_uk/sgemm.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {

struct Dims {
  int64_t C, H, W, CO, OH, OW, G, cig, cog, KH, KW;
};

bool TilesExactly(const Dims& d, const fb::ConvTranspose2D* c) {
  return c->kernel_h() == c->stride_h() && c->kernel_w() == c->stride_w() &&
         c->dilation_h() == 1 && c->dilation_w() == 1 && c->pad_top() == 0 &&
         c->pad_left() == 0 && d.OH == d.H * d.KH && d.OW == d.W * d.KW &&
         d.H * d.W >= uk::kNr;
}

// Threads split the pixel blocks (the overlapping last block stays with the
// one before it, so no two threads write one output); the activation that
// is no clamp runs after, split by output rows.
void ExactGemm(const Dims& d, const float* x, const float* w, const float* bias, float* y,
               const fb::ConvTranspose2D* c, const epctx_hal_parallel* par) {
  const uk::TileFn tile = uk::TileKernel(uk::Isa::kAuto);
  uk::Tile base{};
  const bool post = !FusedClamp(c->activation(), c->alpha(), c->beta(), &base.lo, &base.hi);
  const int64_t HW = d.H * d.W, taps = d.KH * d.KW, R = d.cog * taps;
  base.kc = d.cig;
  base.a_rs = 1;
  base.a_ks = R;
  base.b_ss = 8;
  base.b_ks = HW;
  base.ldc = uk::kNr;
  base.cols = uk::kNr;
  base.last = true;
  const int64_t blocks = (HW + uk::kNr - 1) / uk::kNr;
  const bool overlap = HW % uk::kNr != 0 && blocks > 1;
  const int64_t units = overlap ? blocks - 1 : blocks;
  for (int64_t gi = 0; gi < d.G; ++gi) {
    const float* xg = x + gi * d.cig * HW;
    const float* wg = w + gi * d.cig * R;
    float* yg = y + gi * d.cog * d.OH * d.OW;
    ForRange(par, units, MinUnits(R * d.cig * uk::kNr), [&](int64_t u0, int64_t u1) {
      float cbuf[uk::kMr * uk::kNr];
      float rb[uk::kMr];
      int64_t orow[uk::kNr], ocol[uk::kNr];
      uk::Tile t = base;
      t.c = cbuf;
      const int64_t b1 = overlap && u1 == units ? blocks : u1;
      for (int64_t p0 = u0 * uk::kNr; p0 < b1 * uk::kNr; p0 += uk::kNr) {
        const int64_t q0 = HW - p0 < uk::kNr ? HW - uk::kNr : p0;
        for (int64_t j = 0; j < uk::kNr; ++j) {
          const int64_t ih = (q0 + j) / d.W;
          orow[j] = ih * d.KH;
          ocol[j] = (q0 + j - ih * d.W) * d.KW;
        }
        // Kernel width 2 with the block inside one input row: the two
        // kernel columns of a tap row interleave into 48 consecutive outputs.
        const bool pairs = d.KW == 2 && orow[0] == orow[uk::kNr - 1];
        t.b = xg + q0;
        for (int64_t r0 = 0; r0 < R; r0 += uk::kMr) {
          const int64_t rows = R - r0 < uk::kMr ? R - r0 : uk::kMr;
          t.a = wg + r0;
          t.rows = static_cast<int32_t>(rows);
          if (bias) {
            for (int64_t i = 0; i < rows; ++i) rb[i] = bias[gi * d.cog + (r0 + i) / taps];
            t.row_bias = rb;
          }
          tile(t);
          for (int64_t i = 0; i < rows; ++i) {
            const int64_t r = r0 + i, oc = r / taps, kh = r / d.KW % d.KH, kw = r % d.KW;
            float* yp = yg + (oc * d.OH + kh) * d.OW + kw;
            const float* cr = cbuf + i * uk::kNr;
            if (pairs && kw == 0 && i + 1 < rows) {
              float* yr = yp + orow[0] * d.OW + ocol[0];
              const float* cn = cr + uk::kNr;
              for (int64_t j = 0; j < uk::kNr; j += 4) {
                const V4 e = Load4(cr + j), o = Load4(cn + j);
                Store4(yr + 2 * j, __builtin_shufflevector(e, o, 0, 4, 1, 5));
                Store4(yr + 2 * j + 4, __builtin_shufflevector(e, o, 2, 6, 3, 7));
              }
              ++i;
              continue;
            }
            for (int64_t j = 0; j < uk::kNr; ++j) yp[orow[j] * d.OW + ocol[j]] = cr[j];
          }
        }
      }
    });
  }
  if (post) {
    const int64_t rows = d.CO * d.OH;
    ForRange(par, rows, MinUnits(d.OW * 8), [&](int64_t r0, int64_t r1) {
      ActivateRows(c->activation(), y + r0 * d.OW, uint64_t(r1 - r0), uint64_t(d.OW),
                   uint64_t(d.OW), c->alpha(), c->beta());
    });
  }
}

}  // namespace

void RunConvTranspose(const Bindings& b, const fb::ConvTranspose2D* c) {
  const fb::Graph* g = b.graph->stream;
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  const float* x = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  const int64_t N = Dim(xt, 0), C = Dim(xt, 1), H = Dim(xt, 2), W = Dim(xt, 3);
  const int64_t CO = Dim(yt, 1), OH = Dim(yt, 2), OW = Dim(yt, 3), G = c->groups();
  const int64_t cig = C / G, cog = CO / G, KH = c->kernel_h(), KW = c->kernel_w();
  const int64_t sh = c->stride_h(), sw = c->stride_w(), dh = c->dilation_h(), dw = c->dilation_w();
  const int64_t pt = c->pad_top(), pl = c->pad_left();
  const int64_t plane = OH * OW;
  const Dims d{C, H, W, CO, OH, OW, G, cig, cog, KH, KW};
  if (TilesExactly(d, c)) {
    for (int64_t n = 0; n < N; ++n)
      ExactGemm(d, x + n * C * H * W, w, bias, y + n * CO * plane, c, b.par);
    return;
  }
  for (int64_t n = 0; n < N; ++n) {
    float* yn = y + n * CO * plane;
    for (int64_t o = 0; o < CO; ++o) {
      const float v = bias ? bias[o] : 0.f;
      for (int64_t i = 0; i < plane; ++i) yn[o * plane + i] = v;
    }
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t ic = 0; ic < cig; ++ic) {
        const int64_t ci = gi * cig + ic;
        const float* xc = x + (n * C + ci) * H * W;
        const float* wc = w + ci * cog * KH * KW;
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t oh = ih * sh - pt + kh * dh;
            if (oh < 0 || oh >= OH) continue;
            for (int64_t oc = 0; oc < cog; ++oc) {
              float* yrow = yn + ((gi * cog + oc) * OH + oh) * OW;
              const float* wk = wc + (oc * KH + kh) * KW;
              for (int64_t iw = 0; iw < W; ++iw) {
                const float xv = xc[ih * W + iw];
                const int64_t base = iw * sw - pl;
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t ow = base + kw * dw;
                  if (ow >= 0 && ow < OW) yrow[ow] += xv * wk[kw];
                }
              }
            }
          }
      }
    if (c->activation() != fb::Activation::NONE)
      ActivateRow(c->activation(), yn, yn, uint64_t(CO * plane), c->alpha(), c->beta());
  }
}

}  // namespace vnpu
}  // namespace epctx
