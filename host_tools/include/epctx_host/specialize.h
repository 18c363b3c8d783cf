/* SPDX-License-Identifier: Apache-2.0 */
// Stage 2 of epctx-compile: make the graph as static as possible before it
// is partitioned.
//
//   1. --input-shape fixes the dimensions of graph inputs;
//   2. Constant nodes become initializers;
//   3. ONNX shape inference fills in the types of intermediate values;
//   4. constant folding (fold.h) replaces nodes whose inputs are all
//      constants, and Shape/Size nodes of statically shaped values, by
//      initializers holding their outputs;
//   5. shape inference runs again, so e.g. a Reshape whose shape input was
//      just folded gets a static output shape; 4 and 5 repeat until a pass
//      folds nothing (at most kMaxFoldRounds times);
//   6. an If whose condition is now constant (folded, or a --input-value)
//      is replaced by its taken branch (known_inputs.h), and 2-5 run again
//      over the inlined nodes, until no such If is left;
//   7. the bodies of the If, Loop and Scan nodes left get 2, 4-6 too, outer
//      bodies first: shape inference types their values from the fixed
//      outer shapes, so their Shape chains and the Ifs on them fold, and a
//      body becomes as static as the main graph (SpecializeBodies).
// The model is changed in place; BuildGraphInfo then describes it for the
// partitioner and the backend.
#ifndef EPCTX_HOST_SPECIALIZE_H
#define EPCTX_HOST_SPECIALIZE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/fold.h"
#include "epctx_host/known_inputs.h"

namespace epctx {
namespace host {

struct InputShape {
  std::string name;
  std::vector<int64_t> dims;
};

// Parses "name:1,3,224,224". Throws std::invalid_argument (a usage error).
InputShape ParseInputShape(const std::string& text);

// Whole-graph inference rounds of step 4-5. Each pass folds whole chains
// (fold.h), so a round more is needed only where whole-graph inference
// knows something one-node inference does not; swin_t needs 3.
constexpr int kMaxFoldRounds = 16;

struct SpecializeOptions {
  std::vector<InputShape> input_shapes;
  std::vector<InputValue> input_values;  // known_inputs.h
  bool fold = true;
  FoldLimits fold_limits;  // fold.h: when a fold would bloat the model
};

struct SpecializeStats {
  size_t constants_lifted = 0;
  size_t folded = 0;
  size_t fold_skipped = 0;  // after the last round
  size_t fold_rounds = 0;
  size_t ifs_inlined = 0;
  size_t bodies = 0;  // subgraphs specialised in step 7
};

// `file` names the model in ToolError messages.
SpecializeStats Specialize(onnx::ModelProto& model, const SpecializeOptions& options,
                           const std::string& file, const Progress& progress);

// Sets the dims of the named graph inputs. Unknown names and dims that
// contradict a fixed dimension throw ToolError.
void ApplyInputShapes(onnx::GraphProto& graph, const std::vector<InputShape>& shapes,
                      const std::string& file);

// Turns Constant nodes whose value is a tensor, float(s) or int(s) into
// initializers; returns how many.
size_t LiftConstants(onnx::GraphProto& graph);

// Runs onnx shape inference (non-strict) into graph.value_info.
void InferShapes(onnx::ModelProto& model, const std::string& file);

// Step 7 alone: specialises the bodies of `graph`'s control-flow nodes
// (nested ones too) whose enclosing scope `scope` describes; adds to *stats.
void SpecializeBodies(onnx::ModelProto& model, onnx::GraphProto& graph, const GraphInfo& scope,
                      const SpecializeOptions& options, const std::string& file,
                      SpecializeStats* stats);

// Describes `model` for partitioning and compiling. Pointers in the result
// point into model.graph(): valid while the model is not modified.
GraphInfo BuildGraphInfo(const onnx::ModelProto& model);

// Describes a body (subgraph) of a graph `outer` describes: its own names
// shadow the enclosing scopes', outer values it reads keep their types and
// outer initializers stay constants. Pointers as in `outer` and into `body`.
GraphInfo BuildBodyInfo(const onnx::GraphProto& body, const GraphInfo& outer);

// True for the ONNX operator domain ("" or "ai.onnx").
bool IsDefaultDomain(const std::string& domain);

// Static type of a ValueInfoProto / TensorProto in ValueType form.
ValueType TypeOf(const onnx::TypeProto& type);
ValueType TypeOf(const onnx::TensorProto& tensor);

// The `count` values of a float32 constant held in the model (not external
// data): false when t is null, of another type or count.
bool FloatValues(const onnx::TensorProto* t, size_t count, std::vector<float>* out);
// The same for an INT8 / UINT8 / INT32 constant, widened to int32.
bool IntValues(const onnx::TensorProto* t, size_t count, std::vector<int32_t>* out);

// Adds opset import com.microsoft 1 unless the model has one (for its
// EPContext and contrib nodes).
void ImportMsOpset(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
