/* SPDX-License-Identifier: Apache-2.0 */
// Constant folding for epctx-compile (stage 2, step 4).
//
// A node folds when every input is a constant (an initializer that is not
// also a graph input, or an earlier folded output) and it has no subgraph.
// Shape and Size nodes whose input has a fully static shape fold directly,
// whatever produces that input; every other node is evaluated by the epctx
// runtime itself: a one-node model with the constant inputs as initializers
// is serialised and run through the public C API, so folding computes
// exactly what the device would. If the runtime cannot run the node
// (missing kernel, error) the node stays and a note says why.
//
// One pass walks the nodes in order. A node whose output types are not yet
// static is first inferred on its own (node_infer.h) with what the pass has
// folded so far, so a Shape -> Gather -> Concat -> Reshape -> Shape chain
// folds in a single pass instead of one whole-graph inference per link.
// Specialize (specialize.h) repeats pass + whole-graph inference until a
// pass folds nothing.
//
// Folded outputs become initializers and the node is removed; value_info is
// left alone (Specialize re-infers it after a fold).
//
// Model size: a fold stores its outputs in the model. An output above
// FoldLimits::max_output_bytes never folds; one above free_output_bytes
// folds only when it is at most max_growth times the bytes of the node's
// constant inputs (a Transpose of a weight folds; a ConstantOfShape or
// Expand that makes a large tensor out of a shape vector stays a node, and
// so does everything it feeds). Shape computations do not suffer from a
// kept node: its output shape is still static, so a Shape of it folds.
#ifndef EPCTX_HOST_FOLD_H
#define EPCTX_HOST_FOLD_H

#include <cstddef>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

struct FoldLimits {
  size_t max_output_bytes = 16u << 20;  // a node's outputs, together
  size_t free_output_bytes = 1u << 20;  // folds whatever its inputs
  size_t max_growth = 2;                // above free_output_bytes: outputs <= growth x inputs
};

struct FoldResult {
  size_t folded = 0;
  size_t skipped = 0;              // all-constant nodes kept (runtime error, size limits)
  std::vector<std::string> notes;  // one per kept node: "fold: node '..' (Op) kept: why"
};

// One folding pass over model.graph (see above). Needs value types from a
// previous shape inference.
FoldResult FoldConstants(onnx::ModelProto& model, const FoldLimits& limits);

// The same pass over `graph`, the main graph or a body of `model`, which
// `scope` describes (BuildGraphInfo / BuildBodyInfo: its types and the
// constants it may read, outer ones included). Folded outputs become
// initializers of `graph`.
FoldResult FoldGraph(onnx::ModelProto& model, onnx::GraphProto& graph, const GraphInfo& scope,
                     const FoldLimits& limits);

// Removes initializers that no node reads (subgraph reads included) and that
// are not graph inputs or outputs; returns how many.
size_t DropUnusedInitializers(onnx::GraphProto& graph);

}  // namespace host
}  // namespace epctx

#endif
