/* SPDX-License-Identifier: Apache-2.0 */
// What the im2col packers (im2col.h) share: the cut of a pixel range into
// output-row runs and the valid columns of a tap row.
#ifndef EPCTX_UK_IM2COL_COMMON_H
#define EPCTX_UK_IM2COL_COMMON_H

#include "epctx_uk/im2col.h"

namespace epctx {
namespace uk {
namespace detail {

// Columns packed per piece: a piece's runs fit a fixed table.
constexpr int64_t kIm2colPiece = 48;

// Columns [j, j + ow1 - ow0) of a piece are output pixels (oh, ow0 .. ow1).
struct Im2colRun {
  int64_t j, oh, ow0, ow1;
};
struct Im2colRuns {
  Im2colRun run[kIm2colPiece];
  int64_t n;
};

// Cuts pixels [p, p + n) (n <= kIm2colPiece) into output-row runs.
inline void CutRuns(const Im2colShape& s, int64_t p, int64_t n, Im2colRuns* r) {
  int64_t oh = p / s.OW, ow = p - oh * s.OW, j = 0;
  r->n = 0;
  while (j < n) {
    const int64_t ow1 = s.OW - ow < n - j ? s.OW : ow + (n - j);
    r->run[r->n++] = Im2colRun{j, oh, ow, ow1};
    j += ow1 - ow;
    ow = 0;
    ++oh;
  }
}

// Columns of the piece from j0 of np (at most kIm2colPiece), and the
// columns it writes: those, the last piece's rounded up to whole strips.
inline int64_t PieceCols(int64_t j0, int64_t np) {
  return np - j0 < kIm2colPiece ? np - j0 : kIm2colPiece;
}
inline int64_t PieceWrites(int64_t j0, int64_t n, int64_t np) {
  return j0 + n == np ? (n + 7) / 8 * 8 : n;
}

// The next K row's tap: kw, then kh, then the channel.
inline void NextTap(const Im2colShape& s, int64_t* kw, int64_t* kh, int64_t* c) {
  if (++*kw == s.KW) {
    *kw = 0;
    if (++*kh == s.KH) {
      *kh = 0;
      ++*c;
    }
  }
}

// Output columns ow whose input column ow * sw + off lies in [0, W):
// [lo, hi). (Stride 1 needs no division: this runs once per K row.)
inline void ValidColumns(const Im2colShape& s, int64_t off, int64_t* lo, int64_t* hi) {
  if (s.sw == 1) {
    *lo = off >= 0 ? 0 : -off;
    *hi = s.W - off < 0 ? 0 : s.W - off;
  } else {
    *lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
    *hi = s.W - 1 - off < 0 ? 0 : (s.W - 1 - off) / s.sw + 1;
  }
}

// Of run sg at tap row kh (channel plane xc, column offset off, valid
// columns [lo, hi)): the columns [*a, *b) that read the input (empty: a ==
// b == ow1) and the input row shifted by off, so column o reads
// row[o * sw]; null when the tap row lies in the padding.
inline const float* RunRange(const Im2colShape& s, const Im2colRun& sg, const float* xc, int64_t kh,
                             int64_t off, int64_t lo, int64_t hi, int64_t* a, int64_t* b) {
  *a = *b = sg.ow1;
  const int64_t ih = sg.oh * s.sh - s.pt + kh * s.dh;
  if (ih < 0 || ih >= s.H) return nullptr;
  const int64_t ra = lo > sg.ow0 ? lo : sg.ow0, rb = hi < sg.ow1 ? hi : sg.ow1;
  if (ra < rb) *a = ra, *b = rb;
  return xc + ih * s.W + off;
}

void Im2colPortable(const Im2colShape& s, const float* x, int64_t k0, int64_t kc, int64_t p0,
                    int64_t np, float* dst, int64_t pitch);
#if defined(__x86_64__)
void Im2colAvx2(const Im2colShape& s, const float* x, int64_t k0, int64_t kc, int64_t p0,
                int64_t np, float* dst, int64_t pitch);
void Im2colAvx512(const Im2colShape& s, const float* x, int64_t k0, int64_t kc, int64_t p0,
                  int64_t np, float* dst, int64_t pitch);
#endif

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
