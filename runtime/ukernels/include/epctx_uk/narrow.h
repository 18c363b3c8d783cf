/* SPDX-License-Identifier: Apache-2.0 */
// The last few columns of a convolution's GEMM, with rows in the vectors.
//
// A block tile (sgemm.h) puts columns (output pixels) in its vectors, so a
// map whose pixel count leaves 1 to 8 columns past the last 48-pixel block
// (7x7: 1, 14x14: 4) pays a padded 8-column block of 8 rows for each of
// them: one useful multiply-add in eight. Here the vectors run down the
// rows instead, 8 rows of a weight panel each (the vnpu's blocked layout:
// row r of panel p at k is a[p * a_ps + k * 8 + r % 8]), 8 panels and 3
// columns at a time (24 accumulators), every lane useful.
#ifndef EPCTX_UK_NARROW_H
#define EPCTX_UK_NARROW_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {

struct NarrowTile {
  int64_t kc;
  const float* a;  // panel 0 at k = 0
  int64_t a_ps;    // floats from one 8-row panel to the next (k-stride 8)
  const float* b;  // column j at k: b[k * b_ks + j]
  int64_t b_ks;
  float* c;  // row r, column j: c[r * ldc + j]
  int64_t ldc;
  int32_t rows, cols;     // cols 1..8
  bool accumulate, last;  // add to C; apply row_bias and the clamp
  const float* row_bias;  // [rows] or null
  float lo, hi;
};

// The most columns a NarrowTile takes.
constexpr int32_t kNarrowCols = 8;

// A kernel computing C = (C +) A x B over kc, then on the last slice +
// row_bias and min(max(v, lo), hi) (a NaN stays NaN); rows past `rows` of
// the last panel are computed (the panels are padded to 8) and never
// stored, tiles outside the contract (no rows, 0 or over 8 columns) do
// nothing. The kernel of `isa` (kAuto: BestIsa()), resolved once (a plan
// keeps it): AVX2 and AVX-512 CPUs have one; elsewhere it is null and
// callers keep their block tiles (no code for microcontrollers).
using NarrowFn = void (*)(const NarrowTile& t);
NarrowFn NarrowKernel(Isa isa = Isa::kAuto);

}  // namespace uk
}  // namespace epctx

#endif
