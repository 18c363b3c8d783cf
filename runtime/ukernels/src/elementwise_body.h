/* SPDX-License-Identifier: Apache-2.0 */
// The bodies of ActivateRow and BinaryRow for one vector width, included
// once per instruction set by elementwise.cc with EPCTX_EW_SUFFIX (appended
// to the names) and EPCTX_EW_LANES (floats per vector) defined. Tails run
// 8 and 4 lanes wide, then scalar, all the same operations. No include guard
// on purpose.
#define EPCTX_EW_CAT2(a, b) a##b
#define EPCTX_EW_CAT(a, b) EPCTX_EW_CAT2(a, b)
#define EPCTX_EW_NAME(n) EPCTX_EW_CAT(n, EPCTX_EW_SUFFIX)

namespace epctx {
namespace uk {
namespace detail {
namespace {

typedef float EPCTX_EW_NAME(V) __attribute__((vector_size(EPCTX_EW_LANES * 4)));
typedef float EPCTX_EW_NAME(VU)
    __attribute__((vector_size(EPCTX_EW_LANES * 4), aligned(4), may_alias));

// 2^n for whole n in [-126, 127] held in a float vector or scalar: n + 127
// is the exponent field.
template <typename T>
inline T EPCTX_EW_NAME(Pow2)(T n) {
  if constexpr (sizeof(T) == 4) {
    const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    T r;
    __builtin_memcpy(&r, &bits, 4);
    return r;
  } else {
    typedef int32_t VI __attribute__((vector_size(sizeof(T))));
    const VI bits = (__builtin_convertvector(n, VI) + 127) << 23;
    return (T)bits;  // same size: a bit cast
  }
}

// exp(-v) for the sigmoid: -v clamped to [-87, 88] (where exp neither
// overflows nor leaves the normal range), split into n ln2 + r with n whole
// (rounded by the 1.5 * 2^23 shifter) and |r| <= ln2 / 2, then Cephes'
// degree-6 polynomial for exp(r), scaled by 2^n. NaN stays NaN (every
// comparison with it is false). Within 2 ulp of expf.
template <typename T>
inline T EPCTX_EW_NAME(ExpNeg)(T v) {
  T t = T{} - v;
  t = t > 88.0f ? T{} + 88.0f : t;
  t = t < -87.0f ? T{} + -87.0f : t;
  // n from t with NaN read as 0 (converting NaN to an integer is undefined);
  // r keeps t, so a NaN still comes out NaN.
  const T tn = t == t ? t : T{} + 0.0f;
  const T n = (tn * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const T r = (t - n * 0.693359375f) - n * -2.12194440e-4f;
  T p = T{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = (p * r * r + r) + 1.0f;
  return p * EPCTX_EW_NAME(Pow2)(n);
}

// erf(v). Below |v| = 0.921875, v * P(v^2); above, 1 - exp(Q(|v|)) with
// |v| clamped to 3.925 (where erf rounds to 1 in float), the sign put back
// at the end. P (degree 5) and Q (degree 8) are least-squares fits to erf
// in double, relative error weighted for P; evaluated in float they stay
// within 4 ulp of erf below 0.92 and within 2^-23 above. NaN stays NaN and
// -0 stays -0 (every branch is a select on comparisons false for NaN).
template <typename T>
inline T EPCTX_EW_NAME(Erf)(T v) {
  const T a = v < 0.0f ? -v : v;
  const T t = a * a;
  T p = T{} + -6.078145234e-04f;
  p = p * t + 5.010433029e-03f;
  p = p * t + -2.677845582e-02f;
  p = p * t + 1.128214449e-01f;
  p = p * t + -3.761252463e-01f;
  p = p * t + 1.128379107e+00f;
  const T small = p * a;
  T b = a < 0.921875f ? T{} + 0.921875f : a;
  b = b > 3.925f ? T{} + 3.925f : b;
  T q = T{} + 1.653237064e-06f;
  q = q * b + -4.632928540e-05f;
  q = q * b + 5.986974575e-04f;
  q = q * b + -4.766614642e-03f;
  q = q * b + 2.643587254e-02f;
  q = q * b + -1.100969836e-01f;
  q = q * b + -6.318175197e-01f;
  q = q * b + -1.130233049e+00f;
  q = q * b + 3.187576949e-04f;
  T big = 1.0f - EPCTX_EW_NAME(ExpNeg)(T{} - q);
  big = a >= 3.925f ? T{} + 1.0f : big;
  const T r = a < 0.921875f ? small : big;
  return v < 0.0f ? -r : r;
}

// tanh(v). Below |v| = 0.625, v * P(v^2) (degree 5, fitted like erf's P:
// within 3 ulp); above, 1 - 2 / (exp(2|v|) + 1) with exp by the sigmoid's
// polynomial (within 3 ulp; exp's clamp at 88 gives exactly 1 from |v| = 9
// on), the sign put back last. NaN stays NaN, -0 stays -0.
template <typename T>
inline T EPCTX_EW_NAME(Tanh)(T v) {
  const T a = v < 0.0f ? -v : v;
  const T t = a * a;
  T p = T{} + -5.759500898e-03f;
  p = p * t + 2.068056352e-02f;
  p = p * t + -5.374899879e-02f;
  p = p * t + 1.333147883e-01f;
  p = p * t + -3.333327472e-01f;
  p = p * t + 1.0f;
  const T small = p * a;
  const T big = 1.0f - 2.0f / (EPCTX_EW_NAME(ExpNeg)(-2.0f * a) + 1.0f);
  const T r = a < 0.625f ? small : big;
  return v < 0.0f ? -r : r;
}

// One activation on a vector or a scalar (T is either): the same operations.
template <Act K, typename T>
inline T EPCTX_EW_NAME(Apply)(T v, float alpha, float beta, bool affine) {
  if constexpr (K == Act::kSigmoid) {
    return 1.0f / (EPCTX_EW_NAME(ExpNeg)(v) + 1.0f);
  } else if constexpr (K == Act::kSwish) {
    return v * (1.0f / (EPCTX_EW_NAME(ExpNeg)(v) + 1.0f));
  } else if constexpr (K == Act::kErf) {
    return EPCTX_EW_NAME(Erf)(v);
  } else if constexpr (K == Act::kGelu) {
    return v * (EPCTX_EW_NAME(Erf)(v * alpha) + 1.0f) * beta;
  } else if constexpr (K == Act::kTanh) {
    return EPCTX_EW_NAME(Tanh)(v);
  } else if constexpr (K == Act::kRelu) {
    return v > 0.0f ? v : T{} + 0.0f;
  } else if constexpr (K == Act::kLeaky) {
    return v >= 0.0f ? v : v * alpha;
  } else if constexpr (K == Act::kLeakyMax) {
    const T l = v >= 0.0f ? v : v * alpha;
    return l > beta ? l : T{} + beta;
  } else if constexpr (K == Act::kHardSigmoid) {
    const T h = v * alpha + beta;
    const T r = h > 1.0f ? T{} + 1.0f : h;
    return h < 0.0f ? T{} + 0.0f : r;
  } else if constexpr (K == Act::kClip) {
    const T r = v > beta ? T{} + beta : v;
    return v < alpha ? T{} + alpha : r;
  } else {
    T h = v + 3.0f;
    h = h < 0.0f ? T{} + 0.0f : h;
    h = h > 6.0f ? T{} + 6.0f : h;
    T r = v * h / 6.0f;
    return affine ? r * alpha + beta : r;
  }
}

template <Act K>
void EPCTX_EW_NAME(ActRow)(const float* x, float* y, int64_t n, float alpha, float beta) {
  typedef EPCTX_EW_NAME(VU) VU;
  constexpr int64_t L = EPCTX_EW_LANES;
  const bool affine = !(alpha == 1.0f && beta == 0.0f);
  int64_t i = 0;
#if !defined(__x86_64__) && !defined(__aarch64__)
  // 32-bit and microcontroller targets (no 4-float vector unit to speak of)
  // take erf one float at a time: a quarter of the code of the vector body.
  if constexpr (K == Act::kErf || K == Act::kTanh || K == Act::kGelu) {
    for (; i < n; ++i) y[i] = EPCTX_EW_NAME(Apply)<K>(x[i], alpha, beta, affine);
    return;
  }
#endif
  if constexpr (L > 4) {
    // Two vectors per step where vectors are wide (the portable one keeps
    // its code small for microcontrollers).
    for (; i + 2 * L <= n; i += 2 * L) {
      const VU v0 = *reinterpret_cast<const VU*>(x + i);
      const VU v1 = *reinterpret_cast<const VU*>(x + i + L);
      *reinterpret_cast<VU*>(y + i) = EPCTX_EW_NAME(Apply)<K>(v0, alpha, beta, affine);
      *reinterpret_cast<VU*>(y + i + L) = EPCTX_EW_NAME(Apply)<K>(v1, alpha, beta, affine);
    }
  }
  for (; i + L <= n; i += L)
    *reinterpret_cast<VU*>(y + i) =
        EPCTX_EW_NAME(Apply)<K>(*reinterpret_cast<const VU*>(x + i), alpha, beta, affine);
  // Narrower vectors for the tail (a 24-column block of a conv is 16 + 8),
  // then at most 3 scalars.
  typedef float V8 __attribute__((vector_size(32), aligned(4), may_alias));
  typedef float V4 __attribute__((vector_size(16), aligned(4), may_alias));
  if constexpr (L > 8) {
    if (i + 8 <= n) {
      *reinterpret_cast<V8*>(y + i) =
          EPCTX_EW_NAME(Apply)<K>(*reinterpret_cast<const V8*>(x + i), alpha, beta, affine);
      i += 8;
    }
  }
  if constexpr (L > 4) {
    if (i + 4 <= n) {
      *reinterpret_cast<V4*>(y + i) =
          EPCTX_EW_NAME(Apply)<K>(*reinterpret_cast<const V4*>(x + i), alpha, beta, affine);
      i += 4;
    }
  }
  for (; i < n; ++i) y[i] = EPCTX_EW_NAME(Apply)<K>(x[i], alpha, beta, affine);
}

template <Bin K, typename T, typename U>
inline auto EPCTX_EW_NAME(Op)(T a, U b) {
  if constexpr (K == Bin::kAdd) return a + b;
  if constexpr (K == Bin::kSub) return a - b;
  if constexpr (K == Bin::kMul) return a * b;
  if constexpr (K == Bin::kDiv) return a / b;
  if constexpr (K == Bin::kMax) return a > b ? a : b;
  if constexpr (K == Bin::kMin) return a < b ? a : b;
}

// A held scalar operand (stride 0) is read from a splat of it on the stack
// through the same vector loads (a + i * 0 is the splat), so one loop serves
// every stride pair.
template <Bin K>
void EPCTX_EW_NAME(BinRow)(const float* a, const float* b, float* y, int64_t n, int sa, int sb) {
  typedef EPCTX_EW_NAME(VU) VU;
  constexpr int64_t L = EPCTX_EW_LANES;
  float as[L], bs[L];
  for (int64_t j = 0; j < L; ++j) {
    as[j] = a[0];
    bs[j] = b[0];
  }
  if (!sa) a = as;
  if (!sb) b = bs;
  int64_t i = 0;
  for (; i + L <= n; i += L)
    *reinterpret_cast<VU*>(y + i) = EPCTX_EW_NAME(Op)<K>(*reinterpret_cast<const VU*>(a + i * sa),
                                                         *reinterpret_cast<const VU*>(b + i * sb));
  typedef float V8 __attribute__((vector_size(32), aligned(4), may_alias));
  typedef float V4 __attribute__((vector_size(16), aligned(4), may_alias));
  if constexpr (L > 8) {
    if (i + 8 <= n) {
      *reinterpret_cast<V8*>(y + i) = EPCTX_EW_NAME(Op)<K>(
          *reinterpret_cast<const V8*>(a + i * sa), *reinterpret_cast<const V8*>(b + i * sb));
      i += 8;
    }
  }
  if constexpr (L > 4) {
    if (i + 4 <= n) {
      *reinterpret_cast<V4*>(y + i) = EPCTX_EW_NAME(Op)<K>(
          *reinterpret_cast<const V4*>(a + i * sa), *reinterpret_cast<const V4*>(b + i * sb));
      i += 4;
    }
  }
  for (; i < n; ++i) y[i] = EPCTX_EW_NAME(Op)<K>(a[i * sa], b[i * sb]);
}

}  // namespace

void EPCTX_EW_NAME(ActivateRow)(Act k, const float* x, float* y, int64_t n, float alpha,
                                float beta) {
  switch (k) {
    case Act::kRelu: return EPCTX_EW_NAME(ActRow)<Act::kRelu>(x, y, n, alpha, beta);
    case Act::kLeaky: return EPCTX_EW_NAME(ActRow)<Act::kLeaky>(x, y, n, alpha, beta);
    case Act::kLeakyMax: return EPCTX_EW_NAME(ActRow)<Act::kLeakyMax>(x, y, n, alpha, beta);
    case Act::kClip: return EPCTX_EW_NAME(ActRow)<Act::kClip>(x, y, n, alpha, beta);
    case Act::kHardSwish: return EPCTX_EW_NAME(ActRow)<Act::kHardSwish>(x, y, n, alpha, beta);
    case Act::kSigmoid: return EPCTX_EW_NAME(ActRow)<Act::kSigmoid>(x, y, n, alpha, beta);
    case Act::kErf: return EPCTX_EW_NAME(ActRow)<Act::kErf>(x, y, n, alpha, beta);
    case Act::kTanh: return EPCTX_EW_NAME(ActRow)<Act::kTanh>(x, y, n, alpha, beta);
    case Act::kHardSigmoid: return EPCTX_EW_NAME(ActRow)<Act::kHardSigmoid>(x, y, n, alpha, beta);
    case Act::kSwish: return EPCTX_EW_NAME(ActRow)<Act::kSwish>(x, y, n, alpha, beta);
    case Act::kGelu: return EPCTX_EW_NAME(ActRow)<Act::kGelu>(x, y, n, alpha, beta);
  }
}

template <Act K>
void EPCTX_EW_NAME(ActRowsK)(float* y, int64_t rows, int64_t n, int64_t ld, float alpha,
                             float beta) {
  for (int64_t r = 0; r < rows; ++r)
    EPCTX_EW_NAME(ActRow)<K>(y + r * ld, y + r * ld, n, alpha, beta);
}

void EPCTX_EW_NAME(ActivateRows)(Act k, float* y, int64_t rows, int64_t n, int64_t ld, float alpha,
                                 float beta) {
  switch (k) {
    case Act::kRelu: return EPCTX_EW_NAME(ActRowsK)<Act::kRelu>(y, rows, n, ld, alpha, beta);
    case Act::kLeaky: return EPCTX_EW_NAME(ActRowsK)<Act::kLeaky>(y, rows, n, ld, alpha, beta);
    case Act::kLeakyMax:
      return EPCTX_EW_NAME(ActRowsK)<Act::kLeakyMax>(y, rows, n, ld, alpha, beta);
    case Act::kClip: return EPCTX_EW_NAME(ActRowsK)<Act::kClip>(y, rows, n, ld, alpha, beta);
    case Act::kHardSwish:
      return EPCTX_EW_NAME(ActRowsK)<Act::kHardSwish>(y, rows, n, ld, alpha, beta);
    case Act::kSigmoid: return EPCTX_EW_NAME(ActRowsK)<Act::kSigmoid>(y, rows, n, ld, alpha, beta);
    case Act::kHardSigmoid:
      return EPCTX_EW_NAME(ActRowsK)<Act::kHardSigmoid>(y, rows, n, ld, alpha, beta);
    case Act::kSwish: return EPCTX_EW_NAME(ActRowsK)<Act::kSwish>(y, rows, n, ld, alpha, beta);
    case Act::kGelu: return EPCTX_EW_NAME(ActRowsK)<Act::kGelu>(y, rows, n, ld, alpha, beta);
    case Act::kErf:
    case Act::kTanh: break;  // never a convolution's epilogue: ActivateRow only
  }
}

void EPCTX_EW_NAME(BinaryRow)(Bin k, const float* a, const float* b, float* y, int64_t n, int sa,
                              int sb) {
  switch (k) {
    case Bin::kAdd: return EPCTX_EW_NAME(BinRow)<Bin::kAdd>(a, b, y, n, sa, sb);
    case Bin::kSub: return EPCTX_EW_NAME(BinRow)<Bin::kSub>(a, b, y, n, sa, sb);
    case Bin::kMul: return EPCTX_EW_NAME(BinRow)<Bin::kMul>(a, b, y, n, sa, sb);
    case Bin::kDiv: return EPCTX_EW_NAME(BinRow)<Bin::kDiv>(a, b, y, n, sa, sb);
    case Bin::kMax: return EPCTX_EW_NAME(BinRow)<Bin::kMax>(a, b, y, n, sa, sb);
    case Bin::kMin: return EPCTX_EW_NAME(BinRow)<Bin::kMin>(a, b, y, n, sa, sb);
  }
}

// R rows from b; `next` (or nullptr) is the block after, prefetched.
template <int R>
void EPCTX_EW_NAME(DotRowsK)(const float* a, const float* b, int64_t ldb, int64_t k, float* c,
                             const float* next) {
  typedef EPCTX_EW_NAME(VU) VU;
  typedef EPCTX_EW_NAME(V) V;
  constexpr int64_t L = EPCTX_EW_LANES, Q = 16 / L;
  V acc[R][Q];
  for (int r = 0; r < R; ++r)
    for (int64_t q = 0; q < Q; ++q) acc[r][q] = V{};
  int64_t i = 0;
  for (; i + 16 <= k; i += 16)
    for (int64_t q = 0; q < Q; ++q) {
      const V av = *reinterpret_cast<const VU*>(a + i + q * L);
      if (q == 0 && next)
        for (int r = 0; r < R; ++r) __builtin_prefetch(next + r * ldb + i);
      for (int r = 0; r < R; ++r)
        acc[r][q] += av * *reinterpret_cast<const VU*>(b + r * ldb + i + q * L);
    }
  for (int r = 0; r < R; ++r) {
    float s = 0.0f;
    for (int64_t q = 0; q < Q; ++q)
      for (int64_t j = 0; j < L; ++j) s += acc[r][q][j];
    for (int64_t t = i; t < k; ++t) s += a[t] * b[r * ldb + t];
    c[r] = s;
  }
}

#if EPCTX_EW_LANES == 16
// 16 rows, one zmm of 16 partial sums each (as DotRowsK<R>), reduced by a
// 16 x 16 transpose: vector j then holds lane j of every row, and adding
// the vectors to zero in order j = 0..15 sums each row's lanes in the
// scalar order, bit for bit, without 16 extracts per row (two thirds of a
// 128-long recurrent step's time). Multiply and add stay separate, as
// everywhere in this file.
void EPCTX_EW_NAME(DotRows16)(const float* a, const float* b, int64_t ldb, int64_t k, float* c,
                              const float* next) {
  __m512 acc[16];
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) acc[r] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m512 av = _mm512_loadu_ps(a + i);
    if (next)
      for (int r = 0; r < 16; ++r) __builtin_prefetch(next + r * ldb + i);
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r)
      acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(av, _mm512_loadu_ps(b + r * ldb + i)));
  }
  Transpose16(acc);
  __m512 sum = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int j = 0; j < 16; ++j) sum = _mm512_add_ps(sum, acc[j]);
  _mm512_storeu_ps(c, sum);
  for (int r = 0; r < 16; ++r) {
    float s = c[r];
    for (int64_t t = i; t < k; ++t) s += a[t] * b[r * ldb + t];
    c[r] = s;
  }
}
#endif

