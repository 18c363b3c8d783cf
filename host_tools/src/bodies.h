/* SPDX-License-Identifier: Apache-2.0 */
// Internal to the compile library: partitioning the bodies of If, Loop and
// Scan nodes, as ORT gives its EPs capability inside subgraphs.
//
// PlanBodies walks every GRAPH/GRAPHS attribute of the graph (nested bodies
// too), partitions each body the way the main graph is partitioned (its
// outer-scope reads are its inputs, outer initializers its constants) and
// compiles the partitions into the same WeightStore, so body graphs live in
// the same context binary as the top-level ones. Body partition names
// continue the top-level numbering, so every graph name in the binary is
// unique. RewriteBodies then replaces each body's partitions by EPContext
// nodes (main_context=0 unless no top-level partition exists), innermost
// bodies first, which keeps the outer bodies' node pointers valid.
//
// The BodyPlans hold pointers into the model's body graphs: the model must
// not change between PlanBodies and RewriteBodies.
#ifndef EPCTX_HOST_SRC_BODIES_H
#define EPCTX_HOST_SRC_BODIES_H

#include <string>
#include <vector>

#include "epctx_host/backend.h"
#include "epctx_host/compile_api.h"
#include "epctx_host/ctx_model.h"
#include "epctx_host/partition.h"

namespace epctx {
namespace host {

struct BodyPlan {
  onnx::GraphProto* body = nullptr;
  std::string label;  // "attribute 'body' of Loop node 'l'"
  GraphInfo info;
  PartitionPlan plan;
  std::vector<Partition> partitions;
};

// Plans every body of `graph` (described by `outer`), innermost first.
// `next_index` numbers the partitions "<prefix>_<n>" and is advanced.
// Fills `bodies` in post-order (the caller accounts nodes and MACs).
void PlanBodies(onnx::GraphProto& graph, const GraphInfo& outer, const Backend* backend,
                const std::string& prefix, size_t* next_index, std::vector<BodyPlan>* bodies);

// Replaces each planned body's partitions by EPContext nodes.
void RewriteBodies(std::vector<BodyPlan>& bodies, const CtxModelOptions& options);

}  // namespace host
}  // namespace epctx

#endif
