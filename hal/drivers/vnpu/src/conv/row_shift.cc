// SPDX-License-Identifier: Apache-2.0
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {

// A row convolution (KH = 1, KW > 1, stride 1, the row padded to keep its
// width, e.g. 1x3 with pads 1/1) the same way over the flattened plane: for
// tap kw, pixel p reads input p + kw * dw - pl, right for every column whose
// window lies inside its row. The pl + pr columns at each row's edges read
// a neighbouring row instead of the padding; they are computed again
// afterwards (EdgeColumns) and overwritten. Pixels [pl, H * W - pr) only, so
// nothing is read outside the input. Dense would pack Cin * KW rows per
// 24-pixel block, each packed float feeding only Cout multiply-adds: on the
// 24..48-channel 1x3 layers of a keyword model, a quarter of the layer.
// Worth it where the edges are few (W >= 16).
bool RowShiftApplies(const Shape& s) {
  const int64_t ext = (s.KW - 1) * s.dw;
  return s.KH == 1 && s.KW > 1 && s.KW <= kMaxTaps && s.sw == 1 && s.sh == 1 && s.pt == 0 &&
         s.OH == s.H && s.OW == s.W && s.W >= 16 && ext * 4 <= s.W && s.pl <= ext && s.cig >= 8 &&
         s.cig * s.KW <= kWorkK && s.OH * s.OW - ext >= uk::kNr;
}

// Workspace floats of EdgeColumns per worker: a packed B of Cin * KW rows
// of one tile, and the tile's Cout x 24 results.
uint64_t EdgeWorkFloats(const Shape& s) { return uint64_t((s.cig * s.KW + s.cog) * uk::kNr); }

namespace {

// The pl + pr edge columns of every row of a RowShift convolution, 24 rows
// of one edge column at a time: their im2col columns packed tap-major (a tap
// outside the row is a zero row; inside, a read down the column), one tile
// call (a slice of K = Cin per tap) into the worker's slot, then written to
// the output column.
void EdgeColumns(const ConvCall& call, const float* xg, const float* wg, const float* bias,
                 float* yg) {
  const Shape& s = call.s;
  const WLayout& L = call.L;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  const uk::TileFn tile = call.plan.edge;
  uk::Tile base{};
  call.plan.Epilogue(&base);
  const bool post = call.plan.post;
  const int64_t ext = (s.KW - 1) * s.dw, pr = ext - s.pl, OHW = s.OH * s.OW, HW = s.H * s.W;
  const int64_t K = s.cig * s.KW, row_blocks = (s.OH + uk::kNr - 1) / uk::kNr;
  base.kc = s.cig;
  base.a_rs = 1;
  base.a_ks = L.ks;
  base.b_ss = 8;
  base.b_ks = uk::kNr;
  base.ldc = uk::kNr;
  base.last = true;
  base.segs = static_cast<int32_t>(s.KW);
  base.a_seg = L.tap;
  base.b_seg = s.cig * uk::kNr;
  ForRangeSlots(bd.par, ext * row_blocks, MinUnits(s.cog * K * uk::kNr),
                [&](int64_t c0, int64_t c1, uint32_t slot) {
                  float* buf = bd.slot(slot);
                  float* cb = buf + K * uk::kNr;
                  uk::Tile t = base;
                  t.b = buf;
                  for (int64_t ch = c0; ch < c1; ++ch) {
                    const int64_t e = ch / row_blocks, r0 = (ch % row_blocks) * uk::kNr;
                    const int64_t nr = s.OH - r0 < uk::kNr ? s.OH - r0 : uk::kNr;
                    const int64_t ow = e < s.pl ? e : s.W - pr + (e - s.pl);
                    for (int64_t kw = 0, k = 0; kw < s.KW; ++kw) {
                      const int64_t iw = ow + kw * s.dw - s.pl;
                      const bool in = iw >= 0 && iw < s.W;
                      for (int64_t ic = 0; ic < s.cig; ++ic, ++k) {
                        float* d = buf + k * uk::kNr;
                        const float* xr = xg + ic * HW + r0 * s.W + iw;
                        int64_t j = 0;
                        if (in)
                          for (; j < nr; ++j) d[j] = xr[j * s.W];
                        for (; j < uk::kNr; ++j) d[j] = 0.0f;
                      }
                    }
                    t.cols = static_cast<int32_t>(nr);
                    for (int64_t o0 = 0; o0 < s.cog; o0 += uk::kMr) {
                      t.rows = static_cast<int32_t>(s.cog - o0 < uk::kMr ? s.cog - o0 : uk::kMr);
                      t.a = wg + (o0 / 8) * L.ss + o0 % 8;
                      t.c = cb + o0 * uk::kNr;
                      t.row_bias = bias ? bias + o0 : nullptr;
                      tile(t);
                    }
                    if (post)
                      ActivateRows(c->activation(), cb, uint64_t(s.cog), uint64_t(nr),
                                   uint64_t(uk::kNr), c->alpha(), c->beta());
                    for (int64_t oc = 0; oc < s.cog; ++oc) {
                      float* yc = yg + oc * OHW + r0 * s.OW + ow;
                      for (int64_t j = 0; j < nr; ++j) yc[j * s.OW] = cb[oc * uk::kNr + j];
                    }
                  }
                });
}

}  // namespace

void RunRowShift(const ConvCall& call) {
  const Shape& s = call.s;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const int64_t ext = (s.KW - 1) * s.dw, OHW = s.OH * s.OW, HW = s.H * s.W;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi) {
      const float* xg = x + (n * s.C + gi * s.cig) * HW;
      const float* wg = w + gi * s.nb * s.cig * s.kstride;
      const float* bg = bias ? bias + gi * s.cog : nullptr;
      float* yg = y + (n * s.CO + gi * s.cog) * OHW;
      ShiftedPass(call, xg, wg, bg, yg, s.pl, OHW - ext, s.KW, -s.pl, s.dw, false);
      EdgeColumns(call, xg, wg, bg, yg);
    }
}

}  // namespace vnpu
}  // namespace epctx
