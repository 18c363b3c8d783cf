// SPDX-License-Identifier: Apache-2.0
// ActivateRow and BinaryRow (elementwise.h): one body (elementwise_body.h)
// compiled at three vector widths. The AVX2 and AVX-512 copies are compiled
// under a target pragma and called only when BestIsa() says the CPU runs
// them; the portable one (4 floats: SSE2 on baseline x86-64, NEON on
// aarch64) serves the rest. This file is compiled with -ffp-contract=off
// (CMakeLists.txt), so no width fuses a multiply and an add: the results
// agree bit for bit.
#include "epctx_uk/elementwise.h"
#include "isa_target.h"
#if defined(__x86_64__)
#include "avx2.h"    // Transpose8 for the AVX2 copy's DotRows8
#include "avx512.h"  // Transpose16 for the AVX-512 copy's DotRows16
#endif

#define EPCTX_EW_SUFFIX Portable
#define EPCTX_EW_LANES 4
#include "elementwise_body.h"
#undef EPCTX_EW_SUFFIX
#undef EPCTX_EW_LANES

#if defined(__x86_64__)
EPCTX_ISA_BEGIN("avx2,fma")
#define EPCTX_EW_SUFFIX Avx2
#define EPCTX_EW_LANES 8
#include "elementwise_body.h"
#undef EPCTX_EW_SUFFIX
#undef EPCTX_EW_LANES
EPCTX_ISA_END()

EPCTX_ISA_BEGIN("avx2,fma,avx512f,avx512vl")
#define EPCTX_EW_SUFFIX Avx512
#define EPCTX_EW_LANES 16
#include "elementwise_body.h"
#undef EPCTX_EW_SUFFIX
#undef EPCTX_EW_LANES
EPCTX_ISA_END()
#endif

namespace epctx {
namespace uk {

void ActivateRow(Act k, const float* x, float* y, int64_t n, float alpha, float beta, Isa isa) {
  isa = ResolveIsa(isa);
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return detail::ActivateRowAvx512(k, x, y, n, alpha, beta);
  if (isa == Isa::kAvx2) return detail::ActivateRowAvx2(k, x, y, n, alpha, beta);
#endif
  detail::ActivateRowPortable(k, x, y, n, alpha, beta);
}

void ActivateRows(Act k, float* y, int64_t rows, int64_t n, int64_t ld, float alpha, float beta,
                  Isa isa) {
  isa = ResolveIsa(isa);
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return detail::ActivateRowsAvx512(k, y, rows, n, ld, alpha, beta);
  if (isa == Isa::kAvx2) return detail::ActivateRowsAvx2(k, y, rows, n, ld, alpha, beta);
#endif
  detail::ActivateRowsPortable(k, y, rows, n, ld, alpha, beta);
}

void SoftmaxRow(const float* x, float* y, int64_t n, Isa isa) {
  if (n <= 0) return;
  isa = ResolveIsa(isa);
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return detail::SoftmaxRowAvx512(x, y, n);
  if (isa == Isa::kAvx2) return detail::SoftmaxRowAvx2(x, y, n);
#endif
  detail::SoftmaxRowPortable(x, y, n);
}

void DotRows(const float* a, const float* b, int64_t ldb, int64_t n, int64_t k, float* c, Isa isa) {
  isa = ResolveIsa(isa);
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return detail::DotRowsAvx512(a, b, ldb, n, k, c);
  if (isa == Isa::kAvx2) return detail::DotRowsAvx2(a, b, ldb, n, k, c);
#endif
  detail::DotRowsPortable(a, b, ldb, n, k, c);
}

void BinaryRow(Bin k, const float* a, const float* b, float* y, int64_t n, int sa, int sb,
               Isa isa) {
  isa = ResolveIsa(isa);
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return detail::BinaryRowAvx512(k, a, b, y, n, sa, sb);
  if (isa == Isa::kAvx2) return detail::BinaryRowAvx2(k, a, b, y, n, sa, sb);
#endif
  detail::BinaryRowPortable(k, a, b, y, n, sa, sb);
}

}  // namespace uk
}  // namespace epctx
