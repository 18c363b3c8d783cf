// SPDX-License-Identifier: Apache-2.0
// MatMulInteger and QLinearMatMul with a prepared B on the int8
// micro-kernels (qmatmul.h).
#include "kernels/qmatmul.h"

#include "epctx_uk/qconv.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

using uk::kQCols;
using uk::kQRows;

// Fewer rows of A than this run as dot products (uk::QDot: each weight byte
// read once per A row) instead of a 48-row panel, which would be mostly
// padding: a dot row costs about an eighth of a panel's sweep of B^T
// (measured on VNNI at K 768 and 3072, N 768; numbers in the commit body).
constexpr int64_t kDotRows = 8;
constexpr int64_t kDotChunk = 64;  // B^T rows per QDot unit
// B^T rows per panel unit: one A panel is packed per run of units, so a
// unit's packing (48 K bytes) is 1/128 of its products.
constexpr int64_t kPanelChunk = 16 * kQRows;

bool IsQ8(int32_t dtype) { return dtype == EPCTX_DTYPE_INT8 || dtype == EPCTX_DTYPE_UINT8; }

int32_t ByteValue(int32_t dtype, const void* p, uint64_t i) {
  const uint8_t v = static_cast<const uint8_t*>(p)[i];
  return dtype == EPCTX_DTYPE_INT8 ? int32_t(int8_t(v)) : int32_t(v);
}

// A per-column parameter of a [K][N] B: a scalar, [N] or [1, N].
bool PerColumn(const TensorRef& t, int64_t N) {
  if (t.elements() == 1 && t.rank <= 1) return true;
  if (t.rank == 1) return t.dims[0] == N;
  return t.rank == 2 && t.dims[0] == 1 && t.dims[1] == N;
}

bool IsScalar(const TensorRef& t) { return t.elements() == 1 && t.rank <= 1; }

// QLinearMatMul's multipliers a_scale * b_scale[n] / y_scale (the
// reference's expression) when all three scales are constant float32 of the
// shapes the kernel accepts; otherwise the kernel makes them at Run.
Status PrepareMult(PrepareContext& pc, QMatMulPrepared* pp) {
  const TensorRef *as = pc.constant(1), *bs = pc.constant(4), *ys = pc.constant(6);
  if (!as || !bs || !ys) return Status::Ok();
  if (as->dtype != EPCTX_DTYPE_FLOAT || bs->dtype != EPCTX_DTYPE_FLOAT ||
      ys->dtype != EPCTX_DTYPE_FLOAT)
    return Status::Ok();
  if (!IsScalar(*as) || !IsScalar(*ys) || !PerColumn(*bs, pp->N)) return Status::Ok();
  float* mult = static_cast<float*>(pc.Alloc(uint64_t(pp->N) * sizeof(float), 64));
  if (!mult) return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the multipliers");
  const float a = *static_cast<const float*>(as->data), y = *static_cast<const float*>(ys->data);
  const float* b = static_cast<const float*>(bs->data);
  const bool one = bs->elements() == 1;
  for (int64_t n = 0; n < pp->N; ++n) mult[n] = a * b[one ? 0 : n] / y;
  pp->mult = mult;
  pp->as = as->data;
  pp->bs = bs->data;
  pp->ys = ys->data;
  return Status::Ok();
}

