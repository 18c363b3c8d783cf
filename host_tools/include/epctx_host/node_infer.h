/* SPDX-License-Identifier: Apache-2.0 */
// Shape inference of one node, for the fold stage (fold.h).
//
// Whole-graph ONNX inference only sees a value that folding has just made
// constant when it is run again; a chain Shape -> Gather -> Concat ->
// Reshape -> Shape -> ... would then need one whole-graph round per link.
// InferNode infers a single node instead: a one-node model whose inputs are
// typed from what is known so far and whose small constant inputs are
// initializers (so ONNX's data propagation reads e.g. a Reshape's shape),
// run through onnx shape inference. Large constants go in as typed inputs
// only: no shape computation reads them, and copying them per node would
// make folding quadratic.
#ifndef EPCTX_HOST_NODE_INFER_H
#define EPCTX_HOST_NODE_INFER_H

#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

// What InferNode knows of an input: its type, and its value when constant
// (nullptr otherwise). Pointers stay valid for the call.
struct NodeInputs {
  std::function<const ValueType*(const std::string&)> type;
  std::function<const onnx::TensorProto*(const std::string&)> constant;
};

// The output types of `node` (one per output, known == false where onnx
// says nothing), or an empty vector when an input's element type is unknown
// or onnx rejects the node. `model` supplies the IR version and opsets.
std::vector<ValueType> InferNode(const onnx::NodeProto& node, const onnx::ModelProto& model,
                                 const NodeInputs& inputs);

// The TypeProto of a ValueType (unknown dims stay without a value).
onnx::TypeProto TypeProtoOf(const ValueType& t);

}  // namespace host
}  // namespace epctx

#endif
