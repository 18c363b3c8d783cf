/* SPDX-License-Identifier: Apache-2.0 */
// The second of a session's three parts (session.h): the context binder.
// For every EPContext node of the plan (main graph and subgraphs) it picks
// the driver by `source`, checks compatibility from names and versions
// alone, finds the context bytes (embedded in the mapped model, or a file
// beneath its folder, perhaps shared with other sessions through a
// ContextGroup), verifies a signed package's container before the parser
// and the driver read it, hands the views to the driver, and binds the
// node's step to a graph of a loaded context (driver, graph, graph info,
// prepare). It owns the loaded contexts; the plan's steps only point into
// them, so the plan is torn down first.
#ifndef EPCTX_SESSION_CONTEXT_BINDER_H
#define EPCTX_SESSION_CONTEXT_BINDER_H

#include <epctx/hal.h>
#include <epctx/pal.h>

#include "container/container.h"
#include "core/status.h"
#include "onnx/epcontext.h"
#include "session/bound_graphs.h"
#include "session/env.h"
#include "session/loaded_model.h"
#include "session/options.h"
#include "session/plan.h"

namespace epctx {

class ContextGroup;    // session/workspace.h
struct SharedContext;  // session/workspace.h

struct LoadedContext {
  const onnx::NodeView* node = nullptr;  // the primary EPContext node
  const DriverEntry* driver = nullptr;
  epctx_hal_context* ctx = nullptr;
  epctx_pal_region region{};  // mapped context file (embed_mode=0)
  void* aligned_copy = nullptr;
  // An encrypted context file's plaintext lives in aligned_copy; these
  // bytes are wiped before it is freed.
  size_t wipe_size = 0;
  // Set when aligned_copy came from the driver's alloc_context_memory (hal.h,
  // ABI 2.3): it goes back through free_context_memory with this host, and
  // the driver wipes it. Null: the env's allocator, and the runtime wipes.
  const epctx_hal_host* copy_host = nullptr;
  bool sealed = false;  // region holds the ciphertext the manifest lists
  bool is_container = false;
  ContainerView container;
  // Set when the context came from a ContextGroup: the fields above are then
  // views of the shared copy, which the session does not own.
  SharedContext* shared = nullptr;
};

// What binding found, for the plan: driver steps of the main graph and of
// every graph (control-flow bodies too), and whether any bound driver splits
// its work across threads.
struct BindResult {
  uint32_t driver_steps = 0;
  uint32_t all_driver_steps = 0;
  bool threaded = false;
};

class ContextBinder {
 public:
  explicit ContextBinder(LoadedModel& model) : m_(model) {}
  ~ContextBinder();  // releases the contexts (the plan unprepared its graphs)
  ContextBinder(const ContextBinder&) = delete;
  ContextBinder& operator=(const ContextBinder&) = delete;

  // The session options binding reads: the shared workspace
  // (ep.share_ep_contexts or a group), epctx.advise, and
  // session.fail_on_suboptimal_compiled_model.
  Status Configure(const Options& options);
  // Binds every EPContext step of `main` and of the plans beneath it.
  Status Bind(GraphPlan* main, BindResult* out);
  // ep.stop_share_ep_contexts: later sessions of the group load their own.
  void StopSharing();
  uint32_t num_contexts() const { return num_contexts_; }

 private:
  Status LoadOneContext(const onnx::EpContextNode& ep, LoadedContext* out);
  // Steps 3-4 of LoadOneContext: the bytes, the container, the driver's
  // context; arrays that must live as long as the context go to `arena`.
  // `shared`: loading into a ContextGroup, whose later sessions may bind
  // any graph (an encrypted context is then decrypted whole).
  Status LoadContextBytes(const onnx::EpContextNode& ep, const DriverEntry* drv, Arena& arena,
                          bool shared, LoadedContext* out);
  // An encrypted context file (schema/sealed_format.h) in *blob: checks the
  // ciphertext against a signed manifest, decrypts the container's header,
  // metadata, weights and the payloads this session binds (all of them
  // when shared) into private memory held by out, and points *blob there.
  Status OpenSealed(const onnx::EpContextNode& ep, bool shared, Arena& arena, LoadedContext* out,
                    Bytes* blob);
  // The memory an encrypted context of `size` plaintext bytes is decrypted
  // into, set as out->aligned_copy (at least 1 byte, aligned to 64 and the
  // driver's payload_alignment): the driver's alloc_context_memory when it
  // has one, the env's allocator otherwise. OUT_OF_MEMORY names `what` (and
  // the driver when the hook refused).
  Status AllocPlaintext(const DriverEntry& drv, uint64_t size, const char* what, LoadedContext* out,
                        uint8_t** plain);
  // The context of `ep` from group_, loading it there when missing.
  Status AcquireShared(const onnx::EpContextNode& ep, const DriverEntry* drv, LoadedContext* out);
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

  LoadedModel& m_;
  bool advise_willneed_ = false;
  bool fail_on_suboptimal_ = false;  // session.fail_on_suboptimal_compiled_model=1
  LoadedContext* contexts_ = nullptr;
  uint32_t num_contexts_ = 0;
  // Graph names of the main_context=0 EPContext nodes: with a primary's own
  // name, the graphs of its container this session binds (bound_graphs.h).
  StrView* secondary_names_ = nullptr;
  uint32_t num_secondary_names_ = 0;
  ContextGroup* group_ = nullptr;  // one reference held while the session lives
};

}  // namespace epctx

#endif
