// SPDX-License-Identifier: Apache-2.0
// Gemm and MatMul. float32 runs on the blocked SGEMM (gemm.h); double, the
// 32/64-bit integers, float16 and bfloat16 run a row-at-a-time loop that
// accumulates in Compute<T> (float for the 16-bit floats, rounded once into
// Y, as ORT does by converting to float). Integer products wrap.
//
// Gemm on integers takes alpha and beta only when they are whole numbers
// (the float attributes have no integer meaning otherwise; ORT has no
// integer Gemm): NOT_IMPLEMENTED names the attribute.
//
// PrepareGemm and PrepareMatMul pack a constant float32 B once, at session
// create, in the layout the SGEMM reads (uk::PackedB): a Run then multiplies
// without packing B, which for the few rows of a batch-1 layer is most of
// the work.
#include "kernels/linalg.h"

#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

constexpr uint32_t kMatMulTypes = kFloats | Bit(EPCTX_DTYPE_INT32) | Bit(EPCTX_DTYPE_INT64) |
                                  Bit(EPCTX_DTYPE_UINT32) | Bit(EPCTX_DTYPE_UINT64);

// The types MatMul and Gemm take besides float32, which has its own path.
constexpr uint32_t kMatMulOther = kMatMulTypes & ~kFloat32;

Status SameDtype(KernelContext& ctx, const TensorRef& a, const TensorRef& b, const char* bname) {
  if (a.dtype == b.dtype) return Status::Ok();
  return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has dtype %s, expected A's %s", bname,
                  dtype_name(b.dtype), dtype_name(a.dtype));
}

// Y[i, :] = sum_k op(A)[i,k] * op(B)[k,:] into acc (N values), row by row;
// done(i, acc) stores the row.
template <typename T, typename Done>
void RowGemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, const T* B,
             Compute<T>* acc, Done done) {
  using C = Compute<T>;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) acc[j] = C(0);
    for (int64_t k = 0; k < K; ++k) {
      const C a = Load(ta ? A[k * M + i] : A[i * K + k]);
      if (tb) {
        for (int64_t j = 0; j < N; ++j) acc[j] = MulAdd<C>(acc[j], a, Load(B[j * K + k]));
      } else {
        const T* __restrict brow = B + k * N;
        for (int64_t j = 0; j < N; ++j) acc[j] = MulAdd<C>(acc[j], a, Load(brow[j]));
      }
    }
    done(i, acc);
  }
}

bool Whole(float v, int64_t* out) {
  if (!(v >= -9.2e18f && v <= 9.2e18f)) return false;
  const int64_t i = static_cast<int64_t>(v);
  if (static_cast<float>(i) != v) return false;
  *out = i;
  return true;
}

// What PrepareGemm and PrepareMatMul leave: B's data and op(B) packed.
struct PackedWeights {
  const void* b;  // the state serves only this B
  bool trans_b;
  uk::PackedB packed;
};

// The packed op(B) when the state was made for this B, transposed so.
const uk::PackedB* PackedFor(const KernelContext& ctx, const TensorRef& b, bool tb, int64_t K,
                             int64_t N) {
  const PackedWeights* pw = static_cast<const PackedWeights*>(ctx.prepared());
  if (!pw || pw->b != b.data || pw->trans_b != tb || pw->packed.K != K || pw->packed.N != N)
    return nullptr;
  return &pw->packed;
}

// Packs B (a constant float32 K x N, or N x K when tb) for the kernel.
Status PrepareB(PrepareContext& pc, const TensorRef& b, bool tb, int64_t K, int64_t N) {
  PackedWeights* pw = static_cast<PackedWeights*>(pc.Alloc(sizeof(PackedWeights), 16));
  if (!pw) return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the prepared state");
  *pw = PackedWeights{b.data, tb, uk::PackedB{}};
  EPCTX_RETURN_IF_ERROR(
      PrepackB(pc, tb, static_cast<const float*>(b.data), tb ? K : N, K, N, &pw->packed));
  if (pw->packed.data) pc.SetPrepared(pw);
  return Status::Ok();
}

Status GemmFloat32(KernelContext& ctx, const TensorRef& a, const TensorRef& b, const TensorRef* c,
                   bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t c_rows,
                   int64_t c_cols, float alpha, float beta, float* Y) {
  if (c && beta != 0.0f) {
    const float* C = static_cast<const float*>(c->data);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        Y[i * N + j] = C[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
  } else {
    beta = 0.0f;
  }
  GemmRunner gemm;
  EPCTX_RETURN_IF_ERROR(gemm.Init(ctx, M, N, K));
  uk::Gemm g;
  g.trans_a = ta;
  g.M = M;
  g.N = N;
  g.K = K;
  g.alpha = alpha;
  g.A = static_cast<const float*>(a.data);
  g.lda = a.dims[1];
  g.packed_b = PackedFor(ctx, b, tb, K, N);
  if (!g.packed_b) {
    g.trans_b = tb;
    g.B = static_cast<const float*>(b.data);
    g.ldb = b.dims[1];
  }
  g.beta = beta;
  g.C = Y;
  g.ldc = N;
  gemm.Run(g);
  return Status::Ok();
}

}  // namespace

