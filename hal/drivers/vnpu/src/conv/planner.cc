// SPDX-License-Identifier: Apache-2.0
// The planner (plan.h): PlanConv picks a CONV2D's strategy and sizes its
// workspace in one function; PlanGraph fills a graph's plan table at
// get_graph; RunConv runs a planned conv through the one entry signature.
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {

Shape ShapeOf(const fb::Graph* g, const fb::Conv2D* c) {
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  Shape s;
  s.N = Dim(xt, 0), s.C = Dim(xt, 1), s.H = Dim(xt, 2), s.W = Dim(xt, 3);
  s.CO = Dim(yt, 1), s.OH = Dim(yt, 2), s.OW = Dim(yt, 3);
  s.G = c->groups(), s.cig = s.C / s.G, s.cog = s.CO / s.G, s.nb = (s.cog + 7) / 8;
  s.KH = c->kernel_h(), s.KW = c->kernel_w(), s.sh = c->stride_h(), s.sw = c->stride_w();
  s.dh = c->dilation_h(), s.dw = c->dilation_w(), s.pt = c->pad_top(), s.pl = c->pad_left();
  s.kstride = s.KH * s.KW * 8;
  return s;
}

namespace {

OpPlan With(Strategy st, uint64_t work) {
  OpPlan p{};
  p.strategy = st;
  p.work_floats = work;
  return p;
}

// The tile kernels and epilogue of a planned op with a fused activation.
void Kernels(OpPlan* p, fb::Activation act, float alpha, float beta) {
  uk::Tile t{};
  p->post = !FusedAct(act, alpha, beta, &t);
  p->lo = t.lo;
  p->hi = t.hi;
  p->leaky = t.leaky;
  p->slope = t.slope;
  switch (p->strategy) {
    case Strategy::kDense:
    case Strategy::kDenseRows:
      p->tile = uk::TileKernel2(uk::Isa::kAuto);
      p->im2col = uk::Im2colKernel(uk::Isa::kAuto);
      // The narrow kernel clamps; a leaky epilogue keeps the block tile
      // (as do CPUs without the kernel: null).
      if (p->strategy == Strategy::kDense && !p->leaky) p->narrow = uk::NarrowKernel();
      break;
    case Strategy::kShifted:
    case Strategy::kShiftedPacked:
    case Strategy::kGemm:
    case Strategy::kGemmPacked:
    case Strategy::kGemmBlocked: p->tile = uk::TileKernel2(uk::Isa::kAuto); break;
    case Strategy::kRowShift:
      p->tile = uk::TileKernel2(uk::Isa::kAuto);
      p->edge = uk::TileKernel(uk::Isa::kAuto);
      break;
    case Strategy::kTransposed:
    case Strategy::kTransposedRing:
    case Strategy::kNarrow:
    case Strategy::kDeconvExact: p->tile = uk::TileKernel(uk::Isa::kAuto); break;
    default: break;
  }
}

}  // namespace

OpPlan PlanConv(const Shape& s, bool taps) {
  // CONV2D_TAPS' weights are laid out for the transposed path; a 1xK one
  // goes by row shifts, which read either layout.
  // 16 -> 16 channels per group on a small map (either weight layout).
  if (const uint64_t lanes = GroupLanesFloatsOf(s)) return With(Strategy::kGroupLanes, lanes);
  if (taps) {
    if (RowShiftApplies(s)) return With(Strategy::kRowShift, EdgeWorkFloats(s));
    if (PackedRingApplies(s)) return With(Strategy::kTransposedRing, PackedRingFloats(s));
    return With(Strategy::kTransposed, 0);
  }
  // One input channel into several: the depthwise band, filled once for all
  // of them (embedding_model's 1 -> 24 3x3 on 76x32: 44 -> 13 us).
  const bool depthwise = s.cig == 1 && s.cog == 1;
  if (!depthwise && NarrowApplies(s)) return With(Strategy::kNarrow, 0);
  if (const uint64_t lanes = depthwise ? LanesFloats(s) : 0)
    return With(Strategy::kDepthwiseLanes, lanes);
  if (depthwise || (s.cig == 1 && BandApplies(s))) {
    if (BandApplies(s)) return With(Strategy::kDepthwiseBand, BandFloats(s));
    if (S2Applies(s)) return With(Strategy::kDepthwiseRing, S2RingFloats(s));
    return With(Strategy::kDepthwise, 0);
  }
  // The width of the panels the block tile reads B best in (24 on AVX2).
  const int32_t panel = uk::kPanelIsa ? uk::BlockPanelCols(uk::Isa::kAuto) : int32_t(uk::kNr2);
  if (ShiftApplies(s)) {
    if (ShiftPackApplies(s)) return With(Strategy::kShiftedPacked, ShiftPackFloats(s));
    OpPlan p = With(Strategy::kShifted, 0);
    // A 1x1 where those are 24 columns: its rows are copied into panels,
    // chunk_k at a time.
    if (s.KH == 1 && panel == uk::kNr) {
      p.panel = panel;
      p.chunk_k = s.cig < kShiftPanelKc ? s.cig : kShiftPanelKc;
      p.work_floats = ShiftPanelFloats(s);
    }
    return p;
  }
  if (RowShiftApplies(s)) return With(Strategy::kRowShift, EdgeWorkFloats(s));
  if (TransposedApplies(s)) {
    if (PackedRingApplies(s)) return With(Strategy::kTransposedRing, PackedRingFloats(s));
    return With(Strategy::kTransposed, 0);
  }
  if (DenseRowsApplies(s)) return With(Strategy::kDenseRows, DenseRowsFloats(s));
  const int64_t K = s.cig * s.KH * s.KW;
  OpPlan p = With(Strategy::kDense, 0);
  p.panel = panel;
  // Weights or input planes that do not stay in L2 while the blocks sweep
  // them: pack blocks in groups, so each streams from memory once per
  // group, and input rows in long runs.
  const bool wide = s.cog * K * int64_t(sizeof(float)) > kDenseL2Bytes ||
                    s.cig * s.H * s.W * int64_t(sizeof(float)) > kDenseL2Bytes;
  const int64_t kc = wide ? kDenseGroupKc : kDenseKc;
  p.chunk_k = K < kc ? K : kc;
  p.group = wide ? kDenseMaxGroup : 1;
  p.work_floats = uint64_t(p.chunk_k) * uk::kNr2 * uint64_t(p.group);
  // Where the block tile reads B best in 24-column panels (AVX2), a 1x1's
  // input is packed too: its rows in place are read as 48-wide rows
  // 4 * H * W bytes apart (FCN-style 1024 -> 256 1x1 on 14x14: 12% faster
  // packed; 56x56 maps neither faster nor slower; EfficientNet's and
  // MobileNet's 80 to 192 channels in place, neither).
  p.in_place = panel == uk::kNr2 && !wide && s.KH == 1 && s.KW == 1 && s.sh == 1 && s.sw == 1 &&
               s.pt == 0 && s.pl == 0 && s.OH == s.H && s.OW == s.W;
  // Read in place, only a last block of a partial strip is packed.
  if (p.in_place && s.OH * s.OW % 8 == 0) p.work_floats = 0;
  return p;
}

namespace {

// Whether an input of a CONCAT lies in arena bytes its output overlaps
// (no compiler writes one; a stream may): then the pieces are copied one
// after the other, as memmove would, rather than split over threads.
bool ConcatOverlaps(const fb::Graph* g, const fb::Concat* c) {
  const fb::Tensor* y = g->tensors()->Get(c->output());
  if (y->location() != fb::Location::ARENA) return false;
  for (uint32_t i = 0; i < c->inputs()->size(); ++i) {
    const fb::Tensor* x = g->tensors()->Get(c->inputs()->Get(i));
    if (x->location() == fb::Location::ARENA && x->offset() < y->offset() + y->size() &&
        y->offset() < x->offset() + x->size())
      return true;
  }
  return false;
}

}  // namespace

int PlanGraph(const fb::Graph* g, const char* graph_name, OpPlan* plans, uint64_t* work_floats,
              Msg& msg) {
  const uint32_t n = g->ops() ? g->ops()->size() : 0;
  uint64_t most = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const fb::Op* o = g->ops()->Get(i);
    OpPlan& p = plans[i];
    p = OpPlan{};
    switch (o->params_type()) {
      case fb::OpParams::Conv2D:
      case fb::OpParams::Conv2DTaps: {
        const bool taps = o->params_type() == fb::OpParams::Conv2DTaps;
        const fb::Conv2D* c = static_cast<const fb::Conv2D*>(o->params());
        const Shape s = ShapeOf(g, c);
        // The transposed path keeps a tap row's inputs on the stack.
        if (taps && !RowShiftApplies(s) && s.KH * s.KW > kMaxTaps) {
          msg.s("vnpu: graph '")
              .s(graph_name)
              .s("' op ")
              .u(i)
              .s(" (CONV2D_TAPS): kernel taps (kernel_h x kernel_w) expected at most ")
              .i(kMaxTaps)
              .s(", found ")
              .i(s.KH * s.KW);
          return EPCTX_INVALID_GRAPH;
        }
        p = PlanConv(s, taps);
        Kernels(&p, c->activation(), c->alpha(), c->beta());
        break;
      }
      case fb::OpParams::ConvTranspose2D: {
        const fb::ConvTranspose2D* c = o->params_as_ConvTranspose2D();
        const uint64_t work = ConvTransposeWorkFloats(g, c);
        p = With(work ? Strategy::kDeconvExact : Strategy::kDeconvScatter, work);
        Kernels(&p, c->activation(), c->alpha(), c->beta());
        // Two exact ones in a row, paired left to right.
        const OpPlan* prev = i > 0 ? &plans[i - 1] : nullptr;
        if (work && prev && prev->strategy == Strategy::kDeconvExact &&
            DeconvPairFits(g, g->ops()->Get(i - 1)->params_as_ConvTranspose2D(), c)) {
          plans[i - 1].strategy = Strategy::kDeconvPair;
          p.strategy = Strategy::kFused;
        }
        break;
      }
      case fb::OpParams::Gemm: {
        const fb::Gemm* c = o->params_as_Gemm();
        const uint64_t work = GemmWorkFloats(c);
        p = With(work ? Strategy::kGemmPacked : Strategy::kGemm, work);
        p.chunk_k = GemmKc(c);
        Kernels(&p, c->activation(), c->alpha(), c->beta());
        break;
      }
      case fb::OpParams::GemmBlocked: {
        const fb::Gemm* c = o->params_as_GemmBlocked();
        p = With(Strategy::kGemmBlocked, 0);
        p.chunk_k = GemmKc(c);
        Kernels(&p, c->activation(), c->alpha(), c->beta());
        break;
      }
      case fb::OpParams::BatchMatMul: {
        // Sgemm per batch and block of rows; its epilogue is a clamp only.
        const fb::BatchMatMul* c = o->params_as_BatchMatMul();
        p = With(Strategy::kBatchMatMul, BatchMatMulWorkFloats(c));
        p.chunk_k = int64_t(BatchMatMulRows(c));
        p.post = !FusedClamp(c->activation(), c->act_alpha(), c->act_beta(), &p.lo, &p.hi);
        break;
      }
      case fb::OpParams::Recurrent:
        p = With(Strategy::kNone, RecurrentWorkFloats(o->params_as_Recurrent()));
        break;
      case fb::OpParams::QConv2D: p = PlanQConv(g, o->params_as_QConv2D()); break;
      case fb::OpParams::QGemm: p = PlanQGemm(g, o->params_as_QGemm()); break;
      case fb::OpParams::QBinary:
      case fb::OpParams::QBinaryClamped: p.qbinary = uk::QBinaryKernel(); break;
      case fb::OpParams::QLut: p.qlut = uk::QLutKernel(); break;
      case fb::OpParams::Concat: p.serial = ConcatOverlaps(g, o->params_as_Concat()); break;
      case fb::OpParams::Quantize:
      case fb::OpParams::DynamicQuantize: p.quantize = uk::QuantizeKernel(); break;
      case fb::OpParams::Dequantize: p.dequantize = uk::DequantizeKernel(); break;
      default: break;
    }
    most = p.work_floats > most ? p.work_floats : most;
  }
  *work_floats = most;
  return EPCTX_OK;
}

void RunConv(const Bindings& b, const fb::Conv2D* c, const OpPlan& p, bool taps) {
  // Indexed by Strategy from kDense (plan.h's order).
  static constexpr ConvEntry kEntry[] = {
      RunDense,         RunDenseRows,      RunShifted,   RunShiftedPacked, RunRowShift,
      RunTransposed,    RunTransposedRing, RunNarrow,    RunDepthwise,     RunDepthwiseBand,
      RunDepthwiseRing, RunDepthwiseLanes, RunGroupLanes};
  static_assert(sizeof kEntry / sizeof kEntry[0] ==
                    size_t(Strategy::kGroupLanes) - size_t(Strategy::kDense) + 1,
                "one entry per conv strategy");
  const Shape s = ShapeOf(b.graph->stream, c);
  const ConvCall call{s,
                      taps ? TapsLayout(s) : BlockedLayout(s),
                      b.ptr(c->input()),
                      b.ptr(c->weights()),
                      c->has_bias() ? b.ptr(c->bias()) : nullptr,
                      b.ptr(c->output()),
                      c,
                      b,
                      p};
  kEntry[size_t(p.strategy) - size_t(Strategy::kDense)](call);
}

}  // namespace vnpu
}  // namespace epctx