#if EPCTX_EW_LANES == 8
// 8 rows, 16 partial sums each (as DotRowsK<8>), reduced by 8 x 8
// transposes: partial sums 0-7 of the 8 rows first, then 8-15 (each pass 8
// accumulators, no spills; the rows are in L1 for the second). After a
// transpose vector j holds partial sum j of every row, so adding the
// vectors to zero in order sums each row's partial sums in the scalar
// order, bit for bit, without 16 extracts a row (DotRowsK<8> spent most of
// an LSTM step of hidden size 128 on them).
void EPCTX_EW_NAME(DotRows8)(const float* a, const float* b, int64_t ldb, int64_t k, float* c,
                             const float* next) {
  __m256 sum = _mm256_setzero_ps();
  int64_t i = 0;
  for (int64_t half = 0; half < 16; half += 8) {
    __m256 acc[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_ps();
    for (i = 0; i + 16 <= k; i += 16) {
      const __m256 av = _mm256_loadu_ps(a + i + half);
      if (half == 0 && next) {
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) __builtin_prefetch(next + r * ldb + i);
      }
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r)
        acc[r] = _mm256_add_ps(acc[r], _mm256_mul_ps(av, _mm256_loadu_ps(b + r * ldb + i + half)));
    }
    detail::Transpose8(acc);
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) sum = _mm256_add_ps(sum, acc[j]);
  }
  _mm256_storeu_ps(c, sum);
  for (int r = 0; r < 8; ++r) {
    float s = c[r];
    for (int64_t t = i; t < k; ++t) s += a[t] * b[r * ldb + t];
    c[r] = s;
  }
}
#endif

void EPCTX_EW_NAME(DotRows)(const float* a, const float* b, int64_t ldb, int64_t n, int64_t k,
                            float* c) {
  int64_t r = 0;
#if EPCTX_EW_LANES == 16
  for (; r + 16 <= n; r += 16) EPCTX_EW_NAME(DotRows16)
  (a, b + r * ldb, ldb, k, c + r, r + 32 <= n ? b + (r + 16) * ldb : nullptr);
#endif
#if EPCTX_EW_LANES == 8
  for (; r + 8 <= n; r += 8) EPCTX_EW_NAME(DotRows8)
  (a, b + r * ldb, ldb, k, c + r, r + 16 <= n ? b + (r + 8) * ldb : nullptr);
#endif
  for (; r + 8 <= n; r += 8)
    EPCTX_EW_NAME(DotRowsK)<8>(a, b + r * ldb, ldb, k, c + r,
                               r + 16 <= n ? b + (r + 8) * ldb : nullptr);
  for (; r + 4 <= n; r += 4) EPCTX_EW_NAME(DotRowsK)<4>(a, b + r * ldb, ldb, k, c + r, nullptr);
  for (; r < n; ++r) EPCTX_EW_NAME(DotRowsK)<1>(a, b + r * ldb, ldb, k, c + r, nullptr);
}

