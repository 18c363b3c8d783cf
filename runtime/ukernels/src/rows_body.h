/* SPDX-License-Identifier: Apache-2.0 */
// The body of WeightedRows / WeightedRowBand for one vector width, included once per
// instruction set by rows.cc with EPCTX_ROWS_FN (the function's name) and
// EPCTX_ROWS_LANES (floats per vector) defined. No include guard on purpose.
#define EPCTX_ROWS_CAT2(a, b) a##b
#define EPCTX_ROWS_CAT(a, b) EPCTX_ROWS_CAT2(a, b)
#define EPCTX_ROWS_REST EPCTX_ROWS_CAT(EPCTX_ROWS_FN, Rest)
#define EPCTX_ROWS_ROW EPCTX_ROWS_CAT(EPCTX_ROWS_FN, Row)

namespace epctx {
namespace uk {
namespace detail {
namespace {

template <int M>
void EPCTX_ROWS_REST(const float* const* rows, int64_t o, const float* w, int64_t nt, float bias,
                     float* y, int64_t i, int64_t n) {
  typedef float V __attribute__((vector_size(EPCTX_ROWS_LANES * 4)));
  typedef float VU __attribute__((vector_size(EPCTX_ROWS_LANES * 4), aligned(4), may_alias));
  typedef float V8 __attribute__((vector_size(32), aligned(4), may_alias));
  typedef float V4 __attribute__((vector_size(16), aligned(4), may_alias));
  constexpr int64_t L = EPCTX_ROWS_LANES;
  // M whole vectors, or (M < 0) as many as are left, counted at run time.
  const int64_t m = M >= 0 ? M : (n - i) / L;
  const int64_t j8 = i + m * L;  // after the whole vectors
  const bool h8 = L > 8 && n - j8 >= 8;
  const int64_t j4 = j8 + (h8 ? 8 : 0);
  const bool h4 = L > 4 && n - j4 >= 4;
  const int64_t js = j4 + (h4 ? 4 : 0), ns = n - js;  // 0..3 scalars
  // Even taps into the first set of accumulators, odd taps into the
  // second: two chains per piece.
  // The first set starts at the bias, as in the main loop, so a column's
  // bits do not depend on which path computed it.
  V a0 = V{} + bias, a1 = a0, a2 = a0, b0 = V{}, b1 = V{}, b2 = V{};
  V8 c8 = V8{} + bias, d8 = V8{};
  V4 c4 = V4{} + bias, d4 = V4{};
  float s0 = bias, s1 = bias, s2 = bias, u0 = 0, u1 = 0, u2 = 0;
#define EPCTX_ROWS_TAP(A0, A1, A2, C8, C4, S0, S1, S2, T)              \
  {                                                                    \
    const float* r = rows[T] + o;                                      \
    const float wt = w[T];                                             \
    if (m > 0) A0 += wt * *reinterpret_cast<const VU*>(r + i);         \
    if (m > 1) A1 += wt * *reinterpret_cast<const VU*>(r + i + L);     \
    if (m > 2) A2 += wt * *reinterpret_cast<const VU*>(r + i + 2 * L); \
    if (h8) C8 += wt * *reinterpret_cast<const V8*>(r + j8);           \
    if (h4) C4 += wt * *reinterpret_cast<const V4*>(r + j4);           \
    if (ns > 0) S0 += wt * r[js];                                      \
    if (ns > 1) S1 += wt * r[js + 1];                                  \
    if (ns > 2) S2 += wt * r[js + 2];                                  \
  }
  int64_t t = 0;
  for (; t + 2 <= nt; t += 2) {
    EPCTX_ROWS_TAP(a0, a1, a2, c8, c4, s0, s1, s2, t)
    EPCTX_ROWS_TAP(b0, b1, b2, d8, d4, u0, u1, u2, t + 1)
  }
  if (t < nt) EPCTX_ROWS_TAP(a0, a1, a2, c8, c4, s0, s1, s2, t)
#undef EPCTX_ROWS_TAP
  if (m > 0) *reinterpret_cast<VU*>(y + i) = a0 + b0;
  if (m > 1) *reinterpret_cast<VU*>(y + i + L) = a1 + b1;
  if (m > 2) *reinterpret_cast<VU*>(y + i + 2 * L) = a2 + b2;
  if (h8) *reinterpret_cast<V8*>(y + j8) = c8 + d8;
  if (h4) *reinterpret_cast<V4*>(y + j4) = c4 + d4;
  if (ns > 0) y[js] = s0 + u0;
  if (ns > 1) y[js + 1] = s1 + u1;
  if (ns > 2) y[js + 2] = s2 + u2;
}

// One row of n outputs whose taps read rows[t] + o.
void EPCTX_ROWS_ROW(const float* const* rows, int64_t o, const float* w, int64_t nt, float bias,
                    float* y, int64_t n) {
  // Unaligned, aliasing vector loads and stores through a 4-byte-aligned
  // vector type (a lambda here would not inherit the target pragma).
  typedef float V __attribute__((vector_size(EPCTX_ROWS_LANES * 4)));
  typedef float VU __attribute__((vector_size(EPCTX_ROWS_LANES * 4), aligned(4), may_alias));
  constexpr int64_t L = EPCTX_ROWS_LANES;
  const V b = V{} + bias;
  {
    int64_t i = 0;
    // Four vectors of outputs per step, even and odd taps in two sets of
    // accumulators: eight multiply-add chains, enough to cover the latency.
    for (; i + 4 * L <= n; i += 4 * L) {
      V a0 = b, a1 = b, a2 = b, a3 = b;
      V e0 = V{}, e1 = V{}, e2 = V{}, e3 = V{};
      int64_t t = 0;
      for (; t + 2 <= nt; t += 2) {
        const float* r = rows[t] + o + i;
        const float* q = rows[t + 1] + o + i;
        const V wt = V{} + w[t], wu = V{} + w[t + 1];
        a0 += wt * *reinterpret_cast<const VU*>(r);
        a1 += wt * *reinterpret_cast<const VU*>(r + L);
        a2 += wt * *reinterpret_cast<const VU*>(r + 2 * L);
        a3 += wt * *reinterpret_cast<const VU*>(r + 3 * L);
        e0 += wu * *reinterpret_cast<const VU*>(q);
        e1 += wu * *reinterpret_cast<const VU*>(q + L);
        e2 += wu * *reinterpret_cast<const VU*>(q + 2 * L);
        e3 += wu * *reinterpret_cast<const VU*>(q + 3 * L);
      }
      if (t < nt) {
        const float* r = rows[t] + o + i;
        const V wt = V{} + w[t];
        a0 += wt * *reinterpret_cast<const VU*>(r);
        a1 += wt * *reinterpret_cast<const VU*>(r + L);
        a2 += wt * *reinterpret_cast<const VU*>(r + 2 * L);
        a3 += wt * *reinterpret_cast<const VU*>(r + 3 * L);
      }
      *reinterpret_cast<VU*>(y + i) = a0 + e0;
      *reinterpret_cast<VU*>(y + i + L) = a1 + e1;
      *reinterpret_cast<VU*>(y + i + 2 * L) = a2 + e2;
      *reinterpret_cast<VU*>(y + i + 3 * L) = a3 + e3;
    }
    // The rest (under 4 vectors): every piece left, up to 3 vectors, one of
    // 8 and one of 4 lanes and 3 scalars, summed in one pass over the taps
    // with two accumulators each. One vector at a time would chain nt
    // dependent multiply-adds per piece: on the 40- and 20-column rows of
    // 5x5 depthwise layers that latency, not the arithmetic, was the time.
#if EPCTX_ROWS_LANES > 4
    switch ((n - i) / L) {
      case 3: EPCTX_ROWS_REST<3>(rows, o, w, nt, bias, y, i, n); break;
      case 2: EPCTX_ROWS_REST<2>(rows, o, w, nt, bias, y, i, n); break;
      case 1: EPCTX_ROWS_REST<1>(rows, o, w, nt, bias, y, i, n); break;
      default: EPCTX_ROWS_REST<0>(rows, o, w, nt, bias, y, i, n); break;
    }
#else
    // One instance counting at run time where code size matters more
    // (microcontrollers, and the rest of a row is at most 15 floats).
    if (i < n) EPCTX_ROWS_REST<-1>(rows, o, w, nt, bias, y, i, n);
#endif
  }
}

}  // namespace

void EPCTX_ROWS_FN(const float* const* rows, const float* w, int64_t nt, float bias, float* y,
                   int64_t n, int64_t nrows, int64_t in_stride, int64_t out_stride) {
#if EPCTX_ROWS_LANES > 4
  // Rows narrower than the main loop's four vectors (a 3x3 on 14x14: 8 +
  // 4 + 2 columns a tap) whose input rows lie in_stride < 2n apart (a band
  // of padded rows): several rows at once as one flat run of the input,
  // the columns between rows computed and dropped, into a stack buffer;
  // then each row's n columns are copied out. Reads stay inside what the
  // rows read: a dropped column of row r reads what row r + 1 reads.
  constexpr int64_t kFlat = 512;  // 2 KiB of stack
  if (nrows > 1 && n < 4 * EPCTX_ROWS_LANES && in_stride >= n && in_stride < 2 * n &&
      in_stride + n <= kFlat) {
    float flat[kFlat];
    const int64_t per = (kFlat - n) / in_stride + 1;  // rows per run
    for (int64_t r0 = 0; r0 < nrows; r0 += per) {
      const int64_t rc = nrows - r0 < per ? nrows - r0 : per;
      EPCTX_ROWS_ROW(rows, r0 * in_stride, w, nt, bias, flat, (rc - 1) * in_stride + n);
      for (int64_t r = 0; r < rc; ++r)
        __builtin_memcpy(y + (r0 + r) * out_stride, flat + r * in_stride, std::size_t(n) * 4);
    }
    return;
  }
#endif
  for (int64_t row = 0; row < nrows; ++row)
    EPCTX_ROWS_ROW(rows, row * in_stride, w, nt, bias, y + row * out_stride, n);
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#undef EPCTX_ROWS_REST
#undef EPCTX_ROWS_ROW
#undef EPCTX_ROWS_CAT
#undef EPCTX_ROWS_CAT2
