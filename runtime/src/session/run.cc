// SPDX-License-Identifier: Apache-2.0
// ExecutionPlan::Run: executes the ordered steps with per-run state only.
// It resolves the request's names, takes a RunMemory (run_memory.h), runs
// the main graph through RunPlan (executor.h) and learns the memory plan
// from the first run.
#include "session/executor.h"

namespace epctx {

namespace {
// The TensorRef `offset` bytes into a caller's object (nullptr for none).
const TensorRef* ref_in(const void* object, size_t offset) {
  return object ? reinterpret_cast<const TensorRef*>(static_cast<const uint8_t*>(object) + offset)
                : nullptr;
}
}  // namespace

Status ExecutionPlan::Run(const RunRequest& req) const {
  const onnx::GraphView& g = m_.view().graph;
  size_t n_out = req.output_names ? req.num_outputs : 0;
  const bool binds = req.bound_outputs || req.bound_output_objects;
  if (n_out > kMaxRunOutputs || (binds && !req.output_names && g.num_outputs > kMaxRunOutputs))
    return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: more than %u outputs requested", m_.label(),
                         kMaxRunOutputs);
  // The plan the arena fits: the latest, or for a caller's arena sized
  // before the first run completed the plan, the plan at create.
  const MemoryPlan* plan = plan_.load(std::memory_order_acquire);
  uint8_t* arena = static_cast<uint8_t*>(req.arena);
  if (arena) {
    if (reinterpret_cast<uintptr_t>(arena) % kArenaAlignment)
      return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: the run arena must be aligned to %u bytes",
                           m_.label(), (unsigned)kArenaAlignment);
    if (plan && req.arena_size < plan->arena_bytes) plan = created_plan_;
    if (plan && req.arena_size < plan->arena_bytes)
      return Status::Error(
          EPCTX_INVALID_ARGUMENT, "%s: the run arena has %llu bytes, the memory plan needs %llu",
          m_.label(), (unsigned long long)req.arena_size, (unsigned long long)plan->arena_bytes);
  }
  RunMemory* m = TakeRunMemory(plan, arena != nullptr);
  if (!m) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for a run", m_.label());
  const bool learn = learning_.load(std::memory_order_relaxed) == 0;
  if (learn)
    for (uint32_t v = 0; v < main_.num_values; ++v) m->seen[v] = 0;
  const TensorRef** bound = m->bound;
  uint32_t* outs = m->outs;
  Status st = [&]() -> Status {
    for (uint32_t k = 0; k < g.num_inputs; ++k) bound[k] = nullptr;
    for (size_t i = 0; i < req.num_inputs; ++i) {
      const char* name = req.input_names[i];
      uint32_t k = 0;
      while (k < g.num_inputs && !g.inputs[k].name.eq(name)) ++k;
      if (k == g.num_inputs || main_.input_ids[k] == UINT32_MAX)
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: '%s' is not an input of the model",
                             m_.label(), name);
      bound[k] = req.inputs ? &req.inputs[i] : ref_in(req.input_objects[i], req.ref_offset);
    }
    for (size_t i = 0; i < n_out; ++i) {
      uint32_t k = 0;
      while (k < g.num_outputs && !g.outputs[k].name.eq(req.output_names[i])) ++k;
      if (k == g.num_outputs)
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: '%s' is not an output of the model",
                             m_.label(), req.output_names[i]);
      outs[i] = k;
    }
    const TensorRef* const* bound_outs = req.bound_outputs;
    if (req.bound_output_objects) {
      const size_t nb = req.output_names ? n_out : g.num_outputs;
      for (size_t i = 0; i < nb; ++i)
        m->bound_out[i] = ref_in(req.bound_output_objects[i], req.ref_offset);
      bound_outs = m->bound_out;
    }
    const RunControl control = RunControl::From(req.run_options);
    MainRun main{m,
                 plan,
                 arena ? arena : m->arena,
                 bound_outs,
                 learn ? m->seen : nullptr,
                 control.active() ? &control : nullptr,
                 intra_pool_};
    Status rs = RunPlan(m_.alloc(), main_, nullptr, &main, bound, req.output_names ? outs : nullptr,
                        n_out, req.emit, req.user);
    return rs;
  }();
  if (st.code() == EPCTX_OUT_OF_MEMORY && m_.budget().refused())
    st.Prefix("epctx.max_memory_bytes=%llu refused %llu more bytes",
              static_cast<unsigned long long>(m_.budget().limit()),
              static_cast<unsigned long long>(m_.budget().refused()));
  if (learn && st.ok() && learning_.exchange(1, std::memory_order_acq_rel) == 0) {
    bool any = false;
    for (uint32_t v = 0; v < main_.num_values && !any; ++v) any = m->seen[v] != 0;
    if (any) LearnPlan(m->seen);
    // This run's memory fits the new plan before it goes back to the pool.
    const MemoryPlan* now = plan_.load(std::memory_order_acquire);
    if (now != plan && now->arena_bytes > m->arena_cap) {
      m_.alloc().Free(m->arena);
      m->arena = static_cast<uint8_t*>(m_.alloc().Alloc(static_cast<size_t>(now->arena_bytes), 64));
      m->arena_cap = m->arena ? now->arena_bytes : 0;
    }
  }
  ReturnRunMemory(m);
  if (!st.ok())
    m_.env()->Log(EPCTX_LOG_INFO, "run failed: %s: %s", epctx_code_name(st.code()), st.message());
  else if (m_.env()->LogOn(EPCTX_LOG_VERBOSE))
    m_.env()->Log(EPCTX_LOG_VERBOSE, "%s: run: %zu inputs, %zu outputs", m_.label(), req.num_inputs,
                  req.output_names ? req.num_outputs : (size_t)g.num_outputs);
  return st;
}

}  // namespace epctx
