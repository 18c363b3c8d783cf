// SPDX-License-Identifier: Apache-2.0
// Partitioning the bodies of control-flow nodes (bodies.h).
#include "bodies.h"

#include "epctx_host/specialize.h"
#include "epctx_host/subgraphs.h"

namespace epctx {
namespace host {

void PlanBodies(onnx::GraphProto& graph, const GraphInfo& outer, const Backend* backend,
                const std::string& prefix, size_t* next_index, std::vector<BodyPlan>* bodies) {
  for (auto& node : *graph.mutable_node()) {
    if (!HasSubgraph(node)) continue;
    for (auto& a : *node.mutable_attribute()) {
      for (onnx::GraphProto* body : AttributeGraphs(a)) {
        BodyPlan bp;
        bp.body = body;
        bp.label =
            "attribute '" + a.name() + "' of " + node.op_type() + " node '" + node.name() + "'";
        bp.info = BuildBodyInfo(*body, outer);
        // Innermost first: their rewrite must not move nodes an outer
        // body's partitions point to.
        PlanBodies(*body, bp.info, backend, prefix, next_index, bodies);
        bp.plan = PlanPartitions(bp.info, backend);
        bp.partitions = MakePartitions(bp.info, bp.plan, prefix);
        for (auto& p : bp.partitions) p.name = prefix + "_" + std::to_string((*next_index)++);
        bodies->push_back(std::move(bp));
      }
    }
  }
}

void RewriteBodies(std::vector<BodyPlan>& bodies, const CtxModelOptions& options) {
  for (BodyPlan& bp : bodies) {
    if (bp.partitions.empty()) continue;
    onnx::GraphProto rewritten;
    RewriteGraph(*bp.body, bp.info, bp.partitions, options, &rewritten);
    bp.body->Swap(&rewritten);
    bp.partitions.clear();  // their node pointers went with the old body
  }
}

}  // namespace host
}  // namespace epctx
