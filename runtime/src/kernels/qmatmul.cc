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

// A parameter of B ([..., K, N], rank b_rank) the same for every matrix:
// a scalar, [N], or [1, N] for a 2-D B (per-batch layouts are left to the
// reference loop).
bool PerColumn(const TensorRef& t, int64_t N, uint32_t b_rank) {
  if (t.elements() == 1 && t.rank <= 1) return true;
  if (t.rank == 1) return t.dims[0] == N;
  return b_rank == 2 && t.rank == 2 && t.dims[0] == 1 && t.dims[1] == N;
}

bool IsScalar(const TensorRef& t) { return t.elements() == 1 && t.rank <= 1; }

// Where a product's float scales come from: inputs `as`, `bs` and, unless
// it is kNone (QGemm's float output), `ys`; alpha is QGemm's.
struct ScaleInputs {
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t as, bs, ys;
  float alpha;
};

// The multipliers alpha * a_scale * b_scale[n] / y_scale (QLinearMatMul:
// alpha 1, the reference's expression; no y_scale: no division) when the
// scales are constant float32 of the shapes the kernels accept; otherwise
// the kernel makes them at Run.
Status PrepareMult(PrepareContext& pc, uint32_t b_rank, const ScaleInputs& si,
                   QMatMulPrepared* pp) {
  const bool has_y = si.ys != ScaleInputs::kNone;
  const TensorRef *as = pc.constant(si.as), *bs = pc.constant(si.bs);
  const TensorRef* ys = has_y ? pc.constant(si.ys) : nullptr;
  if (!as || !bs || (has_y && !ys)) return Status::Ok();
  if (as->dtype != EPCTX_DTYPE_FLOAT || bs->dtype != EPCTX_DTYPE_FLOAT ||
      (ys && ys->dtype != EPCTX_DTYPE_FLOAT))
    return Status::Ok();
  if (!IsScalar(*as) || (ys && !IsScalar(*ys)) || !PerColumn(*bs, pp->N, b_rank))
    return Status::Ok();
  float* mult = static_cast<float*>(pc.Alloc(uint64_t(pp->N) * sizeof(float), 64));
  if (!mult) return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the multipliers");
  const float a = si.alpha * *static_cast<const float*>(as->data);
  const float* b = static_cast<const float*>(bs->data);
  const bool one = bs->elements() == 1;
  for (int64_t n = 0; n < pp->N; ++n)
    mult[n] = ys ? a * b[one ? 0 : n] / *static_cast<const float*>(ys->data) : a * b[one ? 0 : n];
  pp->mult = mult;
  pp->as = as->data;
  pp->bs = bs->data;
  pp->ys = ys ? ys->data : nullptr;
  return Status::Ok();
}

// Packs constant input `bi` (B; [N][K] when trans_b, which only 2-D B
// has) with its zero point `zi` for the kernels, and the multipliers when
// `scales` is set.
Status PrepareQMatMul(PrepareContext& pc, uint32_t bi, uint32_t zi, bool trans_b,
                      const ScaleInputs* scales) {
  const TensorRef* b = pc.constant(bi);
  if (!b || !IsQ8(b->dtype) || b->rank < 2 || (trans_b && b->rank != 2)) return Status::Ok();
  const int64_t K = b->dims[b->rank - (trans_b ? 1 : 2)];
  const int64_t N = b->dims[b->rank - (trans_b ? 2 : 1)];
  int64_t matrices = 1, rows = 0;
  if (!Product(b->dims, 0, b->rank - 2, &matrices) || !MulOk(matrices, N, &rows))
    return Status::Ok();
  if (K <= 0 || N <= 0 || rows <= 0 || rows > INT32_MAX) return Status::Ok();
  const TensorRef* bzp = pc.constant(zi);
  // Zero points the kernel would refuse stay for it to report.
  if (bzp && (bzp->dtype != b->dtype || !PerColumn(*bzp, N, b->rank))) return Status::Ok();
  const uint64_t n = uint64_t(rows);
  QMatMulPrepared* pp = static_cast<QMatMulPrepared*>(pc.Alloc(sizeof(QMatMulPrepared), 16));
  uint8_t* wt = static_cast<uint8_t*>(pc.Alloc(n * uint64_t(K), 64));
  int32_t* wsum = static_cast<int32_t*>(pc.Alloc(n * sizeof(int32_t), 64));
  int32_t* wz = static_cast<int32_t*>(pc.Alloc(uint64_t(N) * sizeof(int32_t), 64));
  uint32_t* tail = K % 4 ? static_cast<uint32_t*>(pc.Alloc(n * sizeof(uint32_t), 64)) : nullptr;
  if (!pp || !wt || !wsum || !wz || (K % 4 && !tail))
    return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the prepared B %s", ShapeOf(*b).s);
  // A transposed B (2-D) is the layout already; otherwise each matrix is
  // transposed in 64 x 64 blocks: both sides stay in cache.
  if (trans_b)
    for (int64_t i = 0; i < N * K; ++i) wt[i] = static_cast<const uint8_t*>(b->data)[i];
  for (int64_t g = 0; g < matrices && !trans_b; ++g) {
    const uint8_t* src = static_cast<const uint8_t*>(b->data) + g * K * N;
    uint8_t* dst = wt + g * N * K;
    for (int64_t k0 = 0; k0 < K; k0 += 64)
      for (int64_t n0 = 0; n0 < N; n0 += 64)
        for (int64_t j = n0; j < N && j < n0 + 64; ++j)
          for (int64_t k = k0; k < K && k < k0 + 64; ++k) dst[j * K + k] = src[k * N + j];
  }
  const uint8_t wflip = b->dtype == EPCTX_DTYPE_UINT8 ? 0x80 : 0;
  uk::QWeightSums(wt, rows, K, wflip, wsum);
  if (tail) uk::QTails(wt, K, int32_t(rows), tail);
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
  pp->matrices = matrices;
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
  if (scales) EPCTX_RETURN_IF_ERROR(PrepareMult(pc, b->rank, *scales, pp));
  pc.SetPrepared(pp);
  return Status::Ok();
}

