/* SPDX-License-Identifier: Apache-2.0 */
// Values a node reads through its subgraphs (If branches, Loop and Scan
// bodies): the names its GRAPH/GRAPHS attributes, nested ones included, use
// without defining them, which the enclosing graphs must provide (ORT calls
// them implicit inputs). Partitioning, ordering and initializer pruning
// count them as inputs of the node, so a value or initializer only a body
// reads is still produced before the node and kept in the _ctx.onnx.
#ifndef EPCTX_HOST_SUBGRAPHS_H
#define EPCTX_HOST_SUBGRAPHS_H

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

bool HasSubgraph(const onnx::NodeProto& node);

// The graphs an attribute holds: its GRAPH, or each of its GRAPHS.
std::vector<onnx::GraphProto*> AttributeGraphs(onnx::AttributeProto& a);

// The outer-scope names node's subgraphs read, each once, in first-use order.
std::vector<std::string> ImplicitInputs(const onnx::NodeProto& node);

// The node's non-empty inputs followed by its implicit inputs.
std::vector<std::string> NodeReads(const onnx::NodeProto& node);

}  // namespace host
}  // namespace epctx

#endif
