/* SPDX-License-Identifier: Apache-2.0 */
// The third of a session's three parts (session.h): the execution plan.
// Built at create from the loaded model: the plan of the main graph and of
// every subgraph (plan.h: value tables, constants, CPU kernels, captures of
// outer values), the public input and output names, the step order once the
// context binder has bound the EPContext steps, the static memory plan
// (memory_plan.h) and the intra-op thread pool. Run executes it: each Run
// takes a RunMemory (its arena, value slots and scratch) from the plan's
// pool, creating one only when every pooled one is busy, so concurrent Runs
// share only read-only data and a steady stream of Runs makes no allocator
// call.
#ifndef EPCTX_SESSION_EXECUTION_PLAN_H
#define EPCTX_SESSION_EXECUTION_PLAN_H

#include <atomic>

#include <epctx/hal.h>
#include <epctx/pal.h>

#include "core/status.h"
#include "core/thread_pool.h"
#include "kernels/kernel.h"
#include "onnx/model.h"
#include "session/context_binder.h"
#include "session/loaded_model.h"
#include "session/memory_plan.h"
#include "session/options.h"
#include "session/plan.h"
#include "session/run_control.h"

namespace epctx {

struct RunMemory;  // run_memory.h

class ExecutionPlan {
 public:
  explicit ExecutionPlan(LoadedModel& model) : m_(model), prepared_(model.alloc(), 64 * 1024) {}
  // Stops the threads, frees every run's memory and unprepares the bound
  // driver graphs (before the binder releases their contexts).
  ~ExecutionPlan();
  ExecutionPlan(const ExecutionPlan&) = delete;
  ExecutionPlan& operator=(const ExecutionPlan&) = delete;

  // The plans of the main graph and its subgraphs, and the public names.
  // With `prepack` false (session.disable_prepacking) no CPU kernel is
  // prepared: Runs pack constant weights as they did before prepare.
  Status Build(bool prepack = true);
  // The plan whose EPContext steps the binder binds.
  GraphPlan* main() { return &main_; }
  // After binding: the step order and the memory plan.
  Status Order(const BindResult& bound);
  // The intra-op pool (session.intra_op_num_threads), once loading is done.
  void StartThreads(const Options& options);

  struct RunRequest {
    const char* const* input_names;
    const TensorRef* inputs;
    size_t num_inputs;
    const char* const* output_names;  // nullptr: every graph output
    size_t num_outputs;
    // Called once per requested output with the value (valid for the call);
    // the callee copies it out.
    Status (*emit)(void* user, size_t index, const TensorRef& value);
    void* user;
    // Optional, per requested output: a caller buffer the output is written
    // into in place (its dtype and dims must be those produced; nullptr
    // entries, or a null array, leave the output to the run).
    const TensorRef* const* bound_outputs = nullptr;
    // Optional: the caller's arena for the planned intermediates, at least
    // arena_bytes() long and aligned to kArenaAlignment.
    void* arena = nullptr;
    uint64_t arena_size = 0;
    // Optional: the caller's terminate flag and deadline (run_control.h).
    const RunOptions* run_options = nullptr;
    // Instead of `inputs` (nullptr) and `bound_outputs`: the caller's
    // objects (the C API's tensors) that each hold a TensorRef ref_offset
    // bytes in, read in place so no TensorRef array is built per run. A
    // null bound object leaves that output to the run.
    const void* const* input_objects = nullptr;
    const void* const* bound_output_objects = nullptr;
    size_t ref_offset = 0;
  };
  Status Run(const RunRequest& request) const;

  // Bytes of the planned run arena now (the first run may add values whose
  // shapes were unknown at create); 0 when nothing is planned.
  uint64_t arena_bytes() const;
  // Values of the main graph the current plan places in the arena.
  uint32_t planned_values() const;
  // EPContext steps of every graph (control-flow bodies too); CPU steps of
  // the main graph (an If or Loop is one).
  uint32_t driver_steps() const { return all_driver_steps_; }
  uint32_t cpu_steps() const { return main_.num_steps - driver_steps_; }
  // Bytes the CPU kernels' prepare functions keep for the session (packed
  // weights; the weights themselves stay views of the model).
  uint64_t prepared_bytes() const { return prepared_bytes_; }
  // Threads a Run may use, the caller's included (session.intra_op_num_threads).
  uint32_t intra_op_threads() const { return intra_pool_ ? intra_pool_->threads() : 1; }

