// SPDX-License-Identifier: Apache-2.0
#include "fusion.h"

#include "epctx_host/specialize.h"

namespace epctx {
namespace host {

FusionScan::FusionScan(const onnx::ModelProto& m)
    : info(BuildGraphInfo(m)), drop(size_t(m.graph().node_size()), false) {
  const onnx::GraphProto& g = m.graph();
  for (const auto& o : g.output()) outputs.insert(o.name());
  for (int i = 0; i < g.node_size() && whole; ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const auto& a : n.attribute())
      if (a.has_g() || a.graphs_size() > 0) whole = false;
    for (const auto& in : n.input())
      if (!in.empty()) readers[in].push_back(i);
  }
}

int FusionScan::OnlyReader(const std::string& v) const {
  if (outputs.count(v)) return -1;
  auto r = readers.find(v);
  return r == readers.end() || r->second.size() != 1 ? -1 : r->second[0];
}

void DropNodes(onnx::GraphProto& g, const std::vector<bool>& drop) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < g.node_size(); ++i)
    if (!drop[size_t(i)]) *kept.Add() = g.node(i);
  g.mutable_node()->Swap(&kept);
  std::set<std::string> live;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) live.insert(o);
  for (const auto& in : g.input()) live.insert(in.name());
  for (const auto& t : g.initializer()) live.insert(t.name());
  auto* vi = g.mutable_value_info();
  for (int i = vi->size() - 1; i >= 0; --i)
    if (!live.count(vi->Get(i).name())) vi->DeleteSubrange(i, 1);
}

}  // namespace host
}  // namespace epctx