// Packs constant input `bi` (B) with its zero point `zi` for the kernels.
Status PrepareQMatMul(PrepareContext& pc, uint32_t bi, uint32_t zi, bool qlinear) {
  const TensorRef* b = pc.constant(bi);
  if (!b || !IsQ8(b->dtype) || b->rank != 2) return Status::Ok();
  const int64_t K = b->dims[0], N = b->dims[1];
  if (K <= 0 || N <= 0 || N > INT32_MAX) return Status::Ok();
  const TensorRef* bzp = pc.constant(zi);
  // Zero points the kernel would refuse stay for it to report.
  if (bzp && (bzp->dtype != b->dtype || !PerColumn(*bzp, N))) return Status::Ok();
  const uint64_t n = uint64_t(N);
  QMatMulPrepared* pp = static_cast<QMatMulPrepared*>(pc.Alloc(sizeof(QMatMulPrepared), 16));
  uint8_t* wt = static_cast<uint8_t*>(pc.Alloc(n * uint64_t(K), 64));
  int32_t* wsum = static_cast<int32_t*>(pc.Alloc(n * sizeof(int32_t), 64));
  int32_t* wz = static_cast<int32_t*>(pc.Alloc(n * sizeof(int32_t), 64));
  uint32_t* tail = K % 4 ? static_cast<uint32_t*>(pc.Alloc(n * sizeof(uint32_t), 64)) : nullptr;
  if (!pp || !wt || !wsum || !wz || (K % 4 && !tail))
    return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the prepared B (%lld x %lld)",
                   static_cast<long long>(K), static_cast<long long>(N));
  const uint8_t* src = static_cast<const uint8_t*>(b->data);
  // Transposed in 64 x 64 blocks: both sides stay in cache.
  for (int64_t k0 = 0; k0 < K; k0 += 64)
    for (int64_t n0 = 0; n0 < N; n0 += 64)
      for (int64_t j = n0; j < N && j < n0 + 64; ++j)
        for (int64_t k = k0; k < K && k < k0 + 64; ++k) wt[j * K + k] = src[k * N + j];
  const uint8_t wflip = b->dtype == EPCTX_DTYPE_UINT8 ? 0x80 : 0;
  uk::QWeightSums(wt, N, K, wflip, wsum);
  if (tail) uk::QTails(wt, K, int32_t(N), tail);
  bool uniform = true, any = false;
  for (int64_t j = 0; j < N; ++j) {
    const int32_t z = bzp ? ByteValue(bzp->dtype, bzp->data, bzp->elements() == 1 ? 0 : j) : 0;
    wz[j] = z - (wflip ? 128 : 0);
    uniform = uniform && wz[j] == wz[0];
    any = any || wz[j] != 0;
  }
  *pp = QMatMulPrepared{};
  pp->b = b->data;
  pp->bzp = bzp ? bzp->data : nullptr;
  pp->K = K;
  pp->N = N;
  pp->wflip = wflip;
  pp->wt = wt;
  pp->wsum = wsum;
  pp->tail = tail;
  pp->wz = wz;
  pp->wz_uniform = uniform;
  pp->wz_any = any;
  pp->tile = uk::QTileKernel();
  pp->dot = uk::QDotKernel();
  pp->requant = uk::QRequantKernel();
  if (qlinear) EPCTX_RETURN_IF_ERROR(PrepareMult(pc, pp));
  pc.SetPrepared(pp);
  return Status::Ok();
}

// Per-Run constants of the correction: xz (A's zero point, unsigned
// domain) and rowc[n] = K * xz * wz[n] - xz * wsum[n], wrapping.
struct Correction {
  uint32_t xz;
  const int32_t* rowc;  // [N]
};

// The accumulator of one output from its raw sum and the A row's (or panel
// column's) byte sum.
inline uint32_t Acc(const QMatMulPrepared& pp, const Correction& c, int64_t n, int32_t raw,
                    int32_t asum) {
  return uint32_t(raw) + uint32_t(c.rowc[n]) - uint32_t(pp.wz[n]) * uint32_t(asum);
}

