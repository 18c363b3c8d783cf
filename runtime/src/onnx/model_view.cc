// SPDX-License-Identifier: Apache-2.0
// Look-ups on parsed views (the parser itself is in model.cc).
#include "onnx/model.h"

namespace epctx {
namespace onnx {

const char* attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kFloat: return "FLOAT";
    case AttrType::kInt: return "INT";
    case AttrType::kString: return "STRING";
    case AttrType::kTensor: return "TENSOR";
    case AttrType::kGraph: return "GRAPH";
    case AttrType::kFloats: return "FLOATS";
    case AttrType::kInts: return "INTS";
    case AttrType::kStrings: return "STRINGS";
    case AttrType::kTensors: return "TENSORS";
    case AttrType::kGraphs: return "GRAPHS";
    case AttrType::kSparseTensor: return "SPARSE_TENSOR";
    case AttrType::kSparseTensors: return "SPARSE_TENSORS";
    case AttrType::kTypeProto: return "TYPE_PROTO";
    case AttrType::kTypeProtos: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

const AttributeView* NodeView::attr(const char* attr_name) const {
  for (uint32_t i = 0; i < num_attrs; ++i)
    if (attrs[i].name.eq(attr_name)) return &attrs[i];
  return nullptr;
}

int64_t ModelView::opset(StrView op_domain) const {
  bool is_default = op_domain.empty() || op_domain.eq("ai.onnx");
  for (uint32_t i = 0; i < num_opsets; ++i) {
    const StrView& d = opsets[i].domain;
    bool d_default = d.empty() || d.eq("ai.onnx");
    if (is_default ? d_default : d.eq(op_domain)) return opsets[i].version;
  }
  return -1;
}

}  // namespace onnx
}  // namespace epctx
