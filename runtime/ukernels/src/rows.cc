// SPDX-License-Identifier: Apache-2.0
// WeightedRows (rows.h): one body (rows_body.h) compiled at three vector
// widths. The AVX2 and AVX-512 copies are compiled under a target pragma
// and called only when BestIsa() says the CPU runs them; the portable one
// (4 floats: SSE2 on baseline x86-64, NEON on aarch64) serves the rest.
#include "epctx_uk/rows.h"

#include <cstddef>

#include "isa_target.h"

#define EPCTX_ROWS_FN WeightedRowsPortable
#define EPCTX_ROWS_LANES 4
#include "rows_body.h"
#undef EPCTX_ROWS_FN
#undef EPCTX_ROWS_LANES

#if defined(__x86_64__)
EPCTX_ISA_BEGIN("avx2,fma")
#define EPCTX_ROWS_FN WeightedRowsAvx2
#define EPCTX_ROWS_LANES 8
#include "rows_body.h"
#undef EPCTX_ROWS_FN
#undef EPCTX_ROWS_LANES
EPCTX_ISA_END()

EPCTX_ISA_BEGIN("avx2,fma,avx512f,avx512vl")
#define EPCTX_ROWS_FN WeightedRowsAvx512
#define EPCTX_ROWS_LANES 16
#include "rows_body.h"
#undef EPCTX_ROWS_FN
#undef EPCTX_ROWS_LANES
EPCTX_ISA_END()
#endif

namespace epctx {
namespace uk {

void WeightedRowBand(const float* const* rows, const float* w, int64_t nt, float bias, float* y,
                     int64_t n, int64_t nrows, int64_t in_stride, int64_t out_stride, Isa isa) {
  isa = ResolveIsa(isa);
#if defined(__x86_64__)
  if (isa == Isa::kAvx512)
    return detail::WeightedRowsAvx512(rows, w, nt, bias, y, n, nrows, in_stride, out_stride);
  if (isa == Isa::kAvx2)
    return detail::WeightedRowsAvx2(rows, w, nt, bias, y, n, nrows, in_stride, out_stride);
#endif
  detail::WeightedRowsPortable(rows, w, nt, bias, y, n, nrows, in_stride, out_stride);
}

void WeightedRows(const float* const* rows, const float* w, int64_t nt, float bias, float* y,
                  int64_t n, Isa isa) {
  WeightedRowBand(rows, w, nt, bias, y, n, 1, 0, 0, isa);
}

}  // namespace uk
}  // namespace epctx