// Rows of A fewer than kDotRows: one uk::QDot per A row and chunk of B^T
// rows. `arows` are A's rows as unsigned bytes, `asum` their sums.
void RunDots(KernelContext& ctx, const QMatMulPrepared& pp, const QMatMulOperands& op,
             const Correction& c, const uint8_t* arows, const int32_t* asum) {
  const int64_t M = op.rows, K = pp.K, N = pp.N;
  const int64_t units = (N + kDotChunk - 1) / kDotChunk;
  const uint32_t chunks = ctx.Chunks(units, M * K * kDotChunk);
  ctx.ParallelFor(chunks, [&](uint32_t ch, uint32_t) {
    int64_t lo, hi;
    ChunkRange(units, chunks, ch, 1, &lo, &hi);
    int32_t raw[kDotChunk];
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t n0 = u * kDotChunk, cnt = N - n0 < kDotChunk ? N - n0 : kDotChunk;
      for (int64_t m = 0; m < M; ++m) {
        pp.dot(uk::QDot{arows + m * K, pp.wt + n0 * K, K, K, pp.wflip, raw, cnt});
        const uint64_t at = uint64_t(m * N + n0);
        for (int64_t j = 0; j < cnt; ++j) {
          const int32_t acc = int32_t(Acc(pp, c, n0 + j, raw[j], asum[m]));
          if (op.int32_out) static_cast<int32_t*>(op.y)[at + j] = acc;
          else
            static_cast<uint8_t*>(op.y)[at + j] =
                uint8_t(uk::QRequantizeOne(float(acc) * op.mult[n0 + j], op.zp, op.lo, op.hi));
        }
      }
    }
  });
}

// Writes one tile (B^T rows [n0, n0 + rows) x A rows [m0, m0 + cols)) of
// raw sums into Y [M][N], transposing.
void FinishTile(const QMatMulPrepared& pp, const QMatMulOperands& op, const Correction& c,
                int64_t m0, int64_t cols, int64_t n0, int32_t rows, const int32_t* raw,
                const int32_t* colsum) {
  const int64_t N = pp.N;
  if (op.int32_out) {
    int32_t* y = static_cast<int32_t*>(op.y) + m0 * N + n0;
    for (int64_t q = 0; q < cols; ++q)
      for (int32_t r = 0; r < rows; ++r)
        y[q * N + r] = int32_t(Acc(pp, c, n0 + r, raw[r * kQCols + q], pp.wz_any ? colsum[q] : 0));
    return;
  }
  // The vector requantisation into a [rows][48] block (one call per row
  // when the zero points differ by column: QRequant takes one), then the
  // block transposed into Y.
  uint8_t block[kQRows * kQCols];
  const int32_t* cs = pp.wz_any ? colsum : nullptr;
  const int32_t calls = pp.wz_uniform ? 1 : rows, per = pp.wz_uniform ? rows : 1;
  for (int32_t i = 0; i < calls; ++i) {
    const int64_t r = int64_t(i) * per;
    pp.requant(uk::QRequant{raw + r * kQCols, per, int32_t(cols), cs, pp.wz[n0 + r],
                            c.rowc + n0 + r, op.mult + n0 + r, op.zp, op.lo, op.hi,
                            block + r * kQCols, kQCols});
  }
  uint8_t* y = static_cast<uint8_t*>(op.y) + m0 * N + n0;
  for (int64_t q = 0; q < cols; ++q)
    for (int32_t r = 0; r < rows; ++r) y[q * N + r] = block[r * kQCols + q];
}

