/* SPDX-License-Identifier: Apache-2.0 */
// Stage 3 of epctx-compile: split the graph into partitions a backend
// compiles and nodes left to the CPU. partition.cc explains the algorithm.
#ifndef EPCTX_HOST_PARTITION_H
#define EPCTX_HOST_PARTITION_H

#include <string>
#include <vector>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

struct PartitionPlan {
  // Per node of info.graph (by index): the backend's answer. All
  // unsupported when there is no backend.
  std::vector<Support> support;
  // Groups of node indices, each sorted ascending; groups ordered by their
  // first node.
  std::vector<std::vector<int>> groups;
};

// backend may be nullptr (--ep none): no groups.
PartitionPlan PlanPartitions(const GraphInfo& info, const Backend* backend);

// Turns groups into Partitions named "<prefix>_<i>" with boundary inputs
// (non-constant values used inside and produced outside, in first-use order)
// and outputs (values produced inside and used outside or graph outputs, in
// production order). Node pointers point into info.graph.
std::vector<Partition> MakePartitions(const GraphInfo& info, const PartitionPlan& plan,
                                      const std::string& prefix);

}  // namespace host
}  // namespace epctx

#endif
