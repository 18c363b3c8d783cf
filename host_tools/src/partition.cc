// SPDX-License-Identifier: Apache-2.0
// Partitioning: which nodes run on the backend, grouped into partitions.
//
// Algorithm
//   The graph's nodes are topologically sorted (onnx::checker guarantees
//   it), so node index = topological position.
//   1. Ask the backend Supports(node) for every node without subgraphs
//      (control flow stays on the CPU). A node's subgraphs' reads of outer
//      values (implicit inputs, subgraphs.h) count as its inputs below.
//   2. Walk the nodes in order. Each supported node v starts as its own
//      group; then, for each input of v whose producer p is supported and in
//      another group A, try to merge A into v's group B along the edge A->B.
//   3. Contracting an edge A->B of a DAG creates a cycle exactly when another
//      path A ~> B exists (through an unsupported node or a third group): the
//      contracted node would then both feed and consume that path. So a merge
//      is refused when a depth-first search over the quotient graph (groups
//      contracted, other nodes as themselves), started from A's successors
//      other than B, reaches B. Merging only along edges keeps each group
//      connected; checking every merge keeps the quotient acyclic, which is
//      what lets each group become one EPContext node.
//   4. Pruning: a group whose first node comes after B's last node cannot
//      reach B (edges only go forward), so the search never leaves the
//      processed prefix of the graph and stays cheap in practice.
//   Example: Conv -> Relu -> Sqrt(CPU) -> Conv gives {Conv,Relu}, {Conv}; a
//   diamond a -> {b(CPU), c} -> d gives {a,c}, {d}: joining d would close the
//   cycle {a,c,d} -> b -> {a,c,d}.
#include "epctx_host/partition.h"
#include "epctx_host/subgraphs.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace epctx {
namespace host {
namespace {

class Groups {
 public:
  explicit Groups(int n) : parent_(n), members_(n), first_(n), last_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
    for (int i = 0; i < n; ++i) {
      members_[i] = {i};
      first_[i] = last_[i] = i;
    }
  }
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void merge_into(int a, int b) {  // a, b roots; b survives
    parent_[a] = b;
    members_[b].insert(members_[b].end(), members_[a].begin(), members_[a].end());
    members_[a].clear();
    first_[b] = std::min(first_[a], first_[b]);
    last_[b] = std::max(last_[a], last_[b]);
  }
  const std::vector<int>& members(int root) const { return members_[root]; }
  int first(int root) const { return first_[root]; }
  int last(int root) const { return last_[root]; }

 private:
  std::vector<int> parent_;
  std::vector<std::vector<int>> members_;
  std::vector<int> first_, last_;
};

}  // namespace

PartitionPlan PlanPartitions(const GraphInfo& info, const Backend* backend) {
  const onnx::GraphProto& g = *info.graph;
  const int n = g.node_size();
  PartitionPlan plan;
  plan.support.resize(n);
  for (int i = 0; i < n; ++i) {
    if (HasSubgraph(g.node(i))) {
      // If/Loop/Scan stay on the CPU, their bodies whole CPU subgraphs.
      plan.support[i].reason = "control flow: its subgraphs run on the CPU";
    } else if (backend) {
      plan.support[i] = backend->Supports(g.node(i), info);
    } else {
      plan.support[i].reason = "no backend (--ep none)";
    }
  }
  if (!backend) return plan;

  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i)
    for (const auto& in : NodeReads(g.node(i))) {
      auto it = producer.find(in);
      if (it != producer.end()) consumers[it->second].push_back(i);
    }

  Groups groups(n);
  // Is there a path a ~> b other than the direct edges between them?
  auto other_path = [&](int a, int b) {
    std::vector<char> seen(n, 0);
    std::vector<int> stack;
    // Pushes root's successors; true when b is reached by a path (a direct
    // edge a->b, i.e. from_a, does not count).
    auto expand = [&](int root, bool from_a) {
      for (int m : groups.members(root))
        for (int c : consumers[m]) {
          int r = groups.find(c);
          if (r == root) continue;
          if (r == b) {
            if (from_a) continue;
            return true;
          }
          if (seen[r]) continue;
          seen[r] = 1;
          if (groups.first(r) > groups.last(b)) continue;
          stack.push_back(r);
        }
      return false;
    };
    expand(a, true);
    while (!stack.empty()) {
      int r = stack.back();
      stack.pop_back();
      if (expand(r, false)) return true;
    }
    return false;
  };

  for (int v = 0; v < n; ++v) {
    if (!plan.support[v].supported) continue;
    for (const auto& in : g.node(v).input()) {
      auto it = producer.find(in);
      if (it == producer.end() || !plan.support[it->second].supported) continue;
      int a = groups.find(it->second), b = groups.find(v);
      if (a == b || other_path(a, b)) continue;
      groups.merge_into(a, b);
    }
  }
  std::vector<char> done(n, 0);
  for (int v = 0; v < n; ++v) {
    if (!plan.support[v].supported) continue;
    int r = groups.find(v);
    if (done[r]) continue;
    done[r] = 1;
    std::vector<int> m = groups.members(r);
    std::sort(m.begin(), m.end());
    plan.groups.push_back(std::move(m));
  }
  return plan;
}

std::vector<Partition> MakePartitions(const GraphInfo& info, const PartitionPlan& plan,
                                      const std::string& prefix) {
  const onnx::GraphProto& g = *info.graph;
  std::set<std::string> graph_outputs;
  for (const auto& o : g.output()) graph_outputs.insert(o.name());
  std::vector<int> group_of(g.node_size(), -1);
  for (size_t k = 0; k < plan.groups.size(); ++k)
    for (int v : plan.groups[k]) group_of[v] = static_cast<int>(k);
  // value -> groups (or -1 for CPU nodes) that consume it
  std::map<std::string, std::set<int>> used_by;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& in : NodeReads(g.node(i))) used_by[in].insert(group_of[i]);

  std::vector<Partition> out;
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    Partition p;
    p.name = prefix + "_" + std::to_string(k);
    std::set<std::string> produced_inside, listed;
    for (int v : plan.groups[k]) {
      const onnx::NodeProto& node = g.node(v);
      p.nodes.push_back(&node);
      for (const auto& in : node.input()) {
        if (in.empty() || produced_inside.count(in) || info.constant(in)) continue;
        if (listed.insert(in).second) p.inputs.push_back(in);
      }
      for (const auto& o : node.output()) produced_inside.insert(o);
    }
    for (int v : plan.groups[k])
      for (const auto& o : g.node(v).output()) {
        if (o.empty()) continue;
        auto it = used_by.find(o);
        bool outside = graph_outputs.count(o) > 0;
        if (it != used_by.end())
          for (int user : it->second)
            if (user != static_cast<int>(k)) outside = true;
        if (outside) p.outputs.push_back(o);
      }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace host
}  // namespace epctx
