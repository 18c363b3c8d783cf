/* SPDX-License-Identifier: Apache-2.0 */
// The body of WeightedRows for one vector width, included once per
// instruction set by rows.cc with EPCTX_ROWS_FN (the function's name) and
// EPCTX_ROWS_LANES (floats per vector) defined. No include guard on purpose.
namespace epctx {
namespace uk {
namespace detail {

void EPCTX_ROWS_FN(const float* const* rows, const float* w, int64_t nt, float bias, float* y,
                   int64_t n) {
  // Unaligned, aliasing vector loads and stores through a 4-byte-aligned
  // vector type (a lambda here would not inherit the target pragma).
  typedef float V __attribute__((vector_size(EPCTX_ROWS_LANES * 4)));
  typedef float VU __attribute__((vector_size(EPCTX_ROWS_LANES * 4), aligned(4), may_alias));
  constexpr int64_t L = EPCTX_ROWS_LANES;
  const V b = V{} + bias;
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    V a0 = b, a1 = b, a2 = b, a3 = b;
    for (int64_t t = 0; t < nt; ++t) {
      const float* r = rows[t] + i;
      const V wt = V{} + w[t];
      a0 += wt * *reinterpret_cast<const VU*>(r);
      a1 += wt * *reinterpret_cast<const VU*>(r + L);
      a2 += wt * *reinterpret_cast<const VU*>(r + 2 * L);
      a3 += wt * *reinterpret_cast<const VU*>(r + 3 * L);
    }
    *reinterpret_cast<VU*>(y + i) = a0;
    *reinterpret_cast<VU*>(y + i + L) = a1;
    *reinterpret_cast<VU*>(y + i + 2 * L) = a2;
    *reinterpret_cast<VU*>(y + i + 3 * L) = a3;
  }
  for (; i + L <= n; i += L) {
    V a0 = b;
    for (int64_t t = 0; t < nt; ++t) a0 += (V{} + w[t]) * *reinterpret_cast<const VU*>(rows[t] + i);
    *reinterpret_cast<VU*>(y + i) = a0;
  }
  // Narrower vectors for the tail: a 46-column row would otherwise leave 14
  // columns to scalar code at 16 lanes.
  typedef float V8 __attribute__((vector_size(32), aligned(4), may_alias));
  typedef float V4 __attribute__((vector_size(16), aligned(4), may_alias));
  if (L > 8)
    for (; i + 8 <= n; i += 8) {
      V8 a0 = V8{} + bias;
      for (int64_t t = 0; t < nt; ++t)
        a0 += (V8{} + w[t]) * *reinterpret_cast<const V8*>(rows[t] + i);
      *reinterpret_cast<V8*>(y + i) = a0;
    }
  if (L > 4)
    for (; i + 4 <= n; i += 4) {
      V4 a0 = V4{} + bias;
      for (int64_t t = 0; t < nt; ++t)
        a0 += (V4{} + w[t]) * *reinterpret_cast<const V4*>(rows[t] + i);
      *reinterpret_cast<V4*>(y + i) = a0;
    }
  for (; i < n; ++i) {
    float a = bias;
    for (int64_t t = 0; t < nt; ++t) a += w[t] * rows[t][i];
    y[i] = a;
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx
