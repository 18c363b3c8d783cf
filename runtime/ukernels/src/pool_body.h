/* SPDX-License-Identifier: Apache-2.0 */
// The body of PoolRow (pool.h) for one vector width, included once per
// instruction set by pool.cc with EPCTX_POOL_FN (the function's name) and
// EPCTX_POOL_LANES (floats per vector) defined. No include guard on purpose.
//
// Each piece of K outputs (vectors of the full width, the last one ending
// at the row's end; shorter rows one or two of 8 or 4 lanes, rows under 4
// the scalar loop) runs over the taps in order: the sum,
// and for kMax the running maximum `v > m ? v : m`, which is the scalar
// rule's answer unless a tap is NaN. A NaN makes the sum NaN: the sums of
// every piece are added up, and when that total is NaN (a NaN in some
// window, or infinities of both signs) the row is done again by the scalar
// rule. Stride 2 loads K floats at the piece's first tap and K at its last
// tap minus K - 1 and keeps the even lanes of the first and the odd lanes of
// the second, so nothing past the last tap is read.
#define EPCTX_POOL_CAT2(a, b) a##b
#define EPCTX_POOL_CAT(a, b) EPCTX_POOL_CAT2(a, b)
#define EPCTX_POOL_PIECE EPCTX_POOL_CAT(EPCTX_POOL_FN, Piece)
#define EPCTX_POOL_PIECES EPCTX_POOL_CAT(EPCTX_POOL_FN, Pieces)
#define EPCTX_POOL_IMPL EPCTX_POOL_CAT(EPCTX_POOL_FN, Impl)

namespace epctx {
namespace uk {
namespace detail {
namespace {

// Outputs [j, j + K) of every tap: the maximum (kMax) or the sum in *out;
// returns the sum.
template <typename VK, int K, int S, bool kMax>
inline VK EPCTX_POOL_PIECE(const float* const* rows, int64_t nt, int64_t j, VK* out) {
  VK s = VK{}, m = VK{} - __builtin_inff();
  for (int64_t t = 0; t < nt; ++t) {
    const float* r = rows[t] + j * S;
    VK v;
    if constexpr (S == 1) {
      __builtin_memcpy(&v, r, sizeof v);
    } else {
      VK lo, hi;
      __builtin_memcpy(&lo, r, sizeof lo);
      __builtin_memcpy(&hi, r + K - 1, sizeof hi);
      if constexpr (K == 4) v = __builtin_shufflevector(lo, hi, 0, 2, 5, 7);
      if constexpr (K == 8) v = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 9, 11, 13, 15);
      if constexpr (K == 16)
        v = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29,
                                    31);
    }
    s += v;
    if (kMax) m = v > m ? v : m;
  }
  *out = kMax ? m : s;
  return s;
}

// Pieces of K outputs at j = 0, K, 2K, ... and a last one ending at n,
// which may overlap the one before (its outputs are written again with the
// same bits). Adds each piece's sum to *bad.
template <typename VK, int K, int S, bool kMax>
inline void EPCTX_POOL_PIECES(const float* const* rows, int64_t nt, float scale, float* y,
                              int64_t n, VK* bad) {
  for (int64_t j = 0;; j += K) {
    if (j > n - K) j = n - K;
    VK m;
    *bad += EPCTX_POOL_PIECE<VK, K, S, kMax>(rows, nt, j, &m);
    if (!kMax) m *= scale;
    __builtin_memcpy(y + j, &m, sizeof m);
    if (j + K >= n) break;
  }
}

// The widest pieces that fit n: vectors of the full width, or one or two
// of 8 or of 4 lanes, or (n < 4) the scalar rule.
template <int S, bool kMax>
void EPCTX_POOL_IMPL(const float* const* rows, int64_t nt, float scale, float* y, int64_t n) {
  constexpr int L = EPCTX_POOL_LANES;
  typedef float V4 __attribute__((vector_size(16)));
  V4 bad4 = V4{};
  if (n >= L) {
    typedef float V __attribute__((vector_size(L * 4)));
    V bad = V{};
    EPCTX_POOL_PIECES<V, L, S, kMax>(rows, nt, scale, y, n, &bad);
#if EPCTX_POOL_LANES > 8
    const auto bad8 = __builtin_shufflevector(bad, bad, 0, 1, 2, 3, 4, 5, 6, 7) +
                      __builtin_shufflevector(bad, bad, 8, 9, 10, 11, 12, 13, 14, 15);
#else
    const V bad8 = bad;
#endif
#if EPCTX_POOL_LANES > 4
    bad4 = __builtin_shufflevector(bad8, bad8, 0, 1, 2, 3) +
           __builtin_shufflevector(bad8, bad8, 4, 5, 6, 7);
#else
    bad4 = bad8;
#endif
#if EPCTX_POOL_LANES > 8
  } else if (n >= 8) {
    typedef float V8 __attribute__((vector_size(32)));
    V8 bad8 = V8{};
    EPCTX_POOL_PIECES<V8, 8, S, kMax>(rows, nt, scale, y, n, &bad8);
    bad4 = __builtin_shufflevector(bad8, bad8, 0, 1, 2, 3) +
           __builtin_shufflevector(bad8, bad8, 4, 5, 6, 7);
#endif
#if EPCTX_POOL_LANES > 4
  } else if (n >= 4) {
    EPCTX_POOL_PIECES<V4, 4, S, kMax>(rows, nt, scale, y, n, &bad4);
#endif
  } else {
    return PoolRowScalar(kMax, rows, nt, S, scale, y, n, 0);
  }
  const float total = (bad4[0] + bad4[1]) + (bad4[2] + bad4[3]);
  if (kMax && total != total) PoolRowScalar(true, rows, nt, S, scale, y, n, 0);
}

}  // namespace

void EPCTX_POOL_FN(bool max, const float* const* rows, int64_t nt, int64_t stride, float scale,
                   float* y, int64_t n) {
  if (stride == 1) {
    if (max) return EPCTX_POOL_IMPL<1, true>(rows, nt, scale, y, n);
    return EPCTX_POOL_IMPL<1, false>(rows, nt, scale, y, n);
  }
  if (max) return EPCTX_POOL_IMPL<2, true>(rows, nt, scale, y, n);
  EPCTX_POOL_IMPL<2, false>(rows, nt, scale, y, n);
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#undef EPCTX_POOL_IMPL
#undef EPCTX_POOL_PIECES
#undef EPCTX_POOL_PIECE
#undef EPCTX_POOL_CAT
#undef EPCTX_POOL_CAT2
