// SPDX-License-Identifier: Apache-2.0
// Depthwise (one input and one output channel per group, or one input
// channel into several): only lane 0 of each 8-wide weight block is real, so
// a GEMM would spend 7 of every 8 multiply-adds on padding. Three ways, by
// plan: kDepthwiseBand (bands of zero-padded rows, rows up to 192 columns),
// kDepthwiseRing (column stride 2 from a ring of split rows), kDepthwise
// (row by row: the micro-kernel library's WeightedRows at column stride 1,
// else a row-wise multiply-add, one tap at a time).
#include "epctx_uk/rows.h"
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {
namespace {

// Output row oh of one depthwise channel at column stride 1. Columns whose
// every tap lies inside the row ([i0, i1)) go to the micro-kernel library's
// WeightedRows, which sums every tap in registers and writes y once; the few
// edge columns check each tap.
void DepthwiseRowStride1(const Shape& s, const float* xc, const float* wc, float bv, int64_t oh,
                         float* __restrict yr) {
  const float* rows[kMaxTaps];
  float wv[kMaxTaps];
  int64_t offs[kMaxTaps];
  int64_t nt = 0;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
    if (ih < 0 || ih >= s.H) continue;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      rows[nt] = xc + ih * s.W;
      offs[nt] = kw * s.dw - s.pl;
      wv[nt] = wc[(kh * s.KW + kw) * 8];
      ++nt;
    }
  }
  const int64_t span = (s.KW - 1) * s.dw;
  int64_t i0 = s.pl < s.OW ? s.pl : s.OW;
  int64_t i1 = s.W - span + s.pl;
  i1 = i1 < s.OW ? i1 : s.OW;
  if (i1 < i0) i1 = i0;
  auto edge = [&](int64_t ow) {
    float acc = bv;
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t iw = ow + offs[t];
      if (iw >= 0 && iw < s.W) acc += wv[t] * rows[t][iw];
    }
    yr[ow] = acc;
  };
  for (int64_t ow = 0; ow < i0; ++ow) edge(ow);
  for (int64_t ow = i1; ow < s.OW; ++ow) edge(ow);
  if (i1 == i0) return;
  for (int64_t t = 0; t < nt; ++t) rows[t] += i0 + offs[t];
  uk::WeightedRows(rows, wv, nt, bv, yr + i0, i1 - i0);
}

// Column stride 2 (the downsampling depthwise layers of MobileNet-style
// backbones): each input row is zero-padded and split once into its even and
// odd columns: in bands (below) up to 192 output columns, else a ring of KH
// such rows in the worker's workspace slot, one output row at a time. Output
// column ow's tap kw reads padded column 2 * ow + kw, which is column
// ow + kw / 2 of the even half (kw even) or of the odd half (kw odd), so
// every tap is a stride-1 row again and a whole output row is one
// WeightedRows call; tap by tap, each output was loaded and stored once per
// tap with a shuffle per four. Needs row dilation 1 and column dilation 1.
int64_t HalfWidth(const Shape& s) { return (s.OW + (s.KW + 1) / 2 + 15) / 16 * 16; }

// Input row src zero-padded (pl on the left) and split into its even and
// odd padded columns: ev[i] = padded column 2i, ev[HW2 + i] = 2i + 1.
void SplitRow(const Shape& s, const float* src, float* ev, int64_t HW2) {
  SplitCols(src, s.W, -s.pl, HW2, ev, ev + HW2);
}

// Column stride 1 (any row stride, any dilation), or 2 (column dilation 1):
// a band of output rows at a time from a band of input rows zero-padded
// left and right into the worker's workspace slot (at column stride 2 each
// also split into even and odd columns, as above), so every tap of every
// output column is a plain offset into the band and the band's interior
// rows are one WeightedRowBand call, activated in one pass: no edge
// columns, no per-row setup.
constexpr int64_t kBandFloats = 8192;  // 32 KiB: the band stays in L1

int64_t PaddedWidth(const Shape& s) { return s.OW + (s.KW - 1) * s.dw; }

