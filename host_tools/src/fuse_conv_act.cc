// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/fuse_conv_act.h"

#include <limits>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"

namespace epctx {
namespace host {
namespace {

// The value of a constant float32 scalar (or one-element tensor).
bool ScalarOf(const GraphInfo& info, const std::string& name, float* v) {
  std::vector<float> one;
  if (!FloatValues(info.constant(name), 1, &one)) return false;
  *v = one[0];
  return true;
}

// The clamp of an activation node: Relu, or Clip with constant bounds.
bool ClampOf(const onnx::NodeProto& n, const GraphInfo& info, std::string* act,
             std::vector<float>* params) {
  if (!IsDefaultDomain(n.domain())) return false;
  if (n.op_type() == "Relu") {
    *act = "Relu";
    return true;
  }
  if (n.op_type() != "Clip") return false;
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (info.opset < 11) {
    for (const auto& a : n.attribute()) {
      if (a.name() == "min") lo = a.f();
      if (a.name() == "max") hi = a.f();
    }
  } else {
    if (n.input_size() > 1 && !n.input(1).empty() && !ScalarOf(info, n.input(1), &lo)) return false;
    if (n.input_size() > 2 && !n.input(2).empty() && !ScalarOf(info, n.input(2), &hi)) return false;
  }
  *act = "Clip";
  *params = {lo, hi};
  return true;
}

}  // namespace

size_t FuseConvActivations(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  FusionScan scan(model);
  if (!scan.whole) return 0;
  std::vector<bool>& drop = scan.drop;
  size_t fused = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& conv = *g.mutable_node(i);
    if (conv.op_type() != "Conv" || !IsDefaultDomain(conv.domain()) || conv.output_size() != 1 ||
        conv.input_size() < 2)
      continue;
    const onnx::TensorProto* w = scan.info.constant(conv.input(1));
    if (!w || w->data_type() != onnx::TensorProto::FLOAT) continue;
    const std::string& y = conv.output(0);
    const int j = scan.OnlyReader(y);
    if (j < 0) continue;
    const onnx::NodeProto& act = g.node(j);
    if (act.input_size() < 1 || act.input(0) != y || act.output_size() != 1 || drop[size_t(j)])
      continue;
    std::string kind;
    std::vector<float> params;
    if (!ClampOf(act, scan.info, &kind, &params)) continue;
    conv.set_op_type("FusedConv");
    conv.set_domain("com.microsoft");
    conv.set_output(0, act.output(0));
    onnx::AttributeProto* a = conv.add_attribute();
    a->set_name("activation");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(kind);
    if (!params.empty()) {
      onnx::AttributeProto* p = conv.add_attribute();
      p->set_name("activation_params");
      p->set_type(onnx::AttributeProto::FLOATS);
      for (float v : params) p->add_floats(v);
    }
    drop[size_t(j)] = true;
    ++fused;
  }
  if (!fused) return 0;
  // The activations go; the fused node sits where its Conv was, before
  // every consumer of the activation's output.
  DropNodes(g, drop);
  ImportMsOpset(model);
  return fused;
}

}  // namespace host
}  // namespace epctx