Status PlanMatMul(KernelContext& ctx, const TensorRef& a, const TensorRef& b, size_t y_elem_size,
                  MatMulPlan* p) {
  if (a.rank < 1 || b.rank < 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "inputs must have rank >= 1, found A %s and B %s",
                    ShapeOf(a).s, ShapeOf(b).s);
  // 1-D operands become matrices ([K] -> [1,K] for A, [K,1] for B); the
  // added dimension is dropped from the result.
  const bool a_vec = a.rank == 1, b_vec = b.rank == 1;
  p->M = a_vec ? 1 : a.dims[a.rank - 2];
  p->K = a.dims[a.rank - 1];
  const int64_t KB = b_vec ? b.dims[0] : b.dims[b.rank - 2];
  p->N = b_vec ? 1 : b.dims[b.rank - 1];
  if (p->K != KB)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "inner dimensions differ: A %s vs B %s (%lld != %lld)",
                    ShapeOf(a).s, ShapeOf(b).s, static_cast<long long>(p->K),
                    static_cast<long long>(KB));
  // Batch dimensions broadcast like elementwise operands; the strides count
  // matrices (0 where an operand repeats).
  const uint32_t a_batch = a_vec ? 0 : a.rank - 2;
  const uint32_t b_batch = b_vec ? 0 : b.rank - 2;
  EPCTX_RETURN_IF_ERROR(MakeBroadcast(ctx, a_batch, a.dims, b_batch, b.dims, &p->bc));
  p->yrank = 0;
  for (uint32_t i = 0; i < p->bc.out_rank; ++i) p->ydims[p->yrank++] = p->bc.out_dims[i];
  if (!a_vec) p->ydims[p->yrank++] = p->M;
  if (!b_vec) p->ydims[p->yrank++] = p->N;
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, p->yrank, p->ydims, y_elem_size, "output Y"));
  Product(p->bc.out_dims, 0, p->bc.out_rank, &p->batches);
  return Status::Ok();
}

Status Gemm(KernelContext& ctx) {
  const TensorRef *a, *b, *c = ctx.input(2);
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "A", &a));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "B", &b));
  if (!InMask(a->dtype, kMatMulTypes)) return UnsupportedDtype(ctx, "A", a->dtype);
  EPCTX_RETURN_IF_ERROR(SameDtype(ctx, *a, *b, "B"));
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
                    ShapeOf(*a).s, ta ? 1 : 0, static_cast<long long>(K), ShapeOf(*b).s, tb ? 1 : 0,
                    static_cast<long long>(KB));
  int64_t c_rows = 1, c_cols = 1;
  if (c) {
    EPCTX_RETURN_IF_ERROR(SameDtype(ctx, *a, *c, "C"));
    if (c->rank > 2)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "C must have rank <= 2, found %s", ShapeOf(*c).s);
    if (c->rank >= 1) c_cols = c->dims[c->rank - 1];
    if (c->rank == 2) c_rows = c->dims[0];
    if ((c_rows != 1 && c_rows != M) || (c_cols != 1 && c_cols != N))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "C %s does not broadcast to [%lld,%lld]",
                      ShapeOf(*c).s, static_cast<long long>(M), static_cast<long long>(N));
  } else {
    beta = 0.0f;
  }
  int64_t alpha_i = 1, beta_i = 0;
  const bool integral = (Bit(a->dtype) & kInts) != 0;
  if (integral && !Whole(alpha, &alpha_i))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "alpha %f is not a whole number for %s inputs",
                    static_cast<double>(alpha), dtype_name(a->dtype));
  if (integral && !Whole(beta, &beta_i))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "beta %f is not a whole number for %s inputs",
                    static_cast<double>(beta), dtype_name(a->dtype));
  const int64_t ydims[2] = {M, N};
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, 2, ydims, dtype_size(a->dtype), "output Y"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, a->dtype, 2, ydims, &y));
  if (M == 0 || N == 0) return Status::Ok();
  if (a->dtype == EPCTX_DTYPE_FLOAT)
    return GemmFloat32(ctx, *a, *b, c, ta, tb, M, N, K, c_rows, c_cols, alpha, beta,
                       static_cast<float*>(y->data));
  Status st = Status::Ok();
  Dispatch<kMatMulOther>(a->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    C* acc = nullptr;
    st = ScratchArray(ctx, static_cast<uint64_t>(N), &acc);
    if (!st.ok()) return;
    const T* Cd = c ? static_cast<const T*>(c->data) : nullptr;
    T* Y = static_cast<T*>(y->data);
    RowGemm<T>(ta, tb, M, N, K, static_cast<const T*>(a->data), static_cast<const T*>(b->data), acc,
               [&](int64_t i, const C* row) {
                 for (int64_t j = 0; j < N; ++j) {
                   const C cv =
                       Cd ? Load(Cd[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)]) : C(0);
                   if constexpr (std::is_integral<C>::value) {
                     const C r = MulAdd<C>(C(0), row[j], static_cast<C>(alpha_i));
                     Y[i * N + j] = MulAdd<C>(r, cv, static_cast<C>(beta_i));
                   } else {
                     C r = static_cast<C>(alpha) * row[j];
                     if (beta != 0.0f) r += static_cast<C>(beta) * cv;
                     Y[i * N + j] = Store<T>(r);
                   }
                 }
               });
  });
  return st;
}

