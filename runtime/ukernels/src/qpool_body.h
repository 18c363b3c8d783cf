/* SPDX-License-Identifier: Apache-2.0 */
// The vector body of QMaxPoolRow (pool.h), included once per instruction
// set by pool.cc with EPCTX_QPOOL_FN (the function's name) defined: rows of
// at least 16 outputs at stride 1 or 2, 16 bytes a vector. No include guard
// on purpose.
#define EPCTX_QPOOL_CAT2(a, b) a##b
#define EPCTX_QPOOL_CAT(a, b) EPCTX_QPOOL_CAT2(a, b)
#define EPCTX_QPOOL_PIECE EPCTX_QPOOL_CAT(EPCTX_QPOOL_FN, Piece)
#define EPCTX_QPOOL_PIECES EPCTX_QPOOL_CAT(EPCTX_QPOOL_FN, Pieces)

namespace epctx {
namespace uk {
namespace detail {
namespace {

// 16 outputs from j on: stride 2 keeps the even bytes of 16 at the piece's
// first tap and the odd bytes of 16 at its last tap minus 15 (nothing past
// the last tap is read).
template <typename V, int S>
inline V EPCTX_QPOOL_PIECE(const uint8_t* const* rows, int64_t nt, int64_t j, V m) {
  for (int64_t t = 0; t < nt; ++t) {
    const uint8_t* r = rows[t] + j * S;
    V v;
    if constexpr (S == 1) {
      __builtin_memcpy(&v, r, sizeof v);
    } else {
      V lo, hi;
      __builtin_memcpy(&lo, r, sizeof lo);
      __builtin_memcpy(&hi, r + 15, sizeof hi);
      v = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29,
                                  31);
    }
    m = v > m ? v : m;
  }
  return m;
}

// Pieces of 16 at j = 0, 16, ... and a last one ending at n (n >= 16),
// which may overlap the one before.
template <typename V, int S>
void EPCTX_QPOOL_PIECES(const uint8_t* const* rows, int64_t nt, uint8_t* y, int64_t n, V lowest) {
  for (int64_t j = 0;; j += 16) {
    if (j > n - 16) j = n - 16;
    const V m = EPCTX_QPOOL_PIECE<V, S>(rows, nt, j, lowest);
    __builtin_memcpy(y + j, &m, sizeof m);
    if (j + 16 >= n) break;
  }
}

}  // namespace

void EPCTX_QPOOL_FN(const uint8_t* const* rows, int64_t nt, int64_t stride, bool is_signed,
                    uint8_t* y, int64_t n) {
  typedef uint8_t VU __attribute__((vector_size(16)));
  typedef int8_t VS __attribute__((vector_size(16)));
  if (is_signed) {
    VS lo;
    __builtin_memset(&lo, 0x80, sizeof lo);  // -128 in every lane
    if (stride == 1) return EPCTX_QPOOL_PIECES<VS, 1>(rows, nt, y, n, lo);
    return EPCTX_QPOOL_PIECES<VS, 2>(rows, nt, y, n, lo);
  }
  if (stride == 1) return EPCTX_QPOOL_PIECES<VU, 1>(rows, nt, y, n, VU{});
  EPCTX_QPOOL_PIECES<VU, 2>(rows, nt, y, n, VU{});
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#undef EPCTX_QPOOL_PIECES
#undef EPCTX_QPOOL_PIECE
#undef EPCTX_QPOOL_CAT
#undef EPCTX_QPOOL_CAT2
