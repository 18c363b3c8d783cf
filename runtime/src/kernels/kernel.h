/* SPDX-License-Identifier: Apache-2.0 */
// CPU fallback kernels: the interface between the session and each op.
//
// A kernel is a function run once per node per Run, possibly from many
// threads at once. It reads its inputs and attributes through the
// KernelContext, computes output shapes, asks the context for output
// storage (from the run's arena) or declares an output to be a view of an
// input or attribute tensor (Reshape, Flatten, Constant ...), then computes.
// Kernels never allocate any other way and never abort: bad attributes or
// shapes return INVALID_GRAPH / INVALID_ARGUMENT through ctx.Fail, which
// names the node and op; unsupported types or modes return NOT_IMPLEMENTED.
//
// A kernel may have a prepare function (ops.inc names it beside the kernel,
// see PrepareContext below): run once per node when the session is created,
// it decides what the node's attributes and constant inputs settle (packed
// weights) and leaves a read-only state the kernel finds at every Run
// through ctx.prepared(). A kernel gives the same bits with and without its
// state, and works without one (kernel tests, inputs that are not
// constants), so prepare is an optimisation, never a requirement.
#ifndef EPCTX_KERNELS_KERNEL_H
#define EPCTX_KERNELS_KERNEL_H

#include <cstdint>

#include "core/status.h"
#include "core/thread_pool.h"
#include "core/types.h"
#include "onnx/model.h"

namespace epctx {

// A tensor value during a run. Data is aligned to the element size.
struct TensorRef {
  int32_t dtype = 0;
  uint32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  void* data = nullptr;
  uint64_t bytes = 0;

  uint64_t elements() const {
    uint64_t n = 1;
    for (uint32_t i = 0; i < rank; ++i) n *= static_cast<uint64_t>(dims[i]);
    return n;
  }
};

class KernelContext;
class PrepareContext;
using KernelFn = Status (*)(KernelContext& ctx);
using PrepareFn = Status (*)(PrepareContext& ctx);

// Receives output `index` of a subgraph run; `value` is valid during the
// call only, so the callee copies what it keeps.
using ValueSink = Status (*)(void* user, size_t index, const TensorRef& value);

// Services the session provides to a KernelContext.
struct KernelHost {
  void* user;
  // Allocates output i with that type and shape (bytes from the shape).
  Status (*alloc_output)(void* user, uint32_t index, int32_t dtype, uint32_t rank,
                         const int64_t* dims, TensorRef** out);
  // Makes output i a view of existing data (must outlive the run).
  Status (*view_output)(void* user, uint32_t index, int32_t dtype, uint32_t rank,
                        const int64_t* dims, const void* data);
  // Temporary memory for the kernel, freed at the end of the run.
  void* (*scratch)(void* user, uint64_t bytes, uint32_t alignment);
  // Runs the subgraph of the node's GRAPH attribute `attr` (If, Loop, Scan)
  // with inputs[i] bound to its input i, passing each of its outputs to
  // emit. Values of the enclosing graphs are visible inside. nullptr where
  // subgraphs cannot run (kernel tests without a session).
  Status (*run_subgraph)(void* user, const onnx::AttributeView& attr,
                         const TensorRef* const* inputs, uint32_t num_inputs, ValueSink emit,
                         void* emit_user) = nullptr;
  // The session's intra-op pool, shared with concurrent runs; nullptr: the
  // kernel runs on the caller's thread only.
  ThreadPool* pool = nullptr;
};

class KernelContext {
 public:
  // `prepared`: what the node's prepare function left (nullptr: none).
  KernelContext(const onnx::NodeView& node, int64_t opset, const TensorRef* const* inputs,
                uint32_t num_inputs, const KernelHost& host, const void* prepared = nullptr)
      : node_(node),
        opset_(opset),
        inputs_(inputs),
        num_inputs_(num_inputs),
        host_(host),
        prepared_(prepared) {}

  const onnx::NodeView& node() const { return node_; }
  int64_t opset() const { return opset_; }  // of the node's domain
  // The state the kernel's prepare function left for this node (its own
  // type, read-only, valid while the session lives), or nullptr.
  const void* prepared() const { return prepared_; }

