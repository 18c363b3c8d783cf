/* SPDX-License-Identifier: Apache-2.0 */
// Pooling rows, the inner loop of max and average pooling:
//   y[i] = op over t < nt of rows[t][i * stride],  i in [0, n)
// The caller offsets each row to its tap (rows[t] = input row + tap
// offset), so one call covers the interior columns of an output row whose
// taps all lie inside the input; rows[t][i * stride] must be readable for
// every t < nt and i < n, and nothing past it is read. Stride 1 and 2 run
// as vectors (stride 2 takes the even lanes of two loads), other strides a
// scalar loop. Chosen per instruction set like WeightedRows (AVX-512, AVX2,
// the portable 4-float vectors for NEON and SSE2; 32-bit and
// microcontroller targets the scalar loop alone), and every width gives
// the same bits (but for which payload a sum of NaNs keeps). Re-entrant; y
// must not overlap the rows.
#ifndef EPCTX_UK_POOL_H
#define EPCTX_UK_POOL_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {

enum class PoolOp : uint32_t {
  // The first largest tap in tap order, or the first NaN when the window
  // holds one (a NaN makes the maximum NaN): the scalar loop
  // `m = -inf; for each v: if (v > m || (v != v && m == m)) m = v`.
  kMax = 0,
  // (((0 + tap 0) + tap 1) + ...) * scale, summed in tap order.
  kAverage = 1,
};

// nt < 1 gives -inf (kMax) or 0 (kAverage); n < 1 writes nothing.
void PoolRow(PoolOp op, const float* const* rows, int64_t nt, int64_t stride, float scale, float* y,
             int64_t n, Isa isa = Isa::kAuto);

// Max pooling rows of bytes, the int8 form of PoolRow's kMax:
//   y[i] = max over t < nt of rows[t][i * stride],  i in [0, n)
// read as uint8, or as int8 when `is_signed`. The same rules as PoolRow for
// what is read. Strides 1 and 2 run as 16-byte vectors (AVX2's byte
// shuffles on x86-64, plain SSE2 without them; NEON on aarch64), others
// and rows under 16 outputs a scalar loop; a
// maximum of integers has one answer, so every path gives the same bytes.
// nt < 1 gives the type's minimum.
void QMaxPoolRow(const uint8_t* const* rows, int64_t nt, int64_t stride, bool is_signed, uint8_t* y,
                 int64_t n);

}  // namespace uk
}  // namespace epctx

#endif
