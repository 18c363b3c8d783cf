// SPDX-License-Identifier: Apache-2.0
// Implicit inputs of nodes with subgraphs (epctx_host/subgraphs.h).
#include "epctx_host/subgraphs.h"

#include <set>

namespace epctx {
namespace host {
namespace {

void Note(const std::string& name, const std::set<std::string>& defined,
          std::set<std::string>* seen, std::vector<std::string>* out) {
  if (!name.empty() && !defined.count(name) && seen->insert(name).second) out->push_back(name);
}

// Appends to *out the names graph g reads that it does not define itself.
void GraphReads(const onnx::GraphProto& g, std::set<std::string>* seen,
                std::vector<std::string>* out) {
  std::set<std::string> defined;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& t : g.sparse_initializer()) defined.insert(t.values().name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) defined.insert(o);
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) Note(in, defined, seen, out);
    for (const auto& in : ImplicitInputs(n)) Note(in, defined, seen, out);
  }
  for (const auto& v : g.output()) Note(v.name(), defined, seen, out);
}

}  // namespace

bool HasSubgraph(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

std::vector<onnx::GraphProto*> AttributeGraphs(onnx::AttributeProto& a) {
  std::vector<onnx::GraphProto*> out;
  if (a.has_g()) out.push_back(a.mutable_g());
  for (auto& g : *a.mutable_graphs()) out.push_back(&g);
  return out;
}

std::vector<std::string> ImplicitInputs(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  if (!HasSubgraph(node)) return out;
  std::set<std::string> seen;
  for (const auto& a : node.attribute()) {
    if (a.has_g()) GraphReads(a.g(), &seen, &out);
    for (const auto& g : a.graphs()) GraphReads(g, &seen, &out);
  }
  return out;
}

std::vector<std::string> NodeReads(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  for (const auto& in : node.input())
    if (!in.empty()) out.push_back(in);
  for (auto& in : ImplicitInputs(node)) out.push_back(std::move(in));
  return out;
}

}  // namespace host
}  // namespace epctx
