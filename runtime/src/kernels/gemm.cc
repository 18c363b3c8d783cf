// SPDX-License-Identifier: Apache-2.0
// The BLAS-like entry of gemm.h over the micro-kernel library's SGEMM.
#include "kernels/gemm.h"

namespace epctx {
namespace kern {

void Sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
           const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
           int64_t ldc, float* workspace) {
  uk::Gemm g;
  g.trans_a = trans_a;
  g.trans_b = trans_b;
  g.M = M;
  g.N = N;
  g.K = K;
  g.alpha = alpha;
  g.A = A;
  g.lda = lda;
  g.B = B;
  g.ldb = ldb;
  g.beta = beta;
  g.C = C;
  g.ldc = ldc;
  uk::Sgemm(g, workspace);
}

}  // namespace kern
}  // namespace epctx
