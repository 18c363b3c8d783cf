// SPDX-License-Identifier: Apache-2.0
// ORT's graph view as ONNX protobuf (onnx_from_ort.h).
#include "onnx_from_ort.h"

#include <cstring>
#include <string>
#include <vector>

namespace epctx {
namespace ort_ep {
namespace {

OrtStatus* NotImplemented(const OrtApi& api, const std::string& what) {
  return api.CreateStatus(ORT_NOT_IMPLEMENTED, ("epctx: " + what).c_str());
}

// ReadOpAttr of a variable-sized attribute: the first call learns the size.
template <typename T>
OrtStatus* ReadArray(const OrtApi& api, const OrtOpAttr* attr, OrtOpAttrType type,
                     std::vector<T>* out) {
  size_t bytes = 0;
  OrtStatus* probe = api.ReadOpAttr(attr, type, nullptr, 0, &bytes);
  if (probe) api.ReleaseStatus(probe);
  out->assign(bytes / sizeof(T), T{});
  if (bytes) EPCTX_ORT_RETURN_IF_ERROR(api.ReadOpAttr(attr, type, out->data(), bytes, &bytes));
  out->resize(bytes / sizeof(T));
  return nullptr;
}

OrtStatus* TensorToProto(const OrtApi& api, const OrtValue* v, onnx::TensorProto* out) {
  OrtTensorTypeAndShapeInfo* info = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.GetTensorTypeAndShape(v, &info));
  ONNXTensorElementDataType elem = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t rank = 0;
  OrtStatus* st = api.GetTensorElementType(info, &elem);
  if (!st) st = api.GetDimensionsCount(info, &rank);
  std::vector<int64_t> dims(rank);
  if (!st) st = api.GetDimensions(info, dims.data(), rank);
  api.ReleaseTensorTypeAndShapeInfo(info);
  if (st) return st;
  if (elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING)
    return NotImplemented(api, "string tensor '" + out->name() + "'");
  out->set_data_type(static_cast<int32_t>(elem));
  for (int64_t d : dims) out->add_dims(d);
  size_t bytes = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.GetTensorSizeInBytes(v, &bytes));
  const void* data = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.GetTensorData(v, &data));
  out->set_raw_data(data, bytes);
  return nullptr;
}

OrtStatus* AttributeToProto(const OrtApi& api, const OrtOpAttr* attr, onnx::AttributeProto* a) {
  const char* name = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.OpAttr_GetName(attr, &name));
  a->set_name(name ? name : "");
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  EPCTX_ORT_RETURN_IF_ERROR(api.OpAttr_GetType(attr, &type));
  size_t len = 0;
  switch (type) {
    case ORT_OP_ATTR_INT: {
      int64_t v = 0;
      EPCTX_ORT_RETURN_IF_ERROR(api.ReadOpAttr(attr, type, &v, sizeof v, &len));
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(v);
      return nullptr;
    }
    case ORT_OP_ATTR_FLOAT: {
      float v = 0;
      EPCTX_ORT_RETURN_IF_ERROR(api.ReadOpAttr(attr, type, &v, sizeof v, &len));
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(v);
      return nullptr;
    }
    case ORT_OP_ATTR_STRING: {
      std::vector<char> v;
      EPCTX_ORT_RETURN_IF_ERROR(ReadArray(api, attr, type, &v));
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(std::string(v.begin(), v.end()));
      return nullptr;
    }
    case ORT_OP_ATTR_INTS: {
      std::vector<int64_t> v;
      EPCTX_ORT_RETURN_IF_ERROR(ReadArray(api, attr, type, &v));
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t x : v) a->add_ints(x);
      return nullptr;
    }
    case ORT_OP_ATTR_FLOATS: {
      std::vector<float> v;
      EPCTX_ORT_RETURN_IF_ERROR(ReadArray(api, attr, type, &v));
      a->set_type(onnx::AttributeProto::FLOATS);
      for (float x : v) a->add_floats(x);
      return nullptr;
    }
    case ORT_OP_ATTR_TENSOR: {
      OrtValue* v = nullptr;
      EPCTX_ORT_RETURN_IF_ERROR(api.OpAttr_GetTensorAttributeAsOrtValue(attr, &v));
      a->set_type(onnx::AttributeProto::TENSOR);
      OrtStatus* st = v ? TensorToProto(api, v, a->mutable_t()) : nullptr;
      if (v) api.ReleaseValue(v);
      return st;
    }
    default:
      return NotImplemented(api, "attribute '" + a->name() + "' of type " +
                                     std::to_string(static_cast<int>(type)));
  }
}

}  // namespace