void EPCTX_EW_NAME(SoftmaxRow)(const float* x, float* y, int64_t n) {
  typedef EPCTX_EW_NAME(VU) VU;
  typedef EPCTX_EW_NAME(V) V;
  constexpr int64_t L = EPCTX_EW_LANES, Q = 16 / L;
  // The maximum: exact, so any order gives the same value.
  float mx = x[0];
  int64_t i = 0;
  if (n >= L) {
    V m = *reinterpret_cast<const VU*>(x);
    for (i = L; i + L <= n; i += L) {
      const V v = *reinterpret_cast<const VU*>(x + i);
      m = v > m ? v : m;
    }
    for (int64_t j = 0; j < L; ++j) mx = m[j] > mx ? m[j] : mx;
  }
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  // exp(x - m) = ExpNeg(m - x); 16 partial sums of whole 16-float groups.
  V acc[Q];
  for (int64_t q = 0; q < Q; ++q) acc[q] = V{};
  for (i = 0; i + 16 <= n; i += 16)
    for (int64_t q = 0; q < Q; ++q) {
      const V e = EPCTX_EW_NAME(ExpNeg)(mx - *reinterpret_cast<const VU*>(x + i + q * L));
      *reinterpret_cast<VU*>(y + i + q * L) = e;
      acc[q] += e;
    }
  float sum = 0.0f;
  for (int64_t q = 0; q < Q; ++q)
    for (int64_t j = 0; j < L; ++j) sum += acc[q][j];
  for (; i < n; ++i) {
    const float e = EPCTX_EW_NAME(ExpNeg)(mx - x[i]);
    y[i] = e;
    sum += e;
  }
  const float r = 1.0f / sum;
  for (i = 0; i + L <= n; i += L) *reinterpret_cast<VU*>(y + i) = *reinterpret_cast<VU*>(y + i) * r;
  for (; i < n; ++i) y[i] = y[i] * r;
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#undef EPCTX_EW_NAME
#undef EPCTX_EW_CAT
#undef EPCTX_EW_CAT2
