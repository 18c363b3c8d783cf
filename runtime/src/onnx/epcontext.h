/* SPDX-License-Identifier: Apache-2.0 */
// EPContext nodes (com.microsoft, since version 1) as the runtime sees them.
//
// ExtractEpContext reads the attributes of one node and applies the schema
// defaults ORT materialises at graph resolve: main_context=1, embed_mode=1,
// max_size=0. Unknown extra attributes are ignored (the schema allows them).
#ifndef EPCTX_ONNX_EPCONTEXT_H
#define EPCTX_ONNX_EPCONTEXT_H

#include "core/status.h"
#include "onnx/model.h"

namespace epctx {
namespace onnx {

struct EpContextNode {
  const NodeView* node = nullptr;
  int64_t main_context = 1;
  int64_t embed_mode = 1;
  int64_t max_size = 0;
  bool has_cache_context = false;
  StrView ep_cache_context;  // payload (embed_mode=1) or relative path
  bool has_source = false;
  StrView source;
  StrView ep_sdk_version;
  StrView hardware_architecture;
  StrView partition_name;
  StrView onnx_model_filename;
  StrView notes;
};

bool IsEpContextNode(const NodeView& node);

// INVALID_GRAPH naming the node and attribute when an attribute has the
// wrong type, embed_mode/main_context is not 0 or 1, or a primary node
// (main_context=1) has no ep_cache_context.
Status ExtractEpContext(const NodeView& node, EpContextNode* out);

}  // namespace onnx
}  // namespace epctx

#endif
