/* SPDX-License-Identifier: Apache-2.0 */
// The vnpu's op plans: what get_graph decides once, from a validated
// stream's static shapes, and execute only reads.
//
// For every op with a choice (CONV2D, CONV2D_TAPS, CONV_TRANSPOSE2D, GEMM)
// PlanGraph writes one OpPlan into the graph's private plan table
// (Graph::plans, allocated with the graph's binding tables when get_graph
// validates the graph, freed with the context):
// the strategy, the workspace floats it uses per worker slot, the tile
// kernels and the fused epilogue, and whether the next op is fused into it.
// The graph's workspace is the largest work_floats of its plans, so sizing
// and dispatch read one record and cannot disagree.
//
// How a CONV2D's strategy is picked (PlanConv, the single selector, like
// CMSIS-NN's arm_convolve_wrapper): depthwise (one input and one output
// channel per group, or one input channel into several whose band fits),
// narrow (one-channel 1-D convolutions with few output pixels), shifted taps
// (KW = 1, stride 1, unpadded), row shift (1xK, stride 1, padded to keep its
// width), transposed (few output channels from many inputs), else dense.
// Each strategy's own file says why it wins where it applies.
#ifndef EPCTX_VNPU_CONV_PLAN_H
#define EPCTX_VNPU_CONV_PLAN_H

#include <cstdint>

#include <epctx/vnpu_layout.h>

#include "epctx_uk/im2col.h"
#include "epctx_uk/narrow.h"
#include "epctx_uk/qgemm.h"
#include "epctx_uk/sgemm.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {

// A CONV2D's geometry, read from its validated tensors and fields.
struct Shape {
  int64_t N, C, H, W, CO, OH, OW, G, cig, cog, nb, KH, KW, sh, sw, dh, dw, pt, pl, kstride;
};
Shape ShapeOf(const fb::Graph* g, const fb::Conv2D* c);

enum class Strategy : uint8_t {
  kNone = 0,        // nothing planned: the op has no choice
  kFused,           // run by the op before it (the second of a deconv pair)
  kDense,           // im2col chunks of 48-pixel blocks (dense.cc)
  kDenseRows,       // im2col of whole output-row blocks (dense_rows.cc)
  kShifted,         // KW = 1 taps as row shifts of the input (shifted.cc)
  kShiftedPacked,   // 1x1 whose planes alias in L1: rows copied first
  kRowShift,        // 1xK over the flattened plane, edges redone (row_shift.cc)
  kTransposed,      // pixels x channels, input read in place (transposed.cc)
  kTransposedRing,  // the same from a ring of zero-padded input rows
  kNarrow,          // one-channel 1-D, few pixels (narrow.cc)
  kDepthwise,       // row by row (depthwise.cc)
  kDepthwiseBand,   // bands of zero-padded input rows
  kDepthwiseRing,   // column stride 2 from a ring of split rows
  kDepthwiseLanes,  // 16 channels in vector lanes (depthwise_lanes.cc)
  kGroupLanes,      // 16 -> 16 channels per group in lanes (the same file)
  kDeconvScatter,   // CONV_TRANSPOSE2D, scatter form (vnpu_deconv.cc)
  kDeconvExact,     // kernel == stride: a GEMM over packed row segments
  kDeconvPair,      // two exact ones interleaved in bands (next op kFused)
  kGemm,            // GEMM, B strips read in place (vnpu_kernels.cc)
  kGemmPacked,      // GEMM, B slices packed into rows
  kGemmBlocked,     // GEMM_BLOCKED, 48-column blocks read in place
  kQPanel,          // QCONV2D / QGEMM: int8 panels of 48 columns (vnpu_qpanel.cc)
  kQDot,            // QGEMM of few rows: one dot product per output
  kQDepthwise,      // QCONV2D depthwise: padded planes, 16 lanes (vnpu_qpanel.cc)
  kBatchMatMul,     // BATCH_MATMUL: Sgemm per batch and row block (chunk_k rows)
};

struct OpPlan {
  Strategy strategy;
  bool post;                    // the activation runs after the tile (not fused)
  bool leaky;                   // uk::Tile::leaky of the fused epilogue
  uint64_t work_floats;         // per worker slot (0: none)
  int64_t chunk_k;              // kDense, GEMM: K rows per chunk (slice)
  int64_t group;                // kDense: pixel blocks packed per chunk
  bool in_place;                // kDense: a 1x1's B rows read from the input
  int32_t panel;                // kDense, kShifted: B packed in panels this wide (PlanConv)
  uk::TileFn tile;              // the strategy's tile kernel
  uk::TileFn edge;              // kRowShift: the edge columns' 4 x 24 tile
  uk::Im2colFn im2col;          // kDense, kDenseRows: the im2col packer
  uk::NarrowFn narrow;          // kDense: a last block of few pixels (no leaky)
  float lo, hi, slope;          // the fused epilogue (uk::Tile)
  uk::QTileFn qtile;            // kQPanel
  uk::QDotFn qdot;              // kQDot
  uk::QPackFn qpack;            // kQPanel QCONV2D: the im2col panel packer
  uk::QDwFn qdw;                // kQDepthwise
  uk::QBinaryFn qbinary;        // QBINARY: the row kernel of unbroadcast operands
  uk::QLutFn qlut;              // QLUT
  uk::QuantizeFn quantize;      // QUANTIZE
  uk::DequantizeFn dequantize;  // DEQUANTIZE of INT8/UINT8
  uk::QRequantFn qrequant;      // kQPanel: set when acc + bias stays in int32 (byte output)
  uint64_t qsum_at;             // kQPanel, kQDot: the weight rows' sums at Graph::qsums[qsum_at]
  uint64_t taps_at;             // RESIZE: its taps at Graph::resize_taps[taps_at]
  bool serial;                  // CONCAT: an input overlaps the output: copied in order
  // Copies the fused epilogue into a tile.
  void Epilogue(uk::Tile* t) const {
    t->lo = lo;
    t->hi = hi;
    t->leaky = leaky;
    t->slope = slope;
  }
};

