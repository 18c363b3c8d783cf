// Gemm and MatMul (float32) on top of the blocked SGEMM.
#include "kernels/broadcast.h"
#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Gemm(KernelContext& ctx) {
  const TensorRef *a, *b, *c = ctx.input(2);
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "A", &a));
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 1, "B", &b));
  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *a, "A", 2));
  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *b, "B", 2));
  const bool ta = ctx.AttrInt("transA", 0) != 0;
  const bool tb = ctx.AttrInt("transB", 0) != 0;
  const float alpha = ctx.AttrFloat("alpha", 1.0f);
  float beta = ctx.AttrFloat("beta", 1.0f);
  const int64_t M = ta ? a->dims[1] : a->dims[0];
  const int64_t K = ta ? a->dims[0] : a->dims[1];
  const int64_t KB = tb ? b->dims[1] : b->dims[0];
  const int64_t N = tb ? b->dims[0] : b->dims[1];
  if (K != KB)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "inner dimensions differ: A %s (transA=%d) has K=%lld, B %s "
                    "(transB=%d) has K=%lld",
                    ShapeOf(*a).s, ta ? 1 : 0, static_cast<long long>(K),
                    ShapeOf(*b).s, tb ? 1 : 0, static_cast<long long>(KB));
  int64_t c_rows = 1, c_cols = 1;
  if (c) {
    if (c->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, "C", c->dtype);
    if (c->rank > 2)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "C must have rank <= 2, found %s",
                      ShapeOf(*c).s);
    if (c->rank >= 1) c_cols = c->dims[c->rank - 1];
    if (c->rank == 2) c_rows = c->dims[0];
    if ((c_rows != 1 && c_rows != M) || (c_cols != 1 && c_cols != N))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "C %s does not broadcast to [%lld,%lld]", ShapeOf(*c).s,
                      static_cast<long long>(M), static_cast<long long>(N));
  } else {
    beta = 0.0f;
  }
  const int64_t ydims[2] = {M, N};
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, 2, ydims, &y));
  float* Y = static_cast<float*>(y->data);
  if (M == 0 || N == 0) return Status::Ok();
  if (c && beta != 0.0f) {
    const float* C = static_cast<const float*>(c->data);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        Y[i * N + j] = C[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
  } else {
    beta = 0.0f;
  }
  float* ws = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, SgemmWorkspaceFloats(M, N, K), &ws));
  Sgemm(ta, tb, M, N, K, alpha, static_cast<const float*>(a->data), a->dims[1],
        static_cast<const float*>(b->data), b->dims[1], beta, Y, N, ws);
  return Status::Ok();
}

Status MatMul(KernelContext& ctx) {
  const TensorRef *a, *b;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "A", &a));
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 1, "B", &b));
  if (a->rank < 1 || b->rank < 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "inputs must have rank >= 1, found A %s and B %s",
                    ShapeOf(*a).s, ShapeOf(*b).s);
  // 1-D operands become matrices ([K] -> [1,K] for A, [K,1] for B); the
  // added dimension is dropped from the result.
  const bool a_vec = a->rank == 1, b_vec = b->rank == 1;
  const int64_t M = a_vec ? 1 : a->dims[a->rank - 2];
  const int64_t K = a->dims[a->rank - 1];
  const int64_t KB = b_vec ? b->dims[0] : b->dims[b->rank - 2];
  const int64_t N = b_vec ? 1 : b->dims[b->rank - 1];
  if (K != KB)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "inner dimensions differ: A %s vs B %s (%lld != %lld)",
                    ShapeOf(*a).s, ShapeOf(*b).s, static_cast<long long>(K),
                    static_cast<long long>(KB));
  // Batch dimensions broadcast like elementwise operands; the strides count
  // matrices (0 where an operand repeats).
  const uint32_t a_batch = a_vec ? 0 : a->rank - 2;
  const uint32_t b_batch = b_vec ? 0 : b->rank - 2;
  Broadcast bc;
  EPCTX_RETURN_IF_ERROR(MakeBroadcast(ctx, a_batch, a->dims, b_batch, b->dims, &bc));
  int64_t ydims[kMaxRank];
  uint32_t yrank = 0;
  for (uint32_t i = 0; i < bc.out_rank; ++i) ydims[yrank++] = bc.out_dims[i];
  if (!a_vec) ydims[yrank++] = M;
  if (!b_vec) ydims[yrank++] = N;
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, yrank, ydims, 4, "output Y"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, yrank, ydims, &y));
  float* Y = static_cast<float*>(y->data);
  const float* A = static_cast<const float*>(a->data);
  const float* B = static_cast<const float*>(b->data);
  int64_t batches = 1;
  Product(bc.out_dims, 0, bc.out_rank, &batches);
  if (y->elements() == 0) return Status::Ok();

  // B shared by every batch and A contiguous: one tall GEMM. (Merged axes
  // have size > 1 unless the batch is a single matrix.)
  bool b_shared = true, a_full = true;
  for (uint32_t i = 0; i < bc.rank; ++i) {
    if (bc.sb[i] != 0) b_shared = false;
    if (bc.sa[i] == 0 && bc.dims[i] != 1) a_full = false;
  }
  if (b_shared && a_full) {
    float* ws = nullptr;
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, SgemmWorkspaceFloats(batches * M, N, K), &ws));
    Sgemm(false, false, batches * M, N, K, 1.0f, A, K, B, N, 0.0f, Y, N, ws);
    return Status::Ok();
  }
  float* ws = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, SgemmWorkspaceFloats(M, N, K), &ws));
  const int64_t MK = M * K, KN = K * N, MN = M * N;
  ForEachRow(bc, [&](int64_t oa, int64_t ob, int64_t t0, int64_t n, int64_t step_a,
                     int64_t step_b) {
    for (int64_t j = 0; j < n; ++j)
      Sgemm(false, false, M, N, K, 1.0f, A + (oa + j * step_a) * MK, K,
            B + (ob + j * step_b) * KN, N, 0.0f, Y + (t0 + j) * MN, N, ws);
  });
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