OrtStatus* ValueInfoToProto(const OrtApi& api, const OrtValueInfo* vi, onnx::ValueInfoProto* out) {
  const char* name = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.GetValueInfoName(vi, &name));
  out->set_name(name ? name : "");
  const OrtTypeInfo* type = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.GetValueInfoTypeInfo(vi, &type));
  const OrtTensorTypeAndShapeInfo* tensor = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.CastTypeInfoToTensorInfo(type, &tensor));
  if (!tensor) return NotImplemented(api, "value '" + out->name() + "' is not a tensor");
  ONNXTensorElementDataType elem = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  EPCTX_ORT_RETURN_IF_ERROR(api.GetTensorElementType(tensor, &elem));
  size_t rank = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.GetDimensionsCount(tensor, &rank));
  std::vector<int64_t> dims(rank);
  std::vector<const char*> symbols(rank, nullptr);
  EPCTX_ORT_RETURN_IF_ERROR(api.GetDimensions(tensor, dims.data(), rank));
  EPCTX_ORT_RETURN_IF_ERROR(api.GetSymbolicDimensions(tensor, symbols.data(), rank));
  onnx::TypeProto_Tensor* t = out->mutable_type()->mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(elem));
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (size_t d = 0; d < rank; ++d) {
    onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
    if (dims[d] >= 0) dim->set_dim_value(dims[d]);
    else if (symbols[d] && symbols[d][0]) dim->set_dim_param(symbols[d]);
  }
  return nullptr;
}

OrtStatus* NodeToProto(const OrtApi& api, const OrtNode* node, onnx::NodeProto* out) {
  const char* s = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetName(node, &s));
  out->set_name(s ? s : "");
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetOperatorType(node, &s));
  out->set_op_type(s ? s : "");
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetDomain(node, &s));
  out->set_domain(s ? s : "");
  size_t num = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetNumInputs(node, &num));
  std::vector<const OrtValueInfo*> values(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetInputs(node, values.data(), num));
  for (const OrtValueInfo* vi : values) {
    const char* name = "";  // an omitted optional input
    if (vi) EPCTX_ORT_RETURN_IF_ERROR(api.GetValueInfoName(vi, &name));
    out->add_input(name ? name : "");
  }
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetNumOutputs(node, &num));
  values.assign(num, nullptr);
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetOutputs(node, values.data(), num));
  for (const OrtValueInfo* vi : values) {
    const char* name = "";
    if (vi) EPCTX_ORT_RETURN_IF_ERROR(api.GetValueInfoName(vi, &name));
    out->add_output(name ? name : "");
  }
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetNumAttributes(node, &num));
  std::vector<const OrtOpAttr*> attrs(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetAttributes(node, attrs.data(), num));
  for (const OrtOpAttr* attr : attrs)
    EPCTX_ORT_RETURN_IF_ERROR(AttributeToProto(api, attr, out->add_attribute()));
  return nullptr;
}

OrtStatus* GraphToModel(const OrtApi& api, const OrtGraph* graph, onnx::ModelProto* out) {
  out->set_ir_version(8);
  out->set_producer_name("epctx_ort_ep");
  size_t num = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumOperatorSets(graph, &num));
  std::vector<const char*> domains(num);
  std::vector<int64_t> versions(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetOperatorSets(graph, domains.data(), versions.data(), num));
  for (size_t i = 0; i < num; ++i) {
    onnx::OperatorSetIdProto* op = out->add_opset_import();
    op->set_domain(domains[i] ? domains[i] : "");
    op->set_version(versions[i]);
  }
  onnx::GraphProto* g = out->mutable_graph();
  const char* name = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetName(graph, &name));
  g->set_name(name && name[0] ? name : "main");

  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumInitializers(graph, &num));
  std::vector<const OrtValueInfo*> values(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetInitializers(graph, values.data(), num));
  std::vector<std::string> init_names;
  for (const OrtValueInfo* vi : values) {
    const OrtValue* v = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(api.ValueInfo_GetInitializerValue(vi, &v));
    const char* n = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(api.GetValueInfoName(vi, &n));
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(n ? n : "");
    init_names.emplace_back(t->name());
    if (v) EPCTX_ORT_RETURN_IF_ERROR(TensorToProto(api, v, t));
  }
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumInputs(graph, &num));
  values.assign(num, nullptr);
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetInputs(graph, values.data(), num));
  for (const OrtValueInfo* vi : values) {
    onnx::ValueInfoProto p;
    EPCTX_ORT_RETURN_IF_ERROR(ValueInfoToProto(api, vi, &p));
    bool is_init = false;
    for (const std::string& n : init_names) is_init = is_init || n == p.name();
    if (!is_init) *g->add_input() = p;
  }
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumOutputs(graph, &num));
  values.assign(num, nullptr);
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetOutputs(graph, values.data(), num));
  for (const OrtValueInfo* vi : values)
    EPCTX_ORT_RETURN_IF_ERROR(ValueInfoToProto(api, vi, g->add_output()));
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumNodes(graph, &num));
  std::vector<const OrtNode*> nodes(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNodes(graph, nodes.data(), num));
  for (const OrtNode* node : nodes)
    EPCTX_ORT_RETURN_IF_ERROR(NodeToProto(api, node, g->add_node()));
  return nullptr;
}

}  // namespace ort_ep
}  // namespace epctx
