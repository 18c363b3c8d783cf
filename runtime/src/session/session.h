/* SPDX-License-Identifier: Apache-2.0 */
// A session: one loaded model, ready to Run from many threads.
//
// Create maps the model (or borrows the caller's buffer), parses it in place,
// plans the main graph and every subgraph (plan.h: value tables, CPU kernels,
// captures of outer values), binds every EPContext node to a driver graph,
// and orders the steps topologically.
// Nothing is compiled here: a node that is neither EPContext nor supported
// by a CPU kernel is MODEL_REQUIRES_COMPILATION.
//
// Ownership: the session owns its metadata arena, the model mapping, the
// mappings of context binaries and external-data files, and the driver
// contexts; weights and payloads are views into those mappings, valid until
// the session is destroyed. Each Run takes a RunMemory (its arena, value
// slots and scratch) from the session's pool, creating one only when every
// pooled one is busy, so concurrent Runs share only read-only data and a
// steady stream of Runs makes no allocator call (memory_plan.h).
#ifndef EPCTX_SESSION_SESSION_H
#define EPCTX_SESSION_SESSION_H

#include <atomic>

#include <epctx/hal.h>
#include <epctx/pal.h>

#include "container/container.h"
#include "core/budget.h"
#include "core/memory.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "kernels/kernel.h"
#include "onnx/epcontext.h"
#include "onnx/model.h"
#include "session/env.h"
#include "session/bound_graphs.h"
#include "session/memory_plan.h"
#include "session/options.h"
#include "session/plan.h"
#include "session/run_control.h"
#include "trust/verifier.h"

namespace epctx {

class ContextGroup;    // session/workspace.h
struct RunMemory;      // run.cc
struct SharedContext;  // session/workspace.h

struct LoadedContext {
  const onnx::NodeView* node = nullptr;  // the primary EPContext node
  const DriverEntry* driver = nullptr;
  epctx_hal_context* ctx = nullptr;
  epctx_pal_region region{};  // mapped context file (embed_mode=0)
  void* aligned_copy = nullptr;
  bool is_container = false;
  ContainerView container;
  // Set when the context came from a ContextGroup: the fields above are then
  // views of the shared copy, which the session does not own.
  SharedContext* shared = nullptr;
};

// The folder relative files (context binaries, external data) resolve
// against: that of ep.context_file_path when set (also for a model loaded
// from a path, as QNN does), else the model's; nullptr for a buffer without
// ep.context_file_path. An empty ep.context_file_path counts as unset.
// Copied into `arena`.
const char* ContextBaseDir(const Options& options, const char* model_path, Arena& arena);

class Session {
 public:
  // Exactly one of path / (buffer, size) is given. On failure *out is null
  // and nothing is leaked.
  static Status Create(Env* env, const char* path, const void* buffer, size_t size,
                       const Options& options, Session** out);
  explicit Session(Env* env);  // use Create
  ~Session();

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

  const onnx::GraphView& graph() const { return model_.graph; }
  const onnx::ModelView& model() const { return model_; }
  // Bytes of the planned run arena now (the first run may add values whose
  // shapes were unknown at create); 0 when nothing is planned.
  uint64_t arena_bytes() const;
  // Values of the main graph the current plan places in the arena.
  uint32_t planned_values() const;
  uint32_t driver_steps() const { return driver_steps_; }
  uint32_t cpu_steps() const { return main_.num_steps - driver_steps_; }
  Env* env() const { return env_; }
  // Threads a Run may use, the caller's included (session.intra_op_num_threads).
  uint32_t intra_op_threads() const { return intra_pool_ ? intra_pool_->threads() : 1; }

  // Graph inputs that are not backed by an initializer, and graph outputs,
  // with NUL-terminated names valid while the session lives.
  uint32_t num_public_inputs() const { return num_public_inputs_; }
  const onnx::ValueInfoView& public_input(uint32_t i) const {
    return model_.graph.inputs[public_inputs_[i]];
  }
  const char* public_input_name(uint32_t i) const { return input_names_[public_inputs_[i]]; }
  const char* output_name(uint32_t i) const { return output_names_[i]; }

  // Graph input or output `name` as an EPContext node's own I/O on a driver
  // with device-visible I/O buffers (hal.h alloc_io): the first such step of
  // the main graph that reads it (input) or writes it (output), with the
  // driver's descriptor of that tensor. False when none does.
  bool DeviceIo(const char* name, const DriverEntry** driver, epctx_hal_graph** graph,
                const epctx_hal_tensor_desc** desc) const;

 private:
  // run.cc: the run memory pool and the plan the first run completes.
  RunMemory* TakeRunMemory(const MemoryPlan* plan, bool caller_arena) const;
  void ReturnRunMemory(RunMemory* m) const;
  void LearnPlan(const uint64_t* seen) const;
  Status BuildPlan();  // at create, from the declared types
  // The intra-op pool (session.intra_op_num_threads), once loading is done.
  void StartThreads(const Options& options);
  void FreeRunMemory();

