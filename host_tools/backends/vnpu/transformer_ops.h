/* SPDX-License-Identifier: Apache-2.0 */
// The transformer level (stream 1.8) as the support check and lowering both
// see it: which ONNX nodes map to UNARY kinds, REDUCE, LAYER_NORM,
// BATCH_MATMUL and STRIDED_COPY, and the geometry each one needs. Every
// function returns "" when the node fits (filling its out-parameter) or
// why not, so support.cc claims exactly what lower_transformer.cc lowers.
#ifndef EPCTX_HOST_VNPU_TRANSFORMER_OPS_H
#define EPCTX_HOST_VNPU_TRANSFORMER_OPS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace vnpu {

// ONNX elementwise ops that are one UNARY kind (Pow takes its exponent).
inline const std::map<std::string, fb::Activation> kUnaryOps = {
    {"Erf", fb::Activation::ERF},   {"Exp", fb::Activation::EXP},
    {"Sqrt", fb::Activation::SQRT}, {"Reciprocal", fb::Activation::RECIPROCAL},
    {"Neg", fb::Activation::NEG},   {"Abs", fb::Activation::ABS},
    {"Pow", fb::Activation::POW},   {"Log", fb::Activation::LOG}};

// Element strides of a contiguous tensor of dims d.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& d);

// Pow's exponent: a one-element float constant.
std::string PowExponent(const onnx::NodeProto& n, const GraphInfo& info, float* e);

// Element offset and per-output-dimension strides into a contiguous input:
// out[i] = in[offset + sum i_d * strides[d]].
struct CopyView {
  uint64_t offset = 0;
  std::vector<int64_t> strides;
};
// Slice (any non-zero steps), output k of Split, Gather by constant indices (a
// scalar, or a 1-D arithmetic progression of positive step) and Expand.
std::string StridedView(const onnx::NodeProto& n, int output, const GraphInfo& info, CopyView* v);

// ReduceSum / ReduceMean / ReduceMax / ReduceMin over axes that are
// contiguous once dimensions of 1 are ignored: [outer, axis, inner].
struct ReduceView {
  fb::ReduceKind kind = fb::ReduceKind::SUM;
  uint64_t outer = 1, axis = 1, inner = 1;
};
std::string ReduceOf(const onnx::NodeProto& n, const GraphInfo& info, ReduceView* v);

// LayerNormalization (opset 17): [outer, axis] from its axis attribute,
// scale and bias constants of `axis` values.
struct NormView {
  uint64_t outer = 1, axis = 1;
  float eps = 1e-5f;
};
std::string LayerNormOf(const onnx::NodeProto& n, const GraphInfo& info, NormView* v);

// MatMul whose B is not a 2-D constant: both operands rank >= 2 with batch
// dimensions that broadcast to the output's, at most 6 of them.
std::string BatchMatMulFits(const onnx::NodeProto& n, const GraphInfo& info);

// Resize (opset >= 11) of the last two axes, nearest or linear, with the
// coordinate fields the driver maps output to input with (epctx_uk/resize.h,
// as the CPU kernel).
using ResizeView = IrOp::Resize;
std::string ResizeOf(const onnx::NodeProto& n, const GraphInfo& info, ResizeView* v);

// Pad with non-negative constant pads: the begin of each axis, the value
// (constant mode) and the mode; reflect pads at most the axis length - 1,
// edge pads only non-empty axes.
struct PadView {
  std::vector<int64_t> begins;
  float value = 0.f;
  fb::PadMode mode = fb::PadMode::CONSTANT;
};
std::string PadOf(const onnx::NodeProto& n, const GraphInfo& info, PadView* v);

// LSTM / GRU that RECURRENT runs: layout 0, default activations, no clip,
// peepholes, input_forget or sequence_lens; constant W, R, B; static X.
std::string RecurrentFits(const onnx::NodeProto& n, const GraphInfo& info);

// The support check for these ops (node n of `op` type); *mine says
// whether n belongs to this level.
std::string UnsupportedTransformer(const onnx::NodeProto& n, const GraphInfo& info, bool* mine);

}  // namespace vnpu
}  // namespace host
}  // namespace epctx

#endif