  // Graph inputs that are not backed by an initializer, and graph outputs,
  // with NUL-terminated names valid while the session lives.
  uint32_t num_public_inputs() const { return num_public_inputs_; }
  uint32_t public_input_index(uint32_t i) const { return public_inputs_[i]; }
  const char* input_name(uint32_t k) const { return input_names_[k]; }
  const char* output_name(uint32_t i) const { return output_names_[i]; }

  // Graph input or output `name` as an EPContext node's own I/O on a driver
  // with device-visible I/O buffers (hal.h alloc_io): the first such step of
  // the main graph that reads it (input) or writes it (output), with the
  // driver's descriptor of that tensor. False when none does.
  bool DeviceIo(const char* name, const DriverEntry** driver, epctx_hal_graph** graph,
                const epctx_hal_tensor_desc** desc) const;

 private:
  // run_memory.cc: the run memory pool and the plan the first run completes.
  RunMemory* TakeRunMemory(const MemoryPlan* plan, bool caller_arena) const;
  void ReturnRunMemory(RunMemory* m) const;
  void LearnPlan(const uint64_t* seen) const;
  Status BuildPlan();  // at create, from the declared types
  void FreeRunMemory();

  // plan.cc: the plan of g (a subgraph of parent's graph at depth > 0);
  // `label` names it in messages and lives as long as the session.
  Status PlanGraph(const onnx::GraphView& g, GraphPlan* parent, uint32_t depth, const char* label,
                   GraphPlan* p);
  Status BuildValues(GraphPlan* p);
  Status LoadConstants(GraphPlan* p);
  Status BuildSteps(GraphPlan* p, uint32_t depth);
  // Runs the prepare function of s's kernel with its constant inputs.
  Status PrepareStep(const GraphPlan* p, PrepareFn prepare, Step* s);
  static void* PreparedAlloc(void* user, uint64_t bytes, uint32_t alignment);
  // The plans of the GRAPH attributes of s's node and s's implicit inputs;
  // `marked` (one byte per value of p, all zero) is left all zero.
  Status PlanSubgraphs(GraphPlan* p, uint32_t depth, uint8_t* marked, Step* s);
  // The id of `name` in p, or in an enclosing plan (added to p and to every
  // plan between as a capture); UINT32_MAX when no scope defines it.
  Status Resolve(GraphPlan* p, StrView name, uint32_t* id);
  Status OrderSteps(GraphPlan* p);
  // The public inputs and the NUL-terminated input and output names.
  Status BuildNames();

  LoadedModel& m_;
  // The kernels' prepared states, freed with the plan.
  Arena prepared_;
  uint64_t prepared_bytes_ = 0;
  bool prepack_ = true;
  GraphPlan main_;                      // the main graph; subgraph plans hang off its steps
  uint32_t driver_steps_ = 0;           // of the main graph
  uint32_t all_driver_steps_ = 0;       // of every graph
  bool threaded_driver_steps_ = false;  // a bound driver has execute_parallel

  uint32_t* public_inputs_ = nullptr;
  uint32_t num_public_inputs_ = 0;
  const char** input_names_ = nullptr;
  const char** output_names_ = nullptr;

  MemoryPlan* created_plan_ = nullptr;          // from the declared types
  mutable MemoryPlan* learned_plan_ = nullptr;  // after the first run, if it added values
  mutable std::atomic<const MemoryPlan*> plan_{nullptr};
  // 32-bit, not bool: riscv64 has no byte atomics (they would need libatomic).
  mutable std::atomic<uint32_t> learning_{0};
  // Shared by concurrent Runs (core/thread_pool.h); nullptr: one thread.
  ThreadPool* intra_pool_ = nullptr;
  epctx_pal_mutex* pool_mutex_ = nullptr;
  mutable RunMemory* pool_ = nullptr;  // idle run memories
  mutable RunMemory* all_ = nullptr;   // every run memory, for the destructor
};

}  // namespace epctx

#endif
