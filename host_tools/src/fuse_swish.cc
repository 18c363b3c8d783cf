// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/fuse_swish.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"

namespace epctx {
namespace host {
namespace {

// The gate of x * gate(x) a node computes: Sigmoid, or HardSigmoid with
// HardSwish's alpha 1/6 and beta 0.5 (what torch exports for hardswish).
enum class Gate { kNone, kSigmoid, kHardSigmoid };
Gate GateOf(const onnx::NodeProto& n, int64_t opset) {
  if (!IsDefaultDomain(n.domain()) || n.input_size() != 1 || n.output_size() != 1)
    return Gate::kNone;
  if (n.op_type() == "Sigmoid") return Gate::kSigmoid;
  if (n.op_type() == "HardSigmoid" && opset >= 13 && FloatAttr(n, "alpha", 0.2f) == 1.0f / 6.0f &&
      FloatAttr(n, "beta", 0.5f) == 0.5f)
    return Gate::kHardSigmoid;
  return Gate::kNone;
}

}  // namespace

size_t FuseSwish(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  FusionScan scan(model);
  if (!scan.whole) return 0;
  std::vector<bool>& drop = scan.drop;
  const int64_t opset = scan.info.opset;
  bool uses_ms = false, uses_hardswish = false;
  size_t fused = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& sig = g.node(i);
    const Gate gate = GateOf(sig, opset);
    if (gate == Gate::kNone || drop[size_t(i)]) continue;
    const std::string &x = sig.input(0), &s = sig.output(0);
    const int j = scan.OnlyReader(s);
    if (j < 0) continue;
    onnx::NodeProto& mul = *g.mutable_node(j);
    if (mul.op_type() != "Mul" || !IsDefaultDomain(mul.domain()) || mul.input_size() != 2 ||
        mul.output_size() != 1 || drop[size_t(j)])
      continue;
    if (!((mul.input(0) == x && mul.input(1) == s) || (mul.input(0) == s && mul.input(1) == x)))
      continue;
    mul.clear_input();
    mul.add_input(x);
    if (gate == Gate::kSigmoid) {
      mul.set_op_type("QuickGelu");
      mul.set_domain("com.microsoft");
      onnx::AttributeProto* a = mul.add_attribute();
      a->set_name("alpha");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(1.0f);
      uses_ms = true;
    } else {
      mul.set_op_type("HardSwish");
      mul.set_domain("");
      uses_hardswish = true;
    }
    drop[size_t(i)] = true;
    ++fused;
  }
  if (!fused) return 0;
  DropNodes(g, drop);
  // HardSwish is opset 14. From 13 to 14 every other op only gained types
  // or attributes whose defaults keep opset 13's meaning (BatchNormalization
  // training_mode, Reshape allowzero, the RNNs' layout), so a 13 model is
  // raised to 14 rather than keep the pair.
  if (uses_hardswish && opset == 13)
    for (auto& o : *model.mutable_opset_import())
      if (IsDefaultDomain(o.domain())) o.set_version(14);
  if (uses_ms) ImportMsOpset(model);
  return fused;
}

}  // namespace host
}  // namespace epctx
