// SPDX-License-Identifier: Apache-2.0
// Dense one output row block at a time (kDenseRows): see kRowBlock.
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {
namespace {

// The im2col rows of np output pixels from (oh, ow0) at column stride 2,
// column dilation 1, into buf (rows `pitch` apart, padded to whole strips):
// each input row a tap row reads is split once into its even and odd
// columns (in `split`, 2 * (np + KW) floats), so tap kw's row is a copy of
// one half from column kw / 2.
void PackRowS2(const Shape& s, const float* xg, int64_t oh, int64_t ow0, int64_t np, float* buf,
               int64_t pitch, float* split) {
  const int64_t n = np + (s.KW - 1) / 2, padded = (np + 7) / 8 * 8, HW = s.H * s.W;
  float* ev = split;
  float* od = split + np + s.KW;
  float* d = buf;
  for (int64_t ic = 0; ic < s.cig; ++ic)
    for (int64_t kh = 0; kh < s.KH; ++kh) {
      const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
      const bool in = ih >= 0 && ih < s.H;
      if (in) SplitCols(xg + ic * HW + ih * s.W, s.W, 2 * ow0 - s.pl, n, ev, od);
      for (int64_t kw = 0; kw < s.KW; ++kw, d += pitch) {
        if (in) __builtin_memcpy(d, (kw % 2 ? od : ev) + kw / 2, size_t(np) * 4);
        else
          for (int64_t j = 0; j < np; ++j) d[j] = 0.0f;
        for (int64_t j = np; j < padded; ++j) d[j] = 0.0f;
      }
    }
}

// Dense one output row at a time, up to kRowBlock pixels of it per unit
// (a row block): the block's im2col rows (all of K) packed once, rows
// kRowBlock floats apart, then every 4-row weight tile runs across the
// block, so each output channel's row is written in one run and the
// im2col bookkeeping (row segments, tap bounds) is paid once per block, not
// once per 24 pixels. At column stride 2 (a backbone's first convolution:
// 3 -> 16 channels, 3x3, on 640x640) each input row is split into its even
// and odd columns once and the taps are copies of a half (PackRowS2), where
// the im2col packer would shuffle every tap's row out of the input again.
// ocr_det's first convolution: 3.6 -> 2.6 ms. Needs K * kRowBlock floats
// of workspace and rows of at least two tiles. The block's panel must stay
// near the tiles that sweep it (kRowPanelBytes, K <= 170): a ResNet stem
// (3 -> 64, 7x7, stride 2, K 147) runs 2.0 -> 1.64 ms here rather than
// dense, but 64 -> 64 3x3 on 56x56 (K 576, a 442 KiB panel) 1.29 -> 1.6.
constexpr int64_t kRowBlock = 192;
constexpr int64_t kRowPanelBytes = int64_t(128) << 10;

}  // namespace

bool DenseRowsApplies(const Shape& s) {
  const int64_t K = s.cig * s.KH * s.KW;
  return s.OW >= 2 * uk::kNr && K * kRowBlock * int64_t(sizeof(float)) <= kRowPanelBytes &&
         !(s.KH == 1 && s.KW == 1);
}

uint64_t DenseRowsFloats(const Shape& s) {
  return uint64_t(s.cig * s.KH * s.KW * kRowBlock + 2 * (kRowBlock + s.KW));
}

void RunDenseRows(const ConvCall& call) {
  const Shape& s = call.s;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  const uk::TileFn tile = call.plan.tile;
  const uk::Im2colShape geom = Im2colOf(s);
  uk::Tile base{};
  call.plan.Epilogue(&base);
  const bool post = call.plan.post;
  const int64_t K = s.cig * s.KH * s.KW, OHW = s.OH * s.OW, HW = s.H * s.W;
  const int64_t per_row = (s.OW + kRowBlock - 1) / kRowBlock;
  const int64_t units = s.N * s.G * s.OH * per_row;
  base.a_rs = 1;
  base.a_ks = 8;
  base.ldc = OHW;
  base.b_ss = 8;
  base.b_ks = kRowBlock;
  base.kc = K;
  base.last = true;
  ForRangeSlots(
      bd.par, units, MinUnits(s.cog * K * kRowBlock), [&](int64_t u0, int64_t u1, uint32_t slot) {
        float* buf = bd.slot(slot);
        uk::Tile t = base;
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t rb = u % per_row, row = u / per_row;
          const int64_t oh = row % s.OH, ng = row / s.OH, gi = ng % s.G, n = ng / s.G;
          const float* xg = x + (n * s.C + gi * s.cig) * HW;
          const float* wg = w + gi * s.nb * s.cig * s.kstride;
          float* yg = y + (n * s.CO + gi * s.cog) * OHW;
          const int64_t p0 = oh * s.OW + rb * kRowBlock;
          const int64_t np = s.OW - rb * kRowBlock < kRowBlock ? s.OW - rb * kRowBlock : kRowBlock;
          if (s.sw == 2 && s.dw == 1)
            PackRowS2(s, xg, oh, rb * kRowBlock, np, buf, kRowBlock, buf + K * kRowBlock);
          else call.plan.im2col(geom, xg, 0, K, p0, np, buf, kRowBlock);
          for (int64_t r0 = 0; r0 < s.cog; r0 += uk::kMr2) {
            t.a = wg + (r0 / 8) * s.cig * s.kstride;
            t.rows = static_cast<int32_t>(s.cog - r0 < uk::kMr2 ? s.cog - r0 : uk::kMr2);
            t.row_bias = bias ? bias + gi * s.cog + r0 : nullptr;
            for (int64_t j0 = 0; j0 < np; j0 += uk::kNr2) {
              t.cols = static_cast<int32_t>(np - j0 < uk::kNr2 ? np - j0 : uk::kNr2);
              t.b = buf + j0;
              t.c = yg + r0 * OHW + p0 + j0;
              tile(t);
            }
          }
          if (post)
            ActivateRows(c->activation(), yg + p0, uint64_t(s.cog), uint64_t(np), uint64_t(OHW),
                         c->alpha(), c->beta());
        }
      });
}

}  // namespace vnpu
}  // namespace epctx
