// SPDX-License-Identifier: Apache-2.0
#include "fusion.h"

#include <set>

namespace epctx {
namespace host {

bool ReadersOf(const onnx::GraphProto& g, std::map<std::string, std::vector<int>>* readers) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const auto& a : n.attribute())
      if (a.has_g() || a.graphs_size() > 0) return false;
    for (const auto& in : n.input())
      if (!in.empty()) (*readers)[in].push_back(i);
  }
  return true;
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

int64_t DefaultOpset(const onnx::ModelProto& m) {
  int64_t opset = 0;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  return opset;
}

std::set<std::string> GraphOutputs(const onnx::GraphProto& g) {
  std::set<std::string> names;
  for (const auto& o : g.output()) names.insert(o.name());
  return names;
}

FusionScan::FusionScan(const onnx::ModelProto& m)
    : opset(DefaultOpset(m)),
      outputs(GraphOutputs(m.graph())),
      drop(size_t(m.graph().node_size()), false),
      whole(ReadersOf(m.graph(), &readers)) {}

int FusionScan::OnlyReader(const std::string& v) const {
  if (outputs.count(v)) return -1;
  auto r = readers.find(v);
  return r == readers.end() || r->second.size() != 1 ? -1 : r->second[0];
}

void ImportMicrosoftOpset(onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain() == "com.microsoft") return;
  onnx::OperatorSetIdProto* o = m.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
}

}  // namespace host
}  // namespace epctx
