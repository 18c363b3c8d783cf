// SPDX-License-Identifier: Apache-2.0
// The int8 panel strategies of QCONV2D and QGEMM (kQPanel, kQDot) on the
// micro-kernel library's int8 kernels (epctx_uk/qgemm.h: AVX-512 VNNI,
// AVX2, or portable C).
//
// kQPanel: a GEMM of weights (rows: output channels, read in place from the
// weight segment, four K bytes a broadcast) x a panel of 48 output pixels
// (QCONV2D: the im2col of a pixel block; QGEMM: 48 rows of A) packed into
// the worker's workspace as groups of four K rows per column, the layout
// vpdpbusd multiplies. Threads split the pixel blocks; each block is packed
// and computed whole by one, so the bytes do not depend on the split.
// kQDepthwise: one channel per group (uk::QDepthwiseRun: padded planes,
// 16 outputs a vector).
// kQDot: QGEMM with fewer than 16 rows of A, where a 48-column panel would
// be mostly padding: one dot product of an A row with each weight row.
//
// Both compute raw sums of unsigned activations x signed weights and turn
// them into the zero-pointed accumulator with the weight rows' sums
// (computed once per graph, Graph::qsums) and, when the weight zero point is
// not 0, the panel columns' sums (qgemm.h). Every term is exact, so the
// results are the reference units' (vnpu_int8.cc) bit for bit; the
// requantisation is theirs (vnpu_quant.h).
//
// Chosen by shape (PlanQConv, PlanQGemm): weights in the weight segment (the
// sums are computed when the graph is bound), and for QCONV2D at least 4
// output channels per group and 16 K rows (depthwise and tiny convolutions
// stay on the reference's row loops, which do not pad K to 4 or rows to 8).
#include <cstring>

#include "conv/plan.h"
#include "epctx_uk/qconv.h"
#include "vnpu_quant.h"

