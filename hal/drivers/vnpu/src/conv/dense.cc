// SPDX-License-Identifier: Apache-2.0
// Dense (kDense): a GEMM of weights (M = output channels) x im2col (N =
// output pixels, K = Cin_g * KH * KW) on the micro-kernel library's block
// tile. The packed weights already are its A panels (row r of block b at
// k: w[b][k][r], k-stride 8), so they are read in place. B is packed per
// 48-pixel block and K chunk into the worker's workspace slot, with the
// bounds of every tap resolved once per chunk and shared by all output
// channels; a 1x1 stride-1 convolution reads its input rows directly. Bias,
// RELU and CLIP are fused into the tile's last K slice; other activations
// run on the block while it is in cache.
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {

// Threads split each group's pixel blocks of kNr2 (48): every block is
// packed and computed whole by one of them, so the bytes do not depend on
// the split. K is packed in chunks of at most kDenseKc rows (a 24 KiB B
// block that stays in L1 while every 8-row block tile of the output
// channels sweeps it); later chunks accumulate into C.
void RunDense(const ConvCall& call) {
  const Shape& s = call.s;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  const int64_t chunk_k = call.plan.chunk_k;
  const uk::TileFn tile = call.plan.tile;
  const uk::Im2colShape geom = Im2colOf(s);
  uk::Tile base{};
  call.plan.Epilogue(&base);
  const bool post = call.plan.post;
  const int64_t K = s.cig * s.KH * s.KW, OHW = s.OH * s.OW, HW = s.H * s.W;
  const bool pointwise = s.KH == 1 && s.KW == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 &&
                         s.pl == 0 && s.OH == s.H && s.OW == s.W;
  base.a_rs = 1;
  base.a_ks = 8;
  base.ldc = OHW;
  base.b_ss = 8;
  const int64_t blocks = (OHW + uk::kNr2 - 1) / uk::kNr2;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi) {
      const float* xg = x + (n * s.C + gi * s.cig) * HW;
      const float* wg = w + gi * s.nb * s.cig * s.kstride;
      float* yg = y + (n * s.CO + gi * s.cog) * OHW;
      ForRangeSlots(
          bd.par, blocks, MinUnits(s.cog * K * uk::kNr2),
          [&](int64_t b0, int64_t b1, uint32_t slot) {
            float* buf = bd.slot(slot);
            uk::Tile t = base;
            for (int64_t p0 = b0 * uk::kNr2; p0 < OHW && p0 < b1 * uk::kNr2; p0 += uk::kNr2) {
              const int64_t np = OHW - p0 < uk::kNr2 ? OHW - p0 : uk::kNr2;
              // Input rows read in place need whole 8-wide strips inside the row.
              const bool direct = pointwise && np % 8 == 0;
              t.cols = static_cast<int32_t>(np);
              for (int64_t k0 = 0; k0 < K;) {
                const int64_t kc = direct ? K : (K - k0 < chunk_k ? K - k0 : chunk_k);
                if (direct) {
                  t.b = xg + p0;
                  t.b_ks = HW;
                } else {
                  call.plan.im2col(geom, xg, k0, kc, p0, np, buf, uk::kNr2);
                  t.b = buf;
                  t.b_ks = uk::kNr2;
                }
                t.kc = kc;
                t.accumulate = k0 > 0;
                t.last = k0 + kc == K;
                for (int64_t r0 = 0; r0 < s.cog; r0 += uk::kMr2) {
                  t.a = wg + (r0 / 8) * s.cig * s.kstride + k0 * 8;
                  t.rows = static_cast<int32_t>(s.cog - r0 < uk::kMr2 ? s.cog - r0 : uk::kMr2);
                  t.c = yg + r0 * OHW + p0;
                  t.row_bias = bias ? bias + gi * s.cog + r0 : nullptr;
                  tile(t);
                }
                k0 += kc;
              }
              if (post)
                ActivateRows(c->activation(), yg + p0, uint64_t(s.cog), uint64_t(np), uint64_t(OHW),
                             c->alpha(), c->beta());
            }
          });
    }
}

}  // namespace vnpu
}  // namespace epctx
