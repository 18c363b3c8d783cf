/* SPDX-License-Identifier: Apache-2.0 */
// What the CPU fusions (fuse_conv_act.cc, fuse_swish.cc) share: the
// readers of every value, the removal of the nodes a fusion absorbed, and
// the com.microsoft opset import their contrib ops need.
#ifndef EPCTX_HOST_FUSION_H
#define EPCTX_HOST_FUSION_H

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// The nodes reading each value of g (by index), or false when a node has
// a subgraph body: a body may read any outer name, so such graphs are left
// whole.
bool ReadersOf(const onnx::GraphProto& g, std::map<std::string, std::vector<int>>* readers);

// Removes the nodes marked in `drop` (the rest keep their order) and the
// value_info of values no node, input or initializer gives any more.
void DropNodes(onnx::GraphProto& g, const std::vector<bool>& drop);

// The model's ai.onnx opset (0 when it imports none) and its main graph's
// output names.
int64_t DefaultOpset(const onnx::ModelProto& m);
std::set<std::string> GraphOutputs(const onnx::GraphProto& g);

// What a fusion pass reads of a model before it looks for its pattern:
// the ai.onnx opset, the graph's outputs and every value's readers, and the
// nodes it has absorbed so far (`drop`). `whole` is false for graphs with
// subgraph bodies, which the passes leave whole.
struct FusionScan {
  explicit FusionScan(const onnx::ModelProto& m);
  int64_t opset;
  std::set<std::string> outputs;
  std::map<std::string, std::vector<int>> readers;
  std::vector<bool> drop;
  bool whole;
  // The only reader of value `v`, or -1 (none, several, or a graph output).
  int OnlyReader(const std::string& v) const;
};

// Adds opset import com.microsoft 1 unless the model has one.
void ImportMicrosoftOpset(onnx::ModelProto& m);

}  // namespace host
}  // namespace epctx

#endif
