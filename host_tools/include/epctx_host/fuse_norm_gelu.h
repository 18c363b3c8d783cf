/* SPDX-License-Identifier: Apache-2.0 */
// LayerNorm and exact GELU as exporters below opset 17 decompose them,
// fused for the CPU into one op each, as ONNX Runtime's optimizer does:
//  - ReduceMean(x) over the last axes, Sub, Pow 2, ReduceMean, Add eps,
//    Sqrt, Div, Mul by a scale constant, [Add of a bias constant] ->
//    LayerNormalization(x, scale, bias; axis, epsilon) (opset 17: a model
//    at opset 13 to 16 is raised to 17, which keeps every other op's
//    meaning; below 13 it is left alone);
//  - Div by sqrt(2) (or Mul by 1/sqrt(2)), Erf, Add 1, Mul by the input,
//    Mul 0.5 -> com.microsoft Gelu(x).
// One or two passes over the tensor instead of nine or five: the CPU ran
// ViT-B/16's 25 LayerNorms and 12 GELUs as 285 nodes.
//
// Taken only when every intermediate value has its one reader in the
// pattern and is not a graph output. Run on graphs the CPU runs whole
// (--ep none): vnpu's compiler fuses both itself (LAYER_NORM, GELU).
#ifndef EPCTX_HOST_FUSE_NORM_GELU_H
#define EPCTX_HOST_FUSE_NORM_GELU_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Fuses every eligible pattern of the model's main graph (graphs with
// subgraph bodies are left whole), adds the com.microsoft opset import when
// it fused any; returns how many.
size_t FuseNormGelu(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