// Units are (48-row block of A) x (kPanelChunk rows of B^T), block-major:
// a worker packs a block's panel once per run of its units.
Status RunPanels(KernelContext& ctx, const QMatMulPrepared& pp, const QMatMulOperands& op,
                 const Correction& c, uint8_t xflip) {
  const int64_t M = op.rows, K = pp.K, N = pp.N, groups = (K + 3) / 4;
  const int64_t blocks = (M + kQCols - 1) / kQCols, cuts = (N + kPanelChunk - 1) / kPanelChunk;
  const int64_t units = blocks * cuts;
  const uint64_t panel_bytes = uint64_t(groups) * kQCols * 4;
  const uint32_t chunks = ctx.Chunks(units, K * kQCols * kPanelChunk);
  uint8_t* panels = static_cast<uint8_t*>(ctx.Scratch(uint64_t(chunks) * panel_bytes, 64));
  if (!panels)
    return ctx.Fail(EPCTX_OUT_OF_MEMORY, "cannot get %llu bytes of scratch for the A panels",
                    static_cast<unsigned long long>(uint64_t(chunks) * panel_bytes));
  const uint8_t* A = static_cast<const uint8_t*>(op.a);
  ctx.ParallelFor(chunks, [&](uint32_t ch, uint32_t) {
    int64_t lo, hi;
    ChunkRange(units, chunks, ch, 1, &lo, &hi);
    uint8_t* panel = panels + uint64_t(ch) * panel_bytes;
    int32_t colsum[kQCols] = {};
    int32_t tile[kQRows * kQCols];
    int64_t packed = -1;
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t mb = u / cuts, m0 = mb * kQCols, cols = M - m0 < kQCols ? M - m0 : kQCols;
      if (mb != packed) {
        uk::QPackRows(A + m0 * K, K, cols, xflip, panel);
        if (pp.wz_any) uk::QColumnSums(panel, groups, colsum);
        packed = mb;
      }
      const int64_t n_lo = u % cuts * kPanelChunk;
      const int64_t n_hi = N - n_lo < kPanelChunk ? N : n_lo + kPanelChunk;
      for (int64_t n0 = n_lo; n0 < n_hi; n0 += kQRows) {
        const int32_t rows = int32_t(n_hi - n0 < kQRows ? n_hi - n0 : kQRows);
        pp.tile(uk::QTile{pp.wt + n0 * K, K, K / 4, pp.tail ? pp.tail + n0 : nullptr, pp.wflip,
                          panel, tile, rows});
        FinishTile(pp, op, c, m0, cols, n0, rows, tile, colsum);
      }
    }
  });
  return Status::Ok();
}

}  // namespace

const QMatMulPrepared* QMatMulPreparedFor(const KernelContext& ctx, const TensorRef& b,
                                          const TensorRef* bzp, const MatMulPlan& p) {
  const QMatMulPrepared* pp = static_cast<const QMatMulPrepared*>(ctx.prepared());
  if (!pp || pp->b != b.data || b.rank != 2 || pp->K != p.K || pp->N != p.N) return nullptr;
  if ((bzp ? bzp->data : nullptr) != pp->bzp) return nullptr;
  return pp;
}

const float* QMatMulPreparedMult(const QMatMulPrepared& pp, const TensorRef& as,
                                 const TensorRef& bs, const TensorRef& ys) {
  if (!pp.mult || as.data != pp.as || bs.data != pp.bs || ys.data != pp.ys) return nullptr;
  return pp.mult;
}

Status RunQMatMulPanels(KernelContext& ctx, const QMatMulPrepared& pp, const QMatMulOperands& op) {
  const int64_t M = op.rows, K = pp.K, N = pp.N;
  if (M <= 0) return Status::Ok();
  const uint8_t xflip = op.a_dtype == EPCTX_DTYPE_INT8 ? 0x80 : 0;
  const uint32_t xz = uint32_t(op.azp + (xflip ? 128 : 0));
  int32_t* rowc = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(N), &rowc));
  for (int64_t n = 0; n < N; ++n)
    rowc[n] = int32_t(uint32_t(K) * xz * uint32_t(pp.wz[n]) - xz * uint32_t(pp.wsum[n]));
  const Correction c{xz, rowc};
  if (M >= kDotRows) return RunPanels(ctx, pp, op, c, xflip);
  // Dots: A's rows made unsigned and summed once, before the threads.
  const uint8_t* A = static_cast<const uint8_t*>(op.a);
  uint8_t* flipped = nullptr;
  int32_t* asum = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(M), &asum));
  if (xflip) EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(M * K), &flipped));
  for (int64_t m = 0; m < M; ++m) {
    uint32_t s = 0;
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t v = uint8_t(A[m * K + k] ^ xflip);
      if (flipped) flipped[m * K + k] = v;
      s += v;
    }
    asum[m] = int32_t(s);
  }
  RunDots(ctx, pp, op, c, flipped ? flipped : A, asum);
  return Status::Ok();
}

Status PrepareMatMulInteger(PrepareContext& pc) { return PrepareQMatMul(pc, 1, 3, false); }

Status PrepareQLinearMatMul(PrepareContext& pc) { return PrepareQMatMul(pc, 3, 5, true); }

}  // namespace kern
}  // namespace epctx