  uint32_t num_inputs() const { return num_inputs_; }
  uint32_t num_outputs() const { return node_.num_outputs; }
  // nullptr when input i is absent (past the end or an empty name).
  const TensorRef* input(uint32_t i) const { return i < num_inputs_ ? inputs_[i] : nullptr; }

  Status AllocOutput(uint32_t i, int32_t dtype, uint32_t rank, const int64_t* dims,
                     TensorRef** out) {
    return host_.alloc_output(host_.user, i, dtype, rank, dims, out);
  }
  Status ViewOutput(uint32_t i, int32_t dtype, uint32_t rank, const int64_t* dims,
                    const void* data) {
    return host_.view_output(host_.user, i, dtype, rank, dims, data);
  }
  void* Scratch(uint64_t bytes, uint32_t alignment = 16) {
    return host_.scratch(host_.user, bytes, alignment);
  }

  // Threads ParallelFor may use (1 without a pool).
  uint32_t threads() const { return host_.pool ? host_.pool->threads() : 1; }
  // Operations (multiply-adds, elements visited) below which a chunk does
  // not pay for waking a thread.
  static constexpr int64_t kMinChunkWork = int64_t{1} << 16;
  // How many chunks to cut `units` independent units of `work_per_unit`
  // operations each into: at most threads(), each at least kMinChunkWork;
  // chunk c then covers ChunkRange(units, chunks, c, ...).
  uint32_t Chunks(int64_t units, int64_t work_per_unit) const {
    if (work_per_unit < 1) work_per_unit = 1;
    const int64_t min_units =
        work_per_unit >= kMinChunkWork ? 1 : (kMinChunkWork + work_per_unit - 1) / work_per_unit;
    return ChunkCount(threads(), units, min_units);
  }
  // Calls f(chunk, worker) for every chunk in [0, chunks), on the pool's
  // threads when there is one; returns when all are done. Chunks must
  // write disjoint outputs so results never depend on the thread count;
  // worker < threads() indexes per-thread scratch.
  // f's body is compiled once, into the trampoline: the serial path calls
  // it too (an inlined serial loop would double every elementwise op).
  template <typename F>
  void ParallelFor(uint32_t chunks, const F& f) const {
    RunChunks(
        chunks, [](void* u, uint32_t c, uint32_t w) { (*static_cast<const F*>(u))(c, w); },
        const_cast<F*>(&f));
  }

  // Calls f(lo, hi) over [0, n) cut into Chunks(n, work_per_unit) even
  // runs of independent units (planes, rows, elements).
  template <typename F>
  void ParallelRange(int64_t n, int64_t work_per_unit, const F& f) const {
    const uint32_t chunks = Chunks(n, work_per_unit);
    ParallelFor(chunks, [&](uint32_t c, uint32_t) {
      int64_t lo, hi;
      ChunkRange(n, chunks, c, 1, &lo, &hi);
      if (lo < hi) f(lo, hi);
    });
  }

  // Attribute helpers: the value, or `def` when the attribute is absent.
  // An attribute present with another type also yields `def`, and is
  // remembered: the session fails the node with AttrStatus() after the
  // kernel returns, so a kernel never needs to check types itself.
  int64_t AttrInt(const char* name, int64_t def) const;
  float AttrFloat(const char* name, float def) const;
  StrView AttrString(const char* name, const char* def) const;
  // INTS attribute: *values/*count set, true when present.
  bool AttrInts(const char* name, const int64_t** values, uint32_t* count) const;
  bool AttrFloats(const char* name, const float** values, uint32_t* count) const;
  const onnx::TensorView* AttrTensor(const char* name) const;
  // GRAPH attribute: the parsed subgraph, nullptr when absent.
  const onnx::GraphView* AttrGraph(const char* name) const;
  // Runs the subgraph of GRAPH attribute `name` (KernelHost::run_subgraph);
  // INVALID_GRAPH when the node has no such attribute.
  Status RunSubgraph(const char* name, const TensorRef* const* inputs, uint32_t num_inputs,
                     ValueSink emit, void* emit_user);
  // INVALID_GRAPH naming the first attribute read with the wrong type
  // (expected vs found), or Ok.
  Status AttrStatus() const;

  // An error naming this node and op: "<Op> node '<name>': <message>".
  Status Fail(int code, const char* fmt, ...) const __attribute__((format(printf, 3, 4)));