// Floats from one band row to the next.
int64_t BandPitch(const Shape& s) { return s.sw == 1 ? PaddedWidth(s) : 2 * HalfWidth(s); }

// Output rows per band (0: the kernel's rows alone do not fit).
int64_t BandRows(const Shape& s) {
  const int64_t rows_in = kBandFloats / BandPitch(s), span = (s.KH - 1) * s.dh;
  if (rows_in <= span || s.KH * s.KW > kMaxTaps) return 0;
  const int64_t b = (rows_in - span - 1) / s.sh + 1;
  return b < s.OH ? b : s.OH;
}

// Input rows a band of nb output rows reads.
int64_t BandInputRows(const Shape& s, int64_t nb) {
  return (nb - 1) * s.sh + (s.KH - 1) * s.dh + 1;
}

// Input rows up to 192 columns: wider ones amortise their setup already,
// and a band of them is too large a working set for a layer bound by
// reading its input (ocr_det's 320-column 3x3 layers: 1.14 -> 1.54 ms at
// stride 1, 1.22 -> 1.81 ms at stride 2).

// Output rows [r0, r1) of one input channel into the group's cog output
// channels, a band of rows at a time (cog > 1: a single-input-channel
// convolution, e.g. 1 -> 24 channels 3x3 on a spectrogram; each band is
// filled once and every output channel's taps run over it). Output channel
// j's taps are lane j % 8 of weight block j / 8.
void DepthwiseBand(const Shape& s, const float* xc, const float* wg, const float* bg, float* band,
                   float* yg, const fb::Conv2D* c, int64_t r0, int64_t r1) {
  const int64_t PW = BandPitch(s), B = BandRows(s), span = (s.KH - 1) * s.dh;
  const int64_t HW2 = HalfWidth(s), OHW = s.OH * s.OW;
  // Output rows [top, bottom) have every kernel row inside the input; the
  // others (a few at the top and bottom, or all of a map only a few rows
  // high) run one at a time with only their kernel rows that are.
  int64_t top = (s.pt + s.sh - 1) / s.sh, bottom = (s.H - 1 + s.pt - span) / s.sh + 1;
  if (s.H - 1 + s.pt - span < 0) bottom = 0;
  if (top > s.OH) top = s.OH;
  if (bottom < top) bottom = top;
  const float* rows[kMaxTaps];
  const float* part[kMaxTaps];
  float wv[kMaxTaps], pw[kMaxTaps];
  const int64_t nt = s.KH * s.KW;
  for (int64_t kh = 0, t = 0; kh < s.KH; ++kh)
    for (int64_t kw = 0; kw < s.KW; ++kw, ++t)
      rows[t] = band + kh * s.dh * PW + (s.sw == 1 ? kw * s.dw : (kw % 2) * HW2 + kw / 2);
  for (int64_t oh0 = r0; oh0 < r1; oh0 += B) {
    const int64_t nb = r1 - oh0 < B ? r1 - oh0 : B, rows_in = BandInputRows(s, nb);
    // Band rows above or below the input are never read (no tap of any
    // output row below reaches them), so only the input's rows are filled.
    for (int64_t j = 0; j < rows_in; ++j) {
      float* pr = band + j * PW;
      const int64_t ih = oh0 * s.sh - s.pt + j;
      if (ih < 0 || ih >= s.H) continue;
      if (s.sw == 2) SplitRow(s, xc + ih * s.W, pr, HW2);
      else PadRow(xc + ih * s.W, s.W, s.pl, PW, pr);
    }
    for (int64_t oc = 0; oc < s.cog; ++oc) {
      const float* wc = wg + (oc / 8) * s.kstride + oc % 8;
      for (int64_t t = 0; t < nt; ++t) wv[t] = wc[t * 8];
      const float bv = bg ? bg[oc] : 0.f;
      float* yc = yg + oc * OHW;
      for (int64_t oh = oh0; oh < oh0 + nb;) {
        const int64_t shift = (oh - oh0) * s.sh * PW;
        if (oh >= top && oh < bottom) {
          const int64_t end = bottom < oh0 + nb ? bottom : oh0 + nb;
          for (int64_t t = 0; t < nt; ++t) part[t] = rows[t] + shift;
          uk::WeightedRowBand(part, wv, nt, bv, yc + oh * s.OW, s.OW, end - oh, s.sh * PW, s.OW);
          oh = end;
          continue;
        }
        int64_t np = 0;
        for (int64_t kh = 0, t = 0; kh < s.KH; ++kh) {
          const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
          for (int64_t kw = 0; kw < s.KW; ++kw, ++t)
            if (ih >= 0 && ih < s.H) {
              part[np] = rows[t] + shift;
              pw[np++] = wv[t];
            }
        }
        uk::WeightedRowBand(part, pw, np, bv, yc + oh * s.OW, s.OW, 1, 0, 0);
        ++oh;
      }
      float* yb = yc + oh0 * s.OW;
      if (c->activation() != fb::Activation::NONE)
        ActivateRow(c->activation(), yb, yb, uint64_t(nb * s.OW), c->alpha(), c->beta());
    }
  }
}

