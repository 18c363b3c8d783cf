// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/noop_casts.h"

#include <map>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"

namespace epctx {
namespace host {
namespace {

// The element type of `v`, 0 when unknown: shape inference's, else a
// QuantizeLinear's by its zero point (uint8 without one).
int32_t ElementType(const std::string& v, const FusionScan& scan,
                    const std::map<std::string, const onnx::NodeProto*>& producer) {
  auto t = scan.info.types.find(v);
  if (t != scan.info.types.end() && t->second.dtype != 0) return t->second.dtype;
  auto p = producer.find(v);
  if (p == producer.end()) return 0;
  const onnx::NodeProto& q = *p->second;
  if (q.op_type() != "QuantizeLinear" || !IsDefaultDomain(q.domain())) return 0;
  if (q.input_size() < 3 || q.input(2).empty()) return onnx::TensorProto::UINT8;
  auto z = scan.info.types.find(q.input(2));
  return z == scan.info.types.end() ? 0 : z->second.dtype;
}

bool IsNoopCast(const onnx::NodeProto& n, const FusionScan& scan,
                const std::map<std::string, const onnx::NodeProto*>& producer) {
  if (n.op_type() != "Cast" || !IsDefaultDomain(n.domain()) || n.input_size() != 1 ||
      n.output_size() != 1 || n.input(0).empty() || n.output(0).empty())
    return false;
  for (const auto& a : n.attribute())
    if (a.name() == "to" && a.type() == onnx::AttributeProto::INT)
      return a.i() != 0 && a.i() == ElementType(n.input(0), scan, producer);
  return false;
}

}  // namespace

size_t DropNoopCasts(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  FusionScan scan(model);
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (!o.empty()) producer[o] = &n;
  return BypassIdentities(g, scan,
                          [&](const onnx::NodeProto& n) { return IsNoopCast(n, scan, producer); });
}

}  // namespace host
}  // namespace epctx
