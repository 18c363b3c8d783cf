/* SPDX-License-Identifier: Apache-2.0 */
// Conv then Relu or Clip, fused for the CPU: one com.microsoft FusedConv
// (the contrib op ONNX Runtime's own optimizer writes: the Conv's inputs
// and attributes, plus activation "Relu", or "Clip" with activation_params
// [min, max]). The CPU kernel clamps each output block while it is in
// cache instead of a second pass over the whole tensor: the Relu6 (Clip)
// after every MobileNetV2 convolution was 13% of its CPU time.
//
// Taken: a Conv (ai.onnx) with float32 constant weights whose only
// consumer is a Relu, or a Clip whose bounds are attributes (opset < 11)
// or constant float32 scalars, and whose output is not a graph output.
// Run on graphs the CPU runs whole (--ep none): a backend's partitioner
// does not know the contrib op.
#ifndef EPCTX_HOST_FUSE_CONV_ACT_H
#define EPCTX_HOST_FUSE_CONV_ACT_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Fuses every eligible Conv and activation of the model's main graph and
// adds the com.microsoft opset import if a fusion needs it; returns how
// many pairs it fused.
size_t FuseConvActivations(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