// The one selector and sizer of a CONV2D (taps: CONV2D_TAPS, whose weights
// only the transposed and row-shift strategies read): strategy, workspace,
// chunking. Kernels and epilogue are left to PlanOp.
OpPlan PlanConv(const Shape& s, bool taps);

// Fills plans[i] for every op i of a validated stream (plans: one per op)
// and *work_floats with the largest workspace any of them uses. Refuses
// (INVALID_GRAPH, naming the op and field) an op no strategy can run.
int PlanGraph(const fb::Graph* g, const char* graph_name, OpPlan* plans, uint64_t* work_floats,
              Msg& msg);

// Runs a planned CONV2D (taps: CONV2D_TAPS) through its strategy's entry.
void RunConv(const Bindings& b, const fb::Conv2D* c, const OpPlan& p, bool taps);

// CONV_TRANSPOSE2D (vnpu_deconv.cc): workspace floats per slot of the exact
// (kernel == stride) GEMM form, 0 when the op does not tile its output
// exactly; whether two ops run as a pair (both exact, the second reading
// only the first's output, batch 1, and the first's input and the
// second's output in memory that cannot overlap); and the runs.
uint64_t ConvTransposeWorkFloats(const fb::Graph* g, const fb::ConvTranspose2D* c);
bool DeconvPairFits(const fb::Graph* g, const fb::ConvTranspose2D* a, const fb::ConvTranspose2D* n);
void RunConvTranspose(const Bindings& b, const fb::ConvTranspose2D* c, const OpPlan& p);
// The pair interleaved: a band of the first's rows and then the second's
// rows of it, so the intermediate is read while in cache. Same results as
// running them one after the other.
void RunConvTransposePair(const Bindings& b, const fb::ConvTranspose2D* a,
                          const fb::ConvTranspose2D* n, const OpPlan& pa, const OpPlan& pn);

// BATCH_MATMUL (vnpu_transformer.cc): rows of one unit of work, and the
// Sgemm workspace a unit needs.
uint64_t BatchMatMulRows(const fb::BatchMatMul* c);
uint64_t BatchMatMulWorkFloats(const fb::BatchMatMul* c);

// QCONV2D / QGEMM (vnpu_qpanel.cc): the int8 strategy and its workspace
// (kNone: the reference units of vnpu_int8.cc), the number of weight rows
// whose sums the plan needs, and those sums (int32, one per output channel,
// of the weights read as signed bytes), computed once when the graph is
// bound from the mapped weights.
OpPlan PlanQConv(const fb::Graph* g, const fb::QConv2D* c);
OpPlan PlanQGemm(const fb::Graph* g, const fb::QGemm* c);
uint64_t QSumRows(const fb::Graph* g, const fb::Op* o, const OpPlan& p);
// Also sets p->qrequant when the op's output is INT8/UINT8 and no
// accumulator plus bias can leave int32 (K x 255 x 255 + the largest |bias|).
void FillQSums(const fb::Graph* g, const fb::Op* o, const uint8_t* weights, int32_t* sums,
               OpPlan* p);
// Runs kQPanel and kQDepthwise QCONV2Ds.
void RunQConvPanel(const Bindings& b, const fb::QConv2D* c, const OpPlan& p);

void RunQGemmPlanned(const Bindings& b, const fb::QGemm* c, const OpPlan& p);

// GEMM (vnpu_kernels.cc): K rows per slice (OpPlan::chunk_k), and
// workspace floats per slot of its packed B slice (0: B read in place).
int64_t GemmKc(const fb::Gemm* c);
uint64_t GemmWorkFloats(const fb::Gemm* c);

// Where a strategy finds tap t's weights for input channel ic and output
// channel j: w_group + t * tap + ic * ks + (j / 8) * ss + j % 8.
struct WLayout {
  int64_t tap, ss, ks;
};
// CONV2D's blocked layout [ceil(Cout_g / 8)][Cin_g][KH][KW][8]: one tap's
// output channel blocks lie Cin_g x KH x KW x 8 floats apart. CONV2D_TAPS'
// [KH][KW][Cin_g][ceil(Cout_g / 8) * 8]: side by side (the tile then loads
// two blocks as one 16-float vector).
inline WLayout BlockedLayout(const Shape& s) { return WLayout{8, s.cig * s.kstride, s.kstride}; }
inline WLayout TapsLayout(const Shape& s) { return WLayout{s.cig * s.nb * 8, 8, s.nb * 8}; }

// One conv op at execute: everything a strategy reads, valid for the call.
struct ConvCall {
  const Shape& s;
  WLayout L;
  const float* x;
  const float* w;
  const float* bias;  // or nullptr
  float* y;
  const fb::Conv2D* c;
  const Bindings& b;
  const OpPlan& plan;
};

// The one entry signature of every conv strategy.
using ConvEntry = void (*)(const ConvCall& call);

// The most K rows (x 24 floats: 96 KiB) any path's workspace slot holds
// for one pixel block; get_graph sizes the slots for every op that uses one
// and execute refuses a scratch without them.
constexpr int64_t kWorkK = 1024;
// Taps of a window the row kernels keep on the stack (7x7 at most): the
// compiler's limit for CONV2D_TAPS too.
constexpr int64_t kMaxTaps = layout::kMaxTaps;
// The largest ring of padded input rows a worker keeps (256 KiB).
constexpr int64_t kRingFloats = 65536;

}  // namespace vnpu
}  // namespace epctx

#endif
