/* SPDX-License-Identifier: Apache-2.0 */
// Single-precision matrix multiply shared by Conv, ConvTranspose, Gemm and
// MatMul.
//
// Blocking (after Goto & van de Geijn, "Anatomy of high-performance matrix
// multiplication"): C is computed in blocks of kMc rows x kNc columns. For
// each block, K is cut into slices of kKc; the kKc x kNc slice of op(B) is
// packed into panels kNr columns wide and the kMc x kKc slice of op(A) into
// panels kMr rows tall (contiguous, zero-padded, so edges need no special
// case and the transposes are absorbed here). The micro-kernel multiplies
// one A panel (4 KB, L1) by one B panel (8 KB, L1) into a kMr x kNr tile
// of accumulators held in registers for the whole K slice, while the packed
// B slice (256 KB) stays in L2 for all the A panels. Tiles accumulate over
// the K slices in a contiguous kMc x kNc block in the workspace and reach C
// once, scaled by alpha and beta: updating C itself per K slice makes rows
// ldc apart fight for the same cache sets. For the same reason packed B
// panels are spaced one cache line more than their size.
//
// Vectorisation: the micro-kernel is written with GCC/Clang generic 4-float
// vectors, which g++ -O2 keeps in SSE2/NEON registers without intrinsics;
// the packing and store loops are contiguous loops -O2 auto-vectorises.
//
// Single-threaded and re-entrant: all temporary memory is the caller's
// workspace, so concurrent runs never share state.
#ifndef EPCTX_KERNELS_GEMM_H
#define EPCTX_KERNELS_GEMM_H

#include <cstdint>

namespace epctx {
namespace kern {

// Floats of workspace Sgemm needs for these sizes (at most ~100k floats).
uint64_t SgemmWorkspaceFloats(int64_t M, int64_t N, int64_t K);

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
