// SPDX-License-Identifier: Apache-2.0
// PoolRow (pool.h): one body (pool_body.h) compiled at three vector widths
// for strides 1 and 2, as rows.cc does, and one scalar loop for the other
// strides, rows under 4 outputs, and rows with a NaN in some window. The
// scalar loop is the rule the vectors must match. 32-bit and
// microcontroller targets (no 4-float vector unit to speak of; generic
// vectors there are scalar code 4 times over) take the scalar loop alone.
#include "epctx_uk/pool.h"
#include "isa_target.h"

namespace epctx {
namespace uk {
namespace detail {
namespace {

// y[i] for i in [0, n) from rows[t][col0 + i * stride].
void PoolRowScalar(bool max, const float* const* rows, int64_t nt, int64_t stride, float scale,
                   float* y, int64_t n, int64_t col0) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = col0 + i * stride;
    float a = max ? -__builtin_inff() : 0.f;
    for (int64_t t = 0; t < nt; ++t) {
      const float v = rows[t][c];
      if (!max) a += v;
      else if (v > a || (v != v && a == a)) a = v;
    }
    y[i] = max ? a : a * scale;
  }
}

}  // namespace
}  // namespace detail
}  // namespace uk
}  // namespace epctx

#if defined(__x86_64__) || defined(__aarch64__)
#define EPCTX_POOL_VECTORS 1
#define EPCTX_POOL_FN PoolRowPortable
#define EPCTX_POOL_LANES 4
#include "pool_body.h"
#undef EPCTX_POOL_FN
#undef EPCTX_POOL_LANES
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#define EPCTX_QPOOL_FN QMaxRowsPortable
#include "qpool_body.h"
#undef EPCTX_QPOOL_FN
#endif

#if defined(__x86_64__)
EPCTX_ISA_BEGIN("avx2")
#define EPCTX_QPOOL_FN QMaxRowsAvx2
#include "qpool_body.h"
#undef EPCTX_QPOOL_FN
EPCTX_ISA_END()

EPCTX_ISA_BEGIN("avx2,fma")
#define EPCTX_POOL_FN PoolRowAvx2
#define EPCTX_POOL_LANES 8
#include "pool_body.h"
#undef EPCTX_POOL_FN
#undef EPCTX_POOL_LANES
EPCTX_ISA_END()

EPCTX_ISA_BEGIN("avx2,fma,avx512f,avx512vl")
#define EPCTX_POOL_FN PoolRowAvx512
#define EPCTX_POOL_LANES 16
#include "pool_body.h"
#undef EPCTX_POOL_FN
#undef EPCTX_POOL_LANES
EPCTX_ISA_END()
#endif

namespace epctx {
namespace uk {

void PoolRow(PoolOp op, const float* const* rows, int64_t nt, int64_t stride, float scale, float* y,
             int64_t n, Isa isa) {
  if (n < 1) return;
  const bool max = op == PoolOp::kMax;
#if defined(EPCTX_POOL_VECTORS)
  if (nt >= 1 && (stride == 1 || stride == 2)) {
    isa = ResolveIsa(isa);
#if defined(__x86_64__)
    if (isa == Isa::kAvx512) return detail::PoolRowAvx512(max, rows, nt, stride, scale, y, n);
    if (isa == Isa::kAvx2) return detail::PoolRowAvx2(max, rows, nt, stride, scale, y, n);
#endif
    return detail::PoolRowPortable(max, rows, nt, stride, scale, y, n);
  }
#else
  (void)isa;
#endif
  detail::PoolRowScalar(max, rows, nt, stride, scale, y, n, 0);
}

namespace {

// y[i] for i in [0, n) from rows[t][i * stride], T uint8_t or int8_t.
template <typename T>
void QMaxScalar(const uint8_t* const* rows, int64_t nt, int64_t stride, uint8_t* y, int64_t n,
                T lowest) {
  for (int64_t i = 0; i < n; ++i) {
    T m = lowest;
    for (int64_t t = 0; t < nt; ++t) {
      const T v = T(rows[t][i * stride]);
      m = v > m ? v : m;
    }
    y[i] = uint8_t(m);
  }
}

}  // namespace

void QMaxPoolRow(const uint8_t* const* rows, int64_t nt, int64_t stride, bool is_signed, uint8_t* y,
                 int64_t n) {
  if (n < 1) return;
#if defined(EPCTX_POOL_VECTORS)
  if (n >= 16 && (stride == 1 || stride == 2)) {
#if defined(__x86_64__)
    // Baseline x86-64 (SSE2) has no byte shuffle for stride 2.
    const Isa isa = ResolveIsa(Isa::kAuto);
    if (isa == Isa::kAvx512 || isa == Isa::kAvx2)
      return detail::QMaxRowsAvx2(rows, nt, stride, is_signed, y, n);
#endif
    return detail::QMaxRowsPortable(rows, nt, stride, is_signed, y, n);
  }
#endif
  if (is_signed) return QMaxScalar<int8_t>(rows, nt, stride, y, n, int8_t(-128));
  QMaxScalar<uint8_t>(rows, nt, stride, y, n, uint8_t(0));
}

}  // namespace uk
}  // namespace epctx
