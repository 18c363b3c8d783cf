/* SPDX-License-Identifier: Apache-2.0 */
// x * gate(x), fused for the CPU into one op: x * Sigmoid(x) (SiLU, Swish)
// into a com.microsoft QuickGelu with alpha 1 (the contrib op ONNX
// Runtime's optimizer writes for it: x * sigmoid(alpha * x)), and
// x * HardSigmoid(x) with alpha 1/6, beta 0.5 (torch's hardswish) into
// HardSwish (opset 14; a model at opset 13 is raised to 14, which keeps
// the meaning of every other op). One pass over the tensor instead of the gate's
// pass and a Mul that reads two: Sigmoid and Mul were 32% of
// EfficientNet-B0's CPU time.
//
// Taken: the gate (ai.onnx) of x whose only reader is a Mul of x and it
// (either order), its output not a graph output. Run on graphs the CPU
// runs whole (--ep none): vnpu fuses both into its convolutions itself,
// and a partitioner does not know the contrib op.
#ifndef EPCTX_HOST_FUSE_SWISH_H
#define EPCTX_HOST_FUSE_SWISH_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Fuses every eligible Sigmoid and Mul of the model's main graph (graphs
// with subgraph bodies are left whole) and adds the com.microsoft opset
// import if a fusion needs it; returns how many it fused.
size_t FuseSwish(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