 private:
  const onnx::NodeView& node_;
  int64_t opset_;
  const TensorRef* const* inputs_;
  uint32_t num_inputs_;
  const KernelHost& host_;
  const void* prepared_;
  // First attribute looked up with the wrong type (per call, so per thread).
  mutable const onnx::AttributeView* bad_attr_ = nullptr;
  mutable onnx::AttrType bad_expected_ = onnx::AttrType::kUndefined;

  const onnx::AttributeView* Typed(const char* name, onnx::AttrType type) const;
  // On the pool, or serially (worker 0) without one or for one chunk.
  void RunChunks(uint32_t chunks, ThreadPool::ChunkFn fn, void* user) const;
};

// Services the session provides to a PrepareContext.
struct PrepareHost {
  void* user;
  // Memory that lives as long as the session (the session's allocator,
  // counted in its prepared bytes); nullptr when out of memory.
  void* (*alloc)(void* user, uint64_t bytes, uint32_t alignment);
};

// What a prepare function sees of one node, once, at session create: the
// node, its attributes and the inputs that are constant initializers. It
// may allocate memory for the session's lifetime and leave one state the
// kernel reads at every Run (KernelContext::prepared). Inputs that are not
// constants (graph inputs, node outputs) are unknown here: a prepare that
// needs one leaves nothing, and so does one that finds a constant it does
// not understand (a wrong rank, a dtype it has no packing for) -- the
// kernel then runs as without prepare and reports the problem as it
// always did. A failed prepare (out of memory) fails session create with
// a status naming the node.
class PrepareContext {
 public:
  // constants[i]: input i when it is a constant initializer (a view of the
  // model's bytes, valid while the session lives), else nullptr.
  PrepareContext(const onnx::NodeView& node, int64_t opset, const TensorRef* const* constants,
                 uint32_t num_inputs, const PrepareHost& host);

  const onnx::NodeView& node() const { return kernel_.node(); }
  int64_t opset() const { return kernel_.opset(); }
  uint32_t num_inputs() const { return kernel_.num_inputs(); }
  // Input i if it is a constant initializer, else nullptr.
  const TensorRef* constant(uint32_t i) const { return kernel_.input(i); }
  // A KernelContext over the constants (input(i) == constant(i)), for the
  // attribute helpers and the shape checks a kernel shares with its
  // prepare; it has no outputs, no scratch and one thread.
  KernelContext& kernel() { return kernel_; }

  // Session-lifetime memory (64-byte aligned by default); nullptr when out
  // of memory.
  void* Alloc(uint64_t bytes, uint32_t alignment = 64) {
    return host_.alloc(host_.user, bytes, alignment);
  }
  // The state the node's kernel will see; nullptr (the default): none.
  void SetPrepared(const void* state) { prepared_ = state; }
  const void* prepared() const { return prepared_; }

  // An error naming this node and op: "<Op> node '<name>': prepare: ...".
  Status Fail(int code, const char* fmt, ...) const __attribute__((format(printf, 3, 4)));

 private:
  static Status NoOutput(void*, uint32_t, int32_t, uint32_t, const int64_t*, TensorRef**);
  static Status NoView(void*, uint32_t, int32_t, uint32_t, const int64_t*, const void*);
  static void* NoScratch(void*, uint64_t, uint32_t) { return nullptr; }

  const PrepareHost& host_;
  KernelHost kernel_host_;
  KernelContext kernel_;
  const void* prepared_ = nullptr;
};

// The kernel for (domain, op_type) at that opset; nullptr when there is none.
// `domain` "" and "ai.onnx" are the same domain. *prepare, when given, is set
// to the kernel's prepare function (nullptr: it has none).
KernelFn FindKernel(StrView domain, StrView op_type, int64_t opset, PrepareFn* prepare = nullptr);

// True when epctx has a kernel for (domain, op_type, opset) but this build
// left it out (CMake EPCTX_CPU_OPS): the model needs a build that lists it.
bool KernelLeftOutOfBuild(StrView domain, StrView op_type, int64_t opset);
// Row i of the kernel table (false past its end), so the kernel fuzzer can
// reach every op without a second list to keep in step.
bool KernelTableRow(uint32_t i, const char** domain, const char** op, int64_t* min_opset,
                    int64_t* max_opset);

}  // namespace epctx

#endif
