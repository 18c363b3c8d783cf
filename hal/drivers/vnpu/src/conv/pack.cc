// SPDX-License-Identifier: Apache-2.0
// Row packers the conv strategies share: im2col rows (PackPatch), a row
// split into its even and odd columns, a zero-padded row.
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {
namespace {

// Taps up to which PackPatch gathers the rows of narrow maps (3x3, 1x3).
constexpr int64_t kGatherTaps = 9;

}  // namespace

// Rows [k0, k0+kc) (k = (ic, kh, kw)) x pixels [p0, p0+np) of the group's
// im2col matrix into buf as rows of one whole tile: buf[k * kNr + j] (the
// tile reads it with strip stride 8 and k stride kNr), columns past np zero.
// Whole rows keep every run of valid taps contiguous in buf, so a stride-1
// tap row is one straight copy, not a scatter over strips. The pixels are cut
// once into output-row segments; per row k and segment the valid columns are
// one range, so no pixel is bounds-checked on its own.
void PackPatch(const Shape& s, const float* xg, int64_t k0, int64_t kc, int64_t p0, int64_t np,
               float* buf, int64_t pitch) {
  struct Seg {
    int64_t j, oh, ow0, ow1;
  };
  Seg seg[uk::kNr];
  int64_t nseg = 0;
  {
    int64_t oh = p0 / s.OW, ow = p0 - oh * s.OW, j = 0;
    while (j < np) {
      const int64_t ow1 = s.OW - ow < np - j ? s.OW : ow + (np - j);
      seg[nseg++] = Seg{j, oh, ow, ow1};
      j += ow1 - ow;
      ow = 0;
      ++oh;
    }
  }
  const int64_t padded = (np + 7) / 8 * 8, HW = s.H * s.W;
  int64_t kw = k0 % s.KW, t = k0 / s.KW;
  int64_t kh = t % s.KH, ic = t / s.KH;
  if (nseg > 3 && s.KH * s.KW <= kGatherTaps && HW < (int64_t(1) << 31)) {
    // Rows of a few columns (a block spans more than 3 output rows): the
    // segment bookkeeping would cost more than the copies. Each tap's
    // offsets into a channel plane (-1: padding) are the same for every
    // input channel, so they are computed once and each K row is a gather.
    int32_t map[kGatherTaps][uk::kNr];
    for (int64_t th = 0; th < s.KH; ++th)
      for (int64_t tw = 0; tw < s.KW; ++tw) {
        int32_t* m = map[th * s.KW + tw];
        for (int64_t g = 0; g < nseg; ++g) {
          const Seg& sg = seg[g];
          const int64_t ih = sg.oh * s.sh - s.pt + th * s.dh;
          for (int64_t o = sg.ow0; o < sg.ow1; ++o) {
            const int64_t iw = o * s.sw + tw * s.dw - s.pl;
            m[sg.j + o - sg.ow0] =
                ih >= 0 && ih < s.H && iw >= 0 && iw < s.W ? int32_t(ih * s.W + iw) : -1;
          }
        }
      }
    for (int64_t k = 0; k < kc; ++k) {
      float* __restrict d = buf + k * pitch;
      const float* xc = xg + ic * HW;
      const int32_t* m = map[kh * s.KW + kw];
      for (int64_t j = 0; j < np; ++j) d[j] = m[j] >= 0 ? xc[m[j]] : 0.0f;
      for (int64_t j = np; j < padded; ++j) d[j] = 0.0f;
      if (++kw == s.KW) {
        kw = 0;
        if (++kh == s.KH) {
          kh = 0;
          ++ic;
        }
      }
    }
    return;
  }
  for (int64_t k = 0; k < kc; ++k) {
    float* __restrict d = buf + k * pitch;
    const float* xc = xg + ic * HW;
    // Output columns ow whose tap iw = ow * sw + off lies in [0, W): [lo, hi).
    const int64_t off = kw * s.dw - s.pl;
    // (Stride 1 needs no division: this runs once per K row of every block.)
    int64_t lo, hi;
    if (s.sw == 1) {
      lo = off >= 0 ? 0 : -off;
      hi = s.W - off < 0 ? 0 : s.W - off;
    } else {
      lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
      hi = s.W - 1 - off < 0 ? 0 : (s.W - 1 - off) / s.sw + 1;
    }
    for (int64_t g = 0; g < nseg; ++g) {
      const Seg& sg = seg[g];
      float* __restrict ds = d + (sg.j - sg.ow0);  // column of ow == 0
      const int64_t ih = sg.oh * s.sh - s.pt + kh * s.dh;
      int64_t a = sg.ow1, b = sg.ow1;
      if (ih >= 0 && ih < s.H) {
        a = lo > sg.ow0 ? lo : sg.ow0;
        b = hi < sg.ow1 ? hi : sg.ow1;
        if (b < a) a = b = sg.ow1;
      }
      for (int64_t o = sg.ow0; o < a; ++o) ds[o] = 0.0f;
      if (a < b) {
        const float* __restrict row = xc + ih * s.W + off;
        if (s.sw == 1) {
          int64_t o = a;
          for (; o + 4 <= b; o += 4) Store4(ds + o, Load4(row + o));
          if (o < b && b - a >= 4)  // the last four again, overlapping: no scalar tail
            Store4(ds + b - 4, Load4(row + b - 4));
          else
            for (; o < b; ++o) ds[o] = row[o];
        } else {
          int64_t o = a;
          if (s.sw == 2)  // even lanes of two vectors, while both lie in the row
            for (; o + 4 <= b && 2 * o + 8 <= s.W - off; o += 4)
              Store4(ds + o, __builtin_shufflevector(Load4(row + 2 * o), Load4(row + 2 * o + 4), 0,
                                                     2, 4, 6));
          for (; o < b; ++o) ds[o] = row[o * s.sw];
        }
      }
      for (int64_t o = b; o < sg.ow1; ++o) ds[o] = 0.0f;
    }
    for (int64_t j = np; j < padded; ++j) d[j] = 0.0f;
    if (++kw == s.KW) {
      kw = 0;
      if (++kh == s.KH) {
        kh = 0;
        ++ic;
      }
    }
  }
}

void SplitCols(const float* src, int64_t W, int64_t c0, int64_t n, float* ev, float* od) {
  auto one = [&](int64_t k) {
    const int64_t je = c0 + 2 * k, jo = je + 1;
    ev[k] = je >= 0 && je < W ? src[je] : 0.0f;
    od[k] = jo >= 0 && jo < W ? src[jo] : 0.0f;
  };
  int64_t i = 0;
  for (; i < n && c0 + 2 * i < 0; ++i) one(i);
  for (; i + 4 <= n && c0 + 2 * i + 8 <= W; i += 4) {
    const V4 a = Load4(src + c0 + 2 * i), b = Load4(src + c0 + 2 * i + 4);
    Store4(ev + i, __builtin_shufflevector(a, b, 0, 2, 4, 6));
    Store4(od + i, __builtin_shufflevector(a, b, 1, 3, 5, 7));
  }
  for (; i < n; ++i) one(i);
}

void PadRow(const float* src, int64_t w, int64_t pl, int64_t PW, float* dst) {
  const int64_t lo = pl < PW ? pl : PW;
  const int64_t n = w < PW - lo ? w : PW - lo;
  for (int64_t j = 0; j < lo; ++j) dst[j] = 0.0f;
  if (n > 0) __builtin_memcpy(dst + lo, src, size_t(n) * 4);
  for (int64_t j = lo + (n > 0 ? n : 0); j < PW; ++j) dst[j] = 0.0f;
}

}  // namespace vnpu
}  // namespace epctx
