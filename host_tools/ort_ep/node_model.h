// SPDX-License-Identifier: Apache-2.0
// A one-node ONNX model around an EPContext node ORT hands the plugin EP:
// the node with all its attributes, its inputs and outputs as the graph's
// (element type and shape from ORT's value infos). epctx's runtime loads it
// from memory as it loads any EPContext model, so routing by `source`,
// version checks, container verification and embed_mode 0 containment are
// the runtime's own. Everything is copied: the OrtNode need not outlive the
// call.
#ifndef EPCTX_ORT_EP_NODE_MODEL_H
#define EPCTX_ORT_EP_NODE_MODEL_H

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ort_api.h"

namespace epctx {
namespace ort_ep {

struct NodeModel {
  std::string bytes;                      // serialized ModelProto
  onnx::ModelProto proto;                 // what bytes holds
  std::vector<std::string> input_names;   // the node's inputs, in order
  std::vector<std::string> output_names;  // the node's outputs, in order
  std::string source;                     // the node's `source` ("" when absent)
  std::string node_name;
  int64_t main_context = 1;
};

// What a main_context=0 node needs of the primary node whose context holds
// its graph: the context itself and how it is stored.
struct PrimaryContext {
  std::string model_path;  // the ORT model it came from
  std::string source;
  std::string ep_cache_context;  // a file name (embed_mode 0) or the bytes
  int64_t embed_mode = 0;
};

// A main_context=0 node's model made self-contained: it becomes a primary
// over `primary`'s context and binds its own graph (partition_name) there.
// In one context group, the file is loaded once for all of them.
OrtStatus* AdoptPrimary(const OrtApi& api, const PrimaryContext& primary, NodeModel* m);

// Whether `node` is com.microsoft:EPContext.
bool IsEpContextNode(const OrtApi& api, const OrtNode* node);

// Builds the model; an error is an OrtStatus the caller owns.
OrtStatus* BuildNodeModel(const OrtApi& api, const OrtNode* node, NodeModel* out);

}  // namespace ort_ep
}  // namespace epctx

#endif
