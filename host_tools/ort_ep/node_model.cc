// SPDX-License-Identifier: Apache-2.0
// One EPContext node as a model of its own (node_model.h).
#include "node_model.h"

#include <cstring>

#include "onnx_from_ort.h"

namespace epctx {
namespace ort_ep {

bool IsEpContextNode(const OrtApi& api, const OrtNode* node) {
  const char* op = nullptr;
  const char* domain = nullptr;
  OrtStatus* st = api.Node_GetOperatorType(node, &op);
  if (!st) st = api.Node_GetDomain(node, &domain);
  if (st) {
    api.ReleaseStatus(st);
    return false;
  }
  return op && domain && std::strcmp(op, "EPContext") == 0 &&
         std::strcmp(domain, "com.microsoft") == 0;
}

OrtStatus* BuildNodeModel(const OrtApi& api, const OrtNode* node, NodeModel* out) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("epctx_ort_ep");
  onnx::OperatorSetIdProto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  onnx::OperatorSetIdProto* ai = model.add_opset_import();
  ai->set_domain("");
  ai->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("epctx_ort_ep");
  onnx::NodeProto* n = graph->add_node();
  EPCTX_ORT_RETURN_IF_ERROR(NodeToProto(api, node, n));
  out->node_name = n->name();
  for (const onnx::AttributeProto& a : n->attribute()) {
    if (a.name() == "source") out->source = a.s();
    if (a.name() == "main_context") out->main_context = a.i();
  }

  size_t num = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetNumInputs(node, &num));
  std::vector<const OrtValueInfo*> values(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetInputs(node, values.data(), num));
  for (const OrtValueInfo* vi : values) {
    if (!vi) return api.CreateStatus(ORT_NOT_IMPLEMENTED, "epctx: EPContext optional input");
    onnx::ValueInfoProto* v = graph->add_input();
    EPCTX_ORT_RETURN_IF_ERROR(ValueInfoToProto(api, vi, v));
    out->input_names.push_back(v->name());
  }
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetNumOutputs(node, &num));
  values.assign(num, nullptr);
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetOutputs(node, values.data(), num));
  for (const OrtValueInfo* vi : values) {
    if (!vi) return api.CreateStatus(ORT_NOT_IMPLEMENTED, "epctx: EPContext optional output");
    onnx::ValueInfoProto* v = graph->add_output();
    EPCTX_ORT_RETURN_IF_ERROR(ValueInfoToProto(api, vi, v));
    out->output_names.push_back(v->name());
  }
  out->proto = model;
  if (!model.SerializeToString(&out->bytes))
    return api.CreateStatus(ORT_FAIL, "epctx: cannot serialize the EPContext node's model");
  return nullptr;
}

OrtStatus* AdoptPrimary(const OrtApi& api, const PrimaryContext& primary, NodeModel* m) {
  onnx::NodeProto* n = m->proto.mutable_graph()->mutable_node(0);
  bool has_partition_name = false;
  for (const onnx::AttributeProto& a : n->attribute())
    has_partition_name = has_partition_name || a.name() == "partition_name";
  if (!has_partition_name) {  // the graph keeps the node's own name
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("partition_name");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(n->name());
  }
  bool has_context = false;
  bool has_embed = false;
  for (onnx::AttributeProto& a : *n->mutable_attribute()) {
    if (a.name() == "main_context") a.set_i(1);
    if (a.name() == "embed_mode") {
      a.set_i(primary.embed_mode);
      has_embed = true;
    }
    if (a.name() == "ep_cache_context") {
      a.set_s(primary.ep_cache_context);
      has_context = true;
    }
  }
  if (!has_context) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("ep_cache_context");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(primary.ep_cache_context);
  }
  if (!has_embed) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("embed_mode");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(primary.embed_mode);
  }
  m->bytes.clear();
  if (!m->proto.SerializeToString(&m->bytes))
    return api.CreateStatus(ORT_FAIL, "epctx: cannot serialize the EPContext node's model");
  return nullptr;
}

}  // namespace ort_ep
}  // namespace epctx