// Per-Run constants of the correction: xz (A's zero point, unsigned
// domain) and rowc[n] = K * xz * wz[n] - xz * wsum[n], wrapping.
struct Correction {
  uint32_t xz;
  const int32_t* rowc;  // [N]
};

// A Run's scratch, taken once for every matrix of the product.
struct Work {
  int32_t* rowc;     // [N]
  uint8_t* panels;   // threads x panel bytes (panels)
  uint8_t* flipped;  // [rows][K]: INT8 A made unsigned (dots)
  int32_t* asum;     // [rows] (dots)
};

uint64_t PanelBytes(int64_t K) { return uint64_t((K + 3) / 4) * kQCols * 4; }

// The accumulator of one output from its raw sum and the A row's (or panel
// column's) byte sum.
inline uint32_t Acc(const QMatMulPrepared& pp, const Correction& c, int64_t n, int32_t raw,
                    int32_t asum) {
  return uint32_t(raw) + uint32_t(c.rowc[n]) - uint32_t(pp.wz[n]) * uint32_t(asum);
}

// Rows of A fewer than kDotRows: one uk::QDot per A row and chunk of B^T
// rows. `arows` are A's rows as unsigned bytes, `asum` their sums.
void RunDots(KernelContext& ctx, const QMatMulPrepared& pp, const QMatMulOperands& op, int64_t M,
             const Correction& c, const uint8_t* arows, const int32_t* asum) {
  const int64_t K = pp.K, N = pp.N;
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
          if (op.out == QMatMulOut::kInt32) static_cast<int32_t*>(op.y)[at + j] = acc;
          else if (op.out == QMatMulOut::kFloat)
            static_cast<float*>(op.y)[at + j] = float(acc) * op.mult[n0 + j];
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
  if (op.out == QMatMulOut::kInt32) {
    int32_t* y = static_cast<int32_t*>(op.y) + m0 * N + n0;
    for (int64_t q = 0; q < cols; ++q)
      for (int32_t r = 0; r < rows; ++r)
        y[q * N + r] = int32_t(Acc(pp, c, n0 + r, raw[r * kQCols + q], pp.wz_any ? colsum[q] : 0));
    return;
  }
  if (op.out == QMatMulOut::kFloat) {
    float* y = static_cast<float*>(op.y) + m0 * N + n0;
    for (int64_t q = 0; q < cols; ++q)
      for (int32_t r = 0; r < rows; ++r)
        y[q * N + r] =
            float(int32_t(Acc(pp, c, n0 + r, raw[r * kQCols + q], pp.wz_any ? colsum[q] : 0))) *
            op.mult[n0 + r];
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
void RunPanels(KernelContext& ctx, const QMatMulPrepared& pp, const QMatMulOperands& op, int64_t M,
               const Correction& c, uint8_t xflip, uint8_t* panels) {
  const int64_t K = pp.K, N = pp.N, groups = (K + 3) / 4;
  const int64_t blocks = (M + kQCols - 1) / kQCols, cuts = (N + kPanelChunk - 1) / kPanelChunk;
  const int64_t units = blocks * cuts;
  const uint64_t panel_bytes = PanelBytes(K);
  const uint32_t chunks = ctx.Chunks(units, K * kQCols * kPanelChunk);  // <= threads()
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
}

}  // namespace

const QMatMulPrepared* QMatMulPreparedFor(const KernelContext& ctx, const TensorRef& b,
                                          const TensorRef* bzp, const MatMulPlan& p) {
  const QMatMulPrepared* pp = static_cast<const QMatMulPrepared*>(ctx.prepared());
  if (!pp || pp->b != b.data || b.rank < 2 || pp->K != p.K || pp->N != p.N) return nullptr;
  int64_t matrices = 0;
  if (!Product(b.dims, 0, b.rank - 2, &matrices) || matrices != pp->matrices) return nullptr;
  if ((bzp ? bzp->data : nullptr) != pp->bzp) return nullptr;
  return pp;
}

const float* QMatMulPreparedMult(const QMatMulPrepared& pp, const TensorRef& as,
                                 const TensorRef& bs, const TensorRef* ys) {
  if (!pp.mult || as.data != pp.as || bs.data != pp.bs || (ys ? ys->data : nullptr) != pp.ys)
    return nullptr;
  return pp.mult;
}

namespace {

// One product of M rows of A with pp's B^T rows (already offset to its
// matrix).
void RunMatrix(KernelContext& ctx, const QMatMulPrepared& pp, const QMatMulOperands& op, int64_t M,
               const Work& w) {
  const int64_t K = pp.K, N = pp.N;
  const uint8_t xflip = op.a_dtype == EPCTX_DTYPE_INT8 ? 0x80 : 0;
  const uint32_t xz = uint32_t(op.azp + (xflip ? 128 : 0));
  for (int64_t n = 0; n < N; ++n)
    w.rowc[n] = int32_t(uint32_t(K) * xz * uint32_t(pp.wz[n]) - xz * uint32_t(pp.wsum[n]) +
                        (op.bias ? uint32_t(op.bias[n]) : 0u));
  const Correction c{xz, w.rowc};
  if (M >= kDotRows) return RunPanels(ctx, pp, op, M, c, xflip, w.panels);
  // Dots: A's rows made unsigned and summed once, before the threads.
  const uint8_t* A = static_cast<const uint8_t*>(op.a);
  for (int64_t m = 0; m < M; ++m) {
    uint32_t s = 0;
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t v = uint8_t(A[m * K + k] ^ xflip);
      if (xflip) w.flipped[m * K + k] = v;
      s += v;
    }
    w.asum[m] = int32_t(s);
  }
  RunDots(ctx, pp, op, M, c, xflip ? w.flipped : A, w.asum);
}

}  // namespace

