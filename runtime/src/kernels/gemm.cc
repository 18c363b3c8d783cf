// SPDX-License-Identifier: Apache-2.0
// The BLAS-like entry of gemm.h over the micro-kernel library's SGEMM, and
// the same products cut into tile blocks over the intra-op threads.
#include "kernels/gemm.h"

#include "kernels/kernel.h"
#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {
namespace {

// Multiply-adds below which a block is not worth a thread: about 10 us of
// work, the cost of waking a sleeping worker.
constexpr int64_t kMinBlockMacs = int64_t{1} << 18;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Split {
  bool columns;
  int64_t units, align;
  uint32_t blocks;
};

Split ChooseSplit(uint32_t threads, int64_t M, int64_t N, int64_t K, bool packed_b) {
  Split s{true, 1, uk::kNr2, 1};
  if (threads <= 1 || M <= 0 || N <= 0 || K <= 0) return s;
  s.columns = packed_b || N >= M;
  // Blocks start on the block tile's grid (8 rows, 48 columns), so every
  // output is computed by the same kernel whatever the split: the bytes do
  // not depend on the thread count.
  s.align = s.columns ? uk::kNr2 : uk::kMr2;
  s.units = CeilDiv(s.columns ? N : M, s.align);
  const int64_t other = s.columns ? M : N;
  // Overflow-safe: a unit's multiply-adds, saturated at kMinBlockMacs.
  const int64_t per_unit =
      other > kMinBlockMacs / s.align / K ? kMinBlockMacs : s.align * other * K;
  s.blocks = ChunkCount(threads, s.units, CeilDiv(kMinBlockMacs, per_unit > 0 ? per_unit : 1));
  return s;
}

// B packed by a callback, for a block starting at column j0 of the product.
struct ShiftedPack {
  uk::PackBFn fn;
  const void* ctx;
  int64_t j0;
};

void PackShifted(const void* vctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, float* dst,
                 int64_t strip_stride, int64_t k_stride) {
  const ShiftedPack& s = *static_cast<const ShiftedPack*>(vctx);
  s.fn(s.ctx, k0, kc, s.j0 + j0, nc, dst, strip_stride, k_stride);
}

}  // namespace

static uk::Gemm MakeGemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                         const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                         float* C, int64_t ldc) {
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
  return g;
}

void Sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
           int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
           float* workspace) {
  uk::Sgemm(MakeGemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc), workspace);
}

namespace {

// Session memory for `floats` packed floats, or nullptr with *st Ok when
// the size is beyond what memory can address (the kernel then runs
// unpacked) or an error when the allocator refuses.
float* PackedStorage(PrepareContext& ctx, uint64_t floats, Status* st) {
  *st = Status::Ok();
  if (floats == 0 || floats > UINT64_MAX / sizeof(float) / 2) return nullptr;
  float* p = static_cast<float*>(ctx.Alloc(floats * sizeof(float), 64));
  if (!p)
    *st = ctx.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for %llu bytes of packed weights",
                   static_cast<unsigned long long>(floats * sizeof(float)));
  return p;
}

}  // namespace

Status PrepackA(PrepareContext& ctx, bool trans_a, const float* A, int64_t lda, int64_t M,
                int64_t K, float alpha, uk::PackedA* out) {
  *out = uk::PackedA{};
  if (M <= 0 || K <= 0) return Status::Ok();
  Status st;
  float* data = PackedStorage(ctx, uk::SgemmPackedAFloats(M, K), &st);
  if (!data) return st;
  uk::SgemmPackA(trans_a, A, lda, M, K, alpha, data);
  *out = uk::PackedA{data, M, K};
  return Status::Ok();
}

Status PrepackB(PrepareContext& ctx, bool trans_b, const float* B, int64_t ldb, int64_t K,
                int64_t N, uk::PackedB* out) {
  *out = uk::PackedB{};
  if (N <= 0 || K <= 0) return Status::Ok();
  Status st;
  float* data = PackedStorage(ctx, uk::SgemmPackedBFloats(K, N), &st);
  if (!data) return st;
  uk::SgemmPackB(trans_b, B, ldb, K, N, data);
  *out = uk::PackedB{data, K, N};
  return Status::Ok();
}

Status GemmRunner::Init(KernelContext& ctx, int64_t M, int64_t N, int64_t K) {
  ctx_ = &ctx;
  // The most blocks either cut could use (a conv packs B by callback).
  const Split a = ChooseSplit(ctx.threads(), M, N, K, false);
  const Split b = ChooseSplit(ctx.threads(), M, N, K, true);
  blocks_ = a.blocks > b.blocks ? a.blocks : b.blocks;
  ws_stride_ = (uk::SgemmWorkspaceFloats(M, N, K) + 15) / 16 * 16;
  return ScratchArray(ctx, ws_stride_ * blocks_, &ws_);
}

void GemmRunner::Run(const uk::Gemm& g) const {
  Split s = ChooseSplit(blocks_, g.M, g.N, g.K, g.pack_b != nullptr);
  if (s.blocks <= 1) {
    uk::Sgemm(g, ws_);
    return;
  }
  ctx_->ParallelFor(s.blocks, [&](uint32_t c, uint32_t) {
    int64_t lo, hi;
    ChunkRange(s.units * s.align, s.blocks, c, s.align, &lo, &hi);
    uk::Gemm b = g;
    ShiftedPack shifted{g.pack_b, g.pack_b_ctx, lo};
    if (s.columns) {
      if (hi > g.N) hi = g.N;
      b.N = hi - lo;
      if (g.packed_b) {
        b.packed_b_col = g.packed_b_col + lo;
      } else if (g.pack_b) {
        b.pack_b = PackShifted;
        b.pack_b_ctx = &shifted;
      } else {
        b.B = g.trans_b ? g.B + lo * g.ldb : g.B + lo;
      }
      b.C = g.C + lo;
      if (g.col_bias) b.col_bias = g.col_bias + lo;
    } else {
      if (hi > g.M) hi = g.M;
      b.M = hi - lo;
      if (g.packed_a) b.packed_a_row = g.packed_a_row + lo;
      else b.A = g.trans_a ? g.A + lo : g.A + lo * g.lda;
      b.C = g.C + lo * g.ldc;
      if (g.row_bias) b.row_bias = g.row_bias + lo;
    }
    if (b.M > 0 && b.N > 0) uk::Sgemm(b, ws_ + c * ws_stride_);
  });
}

void GemmRunner::Run(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                     const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                     int64_t ldc) const {
  Run(MakeGemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc));
}

}  // namespace kern
}  // namespace epctx