namespace epctx {
namespace vnpu {
namespace {

using uk::kQCols;
using uk::kQRows;

constexpr int64_t kDotRows = 16;     // QGEMM with fewer rows of A: kQDot
constexpr int64_t kDotChunk = 64;    // output columns per kQDot unit
constexpr int64_t kMinConvRows = 4;  // output channels per group for kQPanel
constexpr int64_t kMinConvK = 16;    // K rows for kQPanel

const fb::Tensor* Ten(const fb::Graph* g, uint32_t t) { return g->tensors()->Get(t); }
bool InWeights(const fb::Graph* g, uint32_t t) {
  return Ten(g, t)->location() == fb::Location::WEIGHT;
}
// Activations are read unsigned (INT8 XOR 0x80 = x + 128), weights signed
// (UINT8 XOR 0x80 = w - 128).
uint8_t XFlip(const fb::Graph* g, uint32_t t) {
  return Ten(g, t)->dtype() == fb::DType::INT8 ? 0x80 : 0;
}
uint8_t WFlip(const fb::Graph* g, uint32_t t) {
  return Ten(g, t)->dtype() == fb::DType::UINT8 ? 0x80 : 0;
}
int64_t Groups(int64_t k) { return (k + 3) / 4; }
// Workspace floats of a panel of k rows: groups x 48 columns x 4 bytes.
uint64_t PanelFloats(int64_t k) { return uint64_t(Groups(k)) * uint64_t(kQCols); }

QFinish MakeFinish(const Bindings& b, uint32_t x, uint32_t w, uint32_t out, bool has_bias,
                   uint32_t bias, uint32_t mult, int32_t ozp, int32_t lo, int32_t hi, int32_t xzp,
                   bool has_xzp_tensor, uint32_t xzp_tensor, int32_t wzp, int64_t k,
                   const OpPlan& p) {
  const fb::Graph* g = b.graph->stream;
  QFinish f{};
  f.ep = Epilogue{Ten(g, out)->dtype(),
                  has_bias ? reinterpret_cast<const int32_t*>(b.ptr(bias)) : nullptr,
                  nullptr,
                  ozp,
                  lo,
                  hi};
  if (f.ep.dtype != fb::DType::INT32) f.ep.mult = reinterpret_cast<const float*>(b.ptr(mult));
  f.wsum = b.graph->qsums + p.qsum_at;
  if (has_xzp_tensor) {
    const uint8_t byte = *reinterpret_cast<const uint8_t*>(b.ptr(xzp_tensor));
    xzp = Ten(g, x)->dtype() == fb::DType::INT8 ? int32_t(int8_t(byte)) : int32_t(byte);
  }
  const int32_t xz = xzp + (XFlip(g, x) ? 128 : 0);
  const int32_t wz = wzp - (WFlip(g, w) ? 128 : 0);
  f.xz = uint32_t(xz);
  f.wz = uint32_t(wz);
  f.kzz = uint32_t(k) * uint32_t(xz) * uint32_t(wz);
  return f;
}

// Sweeps the weight rows [row0, row0 + count) over one packed panel:
// emit(first row, rows, tile) for each tile of up to 8 rows.
template <typename Emit>
void Sweep(const OpPlan& p, const uint8_t* w, int64_t k, uint8_t wflip, const uint8_t* panel,
           int64_t row0, int64_t count, const Emit& emit) {
  int32_t tile[kQRows * kQCols];
  uint32_t tail[kQRows];
  for (int64_t r0 = 0; r0 < count; r0 += kQRows) {
    const int32_t rows = int32_t(count - r0 < kQRows ? count - r0 : kQRows);
    const uint8_t* wr = w + (row0 + r0) * k;
    if (k % 4) uk::QTails(wr, k, rows, tail);
    p.qtile(uk::QTile{wr, k, k / 4, k % 4 ? tail : nullptr, wflip, panel, tile, rows});
    emit(row0 + r0, rows, static_cast<const int32_t*>(tile));
  }
}

struct ConvGeo {
  int64_t N, C, H, W, CO, OH, OW, G, cig, cog, KH, KW, sh, sw, dh, dw, pt, pl, K, P;
};
ConvGeo GeoOf(const fb::Graph* g, const fb::QConv2D* c) {
  const fb::Tensor *xt = Ten(g, c->input()), *yt = Ten(g, c->output());
  ConvGeo s{};
  s.N = Dim(xt, 0);
  s.C = Dim(xt, 1);
  s.H = Dim(xt, 2);
  s.W = Dim(xt, 3);
  s.CO = Dim(yt, 1);
  s.OH = Dim(yt, 2);
  s.OW = Dim(yt, 3);
  s.G = c->groups();
  s.cig = s.C / s.G;
  s.cog = s.CO / s.G;
  s.KH = c->kernel_h();
  s.KW = c->kernel_w();
  s.sh = c->stride_h();
  s.sw = c->stride_w();
  s.dh = c->dilation_h();
  s.dw = c->dilation_w();
  s.pt = c->pad_top();
  s.pl = c->pad_left();
  s.K = s.cig * s.KH * s.KW;
  s.P = s.OH * s.OW;
  return s;
}

// The op's geometry, dtypes and zero points (the input's from its field) as
// a micro-kernel job; pointers and the epilogue are filled at execute.
uk::QConvJob JobOf(const fb::Graph* g, const fb::QConv2D* c) {
  const ConvGeo s = GeoOf(g, c);
  uk::QConvJob j{};
  j.N = s.N, j.C = s.C, j.H = s.H, j.W = s.W, j.CO = s.CO, j.OH = s.OH, j.OW = s.OW, j.G = s.G;
  j.KH = s.KH, j.KW = s.KW, j.sh = s.sh, j.sw = s.sw, j.dh = s.dh, j.dw = s.dw;
  j.pt = s.pt, j.pl = s.pl;
  j.xflip = XFlip(g, c->input());
  j.wflip = WFlip(g, c->weights());
  j.xz = c->input_zero_point() + (j.xflip ? 128 : 0);
  j.wz = c->weight_zero_point() - (j.wflip ? 128 : 0);
  return j;
}

}  // namespace

OpPlan PlanQConv(const fb::Graph* g, const fb::QConv2D* c) {
  OpPlan p{};
  const ConvGeo s = GeoOf(g, c);
  if (!InWeights(g, c->weights())) return p;
  const uk::QConvJob job = JobOf(g, c);
  if (uk::QDepthwiseFits(job)) {
    p.strategy = Strategy::kQDepthwise;
    p.work_floats = (uk::QDepthwiseWorkBytes(job) + 3) / 4;
    p.qdw = uk::QDwKernel();
    return p;
  }
  if (s.cog < kMinConvRows || s.K < kMinConvK) return p;
  p.strategy = Strategy::kQPanel;
  p.work_floats = (uk::QConvWorkBytes(job) + 3) / 4;
  p.qtile = uk::QTileKernel();
  p.qpack = uk::QPackKernel(uk::Isa::kAuto, s.KW, s.sw);
  return p;
}

OpPlan PlanQGemm(const fb::Graph* g, const fb::QGemm* c) {
  OpPlan p{};
  if (!InWeights(g, c->weights())) return p;
  if (int64_t(c->m()) < kDotRows) {
    p.strategy = Strategy::kQDot;
    p.work_floats = (c->k() + 3) / 4;  // an INT8 row read as unsigned
    p.qdot = uk::QDotKernel();
  } else {
    p.strategy = Strategy::kQPanel;
    p.work_floats = PanelFloats(int64_t(c->k()));
    p.qtile = uk::QTileKernel();
  }
  return p;
}

uint64_t QSumRows(const fb::Graph* g, const fb::Op* o, const OpPlan& p) {
  if (p.strategy != Strategy::kQPanel && p.strategy != Strategy::kQDot &&
      p.strategy != Strategy::kQDepthwise)
    return 0;
  if (o->params_type() == fb::OpParams::QConv2D)
    return uint64_t(Dim(Ten(g, o->params_as_QConv2D()->output()), 1));
  if (o->params_type() == fb::OpParams::QGemm) return o->params_as_QGemm()->n();
  return 0;
}

// Whether the vector requantisation (uk::QRequant, adding in int32) is
// exact for an op: a byte output, and K products plus the largest |bias|
// inside int32.
bool RequantFits(const fb::Graph* g, const uint8_t* weights, bool has_bias, uint32_t bias,
                 uint64_t rows, uint64_t k, uint32_t out) {
  int64_t most = 0;
  if (has_bias) {
    if (!InWeights(g, bias)) return false;
    const uint8_t* bp = weights + Ten(g, bias)->offset();
    for (uint64_t r = 0; r < rows; ++r) {
      int32_t v;
      memcpy(&v, bp + r * 4, 4);
      const int64_t a = v < 0 ? -int64_t(v) : int64_t(v);
      most = a > most ? a : most;
    }
  }
  return Ten(g, out)->dtype() != fb::DType::INT32 && int64_t(k) * 65025 + most < (int64_t{1} << 31);
}

void FillQSums(const fb::Graph* g, const fb::Op* o, const uint8_t* weights, int32_t* sums,
               OpPlan* p) {
  uint32_t wt;
  uint64_t rows, k;
  bool fits;
  if (o->params_type() == fb::OpParams::QConv2D) {
    const fb::QConv2D* c = o->params_as_QConv2D();
    const ConvGeo s = GeoOf(g, c);
    wt = c->weights();
    rows = uint64_t(s.CO);
    k = uint64_t(s.K);
    fits = RequantFits(g, weights, c->has_bias(), c->bias(), rows, k, c->output());
  } else {
    const fb::QGemm* c = o->params_as_QGemm();
    wt = c->weights();
    rows = c->n();
    k = c->k();
    fits = RequantFits(g, weights, c->has_bias(), c->bias(), rows, k, c->output());
  }
  if (fits) p->qrequant = uk::QRequantKernel();
  const uint8_t* w = weights + Ten(g, wt)->offset();
  const uint8_t flip = WFlip(g, wt);
  uk::QWeightSums(w, int64_t(rows), int64_t(k), flip, sums);
}

void RunQConvPanel(const Bindings& b, const fb::QConv2D* c, const OpPlan& p) {
  const fb::Graph* g = b.graph->stream;
  const ConvGeo s = GeoOf(g, c);
  const QFinish fin = MakeFinish(b, c->input(), c->weights(), c->output(), c->has_bias(), c->bias(),
                                 c->multipliers(), c->output_zero_point(), c->output_min(),
                                 c->output_max(), c->input_zero_point(), c->has_input_zp_tensor(),
                                 c->input_zp_tensor(), c->weight_zero_point(), s.K, p);
  uk::QConvJob j = JobOf(g, c);
  j.x = reinterpret_cast<const uint8_t*>(b.ptr(c->input()));
  j.w = reinterpret_cast<const uint8_t*>(b.ptr(c->weights()));
  j.y = b.ptr(c->output());
  j.wsum = fin.wsum;
  j.xz = int32_t(fin.xz);
  j.wz = int32_t(fin.wz);
  j.bias = fin.ep.bias;
  j.mult = fin.ep.mult;
  j.zp = fin.ep.zp, j.lo = fin.ep.lo, j.hi = fin.ep.hi;
  j.int32_out = fin.ep.dtype == fb::DType::INT32;
  j.wide_bias = true;  // the reference's 64-bit acc + bias
  j.tile = p.qtile;
  j.pack = p.qpack;
  j.requant = p.qrequant;
  j.depthwise = p.qdw;
  if (p.strategy == Strategy::kQDepthwise) {
    ForRangeSlots(
        b.par, s.N * s.C, MinUnits(s.P * s.KH * s.KW),
        [&](int64_t lo, int64_t hi, uint32_t slot) { uk::QDepthwiseRun(j, lo, hi, b.slot(slot)); });
    return;
  }
  ForRangeSlots(
      b.par, uk::QConvUnits(j), MinUnits(s.K * kQCols * s.cog),
      [&](int64_t lo, int64_t hi, uint32_t slot) { uk::QConvRun(j, lo, hi, b.slot(slot)); });
}

void RunQGemmPlanned(const Bindings& b, const fb::QGemm* c, const OpPlan& p) {
  const fb::Graph* g = b.graph->stream;
  const int64_t M = int64_t(c->m()), K = int64_t(c->k()), N = int64_t(c->n());
  const QFinish fin = MakeFinish(b, c->input(), c->weights(), c->output(), c->has_bias(), c->bias(),
                                 c->multipliers(), c->output_zero_point(), c->output_min(),
                                 c->output_max(), c->input_zero_point(), c->has_input_zp_tensor(),
                                 c->input_zp_tensor(), c->weight_zero_point(), K, p);
  const uint8_t* a = reinterpret_cast<const uint8_t*>(b.ptr(c->input()));
  const uint8_t* w = reinterpret_cast<const uint8_t*>(b.ptr(c->weights()));
  void* y = b.ptr(c->output());
  const uint8_t xflip = XFlip(g, c->input()), wflip = WFlip(g, c->weights());
  if (p.strategy == Strategy::kQDot) {
    const int64_t chunks = (N + kDotChunk - 1) / kDotChunk;
    ForRangeSlots(
        b.par, chunks, MinUnits(M * K * kDotChunk), [&](int64_t lo, int64_t hi, uint32_t slot) {
          uint8_t* flipped = reinterpret_cast<uint8_t*>(b.slot(slot));
          int32_t raw[kDotChunk];
          for (int64_t m = 0; m < M; ++m) {
            const uint8_t* row = a + m * K;
            if (xflip) {
              for (int64_t i = 0; i < K; ++i) flipped[i] = uint8_t(row[i] ^ xflip);
              row = flipped;
            }
            int32_t colsum = 0;
            if (fin.wz)
              for (int64_t i = 0; i < K; ++i) colsum += row[i];
            for (int64_t ch = lo; ch < hi; ++ch) {
              const int64_t n0 = ch * kDotChunk, n = N - n0 < kDotChunk ? N - n0 : kDotChunk;
              p.qdot(uk::QDot{row, w + n0 * K, K, K, wflip, raw, n});
              for (int64_t j = 0; j < n; ++j)
                fin(y, uint64_t(m * N + n0 + j), n0 + j, raw[j], colsum);
            }
          }
        });
    return;
  }
  // Units: 48-row blocks of A, or, with few blocks (a 128-token encoder
  // has 3), runs of each block's output columns (uk::QPanelRuns, QConvRun's
  // rule); consecutive units of one block pack it once.
  const int64_t blocks = (M + kQCols - 1) / kQCols, runs = uk::QPanelRuns(blocks, N);
  ForRangeSlots(
      b.par, blocks * runs, MinUnits(K * kQCols * N / runs),
      [&](int64_t lo, int64_t hi, uint32_t slot) {
        uint8_t* panel = reinterpret_cast<uint8_t*>(b.slot(slot));
        int32_t colsum[kQCols] = {};
        for (int64_t u = lo; u < hi; ++u) {
          const int64_t blk = u / runs, run = u % runs;
          const int64_t m0 = blk * kQCols, cols = M - m0 < kQCols ? M - m0 : kQCols;
          if (u == lo || run == 0) {  // a block this call has not packed yet
            uk::QPackRows(a + m0 * K, K, cols, xflip, panel);
            if (fin.wz) uk::QColumnSums(panel, Groups(K), colsum);
          }
          int64_t n_lo, n_hi;
          uk::QRunRows(N, run, runs, &n_lo, &n_hi);
          Sweep(p, w, K, wflip, panel, n_lo, n_hi - n_lo,
                [&](int64_t n0, int32_t rows, const int32_t* raw) {
                  if (p.qrequant) {
                    // The vector requantisation into a [rows][48] block, then
                    // its bytes transposed into the [M][N] output: the same
                    // bytes as the scalar epilogue (47% of an int8 encoder's
                    // time when it ran per element).
                    int32_t rowc[kQRows];
                    uint8_t block[kQRows * kQCols];
                    for (int32_t r = 0; r < rows; ++r) rowc[r] = fin.RowConstant(n0 + r);
                    p.qrequant(uk::QRequant{raw, rows, int32_t(cols), fin.wz ? colsum : nullptr,
                                            int32_t(fin.wz), rowc, fin.ep.mult + n0, fin.ep.zp,
                                            fin.ep.lo, fin.ep.hi, block, kQCols});
                    uint8_t* yb = static_cast<uint8_t*>(y) + m0 * N + n0;
                    for (int64_t q = 0; q < cols; ++q)
                      for (int32_t r = 0; r < rows; ++r) yb[q * N + r] = block[r * kQCols + q];
                    return;
                  }
                  if (fin.ep.dtype == fb::DType::INT32) {
                    // MatMulInteger: the wrapping int32 sum the scalar epilogue
                    // computes (its bias folded into rowc), without its per
                    // element dispatch.
                    int32_t* y32 = static_cast<int32_t*>(y) + m0 * N + n0;
                    uint32_t rowc[kQRows];
                    for (int32_t r = 0; r < rows; ++r) rowc[r] = uint32_t(fin.RowConstant(n0 + r));
                    for (int64_t q = 0; q < cols; ++q) {
                      const uint32_t cz = fin.wz * uint32_t(colsum[q]);
                      for (int32_t r = 0; r < rows; ++r)
                        y32[q * N + r] = int32_t(uint32_t(raw[r * kQCols + q]) + rowc[r] - cz);
                    }
                    return;
                  }
                  for (int32_t r = 0; r < rows; ++r)
                    for (int64_t q = 0; q < cols; ++q)
                      fin(y, uint64_t((m0 + q) * N + n0 + r), n0 + r, raw[r * kQCols + q],
                          colsum[q]);
                });
        }
      });
}

}  // namespace vnpu
}  // namespace epctx