  Status Load(const char* path, const void* buffer, size_t size, const Options& options);
  // plan.cc: the plan of g (a subgraph of parent's graph at depth > 0);
  // `label` names it in messages and lives as long as the session.
  Status PlanGraph(const onnx::GraphView& g, GraphPlan* parent, uint32_t depth,
                   const char* label, GraphPlan* p);
  Status BuildValues(GraphPlan* p);
  Status LoadConstants(GraphPlan* p);
  Status BuildSteps(GraphPlan* p, uint32_t depth);
  // The plans of the GRAPH attributes of s's node and s's implicit inputs;
  // `marked` (one byte per value of p, all zero) is left all zero.
  Status PlanSubgraphs(GraphPlan* p, uint32_t depth, uint8_t* marked, Step* s);
  // The id of `name` in p, or in an enclosing plan (added to p and to every
  // plan between as a capture); UINT32_MAX when no scope defines it.
  Status Resolve(GraphPlan* p, StrView name, uint32_t* id);
  Status OrderSteps(GraphPlan* p);
  // The public inputs and the NUL-terminated input and output names.
  Status BuildNames();
  Status LoadContexts();
  Status LoadOneContext(const onnx::EpContextNode& ep, LoadedContext* out);
  // Steps 3-4 of LoadOneContext: the bytes, the container, the driver's
  // context; arrays that must live as long as the context go to `arena`.
  Status LoadContextBytes(const onnx::EpContextNode& ep, const DriverEntry* drv, Arena& arena,
                          LoadedContext* out);
  // The context of `ep` from group_, loading it there when missing.
  Status AcquireShared(const onnx::EpContextNode& ep, const DriverEntry* drv,
                       LoadedContext* out);
  // epctx.advise=willneed: asks the PAL to read in `bytes` (the weights or
  // the payload of a graph this session binds), when they lie in a mapping.
  void AdviseWillNeed(const LoadedContext& lc, Bytes bytes) const;
  // The mapping a context's bytes live in (the group's for a shared one).
  static const epctx_pal_region& RegionOf(const LoadedContext& lc);
  // The graph names this session asks of the context of primary node `ep`.
  GraphNames NamesFor(const onnx::EpContextNode& ep) const;
  // The version rules (compat.h) for ep on drv, with the container header
  // when given; a load failure, or Ok (logging PREFER_RECOMPILATION when
  // log_suboptimal).
  Status CheckVersions(const DriverEntry& drv, const onnx::EpContextNode& ep,
                       const ContainerView* container, bool log_suboptimal);
  // Signed packages, context file `file` of ep: what the container parser
  // reads (header and metadata; a foreign blob whole), before it reads it.
  // *verified: the end of the leading chunks checked.
  Status VerifyContextHead(const onnx::EpContextNode& ep, Bytes file, bool container,
                           uint64_t* verified);
  // ...then every chunk from `verified` on except those wholly inside
  // payloads of graphs this session does not bind.
  Status VerifyContainerFile(const onnx::EpContextNode& ep, const ContainerView& c, Bytes file,
                             uint64_t verified);
  int GetGraph(const LoadedContext& lc, const char* name, epctx_hal_graph** graph,
               epctx_hal_graph_info* info, char* msg, size_t msg_cap);
  // Maps `rel` beneath folder `base` (nullptr: unknown, an error naming
  // ep.context_file_path). `what` names the file's role in messages.
  // INVALID_GRAPH when a BOOL initializer holds a byte other than 0/1.
  Status CheckBool(const TensorRef& r, StrView name) const;
  // The app's stand-in for the file `rel` (memory or a descriptor), or
  // nullptr: look on the file system. Only while creating.
  const Options::ExternalFile* FindExternal(const char* rel, size_t rel_len) const {
    return options_ ? options_->FindExternalFile(rel, rel_len) : nullptr;
  }
  Status MapBeneath(const char* base, const char* rel, size_t rel_len, const char* what,
                    epctx_pal_region* out);

  Env* env_;
  // epctx.max_memory_bytes: the metadata arena and every run's memory are
  // taken through alloc_, the budget's allocator (unlimited by default).
  Budget budget_;
  Allocator alloc_;
  Arena meta_;
  int load_mode_ = EPCTX_PAL_LOAD_MMAP;
  bool advise_willneed_ = false;
  epctx_pal_region model_region_{};
  Bytes model_bytes_;
  const char* label_ = "";
  const Options* options_ = nullptr;  // while Create runs
  const char* base_dir_ = nullptr;   // folder for relative files; nullptr: none known
  bool fail_on_suboptimal_ = false;  // session.fail_on_suboptimal_compiled_model=1
  onnx::ModelView model_;
  trust::PackageVerifier verifier_;  // signed packages: checks bytes before use

  GraphPlan main_;  // the main graph; subgraph plans hang off its steps
  const char* ext_folder_ = nullptr;  // session.model_external_initializers_file_folder_path
  epctx_pal_region* data_regions_ = nullptr;  // external-data files, of every graph
  uint32_t num_data_regions_ = 0;
  uint32_t driver_steps_ = 0;
  bool threaded_driver_steps_ = false;  // a bound driver has execute_parallel

  LoadedContext* contexts_ = nullptr;
  uint32_t num_contexts_ = 0;
  // Graph names of the main_context=0 EPContext nodes: with a primary's own
  // name, the graphs of its container this session binds (bound_graphs.h).
  StrView* secondary_names_ = nullptr;
  uint32_t num_secondary_names_ = 0;
  ContextGroup* group_ = nullptr;  // one reference held while the session lives

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
