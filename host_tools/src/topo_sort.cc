// SPDX-License-Identifier: Apache-2.0
// Topological sort (Kahn's algorithm with the ready nodes taken in original
// order, so the result is the original order whenever that is valid).
//
//  1. Map each value to the node producing it. A node's dependencies are the
//     producers of its inputs and, for a node with subgraphs (If, Loop,
//     Scan), of every name its subgraphs read: ONNX names are unique across
//     scopes, so a name a subgraph reads and an outer node writes is an
//     implicit input of the node owning the subgraph.
//  2. Count each node's unmet dependencies; put the nodes with none in a
//     min-heap by original index; pop, emit, release its consumers.
//  3. Nodes left over lie on a cycle or behind one. Starting at any of them
//     and following a still-unmet dependency must revisit a node: that node
//     is on a cycle, and the error names it.
// Values nobody produces (graph inputs, initializers, outer scope, or
// simply missing) are no dependency: the checker reports missing ones.
#include "epctx_host/topo_sort.h"

#include <functional>
#include <map>
#include <queue>
#include <set>
#include <vector>

#include "epctx_host/diagnostics.h"

namespace epctx {
namespace host {
namespace {

// Every name read anywhere inside g (nested subgraphs included).
void NamesRead(const onnx::GraphProto& g, std::set<std::string>* out) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty()) out->insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) NamesRead(a.g(), out);
      for (const auto& sub : a.graphs()) NamesRead(sub, out);
    }
  }
  for (const auto& o : g.output()) out->insert(o.name());
}

std::string NodeName(const onnx::NodeProto& n, int index) {
  std::string s = n.op_type() + " node ";
  if (!n.name().empty()) return s + "'" + n.name() + "'";
  if (n.output_size() > 0) return s + "producing '" + n.output(0) + "'";
  return s + "#" + std::to_string(index);
}

}  // namespace

size_t SortGraph(onnx::GraphProto& graph, const std::string& file) {
  size_t moved = 0;
  for (auto& n : *graph.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) moved += SortGraph(*a.mutable_g(), file);
      for (auto& sub : *a.mutable_graphs()) moved += SortGraph(sub, file);
    }

  const int n = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : graph.node(i).output())
      if (!o.empty()) producer.emplace(o, i);

  const size_t count = static_cast<size_t>(n);
  std::vector<std::vector<int>> deps(count), consumers(count);
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto& node = graph.node(i);
    std::set<std::string> reads(node.input().begin(), node.input().end());
    for (const auto& a : node.attribute()) {
      if (a.has_g()) NamesRead(a.g(), &reads);
      for (const auto& sub : a.graphs()) NamesRead(sub, &reads);
    }
    std::set<int> seen;
    for (const auto& r : reads) {
      auto it = producer.find(r);
      if (it == producer.end() || !seen.insert(it->second).second) continue;
      deps[size_t(i)].push_back(it->second);
      consumers[size_t(it->second)].push_back(i);
    }
  }

  std::vector<size_t> pending(count);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    pending[size_t(i)] = deps[size_t(i)].size();
    if (pending[size_t(i)] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(count);
  while (!ready.empty()) {
    int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int c : consumers[size_t(v)])
      if (--pending[size_t(c)] == 0) ready.push(c);
  }

  if (order.size() != count) {
    int v = 0;
    while (pending[size_t(v)] == 0) ++v;
    std::vector<char> visited(count, 0);
    while (!visited[size_t(v)]) {
      visited[size_t(v)] = 1;
      for (int d : deps[size_t(v)])
        if (pending[size_t(d)] != 0) {
          v = d;
          break;
        }
    }
    throw ToolError(file,
                    "graph '" + graph.name() + "' has a cycle: " + NodeName(graph.node(v), v) +
                        " depends on its own output",
                    EPCTX_INVALID_GRAPH);
  }

  bool same = true;
  for (int i = 0; i < n; ++i)
    if (order[size_t(i)] != i) {
      same = false;
      ++moved;
    }
  if (same) return moved;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int v : order) *sorted.Add() = std::move(*graph.mutable_node(v));
  graph.mutable_node()->Swap(&sorted);
  return moved;
}

}  // namespace host
}  // namespace epctx