// One output row from the ring of KH split rows (row dilation 1: an output
// row's KH input rows are consecutive, so they never share a slot); each
// input row is split once, when it enters its slot.
void DepthwiseRowS2(const Shape& s, const float* xc, const float* wc, float bv, int64_t oh,
                    float* ring, int64_t* tag, float* __restrict yr) {
  const int64_t HW2 = HalfWidth(s);
  const float* rows[kMaxTaps];
  float wv[kMaxTaps];
  int64_t nt = 0;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const int64_t ih = oh * s.sh - s.pt + kh;
    if (ih < 0 || ih >= s.H) continue;
    const int64_t slot = ih % s.KH;
    float* ev = ring + slot * 2 * HW2;
    if (tag[slot] != ih) {
      SplitRow(s, xc + ih * s.W, ev, HW2);
      tag[slot] = ih;
    }
    for (int64_t kw = 0; kw < s.KW; ++kw, ++nt) {
      rows[nt] = ev + (kw % 2 ? HW2 : 0) + kw / 2;
      wv[nt] = wc[(kh * s.KW + kw) * 8];
    }
  }
  uk::WeightedRows(rows, wv, nt, bv, yr, s.OW);
}

// One input and one output channel per group: channel gi's taps are lane 0 of
// its 8-wide weight block. Threads split the channels (of every image).
// s2: column stride 2 from the worker's ring of split rows (kDepthwiseRing).
void Depthwise(const ConvCall& call, bool s2) {
  const Shape& s = call.s;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  ForRangeSlots(
      bd.par, s.N * s.G, MinUnits(s.OH * s.OW * s.KH * s.KW),
      [&](int64_t u0, int64_t u1, uint32_t slot) {
        int64_t tag[kMaxTaps];
        float* ws = s2 ? bd.slot(slot) : nullptr;
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t n = u / s.G, ch = u % s.G;
          const float* xc = x + (n * s.C + ch) * s.H * s.W;
          const float* wc = w + ch * s.kstride;
          float* yc = y + (n * s.CO + ch) * s.OH * s.OW;
          const float bv = bias ? bias[ch] : 0.f;
          for (int64_t t = 0; t < s.KH && t < kMaxTaps; ++t) tag[t] = -1;
          for (int64_t oh = 0; oh < s.OH; ++oh) {
            float* __restrict yr = yc + oh * s.OW;
            if (s2 || (s.sw == 1 && s.KH * s.KW <= kMaxTaps)) {
              if (s2) DepthwiseRowS2(s, xc, wc, bv, oh, ws, tag, yr);
              else DepthwiseRowStride1(s, xc, wc, bv, oh, yr);
              if (c->activation() != fb::Activation::NONE)
                ActivateRow(c->activation(), yr, yr, uint64_t(s.OW), c->alpha(), c->beta());
              continue;
            }
            for (int64_t ow = 0; ow < s.OW; ++ow) yr[ow] = bv;
            for (int64_t kh = 0; kh < s.KH; ++kh) {
              const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
              if (ih < 0 || ih >= s.H) continue;
              const float* __restrict row = xc + ih * s.W;
              for (int64_t kw = 0; kw < s.KW; ++kw) {
                const float wv = wc[(kh * s.KW + kw) * 8];
                // Output columns whose tap iw = ow*sw + off lies in [0, W).
                const int64_t off = kw * s.dw - s.pl;
                const int64_t lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
                int64_t hi = s.W - 1 - off < 0 ? 0 : (s.W - 1 - off) / s.sw + 1;
                hi = hi < s.OW ? hi : s.OW;
                if (s.sw == 1) {
                  int64_t ow = lo;
                  for (; ow + 4 <= hi; ow += 4)
                    Store4(yr + ow, Load4(yr + ow) + wv * Load4(row + ow + off));
                  for (; ow < hi; ++ow) yr[ow] += wv * row[ow + off];
                } else if (s.sw == 2) {
                  // Four outputs read the even lanes of eight inputs: two loads
                  // and a shuffle, while all eight lie inside the row.
                  const V4 w4 = V4{} + wv;
                  int64_t ow = lo;
                  for (; ow + 4 <= hi && 2 * ow + off + 8 <= s.W; ow += 4) {
                    const float* p = row + 2 * ow + off;
                    const V4 even = __builtin_shufflevector(Load4(p), Load4(p + 4), 0, 2, 4, 6);
                    Store4(yr + ow, Load4(yr + ow) + w4 * even);
                  }
                  for (; ow < hi; ++ow) yr[ow] += wv * row[2 * ow + off];
                } else {
                  for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * row[ow * s.sw + off];
                }
              }
            }
            if (c->activation() != fb::Activation::NONE)
              ActivateRow(c->activation(), yr, yr, uint64_t(s.OW), c->alpha(), c->beta());
          }
        }
      });
}

}  // namespace

