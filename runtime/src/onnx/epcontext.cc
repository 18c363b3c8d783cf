// SPDX-License-Identifier: Apache-2.0
// EPContext node attributes with the schema defaults applied.
#include "onnx/epcontext.h"

namespace epctx {
namespace onnx {
namespace {

Status WrongType(const NodeView& node, const AttributeView& a, AttrType expected) {
  return Status::Error(EPCTX_INVALID_GRAPH, "node '%.*s' attribute '%.*s': expected %s, found %s",
                       node.name.len(), node.name.data, a.name.len(), a.name.data,
                       attr_type_name(expected), attr_type_name(a.type));
}

// Reads an optional INT attribute; *out keeps its default when absent.
Status GetInt(const NodeView& node, const char* name, int64_t* out) {
  const AttributeView* a = node.attr(name);
  if (!a) return Status::Ok();
  if (a->type != AttrType::kInt) return WrongType(node, *a, AttrType::kInt);
  *out = a->i;
  return Status::Ok();
}

Status GetString(const NodeView& node, const char* name, StrView* out, bool* present = nullptr) {
  const AttributeView* a = node.attr(name);
  if (!a) return Status::Ok();
  if (a->type != AttrType::kString) return WrongType(node, *a, AttrType::kString);
  *out = a->s;
  if (present) *present = true;
  return Status::Ok();
}

Status CheckFlag(const NodeView& node, const char* name, int64_t v) {
  if (v == 0 || v == 1) return Status::Ok();
  return Status::Error(EPCTX_INVALID_GRAPH,
                       "node '%.*s' attribute '%s': expected 0 or 1, found %lld", node.name.len(),
                       node.name.data, name, static_cast<long long>(v));
}

}  // namespace

bool IsEpContextNode(const NodeView& node) {
  return node.op_type.eq("EPContext") && node.domain.eq("com.microsoft");
}

Status ExtractEpContext(const NodeView& node, EpContextNode* out) {
  *out = EpContextNode();
  out->node = &node;
  EPCTX_RETURN_IF_ERROR(GetInt(node, "main_context", &out->main_context));
  EPCTX_RETURN_IF_ERROR(GetInt(node, "embed_mode", &out->embed_mode));
  EPCTX_RETURN_IF_ERROR(GetInt(node, "max_size", &out->max_size));
  EPCTX_RETURN_IF_ERROR(
      GetString(node, "ep_cache_context", &out->ep_cache_context, &out->has_cache_context));
  EPCTX_RETURN_IF_ERROR(GetString(node, "source", &out->source, &out->has_source));
  EPCTX_RETURN_IF_ERROR(GetString(node, "ep_sdk_version", &out->ep_sdk_version));
  EPCTX_RETURN_IF_ERROR(GetString(node, "hardware_architecture", &out->hardware_architecture));
  EPCTX_RETURN_IF_ERROR(GetString(node, "partition_name", &out->partition_name));
  EPCTX_RETURN_IF_ERROR(GetString(node, "onnx_model_filename", &out->onnx_model_filename));
  EPCTX_RETURN_IF_ERROR(GetString(node, "notes", &out->notes));
  EPCTX_RETURN_IF_ERROR(CheckFlag(node, "main_context", out->main_context));
  EPCTX_RETURN_IF_ERROR(CheckFlag(node, "embed_mode", out->embed_mode));
  if (out->main_context == 1 && !out->has_cache_context)
    return Status::Error(EPCTX_INVALID_GRAPH,
                         "node '%.*s' attribute 'ep_cache_context': missing on a primary "
                         "EPContext node (main_context=1)",
                         node.name.len(), node.name.data);
  return Status::Ok();
}

}  // namespace onnx
}  // namespace epctx