Status MatMul(KernelContext& ctx) {
  const TensorRef *a, *b;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "A", &a));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "B", &b));
  if (!InMask(a->dtype, kMatMulTypes)) return UnsupportedDtype(ctx, "A", a->dtype);
  EPCTX_RETURN_IF_ERROR(SameDtype(ctx, *a, *b, "B"));
  MatMulPlan p;
  EPCTX_RETURN_IF_ERROR(PlanMatMul(ctx, *a, *b, dtype_size(a->dtype), &p));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, a->dtype, p.yrank, p.ydims, &y));
  if (y->elements() == 0) return Status::Ok();
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t MK = M * K, KN = K * N, MN = M * N;

  if (a->dtype != EPCTX_DTYPE_FLOAT) {
    Status st = Status::Ok();
    Dispatch<kMatMulOther>(a->dtype, [&](auto tag) {
      using T = decltype(tag);
      using C = Compute<T>;
      C* acc = nullptr;
      st = ScratchArray(ctx, static_cast<uint64_t>(N), &acc);
      if (!st.ok()) return;
      const T* A = static_cast<const T*>(a->data);
      const T* B = static_cast<const T*>(b->data);
      T* Y = static_cast<T*>(y->data);
      ForEachMatrix(p, [&](int64_t ia, int64_t ib, int64_t iy) {
        T* ym = Y + iy * MN;
        RowGemm<T>(false, false, M, N, K, A + ia * MK, B + ib * KN, acc,
                   [&](int64_t i, const C* row) {
                     for (int64_t j = 0; j < N; ++j) ym[i * N + j] = Store<T>(row[j]);
                   });
      });
    });
    return st;
  }

  float* Y = static_cast<float*>(y->data);
  const float* A = static_cast<const float*>(a->data);
  const float* B = static_cast<const float*>(b->data);
  // B shared by every batch and A contiguous: one tall GEMM. (Merged axes
  // have size > 1 unless the batch is a single matrix.)
  const Broadcast& bc = p.bc;
  bool b_shared = true, a_full = true;
  for (uint32_t i = 0; i < bc.rank; ++i) {
    if (bc.sb[i] != 0) b_shared = false;
    if (bc.sa[i] == 0 && bc.dims[i] != 1) a_full = false;
  }
  // A prepared B is one matrix (rank <= 2), so every product reads it.
  const uk::PackedB* packed = b->rank <= 2 ? PackedFor(ctx, *b, false, K, N) : nullptr;
  auto product = [&](int64_t rows, const float* a_m, const float* b_m, float* y_m) {
    uk::Gemm g;
    g.M = rows;
    g.N = N;
    g.K = K;
    g.A = a_m;
    g.lda = K;
    if (packed) {
      g.packed_b = packed;
    } else {
      g.B = b_m;
      g.ldb = N;
    }
    g.C = y_m;
    g.ldc = N;
    return g;
  };
  if (b_shared && a_full) {
    GemmRunner gemm;
    EPCTX_RETURN_IF_ERROR(gemm.Init(ctx, p.batches * M, N, K));
    gemm.Run(product(p.batches * M, A, B, Y));
    return Status::Ok();
  }
  GemmRunner gemm;
  EPCTX_RETURN_IF_ERROR(gemm.Init(ctx, M, N, K));
  ForEachMatrix(p, [&](int64_t ia, int64_t ib, int64_t iy) {
    gemm.Run(product(M, A + ia * MK, B + ib * KN, Y + iy * MN));
  });
  return Status::Ok();
}

Status PrepareGemm(PrepareContext& pc) {
  const TensorRef* b = pc.constant(1);
  if (!b || b->dtype != EPCTX_DTYPE_FLOAT || b->rank != 2) return Status::Ok();
  KernelContext& ctx = pc.kernel();
  const bool tb = ctx.AttrInt("transB", 0) != 0;
  if (!ctx.AttrStatus().ok()) return Status::Ok();  // the kernel reports it
  return PrepareB(pc, *b, tb, tb ? b->dims[1] : b->dims[0], tb ? b->dims[0] : b->dims[1]);
}

Status PrepareMatMul(PrepareContext& pc) {
  const TensorRef* b = pc.constant(1);
  if (!b || b->dtype != EPCTX_DTYPE_FLOAT || b->rank < 1 || b->rank > 2) return Status::Ok();
  // A 1-D B is a K x 1 matrix.
  return PrepareB(pc, *b, false, b->dims[0], b->rank == 2 ? b->dims[1] : 1);
}

}  // namespace kern
}  // namespace epctx