Status RunQMatMulPanels(KernelContext& ctx, const QMatMulPrepared& pp, const MatMulPlan& p,
                        const QMatMulOperands& op) {
  // One matrix of B: all of A's rows (A and Y contiguous over the batches).
  const bool one = pp.matrices == 1;
  const int64_t M = one ? p.batches * p.M : p.M, K = pp.K, N = pp.N;
  if (M <= 0 || p.batches <= 0) return Status::Ok();
  Work w{};
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(N), &w.rowc));
  if (M >= kDotRows) {
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(ctx.threads()) * PanelBytes(K), &w.panels));
  } else {
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(M), &w.asum));
    if (op.a_dtype == EPCTX_DTYPE_INT8)
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(M * K), &w.flipped));
  }
  if (one) {
    RunMatrix(ctx, pp, op, M, w);
    return Status::Ok();
  }
  const uint64_t y_elem = op.out == QMatMulOut::kBytes ? 1 : 4;
  ForEachMatrix(p, [&](int64_t ia, int64_t ib, int64_t iy) {
    QMatMulPrepared m = pp;
    m.wt += ib * N * K;
    m.wsum += ib * N;
    if (m.tail) m.tail += ib * N;
    QMatMulOperands o = op;
    o.a = static_cast<const uint8_t*>(op.a) + ia * M * K;
    o.y = static_cast<uint8_t*>(op.y) + uint64_t(iy * M * N) * y_elem;
    RunMatrix(ctx, m, o, M, w);
  });
  return Status::Ok();
}

Status PrepareMatMulInteger(PrepareContext& pc) { return PrepareQMatMul(pc, 1, 3, false, nullptr); }

Status PrepareQLinearMatMul(PrepareContext& pc) {
  const ScaleInputs si{1, 4, 6, 1.0f};
  return PrepareQMatMul(pc, 3, 5, false, &si);
}

// com.microsoft QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point,
// C, y_scale, y_zero_point; float output without y_scale.
Status PrepareQGemm(PrepareContext& pc) {
  if (pc.kernel().AttrInt("transA", 0) != 0) return Status::Ok();
  // No constant y_scale: multipliers for the float output, which a Run with
  // a computed y_scale does not take (QMatMulPreparedMult).
  const uint32_t ys = pc.constant(7) ? 7 : ScaleInputs::kNone;
  const ScaleInputs si{1, 4, ys, pc.kernel().AttrFloat("alpha", 1.0f)};
  return PrepareQMatMul(pc, 3, 5, pc.kernel().AttrInt("transB", 0) != 0, &si);
}

}  // namespace kern
}  // namespace epctx
