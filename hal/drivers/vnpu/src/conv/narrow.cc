// SPDX-License-Identifier: Apache-2.0
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {

// A 1-D convolution of one input channel with few output pixels and no
// padding (an STFT as a convolution: 1 -> 257 channels, 512 taps, 5 frames):
// as Dense, every tile would be a few pixels wide and a fraction of its
// columns wasted. Transposed, C^T = im2col^T x W^T, pixels are the tile rows
// and channels its 24 columns: im2col^T is the input itself (row p at
// p * sw, tap stride dw) and the packed weight blocks are the B strips, so
// nothing is packed and K is one slice. The 4 x 24 result goes through a
// stack tile to the channel-major output.
bool NarrowApplies(const Shape& s) {
  return s.cig == 1 && s.cog >= 8 && s.KH == 1 && s.H == 1 && s.OH == 1 && s.pt == 0 && s.pl == 0 &&
         s.OW < 16 && (s.OW - 1) * s.sw + (s.KW - 1) * s.dw < s.W;
}

void RunNarrow(const ConvCall& call) {
  const Shape& s = call.s;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const fb::Conv2D* c = call.c;
  const uk::TileFn tile = call.plan.tile;
  uk::Tile t{};
  call.plan.Epilogue(&t);
  const bool post = call.plan.post;
  float cbuf[uk::kMr * uk::kNr];
  t.kc = s.KW;
  t.a_rs = s.sw;
  t.a_ks = s.dw;
  t.b_ss = s.kstride;  // one 8-channel block: cig (1) x KH (1) x KW x 8
  t.b_ks = 8;
  t.c = cbuf;
  t.ldc = uk::kNr;
  t.last = true;
  const int64_t OW = s.OW;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi) {
      const float* xg = x + (n * s.C + gi) * s.W;
      const float* wg = w + gi * s.nb * s.kstride;
      float* yg = y + (n * s.CO + gi * s.cog) * OW;
      for (int64_t ch0 = 0; ch0 < s.cog; ch0 += uk::kNr) {
        const int64_t nc = s.cog - ch0 < uk::kNr ? s.cog - ch0 : uk::kNr;
        t.b = wg + (ch0 / 8) * s.kstride;
        t.cols = static_cast<int32_t>(nc);
        t.col_bias = bias ? bias + gi * s.cog + ch0 : nullptr;
        for (int64_t p0 = 0; p0 < OW; p0 += uk::kMr) {
          const int64_t np = OW - p0 < uk::kMr ? OW - p0 : uk::kMr;
          t.a = xg + p0 * s.sw;
          t.rows = static_cast<int32_t>(np);
          tile(t);
          for (int64_t r = 0; r < np; ++r)
            for (int64_t j = 0; j < nc; ++j) yg[(ch0 + j) * OW + p0 + r] = cbuf[r * uk::kNr + j];
        }
      }
      if (post)
        for (int64_t j = 0; j < s.cog; ++j) {
          float* yr = yg + j * OW;
          ActivateRow(c->activation(), yr, yr, uint64_t(OW), c->alpha(), c->beta());
        }
    }
}

}  // namespace vnpu
}  // namespace epctx
