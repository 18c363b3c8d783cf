// SPDX-License-Identifier: Apache-2.0
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {
namespace {

// Input channels gathered per call at the edges of Transposed (a 4 x 128
// float stack tile).
constexpr int64_t kEdgeChunk = 128;

// Few output channels (at most one tile's 24 columns) from many input
// channels, e.g. the 96 -> 24 3x3 convolutions of a detection head: as
// Dense, each 24-pixel block would pack its whole K (864 rows for those)
// for only 6 four-row tiles, so packing costs about as much as the
// multiply-adds. Transposed, C^T = im2col^T x W^T, the tile's rows are 4
// output pixels of one row and its columns the output channels: for each
// kernel tap, A is the input itself (pixel r at column stride sw, channel
// stride H * W) and B the packed weights at that tap (strip = 8-channel
// block, k stride one tap's 8 floats), one call of K = Cin_g per tap
// accumulated in a stack tile, so nothing is packed. Taps whose input row
// lies outside are skipped; at the left and right edges the 4 pixels'
// inputs are gathered with zeros for the padding. The 4 x 24 result goes
// to the channel-major output through the stack tile. (kTransposed, and
// kTransposedRing below; CONV2D_TAPS' weights are laid out for it.)

// A transposed tile's nr pixels x cog channels (rows kNr floats apart) into
// the channel-major output: channel j's pixels at y + j * ld.
void StoreTransposed(const float* cbuf, int64_t cog, int64_t nr, float* y, int64_t ld) {
  for (int64_t j = 0; j < cog; ++j)
    for (int64_t r = 0; r < nr; ++r) y[j * ld + r] = cbuf[r * uk::kNr + j];
}

// Transposed with the input rows packed: a ring of KH rows per worker (in
// its workspace slot), each holding one input row of every channel of the
// group, zero-padded left and right, channel rows PackedStride apart. The
// channels of the input itself lie H x W floats apart, a multiple of 4 KiB
// on 160x160 and 320x320 maps, so the tile's A loads (one line per channel,
// per k step) all fall in one L1 set and miss; packed, they do not, and the
// padding needs no edge path. Each input row is packed once per worker run
// (output rows go in order), a copy of 1/(KW * Cout) of the row's work.
// Needs row dilation 1 (an output row's KH input rows are consecutive, so
// they never share a slot) and the ring within kRingFloats.

int64_t PackedWidth(const Shape& s) { return (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1; }

int64_t PackedStride(const Shape& s) {
  int64_t st = (PackedWidth(s) + 15) / 16 * 16;
  if (st % 1024 == 0) st += 16;  // 4 KiB apart again: shift by a line
  return st;
}

}  // namespace

// The compiler writes CONV2D_TAPS by the same predicate (vnpu_layout.h).
static_assert(layout::kTileCols == uk::kNr && layout::kTileRows == uk::kMr,
              "the transposed tile is the micro-kernel tile");
bool TransposedApplies(const Shape& s) {
  return layout::TransposedFits(s.cig, s.cog, s.KH, s.KW, s.OW);
}

uint64_t PackedRingFloats(const Shape& s) {
  return uint64_t(s.KH) * uint64_t(s.cig) * uint64_t(PackedStride(s));
}

bool PackedRingApplies(const Shape& s) {
  return s.dh == 1 && PackedRingFloats(s) <= uint64_t(kRingFloats);
}

void RunTransposedRing(const ConvCall& call) {
  const Shape& s = call.s;
  const WLayout& L = call.L;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  const uk::TileFn tile = call.plan.tile;
  uk::Tile base{};
  call.plan.Epilogue(&base);
  const bool post = call.plan.post;
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W, units = s.N * s.G * s.OH;
  const int64_t PW = PackedWidth(s), PS = PackedStride(s);
  base.b_ss = L.ss;
  base.b_ks = L.ks;
  base.ldc = uk::kNr;
  base.cols = static_cast<int32_t>(s.cog);
  base.a_rs = s.sw;
  base.a_ks = PS;
  base.kc = s.cig;
  base.segs = static_cast<int32_t>(s.KW);
  base.a_seg = s.dw;
  base.b_seg = L.tap;
  ForRangeSlots(bd.par, units, MinUnits(s.cog * s.cig * s.KH * s.KW * s.OW),
                [&](int64_t u0, int64_t u1, uint32_t slot) {
                  float* ring = bd.slot(slot);
                  int64_t tag[kMaxTaps];  // image-group and input row held by each slot
                  for (int64_t k = 0; k < s.KH; ++k) tag[k] = -1;
                  float cbuf[uk::kMr * uk::kNr];
                  uk::Tile t = base;
                  t.c = cbuf;
                  for (int64_t u = u0; u < u1; ++u) {
                    const int64_t oh = u % s.OH, ng = u / s.OH, gi = ng % s.G, n = ng / s.G;
                    const float* xg = x + (n * s.C + gi * s.cig) * HW;
                    const float* wg = w + gi * s.nb * s.cig * s.kstride;
                    float* yg = y + (n * s.CO + gi * s.cog) * OHW + oh * s.OW;
                    t.col_bias = bias ? bias + gi * s.cog : nullptr;
                    const float* rows[kMaxTaps];  // packed row of tap kh, or null (padding)
                    int64_t last = -1;
                    for (int64_t kh = 0; kh < s.KH; ++kh) {
                      const int64_t ih = oh * s.sh - s.pt + kh;
                      rows[kh] = nullptr;
                      if (ih < 0 || ih >= s.H) continue;
                      last = kh;
                      const int64_t k = ih % s.KH, want = ng * s.H + ih;
                      float* pr = ring + k * s.cig * PS;
                      if (tag[k] != want) {
                        for (int64_t ic = 0; ic < s.cig; ++ic)
                          PadRow(xg + ic * HW + ih * s.W, s.W, s.pl, PW, pr + ic * PS);
                        tag[k] = want;
                      }
                      rows[kh] = pr;
                    }
                    for (int64_t ow0 = 0; ow0 < s.OW; ow0 += uk::kMr) {
                      const int64_t nr = s.OW - ow0 < uk::kMr ? s.OW - ow0 : uk::kMr;
                      t.rows = static_cast<int32_t>(nr);
                      if (last < 0) {  // every tap in the padding: bias and activation only
                        t.kc = 0;
                        t.accumulate = false;
                        t.last = true;
                        tile(t);
                        t.kc = s.cig;
                      }
                      bool first = true;
                      for (int64_t kh = 0; kh <= last; ++kh) {
                        if (!rows[kh]) continue;
                        t.a = rows[kh] + ow0 * s.sw;  // the row's KW taps: slices dw apart
                        t.b = wg + kh * s.KW * L.tap;
                        t.accumulate = !first;
                        t.last = kh == last;
                        tile(t);
                        first = false;
                      }
                      StoreTransposed(cbuf, s.cog, nr, yg + ow0, OHW);
                    }
                    if (post)
                      ActivateRows(c->activation(), yg, uint64_t(s.cog), uint64_t(s.OW),
                                   uint64_t(OHW), c->alpha(), c->beta());
                  }
                });
}

// Threads split the output rows (of every image and group).
void RunTransposed(const ConvCall& call) {
  const Shape& s = call.s;
  const WLayout& L = call.L;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const fb::Conv2D* c = call.c;
  const epctx_hal_parallel* par = call.b.par;
  const uk::TileFn tile = call.plan.tile;
  uk::Tile base{};
  call.plan.Epilogue(&base);
  const bool post = call.plan.post;
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W, units = s.N * s.G * s.OH;
  base.b_ss = L.ss;
  base.b_ks = L.ks;
  base.ldc = uk::kNr;
  base.cols = static_cast<int32_t>(s.cog);
  ForRange(par, units, MinUnits(s.cog * s.cig * s.KH * s.KW * s.OW), [&](int64_t u0, int64_t u1) {
    float cbuf[uk::kMr * uk::kNr];
    float abuf[uk::kMr * kEdgeChunk];
    uk::Tile t = base;
    t.c = cbuf;
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t oh = u % s.OH, gi = (u / s.OH) % s.G, n = u / (s.OH * s.G);
      const float* xg = x + (n * s.C + gi * s.cig) * HW;
      const float* wg = w + gi * s.nb * s.cig * s.kstride;
      float* yg = y + (n * s.CO + gi * s.cog) * OHW + oh * s.OW;
      t.col_bias = bias ? bias + gi * s.cog : nullptr;
      // Input rows of this output row's taps (-1: outside, skipped).
      int64_t ihs[kMaxTaps];
      int64_t last = -1;
      for (int64_t kh = 0; kh < s.KH; ++kh) {
        const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
        ihs[kh] = ih >= 0 && ih < s.H ? ih : -1;
        if (ihs[kh] >= 0) last = kh;
      }
      for (int64_t ow0 = 0; ow0 < s.OW; ow0 += uk::kMr) {
        const int64_t nr = s.OW - ow0 < uk::kMr ? s.OW - ow0 : uk::kMr;
        t.rows = static_cast<int32_t>(nr);
        bool first = true;
        if (last < 0) {  // every tap in the padding: bias and activation only
          t.kc = 0;
          t.accumulate = false;
          t.last = true;
          tile(t);
        }
        for (int64_t kh = 0; kh <= last; ++kh) {
          if (ihs[kh] < 0) continue;
          const float* xrow = xg + ihs[kh] * s.W;
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            const int64_t iw0 = ow0 * s.sw + kw * s.dw - s.pl;
            const int64_t iwn = iw0 + (nr - 1) * s.sw;
            const float* wt = wg + (kh * s.KW + kw) * L.tap;
            const bool final_tap = kh == last && kw == s.KW - 1;
            if (iw0 >= 0 && iwn < s.W) {
              t.a = xrow + iw0;
              t.a_rs = s.sw;
              t.a_ks = HW;
              t.b = wt;
              t.kc = s.cig;
              t.accumulate = !first;
              t.last = final_tap;
              tile(t);
              first = false;
              continue;
            }
            for (int64_t ic0 = 0; ic0 < s.cig; ic0 += kEdgeChunk) {
              const int64_t kc = s.cig - ic0 < kEdgeChunk ? s.cig - ic0 : kEdgeChunk;
              for (int64_t r = 0; r < nr; ++r) {
                const int64_t iw = iw0 + r * s.sw;
                const bool in = iw >= 0 && iw < s.W;
                for (int64_t k = 0; k < kc; ++k)
                  abuf[k * uk::kMr + r] = in ? xrow[(ic0 + k) * HW + iw] : 0.0f;
              }
              t.a = abuf;
              t.a_rs = 1;
              t.a_ks = uk::kMr;
              t.b = wt + ic0 * L.ks;
              t.kc = kc;
              t.accumulate = !first;
              t.last = final_tap && ic0 + kc == s.cig;
              tile(t);
              first = false;
            }
          }
        }
        StoreTransposed(cbuf, s.cog, nr, yg + ow0, OHW);
      }
      if (post)
        ActivateRows(c->activation(), yg, uint64_t(s.cog), uint64_t(s.OW), uint64_t(OHW),
                     c->alpha(), c->beta());
    }
  });
}

}  // namespace vnpu
}  // namespace epctx
