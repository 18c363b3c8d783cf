/* SPDX-License-Identifier: Apache-2.0 */
// Shape planning and typed loops shared by the matrix-product kernels:
// MatMul (every dtype), MatMulInteger and QLinearMatMul.
//
// PlanMatMul applies numpy matmul rules: a 1-D A is [1,K] and a 1-D B is
// [K,1] with the added axis dropped from Y, and the batch dimensions (all but
// the last two) broadcast like elementwise operands. ForEachMatrix then
// visits every output matrix with the index of the A and B matrices it
// reads (in units of M*K, K*N and M*N elements).
#ifndef EPCTX_KERNELS_LINALG_H
#define EPCTX_KERNELS_LINALG_H

#include <cstdint>
#include <type_traits>

#include "kernels/broadcast.h"
#include "kernels/elem.h"

namespace epctx {
namespace kern {

struct MatMulPlan {
  int64_t M = 0, N = 0, K = 0;
  Broadcast bc;  // over the batch dimensions
  int64_t batches = 1;
  uint32_t yrank = 0;
  int64_t ydims[kMaxRank] = {};
};

// Checks ranks and K, and computes Y's shape (checked for `y_elem_size`-byte
// elements). INVALID_ARGUMENT naming both shapes on mismatch.
Status PlanMatMul(KernelContext& ctx, const TensorRef& a, const TensorRef& b, size_t y_elem_size,
                  MatMulPlan* p);

// f(a_matrix, b_matrix, y_matrix) for every output matrix.
template <typename F>
void ForEachMatrix(const MatMulPlan& p, F f) {
  ForEachRow(p.bc, [&](int64_t oa, int64_t ob, int64_t t0, int64_t n, int64_t sa, int64_t sb) {
    for (int64_t j = 0; j < n; ++j) f(oa + j * sa, ob + j * sb, t0 + j);
  });
}

// The unsigned type integer arithmetic on T wraps through.
template <typename T>
struct WrapOf {
  using type = typename std::make_unsigned<T>::type;
};
template <>
struct WrapOf<bool> {
  using type = unsigned;
};

// acc + a * b; integers wrap (two's complement) instead of overflowing.
template <typename T>
inline T MulAdd(T acc, T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename WrapOf<T>::type;
    using W = typename std::conditional<(sizeof(U) < sizeof(unsigned)), unsigned, U>::type;
    return static_cast<T>(static_cast<W>(acc) + static_cast<W>(a) * static_cast<W>(b));
  } else {
    return acc + a * b;
  }
}

}  // namespace kern
}  // namespace epctx

#endif
