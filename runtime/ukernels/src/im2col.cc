// SPDX-License-Identifier: Apache-2.0
// The portable im2col packer (im2col.h) and the choice of packer.
#include "im2col_common.h"
#include "vec4.h"

namespace epctx {
namespace uk {
namespace detail {
namespace {

// Taps up to which narrow maps are gathered through an offset table (3x3,
// 1x3).
constexpr int64_t kGatherTaps = 9;

// One piece of at most kIm2colPiece columns. Whole rows keep every run of
// valid taps contiguous in dst, so a stride-1 tap row is one straight copy.
// The pixels are cut once into output-row runs; per row k and run the valid
// columns are one range, so no pixel is bounds-checked on its own.
void Piece(const Im2colShape& s, const float* x, int64_t k0, int64_t kc, const Im2colRuns& r,
           int64_t np, int64_t padded, float* dst, int64_t pitch) {
  int64_t kw = k0 % s.KW, t = k0 / s.KW;
  int64_t kh = t % s.KH, c = t / s.KH;
  if (r.n > 3 && s.KH * s.KW <= kGatherTaps && s.H * s.W < (int64_t(1) << 31)) {
    // Rows of a few columns (a piece spans more than 3 output rows): the
    // run bookkeeping would cost more than the copies. Each tap's offsets
    // into a channel plane (-1: padding) are the same for every input
    // channel, so they are computed once and each K row is a gather.
    int32_t map[kGatherTaps][kIm2colPiece];
    for (int64_t th = 0; th < s.KH; ++th)
      for (int64_t tw = 0; tw < s.KW; ++tw) {
        int32_t* m = map[th * s.KW + tw];
        for (int64_t g = 0; g < r.n; ++g) {
          const Im2colRun& sg = r.run[g];
          const int64_t ih = sg.oh * s.sh - s.pt + th * s.dh;
          for (int64_t o = sg.ow0; o < sg.ow1; ++o) {
            const int64_t iw = o * s.sw + tw * s.dw - s.pl;
            m[sg.j + o - sg.ow0] =
                ih >= 0 && ih < s.H && iw >= 0 && iw < s.W ? int32_t(ih * s.W + iw) : -1;
          }
        }
      }
    for (int64_t k = 0; k < kc; ++k) {
      float* __restrict d = dst + k * pitch;
      const float* xc = x + c * s.plane;
      const int32_t* m = map[kh * s.KW + kw];
      for (int64_t j = 0; j < np; ++j) d[j] = m[j] >= 0 ? xc[m[j]] : 0.0f;
      for (int64_t j = np; j < padded; ++j) d[j] = 0.0f;
      NextTap(s, &kw, &kh, &c);
    }
    return;
  }
  for (int64_t k = 0; k < kc; ++k) {
    float* __restrict d = dst + k * pitch;
    const float* xc = x + c * s.plane;
    const int64_t off = kw * s.dw - s.pl;
    int64_t lo, hi;
    ValidColumns(s, off, &lo, &hi);
    for (int64_t g = 0; g < r.n; ++g) {
      const Im2colRun& sg = r.run[g];
      float* __restrict ds = d + (sg.j - sg.ow0);  // column of ow == 0
      int64_t a, b;
      const float* row = RunRange(s, sg, xc, kh, off, lo, hi, &a, &b);
      for (int64_t o = sg.ow0; o < a; ++o) ds[o] = 0.0f;
      if (a < b) {
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
    NextTap(s, &kw, &kh, &c);
  }
}

}  // namespace

void Im2colPortable(const Im2colShape& s, const float* x, int64_t k0, int64_t kc, int64_t p0,
                    int64_t np, float* dst, int64_t pitch) {
  Im2colRuns r;
  for (int64_t j0 = 0; j0 < np; j0 += kIm2colPiece) {
    const int64_t n = PieceCols(j0, np);
    CutRuns(s, p0 + j0, n, &r);
    Piece(s, x, k0, kc, r, n, PieceWrites(j0, n, np), dst + j0, pitch);
  }
}

}  // namespace detail

Im2colFn Im2colKernel(Isa isa) {
#if defined(__x86_64__)
  if (ResolveIsa(isa) == Isa::kAvx512) return detail::Im2colAvx512;
  if (ResolveIsa(isa) == Isa::kAvx2) return detail::Im2colAvx2;
#else
  (void)isa;
#endif
  return detail::Im2colPortable;
}

}  // namespace uk
}  // namespace epctx
