/* SPDX-License-Identifier: Apache-2.0 */
// Topological sorting of ONNX graphs, as ONNX Runtime does on load.
//
// Tools append nodes wherever it suits them (a float16 converter writes its
// Cast nodes at the end of the node list); ORT sorts such graphs and runs
// them, the onnx checker refuses them. SortGraph reorders the nodes of a
// graph, and of every subgraph inside it, so that each node comes after the
// producers of its inputs, and refuses only real cycles.
#ifndef EPCTX_HOST_TOPO_SORT_H
#define EPCTX_HOST_TOPO_SORT_H

#include <cstddef>
#include <string>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Stable: nodes keep their relative order wherever the data flow allows,
// so an already sorted graph is left exactly as it was. A node with
// subgraphs depends on the outer values its subgraphs read. A cycle throws
// ToolError (INVALID_GRAPH) naming `file`, the graph and a node on the
// cycle. Returns how many nodes changed position (all graphs together).
size_t SortGraph(onnx::GraphProto& graph, const std::string& file);

}  // namespace host
}  // namespace epctx

#endif
