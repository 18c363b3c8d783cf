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
  if (!scan.whole) return 0;
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (!o.empty()) producer[o] = &n;

  // alias: a dropped Cast's output -> its input, for the readers; rename: a
  // value whose Cast wrote a graph output -> that output's name, for its
  // producer and readers.
  std::map<std::string, std::string> alias, rename;
  size_t dropped = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    for (int k = 0; k < n.input_size(); ++k) {
      auto a = alias.find(n.input(k));
      if (a != alias.end()) n.set_input(k, a->second);
    }
    if (!IsNoopCast(n, scan, producer)) continue;
    const std::string &x = n.input(0), &y = n.output(0);
    if (!scan.outputs.count(y)) {
      alias[y] = x;
    } else {
      if (!producer.count(x) || scan.outputs.count(x) || rename.count(x)) continue;
      rename[x] = y;
    }
    scan.drop[size_t(i)] = true;
    ++dropped;
  }
  if (!dropped) return 0;
  for (auto& n : *g.mutable_node()) {
    for (int k = 0; k < n.input_size(); ++k) {
      auto r = rename.find(n.input(k));
      if (r != rename.end()) n.set_input(k, r->second);
    }
    for (int k = 0; k < n.output_size(); ++k) {
      auto r = rename.find(n.output(k));
      if (r != rename.end()) n.set_output(k, r->second);
    }
  }
  DropNodes(g, scan.drop);
  return dropped;
}

}  // namespace host
}  // namespace epctx
