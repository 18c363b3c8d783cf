/* SPDX-License-Identifier: Apache-2.0 */
// A session: one loaded model, ready to Run from many threads. Three parts,
// built in this order and torn down in reverse:
// 1. LoadedModel (loaded_model.h): the model mapped (or the caller's buffer
//    borrowed), a signed package's manifest and hash checked before a byte is
//    parsed, parsed in place; owns every mapping and the metadata arena.
// 2. ContextBinder (context_binder.h): every EPContext node bound to a
//    driver graph of a loaded (perhaps shared) context; owns the contexts.
// 3. ExecutionPlan (execution_plan.h): the plans of the main graph and every
//    subgraph (CPU kernels, captures of outer values), the step order, the
//    static memory plan, the thread pool, and Run.
// Nothing is compiled here: a node that is neither EPContext nor supported
// by a CPU kernel is MODEL_REQUIRES_COMPILATION. Weights and payloads are
// views into the model's and the contexts' mappings, valid until the session
// is destroyed.
#ifndef EPCTX_SESSION_SESSION_H
#define EPCTX_SESSION_SESSION_H

#include "core/status.h"
#include "onnx/model.h"
#include "session/context_binder.h"
#include "session/env.h"
#include "session/execution_plan.h"
#include "session/loaded_model.h"
#include "session/options.h"

namespace epctx {

class Session {
 public:
  // Exactly one of path / (buffer, size) is given. On failure *out is null
  // and nothing is leaked.
  static Status Create(Env* env, const char* path, const void* buffer, size_t size,
                       const Options& options, Session** out);
  explicit Session(Env* env) : model_(env), binder_(model_), plan_(model_) {}  // use Create

  using RunRequest = ExecutionPlan::RunRequest;
  Status Run(const RunRequest& request) const { return plan_.Run(request); }

  const onnx::GraphView& graph() const { return model_.view().graph; }
  const onnx::ModelView& model() const { return model_.view(); }
  uint64_t arena_bytes() const { return plan_.arena_bytes(); }
  uint32_t planned_values() const { return plan_.planned_values(); }
  uint32_t driver_steps() const { return plan_.driver_steps(); }
  uint32_t cpu_steps() const { return plan_.cpu_steps(); }
  uint64_t prepared_bytes() const { return plan_.prepared_bytes(); }
  Env* env() const { return model_.env(); }
  uint32_t intra_op_threads() const { return plan_.intra_op_threads(); }

  // Graph inputs that are not backed by an initializer, and graph outputs,
  // with NUL-terminated names valid while the session lives.
  uint32_t num_public_inputs() const { return plan_.num_public_inputs(); }
  const onnx::ValueInfoView& public_input(uint32_t i) const {
    return graph().inputs[plan_.public_input_index(i)];
  }
  const char* public_input_name(uint32_t i) const {
    return plan_.input_name(plan_.public_input_index(i));
  }
  const char* output_name(uint32_t i) const { return plan_.output_name(i); }
  bool DeviceIo(const char* name, const DriverEntry** driver, epctx_hal_graph** graph,
                const epctx_hal_tensor_desc** desc) const {
    return plan_.DeviceIo(name, driver, graph, desc);
  }

 private:
  Status Load(const char* path, const void* buffer, size_t size, const Options& options);

  // Declared in build order: destroyed plan first (threads, run memory,
  // prepared graphs), then the contexts, then the mappings and the arena.
  LoadedModel model_;
  ContextBinder binder_;
  ExecutionPlan plan_;
};

}  // namespace epctx

#endif
