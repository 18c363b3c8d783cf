/* SPDX-License-Identifier: Apache-2.0 */
// What the CPU fusions (fuse_conv_act.cc, fuse_swish.cc, fuse_qdq*.cc) and
// the no-op removals (noop_casts.cc, inference_noops.cc) share: a scan of
// the graph (its GraphInfo, outputs, every value's readers and producer)
// and the removal of the nodes a pass absorbed.
#ifndef EPCTX_HOST_FUSION_H
#define EPCTX_HOST_FUSION_H

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

// What a fusion pass reads of a model before it looks for its pattern:
// its GraphInfo (opset, constants), the graph's outputs and every value's
// readers, and the nodes it has absorbed so far (`drop`). `whole` is false
// when a node has a subgraph body: a body may read any outer name, so such
// graphs are left whole.
struct FusionScan {
  explicit FusionScan(const onnx::ModelProto& m);
  GraphInfo info;
  std::set<std::string> outputs;
  std::map<std::string, std::vector<int>> readers;
  std::map<std::string, int> producer;  // the node writing each value
  // Every name the graph gives (node outputs, initializers, inputs): what a
  // pass adding values draws fresh names against.
  std::set<std::string> names;
  std::vector<bool> drop;
  bool whole = true;
  // The only reader of value `v`, or -1 (none, several, or a graph output).
  int OnlyReader(const std::string& v) const;
  // The node of graph g (the scanned one) writing `v`, or null.
  const onnx::NodeProto* ProducerOf(const onnx::GraphProto& g, const std::string& v) const;
};

// An attribute's value, or `def` when the node has none of that name.
int64_t IntAttr(const onnx::NodeProto& n, const char* name, int64_t def);
float FloatAttr(const onnx::NodeProto& n, const char* name, float def);

// Removes the nodes marked in `drop` (the rest keep their order) and the
// value_info of values no node, input or initializer gives any more.
void DropNodes(onnx::GraphProto& g, const std::vector<bool>& drop);

// Removes the nodes `is_identity` selects, each of which copies its input 0
// to its output 0 (the other outputs must be unused): their readers read
// the input instead. When the output is a graph output, the input's
// producer writes that name instead, so the graph's output names stay; an
// identity from a graph input or initializer, or onto a value that is
// itself a graph output, stays. is_identity sees each node with its inputs
// already renamed. Nothing happens unless scan.whole. Returns how many.
size_t BypassIdentities(onnx::GraphProto& g, FusionScan& scan,
                        const std::function<bool(const onnx::NodeProto&)>& is_identity);

}  // namespace host
}  // namespace epctx

#endif
