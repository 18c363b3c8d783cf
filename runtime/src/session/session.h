// A session: one loaded model, ready to Run from many threads.
//
// Create maps the model (or borrows the caller's buffer), parses it in place,
// builds the value table, binds every EPContext node to a driver graph and
// every other node to a CPU kernel, and orders the steps topologically.
// Nothing is compiled here: a node that is neither EPContext nor supported
// by a CPU kernel is MODEL_REQUIRES_COMPILATION.
//
// Ownership: the session owns its metadata arena, the model mapping, the
// mappings of context binaries and external-data files, and the driver
// contexts; weights and payloads are views into those mappings, valid until
// the session is destroyed. Run keeps all per-run state on its own stack and
// allocations, so concurrent Runs share only read-only data.
#ifndef EPCTX_SESSION_SESSION_H
#define EPCTX_SESSION_SESSION_H

#include <epctx/hal.h>
#include <epctx/pal.h>

#include "container/container.h"
#include "core/memory.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "onnx/epcontext.h"
#include "onnx/model.h"
#include "session/env.h"
#include "session/bound_graphs.h"
#include "session/options.h"
#include "trust/verifier.h"

namespace epctx {

class ContextGroup;    // session/workspace.h
struct SharedContext;  // session/workspace.h

struct Value {
  StrView name;
  uint32_t consumers = 0;      // node inputs reading it
  bool graph_output = false;
  int32_t constant = -1;       // index into Session::constants_, or -1
  int32_t graph_input = -1;    // index into the graph's inputs, or -1
};

struct Step {
  const onnx::NodeView* node = nullptr;
  uint32_t* inputs = nullptr;   // value ids; UINT32_MAX for an omitted input
  uint32_t num_inputs = 0;
  uint32_t* outputs = nullptr;  // value ids; UINT32_MAX for an omitted output
  uint32_t num_outputs = 0;
  // CPU step
  KernelFn kernel = nullptr;
  int64_t opset = 0;
  // Driver step (EPContext node)
  const DriverEntry* driver = nullptr;
  epctx_hal_graph* graph = nullptr;
  epctx_hal_graph_info graph_info{};
};

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
  };
  Status Run(const RunRequest& request) const;

  const onnx::GraphView& graph() const { return model_.graph; }
  uint32_t driver_steps() const { return driver_steps_; }
  uint32_t cpu_steps() const { return num_steps_ - driver_steps_; }
  Env* env() const { return env_; }

  // Graph inputs that are not backed by an initializer, and graph outputs,
  // with NUL-terminated names valid while the session lives.
  uint32_t num_public_inputs() const { return num_public_inputs_; }
  const onnx::ValueInfoView& public_input(uint32_t i) const {
    return model_.graph.inputs[public_inputs_[i]];
  }
  const char* public_input_name(uint32_t i) const { return input_names_[public_inputs_[i]]; }
  const char* output_name(uint32_t i) const { return output_names_[i]; }

 private:
  Status Load(const char* path, const void* buffer, size_t size, const Options& options);
  Status BuildValues();
  Status LoadConstants(const Options& options);
  Status BuildSteps();
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
  Status OrderSteps();
  // Maps `rel` beneath folder `base` (nullptr: unknown, an error naming
  // ep.context_file_path). `what` names the file's role in messages.
  // INVALID_GRAPH when a BOOL initializer holds a byte other than 0/1.
  Status CheckBool(const TensorRef& r, StrView name) const;
  Status MapBeneath(const char* base, const char* rel, size_t rel_len, const char* what,
                    epctx_pal_region* out);
  uint32_t Find(StrView name) const;
  Status AddValue(StrView name, uint32_t* id);

  Env* env_;
  Arena meta_;
  int load_mode_ = EPCTX_PAL_LOAD_MMAP;
  bool advise_willneed_ = false;
  epctx_pal_region model_region_{};
  Bytes model_bytes_;
  const char* label_ = "";
  const char* base_dir_ = nullptr;   // folder for relative files; nullptr: none known
  bool fail_on_suboptimal_ = false;  // session.fail_on_suboptimal_compiled_model=1
  onnx::ModelView model_;
  trust::PackageVerifier verifier_;  // signed packages: checks bytes before use

  Value* values_ = nullptr;
  uint32_t num_values_ = 0;
  uint32_t* table_ = nullptr;  // open-addressing hash: value id + 1, 0 = empty
  uint32_t table_mask_ = 0;

  TensorRef* constants_ = nullptr;
  uint32_t num_constants_ = 0;
  epctx_pal_region* data_regions_ = nullptr;  // external-data files
  uint32_t num_data_regions_ = 0;

  Step* steps_ = nullptr;
  uint32_t num_steps_ = 0;
  uint32_t driver_steps_ = 0;

  LoadedContext* contexts_ = nullptr;
  uint32_t num_contexts_ = 0;
  // Graph names of the main_context=0 EPContext nodes: with a primary's own
  // name, the graphs of its container this session binds (bound_graphs.h).
  StrView* secondary_names_ = nullptr;
  uint32_t num_secondary_names_ = 0;
  ContextGroup* group_ = nullptr;  // one reference held while the session lives

  uint32_t* input_ids_ = nullptr;   // per graph input (UINT32_MAX: initializer-backed)
  uint32_t* output_ids_ = nullptr;  // per graph output
  uint32_t* public_inputs_ = nullptr;
  uint32_t num_public_inputs_ = 0;
  const char** input_names_ = nullptr;
  const char** output_names_ = nullptr;
};

}  // namespace epctx

#endif
