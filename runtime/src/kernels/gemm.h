/* SPDX-License-Identifier: Apache-2.0 */
// Single-precision matrix multiply for Conv, ConvTranspose, Gemm, MatMul and
// the recurrent ops: the packed SGEMM of the micro-kernel library
// (ukernels/include/epctx_uk/sgemm.h: AVX2+FMA, NEON or portable tiles,
// chosen at run time) behind the BLAS-like call the kernels were written
// against. Kernels that fuse a bias or an activation call uk::Sgemm directly.
//
// Sgemm is single-threaded and re-entrant: all temporary memory is the
// caller's workspace, so concurrent runs never share state. GemmRunner runs
// the same products on the session's intra-op threads.
#ifndef EPCTX_KERNELS_GEMM_H
#define EPCTX_KERNELS_GEMM_H

#include <cstdint>

#include "core/status.h"
#include "epctx_uk/sgemm.h"

namespace epctx {
class KernelContext;
class PrepareContext;
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
void Sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
           int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
           float* workspace);

// Constant operands packed once by a prepare function (kernel.h), into
// session memory from ctx.Alloc: alpha * op(A) of M x K (A with row stride
// lda, or K x M when trans_a) and op(B) of K x N (B with row stride ldb, or
// N x K when trans_b). OUT_OF_MEMORY names the node; sizes past what memory
// can address leave *out empty (data nullptr: run unpacked).
Status PrepackA(PrepareContext& ctx, bool trans_a, const float* A, int64_t lda, int64_t M,
                int64_t K, float alpha, uk::PackedA* out);
Status PrepackB(PrepareContext& ctx, bool trans_b, const float* B, int64_t ldb, int64_t K,
                int64_t N, uk::PackedB* out);

// Runs products on the kernel's threads: each is cut into blocks of whole
// tiles (columns in multiples of uk::kNr, or rows in multiples of
// uk::kMr), one per thread, each block an ordinary uk::Sgemm with a
// workspace of its own. The tiles and the order in which each sums over K
// are those of one uk::Sgemm over the whole product, so the result is
// bit-identical at any thread count. Columns are cut when there are at least
// as many as rows (each thread then packs all of A, the smaller operand) or
// when B is packed by a callback (a convolution's implicit im2col, which
// should not be done twice); rows otherwise. Pre-packed operands
// (uk::PackedA, uk::PackedB) are read in place under either cut. Products
// too small to pay for a wake-up run on the calling thread.
class GemmRunner {
 public:
  // Scratch (from ctx) for products up to M x N x K; Run only products no
  // larger in any dimension.
  Status Init(KernelContext& ctx, int64_t M, int64_t N, int64_t K);
  void Run(const uk::Gemm& g) const;
  // The BLAS-like call of Sgemm above.
  void Run(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
           int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) const;

 private:
  const KernelContext* ctx_ = nullptr;
  float* ws_ = nullptr;
  uint64_t ws_stride_ = 0;  // floats per block's workspace
  uint32_t blocks_ = 1;     // workspaces held
};

}  // namespace kern
}  // namespace epctx

#endif
