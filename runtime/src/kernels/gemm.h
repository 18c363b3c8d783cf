/* SPDX-License-Identifier: Apache-2.0 */
// Single-precision matrix multiply for Conv, ConvTranspose, Gemm, MatMul and
// the recurrent ops: the packed SGEMM of the micro-kernel library
// (ukernels/include/epctx_uk/sgemm.h: AVX2+FMA, NEON or portable tiles,
// chosen at run time) behind the BLAS-like call the kernels were written
// against. Kernels that fuse a bias or an activation call uk::Sgemm directly.
//
// Single-threaded and re-entrant: all temporary memory is the caller's
// workspace, so concurrent runs never share state.
#ifndef EPCTX_KERNELS_GEMM_H
#define EPCTX_KERNELS_GEMM_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace kern {

// Floats of workspace Sgemm needs for these sizes (at most ~110k floats).
inline uint64_t SgemmWorkspaceFloats(int64_t M, int64_t N, int64_t K) {
  return uk::SgemmWorkspaceFloats(M, N, K);
}

// C[M x N] = alpha * op(A) * op(B) + beta * C, row-major.
// op(A) is M x K: A is M x K (lda >= K) or, when trans_a, K x M (lda >= M).
// op(B) is K x N: B is K x N (ldb >= N) or, when trans_b, N x K (ldb >= K).
// beta == 0 overwrites C without reading it. `workspace` holds
// SgemmWorkspaceFloats(M, N, K) floats, 64-byte aligned preferred.
void Sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
           float alpha, const float* A, int64_t lda, const float* B,
           int64_t ldb, float beta, float* C, int64_t ldc, float* workspace);

}  // namespace kern
}  // namespace epctx

#endif
