// SPDX-License-Identifier: Apache-2.0
// ORT's compile API (CompileModel, or ep.context_enable=1) through epctx's
// compile library: GetCapability compiles the whole graph once with the
// host backend and claims, per EPContext node epctx would write, the
// original nodes that node replaces; Compile compiles each fused partition
// on its own and returns the EPContext node epctx-compile writes for it
// (source, versions, container), so ORT's output runs in epctx's runtime.
#ifndef EPCTX_ORT_EP_COMPILE_PATH_H
#define EPCTX_ORT_EP_COMPILE_PATH_H

#include <string>
#include <vector>

#include "ort_api.h"

namespace epctx {
namespace ort_ep {

// Adds one fused group per partition the backend takes; a graph epctx
// cannot convert or compile (subgraphs, string tensors) claims nothing.
OrtStatus* ClaimCompilable(const OrtApi& api, const OrtEpApi& ep_api, const OrtGraph* graph,
                           OrtEpGraphSupportInfo* support);

struct CompiledPartition {
  std::string ctx_model;  // epctx's one-node EPContext model (embed_mode 1)
  std::string node_name;
  std::vector<std::string> inputs, outputs;  // the EPContext node's
};

// Compiles one fused partition. With emit, *ep_context_node receives the
// EPContext node for ORT's output model: embedded context when bin_path is
// empty, else the container written to bin_path and named by its file name.
// The EPContext node takes the fused node's name (ORT matches them by name);
// the graph in the container is named "<fused_name>_..." (its
// partition_name), unique across partitions.
OrtStatus* CompilePartition(const OrtApi& api, const OrtGraph* graph, bool emit,
                            const std::string& bin_path, const std::string& fused_name,
                            CompiledPartition* out, OrtNode** ep_context_node);

}  // namespace ort_ep
}  // namespace epctx

#endif
