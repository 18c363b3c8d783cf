/* SPDX-License-Identifier: Apache-2.0 */
// Weighted sums of rows, the inner loop of depthwise convolution:
//   y[i] = bias + sum over t < nt of w[t] * rows[t][i],  i in [0, n)
// Each output is summed over every tap in registers and written once. The
// caller offsets each row to its tap (rows[t] = input row + tap offset), so
// one call covers the interior columns of an output row whose taps all lie
// inside the input. Chosen per instruction set like the SGEMM tile
// (AVX-512, AVX2, NEON through the portable 4-float vectors, portable), and
// re-entrant.
#ifndef EPCTX_UK_ROWS_H
#define EPCTX_UK_ROWS_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {

void WeightedRows(const float* const* rows, const float* w, int64_t nt, float bias, float* y,
                  int64_t n, Isa isa = Isa::kAuto);

// nrows such rows in one call (a band of a depthwise plane): output row r
// reads rows[t] + r * in_stride and is written at y + r * out_stride.
void WeightedRowBand(const float* const* rows, const float* w, int64_t nt, float bias, float* y,
                     int64_t n, int64_t nrows, int64_t in_stride, int64_t out_stride,
                     Isa isa = Isa::kAuto);

}  // namespace uk
}  // namespace epctx

#endif
