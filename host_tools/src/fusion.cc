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
    for (const auto& o : n.output())
      if (!o.empty()) producer[o] = i, names.insert(o);
  }
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& v : g.input()) names.insert(v.name());
}

const onnx::NodeProto* FusionScan::ProducerOf(const onnx::GraphProto& g,
                                              const std::string& v) const {
  auto it = producer.find(v);
  return it == producer.end() ? nullptr : &g.node(it->second);
}

int64_t IntAttr(const onnx::NodeProto& n, const char* name, int64_t def) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return def;
}

float FloatAttr(const onnx::NodeProto& n, const char* name, float def) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.f();
  return def;
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

size_t BypassIdentities(onnx::GraphProto& g, FusionScan& scan,
                        const std::function<bool(const onnx::NodeProto&)>& is_identity) {
  if (!scan.whole) return 0;
  std::set<std::string> produced;
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (!o.empty()) produced.insert(o);
  // alias: a dropped node's output -> its input, for the readers; rename: a
  // value whose identity wrote a graph output -> that output's name, for
  // its producer and readers.
  std::map<std::string, std::string> alias, rename;
  size_t dropped = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    for (int k = 0; k < n.input_size(); ++k) {
      auto a = alias.find(n.input(k));
      if (a != alias.end()) n.set_input(k, a->second);
    }
    if (n.input_size() < 1 || n.output_size() < 1 || n.input(0).empty() || n.output(0).empty() ||
        !is_identity(n))
      continue;
    const std::string &x = n.input(0), &y = n.output(0);
    if (!scan.outputs.count(y)) {
      alias[y] = x;
    } else {
      if (!produced.count(x) || scan.outputs.count(x) || rename.count(x)) continue;
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