bool BandApplies(const Shape& s) {
  return (s.sw == 1 || (s.sw == 2 && s.dw == 1)) && s.W <= 192 && BandRows(s) > 0;
}

uint64_t S2RingFloats(const Shape& s) { return uint64_t(s.KH) * 2 * uint64_t(HalfWidth(s)); }

bool S2Applies(const Shape& s) {
  return s.sw == 2 && s.dw == 1 && s.dh == 1 && s.KH * s.KW <= kMaxTaps &&
         S2RingFloats(s) <= uint64_t(kRingFloats);
}

uint64_t BandFloats(const Shape& s) {
  return uint64_t(BandInputRows(s, BandRows(s)) * BandPitch(s));
}

void RunDepthwise(const ConvCall& call) { Depthwise(call, false); }
void RunDepthwiseRing(const ConvCall& call) { Depthwise(call, true); }

// Threads split the output rows (of every image and channel).
void RunDepthwiseBand(const ConvCall& call) {
  const Shape& s = call.s;
  const float *x = call.x, *w = call.w, *bias = call.bias;
  float* y = call.y;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  const int64_t HW = s.H * s.W, OHW = s.OH * s.OW;
  ForRangeSlots(bd.par, s.N * s.G * s.OH, MinUnits(s.cog * s.OW * s.KH * s.KW),
                [&](int64_t u0, int64_t u1, uint32_t slot) {
                  for (int64_t u = u0; u < u1;) {
                    const int64_t nc = u / s.OH, r0 = u % s.OH, n = nc / s.G, ch = nc % s.G;
                    const int64_t r1 = u1 - u < s.OH - r0 ? r0 + (u1 - u) : s.OH;
                    DepthwiseBand(s, x + (n * s.C + ch) * HW, w + ch * s.nb * s.kstride,
                                  bias ? bias + ch * s.cog : nullptr, bd.slot(slot),
                                  y + (n * s.CO + ch * s.cog) * OHW, c, r0, r1);
                    u += r1 - r0;
                  }
                });
}

}  // namespace vnpu
}  // namespace epctx
