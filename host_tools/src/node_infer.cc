// SPDX-License-Identifier: Apache-2.0
// One-node shape inference (see node_infer.h).
#include "epctx_host/node_infer.h"

#include <set>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "epctx_host/specialize.h"

namespace epctx {
namespace host {
namespace {

// Constants up to this many elements carry their values into the one-node
// model: shape vectors, axes, scalars. Weights stay out.
constexpr int64_t kMaxDataElements = 4096;

int64_t Elements(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

}  // namespace

onnx::TypeProto TypeProtoOf(const ValueType& t) {
  onnx::TypeProto p;
  auto* tt = p.mutable_tensor_type();
  tt->set_elem_type(t.dtype);
  if (t.known) {
    auto* shape = tt->mutable_shape();
    for (int64_t d : t.dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
    }
  }
  return p;
}

std::vector<ValueType> InferNode(const onnx::NodeProto& node, const onnx::ModelProto& model,
                                 const NodeInputs& inputs) {
  onnx::ModelProto m;
  m.set_ir_version(model.ir_version());
  *m.mutable_opset_import() = model.opset_import();
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("infer");
  *g->add_node() = node;
  std::set<std::string> added;
  for (const auto& in : node.input()) {
    if (in.empty() || !added.insert(in).second) continue;
    const onnx::TensorProto* c = inputs.constant(in);
    if (c && c->data_location() != onnx::TensorProto::EXTERNAL &&
        Elements(*c) <= kMaxDataElements) {
      *g->add_initializer() = *c;
      continue;
    }
    const ValueType* t = inputs.type(in);
    if (!t || t->dtype == 0) return {};
    onnx::ValueInfoProto* vi = g->add_input();
    vi->set_name(in);
    *vi->mutable_type() = TypeProtoOf(*t);
  }
  for (const auto& o : node.output()) g->add_output()->set_name(o);
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    return {};
  }
  std::vector<ValueType> out(node.output_size());
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& o = node.output(i);
    if (o.empty()) continue;
    for (const auto& v : g->value_info())
      if (v.name() == o) out[i] = TypeOf(v.type());
    for (const auto& v : g->output())
      if (v.name() == o && v.has_type()) out[i] = TypeOf(v.type());
  }
  return out;
}

}  // namespace host
}  // namespace epctx
