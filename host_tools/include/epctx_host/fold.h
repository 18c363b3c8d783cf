/* SPDX-License-Identifier: Apache-2.0 */
// Constant folding for epctx-compile (stage 2, step 4).
//
// A node folds when every input is a constant (an initializer that is not
// also a graph input, or an earlier folded output) and it has no subgraph.
// Shape nodes with a fully static input fold directly; every other node is
// evaluated by the epctx runtime itself: a one-node model with the constant
// inputs as initializers is serialised and run through the public C API, so
// folding computes exactly what the device would. If the runtime cannot run
// the node (missing kernel, error) the node stays and a note is printed.
// Folded outputs become initializers and the node is removed; value_info is
// left alone (Specialize re-infers it after a fold).
#ifndef EPCTX_HOST_FOLD_H
#define EPCTX_HOST_FOLD_H

#include <cstddef>
#include <string>

#include <onnx/onnx_pb.h>

#include "epctx_host/diagnostics.h"

namespace epctx {
namespace host {

struct FoldResult {
  size_t folded = 0;
  size_t skipped = 0;  // all-constant nodes the runtime could not evaluate
};

// Needs value types from a previous shape inference for the outputs of
// runtime-evaluated nodes.
FoldResult FoldConstants(onnx::ModelProto& model, size_t max_output_bytes,
                         const Progress& progress);

}  // namespace host
}  // namespace epctx

#endif
