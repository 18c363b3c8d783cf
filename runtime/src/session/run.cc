// SPDX-License-Identifier: Apache-2.0
// ExecutionPlan::Run: executes the ordered steps with per-run state only.
//
// Memory: a run takes a RunMemory from the session's pool (one per
// concurrent run, kept for the next): the arena the memory plan places the
// main graph's intermediates in (memory_plan.h), the value slots, and a
// grow-only scratch block kernels bump-allocate from (reset after each
// step). Outputs the caller bound are written in place. Anything the plan
// did not foresee (a value whose shape was unknown at create, a larger
// output, a subgraph's values, scratch beyond the block) is one allocation
// from the env allocator with a small header (a reference count and list
// links), released when its last consumer has run; a view output (Reshape,
// Flatten ...) shares the buffer of the input it points into, so the buffer
// lives until both are dead. The first run records what it allocated that
// way; the session then plans those values too (LearnPlan) and grows the
// scratch block, so later runs of the same shapes make no allocator call.
// Constants and caller inputs are never owned by the run.
//
// One loop (RunPlan) runs the main graph and every subgraph: a control-flow
// kernel calls run_subgraph, which runs the subgraph's plan with a RunState
// of its own whose parent is the calling run, so captures read the parent's
// slots. Nesting is bounded by the plans (kMaxGraphDepth), and each level
// frees what it allocated on every exit.
#include <cstring>

#include "session/driver_io.h"
#include "session/execution_plan.h"

namespace epctx {
namespace runmem {

struct Buffer {
  Buffer* prev;
  Buffer* next;
  uint32_t refs;
  uint64_t bytes;
  // data follows at kHeader
};
constexpr size_t kHeader = 64;

struct Slot {
  TensorRef t;
  Buffer* buf;
  const TensorRef* bound;  // the caller's buffer for this graph output
  uint32_t remaining;
  bool set;
};

}  // namespace runmem

using runmem::Buffer;
using runmem::Slot;
using runmem::kHeader;

constexpr uint32_t kMaxRunOutputs = 256;

struct RunMemory {
  RunMemory* next_idle;
  RunMemory* next_all;
  uint8_t* arena;  // owned, arena_cap bytes
  uint64_t arena_cap;
  uint8_t* scratch;  // owned, scratch_cap bytes
  uint64_t scratch_cap;
  uint64_t scratch_used;  // may pass scratch_cap: the demand of this step
  uint64_t scratch_peak;
  Slot* slots;                  // the main graph's, num_values + 1
  const TensorRef** bound;      // per graph input, num_inputs + 1
  uint32_t* outs;               // kMaxRunOutputs
  const TensorRef** bound_out;  // kMaxRunOutputs: RunRequest::bound_output_objects read in place
  uint64_t* seen;               // per value: bytes allocated beyond the plan
  bool slots_primed;            // slots hold the constants (after a first run)
};

namespace {
struct RunState {
  const Allocator* alloc;
  const GraphPlan* plan;
  const RunState* parent;  // the run of the enclosing graph, for captures
  Slot* slots;
  // The main graph's run: its plan and arena; nullptr in a subgraph's run.
  const MemoryPlan* mplan;
  uint8_t* arena;
  RunMemory* mem;         // the scratch block, shared with subgraph runs
  uint64_t scratch_mark;  // mem->scratch_used when this run started
  uint64_t* seen;         // learning: bytes of values beyond the plan
  Buffer live;            // sentinel of the list of live buffers
  Buffer scratch;         // sentinel of this step's scratch buffers
  const Step* step;
  const char* label;          // plan->label
  const RunControl* control;  // terminate flag and deadline; nullptr: none
  ThreadPool* pool;           // the session's intra-op pool, or nullptr

  void Init() {
    live.prev = live.next = &live;
    scratch.prev = scratch.next = &scratch;
  }
  void* Allocate(Buffer* list, uint64_t bytes, uint32_t alignment, Buffer** out) {
    // Above kHeader (driver arenas up to a page): the header grows to the
    // alignment, so the data after it is aligned too. Only scratch buffers
    // ask for that; live buffers (found again from their data) use kHeader.
    const size_t head = alignment > kHeader ? alignment : kHeader;
    if (alignment > EPCTX_HAL_MAX_ALIGNMENT || bytes > SIZE_MAX - head) return nullptr;
    Buffer* b = static_cast<Buffer*>(alloc->Alloc(static_cast<size_t>(bytes) + head, head));
    if (!b) return nullptr;
    b->refs = 1;
    b->bytes = bytes;
    b->next = list->next;
    b->prev = list;
    list->next->prev = b;
    list->next = b;
    if (out) *out = b;
    return reinterpret_cast<uint8_t*>(b) + head;
  }
  void Release(Buffer* b) {
    if (!b || --b->refs) return;
    b->prev->next = b->next;
    b->next->prev = b->prev;
    alloc->Free(b);
  }
  void FreeList(Buffer* list) {
    while (list->next != list) {
      Buffer* b = list->next;
      b->refs = 1;
      Release(b);
    }
  }
};

Status node_error(const Step& s, const char* label, int code, const char* what) {
  return Status::Error(code, "%s: node '%.*s' (%.*s): %s", label, s.node->name.len(),
                       s.node->name.data, s.node->op_type.len(), s.node->op_type.data, what);
}

void* scratch(void* user, uint64_t bytes, uint32_t alignment);

bool same_shape(const TensorRef& t, int32_t dtype, uint32_t rank, const int64_t* dims) {
  if (t.dtype != dtype || t.rank != rank) return false;
  for (uint32_t i = 0; i < rank; ++i)
    if (t.dims[i] != dims[i]) return false;
  return true;
}

Status bound_mismatch(const RunState& rs, uint32_t v, const TensorRef& b, int32_t dtype,
                      uint32_t rank, const int64_t* dims) {
  char want[128], got[128];
  size_t a = format(want, sizeof want, "%s[", dtype_name(b.dtype));
  size_t c = format(got, sizeof got, "%s[", dtype_name(dtype));
  for (uint32_t d = 0; d < b.rank && a < sizeof want; ++d)
    a += format(want + a, sizeof want - a, "%s%lld", d ? "," : "", (long long)b.dims[d]);
  for (uint32_t d = 0; d < rank && c < sizeof got; ++d)
    c += format(got + c, sizeof got - c, "%s%lld", d ? "," : "", (long long)dims[d]);
  return Status::Error(
      EPCTX_INVALID_ARGUMENT, "%s: output '%.*s': the bound tensor is %s], the model produces %s]",
      rs.label, rs.plan->values[v].name.len(), rs.plan->values[v].name.data, want, got);
}

Status alloc_output(void* user, uint32_t index, int32_t dtype, uint32_t rank, const int64_t* dims,
                    TensorRef** out) {
  RunState* rs = static_cast<RunState*>(user);
  const Step& s = *rs->step;
  uint64_t elems = 0;
  size_t esize = dtype_size(dtype);
  if (index >= s.num_outputs)
    return node_error(s, rs->label, EPCTX_INVALID_GRAPH, "kernel wrote an output the node lacks");
  if (rank > static_cast<uint32_t>(kMaxRank) || !shape_elements(dims, rank, &elems) || !esize ||
      elems > (UINT64_MAX >> 8) / esize)
    return node_error(s, rs->label, EPCTX_INVALID_ARGUMENT, "output shape or type not allocatable");
  uint64_t bytes = elems * esize;
  uint32_t v = s.outputs[index];
  if (v == UINT32_MAX) {
    // An omitted output still needs storage, and a TensorRef that outlives
    // this call: both go with the step's scratch.
    void* data = scratch(rs, bytes, 64);
    TensorRef* t = static_cast<TensorRef*>(scratch(rs, sizeof(TensorRef), 16));
    if (!data || !t) return node_error(s, rs->label, EPCTX_OUT_OF_MEMORY, "out of memory");
    *t = TensorRef{};
    t->dtype = dtype;
    t->rank = rank;
    for (uint32_t i = 0; i < rank; ++i) t->dims[i] = dims[i];
    t->data = data;
    t->bytes = bytes;
    *out = t;
    return Status::Ok();
  }
  Slot* slot = &rs->slots[v];
  Buffer* b = nullptr;
  void* data = nullptr;
  const ValuePlacement* vp = rs->mplan ? &rs->mplan->values[v] : nullptr;
  if (slot->bound) {
    if (!same_shape(*slot->bound, dtype, rank, dims))
      return bound_mismatch(*rs, v, *slot->bound, dtype, rank, dims);
    data = slot->bound->data;
  } else if (vp && vp->offset != UINT64_MAX && bytes <= vp->bytes) {
    data = rs->arena + vp->offset;
  } else if (bytes == 0) {
    alignas(64) static uint8_t empty[64];  // never written: nothing to hold
    data = empty;
  } else {
    data = rs->Allocate(&rs->live, bytes, 64, &b);
    if (!data) return node_error(s, rs->label, EPCTX_OUT_OF_MEMORY, "out of memory for an output");
    if (rs->seen && bytes > rs->seen[v]) rs->seen[v] = bytes;
  }
  slot->t = TensorRef{};
  slot->t.dtype = dtype;
  slot->t.rank = rank;
  for (uint32_t i = 0; i < rank; ++i) slot->t.dims[i] = dims[i];
  slot->t.data = data;
  slot->t.bytes = bytes;
  slot->buf = b;
  slot->set = true;
  *out = &slot->t;
  return Status::Ok();
}

Status view_output(void* user, uint32_t index, int32_t dtype, uint32_t rank, const int64_t* dims,
                   const void* data) {
  RunState* rs = static_cast<RunState*>(user);
  const Step& s = *rs->step;
  uint64_t elems = 0;
  if (index >= s.num_outputs)
    return node_error(s, rs->label, EPCTX_INVALID_GRAPH, "kernel wrote an output the node lacks");
  if (rank > static_cast<uint32_t>(kMaxRank) || !shape_elements(dims, rank, &elems) ||
      !dtype_size(dtype))
    return node_error(s, rs->label, EPCTX_INVALID_ARGUMENT, "output view shape not valid");
  uint32_t v = s.outputs[index];
  if (v == UINT32_MAX) return Status::Ok();
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (rs->mplan && p >= rs->arena && p < rs->arena + rs->mplan->arena_bytes &&
      !rs->mplan->values[v].arena_view) {
    // A view into the arena the plan did not foresee: the bytes it points
    // to may be reused before the view dies, so it gets its own copy.
    TensorRef* t = nullptr;
    EPCTX_RETURN_IF_ERROR(alloc_output(user, index, dtype, rank, dims, &t));
    if (t->bytes) memcpy(t->data, data, static_cast<size_t>(t->bytes));
    return Status::Ok();
  }
  Slot& slot = rs->slots[v];
  slot.t = TensorRef{};
  slot.t.dtype = dtype;
  slot.t.rank = rank;
  for (uint32_t i = 0; i < rank; ++i) slot.t.dims[i] = dims[i];
  slot.t.data = const_cast<void*>(data);
  slot.t.bytes = elems * dtype_size(dtype);
  slot.buf = nullptr;
  slot.set = true;
  // Share the buffer of the input the view points into, if the run owns it.
  for (uint32_t i = 0; i < s.num_inputs; ++i) {
    uint32_t in = s.inputs[i];
    if (in == UINT32_MAX || !rs->slots[in].buf) continue;
    const Buffer* b = rs->slots[in].buf;
    const uint8_t* base = reinterpret_cast<const uint8_t*>(b) + kHeader;
    if (p >= base && p <= base + b->bytes) {
      slot.buf = rs->slots[in].buf;
      slot.buf->refs++;
      break;
    }
  }
  return Status::Ok();
}

void* scratch(void* user, uint64_t bytes, uint32_t alignment) {
  RunState* rs = static_cast<RunState*>(user);
  if (!alignment) alignment = 16;
  RunMemory* m = rs->mem;
  // The block is page-aligned, so any alignment a driver may ask for
  // (up to a page) is served from it without an allocator call.
  if (m && alignment <= EPCTX_HAL_MAX_ALIGNMENT && !(alignment & (alignment - 1)) &&
      m->scratch_used <= UINT64_MAX - EPCTX_HAL_MAX_ALIGNMENT && bytes <= (UINT64_MAX >> 2)) {
    uint64_t start = (m->scratch_used + alignment - 1) & ~uint64_t{alignment - 1};
    m->scratch_used = start + bytes;
    if (m->scratch_used > m->scratch_peak) m->scratch_peak = m->scratch_used;
    if (m->scratch_used <= m->scratch_cap) return m->scratch + start;
    // Beyond the block: the demand stays counted, so the block grows after
    // this run to hold the whole step.
  }
  return rs->Allocate(&rs->scratch, bytes, alignment, nullptr);
}

bool shape_matches(const onnx::ValueInfoView& info, const TensorRef& t) {
  if (!info.has_shape) return true;
  if (info.rank != t.rank) return false;
  for (uint32_t i = 0; i < t.rank; ++i)
    if (info.dims[i] >= 0 && info.dims[i] != t.dims[i]) return false;
  return true;
}

// A value given for graph input `info`: its declared element type, and for
// the main graph its declared shape (subgraph declarations are often stale
// or partial, and ORT does not hold loop bodies to them either).
Status check_input(const char* label, const onnx::ValueInfoView& info, const TensorRef& t,
                   bool check_shape) {
  if (info.is_tensor && info.dtype != 0 && info.dtype != t.dtype)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "%s: input '%.*s': expected element type %s, "
                         "found %s",
                         label, info.name.len(), info.name.data, dtype_name(info.dtype),
                         dtype_name(t.dtype));
  if (check_shape && t.dtype == EPCTX_DTYPE_BOOL) {
    // Kernels load bool elements as C++ bool: any byte but 0/1 is undefined.
    const int64_t bad = first_non_bool(t.data, t.bytes);
    if (bad >= 0)
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "%s: input '%.*s': bool element %lld is byte %u, expected 0 or 1", label,
                           info.name.len(), info.name.data, static_cast<long long>(bad),
                           static_cast<const uint8_t*>(t.data)[bad]);
  }
  if (!check_shape || shape_matches(info, t)) return Status::Ok();
  char want[128], got[128];
  size_t a = 0, b = 0;
  for (uint32_t d = 0; d < info.rank; ++d)
    a += format(want + a, sizeof want - a, "%s%lld", d ? "," : "", (long long)info.dims[d]);
  for (uint32_t d = 0; d < t.rank; ++d)
    b += format(got + b, sizeof got - b, "%s%lld", d ? "," : "", (long long)t.dims[d]);
  want[a < sizeof want ? a : sizeof want - 1] = '\0';
  got[b < sizeof got ? b : sizeof got - 1] = '\0';
  return Status::Error(EPCTX_INVALID_ARGUMENT,
                       "%s: input '%.*s': expected shape [%s] (-1 = any), found [%s]", label,
                       info.name.len(), info.name.data, want, got);
}

// An EPContext step: the driver executes its graph.
__attribute__((noinline)) Status run_driver_step(RunState& rs, const Step& s,
                                                 const TensorRef* const* in_refs) {
  const epctx_hal_graph_info& gi = s.graph_info;
  // The HAL tensors go with the step's scratch, not a 5 KB frame.
  epctx_hal_tensor* hal_in = static_cast<epctx_hal_tensor*>(
      scratch(&rs, sizeof(epctx_hal_tensor) * (s.num_inputs + s.num_outputs + 1), 16));
  if (!hal_in)
    return node_error(s, rs.label, EPCTX_OUT_OF_MEMORY, "out of memory for the driver's tensors");
  epctx_hal_tensor* hal_out = hal_in + s.num_inputs;
  for (uint32_t i = 0; i < s.num_inputs; ++i) {
    const TensorRef* t = in_refs[i];
    hal_in[i] = epctx_hal_tensor{t ? t->dtype : 0, t ? t->rank : 0, t ? t->dims : nullptr,
                                 t ? t->data : nullptr, t ? t->bytes : 0};
  }
  for (uint32_t o = 0; o < s.num_outputs; ++o) {
    const epctx_hal_tensor_desc& d = gi.outputs[o];
    TensorRef* t = nullptr;
    EPCTX_RETURN_IF_ERROR(alloc_output(&rs, o, d.dtype, d.rank, d.dims, &t));
    hal_out[o] = epctx_hal_tensor{t->dtype, t->rank, t->dims, t->data, t->bytes};
  }
  uint64_t planned = rs.mplan ? rs.mplan->driver_scratch[&s - rs.plan->steps] : UINT64_MAX;
  void* arena = !gi.scratch_bytes       ? nullptr
                : planned != UINT64_MAX ? rs.arena + planned
                                        : scratch(&rs, gi.scratch_bytes, gi.scratch_alignment);
  if (gi.scratch_bytes && !arena)
    return node_error(s, rs.label, EPCTX_OUT_OF_MEMORY, "out of memory for the driver arena");
  char msg[Status::kMaxMessage];
  msg[0] = '\0';
  const epctx_hal_driver& fns = s.driver->fns;
  // Staging entries only for a driver with device-visible I/O buffers.
  const uint32_t n_io = s.num_inputs + s.num_outputs;
  IoStaging::Entry* entries =
      fns.alloc_io ? static_cast<IoStaging::Entry*>(
                         scratch(&rs, sizeof(IoStaging::Entry) * (n_io ? n_io : 1), 16))
                   : nullptr;
  if (fns.alloc_io && !entries)
    return node_error(s, rs.label, EPCTX_OUT_OF_MEMORY, "out of memory staging driver buffers");
  IoStaging staging(*s.driver, s.graph, entries, n_io);
  int64_t refused = staging.Stage(hal_in, s.num_inputs, true);
  if (refused < 0) refused = staging.Stage(hal_out, s.num_outputs, false);
  if (refused >= 0)
    return Status::Error(EPCTX_OUT_OF_MEMORY,
                         "%s: EPContext node '%.*s' on driver '%s': alloc_io refused a "
                         "device-visible buffer for a tensor",
                         rs.label, s.node->name.len(), s.node->name.data, s.driver->info.name);
  if (fns.sync_for_device) fns.sync_for_device(s.driver->driver, s.graph, hal_in, s.num_inputs);
  int rc;
  if (fns.execute_parallel && rs.pool) {
    // The session's intra-op threads, lent for this call (ABI 2.2).
    epctx_hal_parallel par;
    par.struct_size = sizeof par;
    par.threads = rs.pool->threads();
    par.user = rs.pool;
    par.parallel_for = [](void* user, uint32_t chunks, epctx_hal_chunk_fn fn, void* arg) {
      static_cast<ThreadPool*>(user)->ParallelFor(chunks, fn, arg);
    };
    rc = fns.execute_parallel(s.driver->driver, s.graph, hal_in, s.num_inputs, hal_out,
                              s.num_outputs, arena, gi.scratch_bytes, &par, msg, sizeof msg);
  } else {
    rc = s.driver->driver->execute(s.driver->driver, s.graph, hal_in, s.num_inputs, hal_out,
                                   s.num_outputs, arena, gi.scratch_bytes, msg, sizeof msg);
  }
  if (rc != EPCTX_OK)
    // The driver's own code stays the cause (epctx_status_cause).
    return Status::Error(rc, "%s: EPContext node '%.*s' on driver '%s': %s", rs.label,
                         s.node->name.len(), s.node->name.data, s.driver->info.name, msg)
        .WithCode(rc == EPCTX_INVALID_ARGUMENT ? rc : EPCTX_EP_FAIL);
  if (fns.sync_for_cpu) fns.sync_for_cpu(s.driver->driver, s.graph, hal_out, s.num_outputs);
  staging.CopyOut();
  return Status::Ok();
}

Status run_subgraph(void* user, const onnx::AttributeView& attr, const TensorRef* const* inputs,
                    uint32_t num_inputs, ValueSink emit, void* emit_user);

// Runs the ordered steps of rs.plan; the graph inputs are bound already.
Status run_steps(RunState& rs) {
  const GraphPlan& p = *rs.plan;
  KernelHost host{&rs, alloc_output, view_output, scratch, run_subgraph};
  host.pool = rs.pool;
  const TensorRef* in_refs[64];
  for (uint32_t si = 0; si < p.num_steps; ++si) {
    const Step& s = p.steps[si];
    rs.step = &s;
    if (rs.control) EPCTX_RETURN_IF_ERROR(rs.control->Check(rs.label, si));
    if (s.num_inputs > 64 || s.num_outputs > 64)
      return node_error(s, rs.label, EPCTX_NOT_IMPLEMENTED, "more than 64 inputs or outputs");
    for (uint32_t i = 0; i < s.num_inputs; ++i) {
      uint32_t v = s.inputs[i];
      in_refs[i] = v == UINT32_MAX ? nullptr : &rs.slots[v].t;
      if (v != UINT32_MAX && !rs.slots[v].set)
        return node_error(s, rs.label, EPCTX_INVALID_GRAPH, "an input was never computed");
    }
    for (uint32_t i = 0; i < s.num_implicit; ++i)
      if (!rs.slots[s.implicit[i]].set)
        return node_error(s, rs.label, EPCTX_INVALID_GRAPH,
                          "a value its subgraphs read was never computed");
    if (s.kernel) {
      KernelContext kc(*s.node, s.opset, in_refs, s.num_inputs, host, s.kernel_state);
      Status ks = s.kernel(kc);
      Status as = kc.AttrStatus();  // a mistyped attribute explains any other failure
      if (!as.ok()) ks = as;
      if (!ks.ok()) {
        // A subgraph's scope goes in front while the message has room.
        if (!p.parent || ks.HasRoom()) ks.Prefix("%s", rs.label);
        return ks;
      }
    } else {
      EPCTX_RETURN_IF_ERROR(run_driver_step(rs, s, in_refs));
    }
    rs.FreeList(&rs.scratch);
    if (rs.mem) rs.mem->scratch_used = rs.scratch_mark;
    for (uint32_t o = 0; o < s.num_outputs; ++o)
      if (s.outputs[o] != UINT32_MAX && !rs.slots[s.outputs[o]].set)
        return node_error(s, rs.label, EPCTX_INVALID_GRAPH, "the kernel did not produce an output");
    for (uint32_t k = 0; k < s.num_inputs + s.num_implicit; ++k) {
      uint32_t v = k < s.num_inputs ? s.inputs[k] : s.implicit[k - s.num_inputs];
      if (v == UINT32_MAX) continue;
      Slot& slot = rs.slots[v];
      if (--slot.remaining == 0 && !p.values[v].graph_output) rs.Release(slot.buf);
    }
  }
  return Status::Ok();
}

// What a run of the main graph brings beyond its inputs: its memory, the
// plan in force, the arena (the pool's or the caller's), and the caller's
// output buffers per requested output (nullptr: none).
struct MainRun {
  RunMemory* mem;
  const MemoryPlan* plan;
  uint8_t* arena;
  const TensorRef* const* bound;
  uint64_t* seen;  // nullptr once the session has learned from a first run
  const RunControl* control;
  ThreadPool* pool;
};

// Runs plan p. Graph input i is inputs[i] (initializer-backed inputs keep
// their initializer); outputs outs[0..num_outs) (graph output indices, or
// all in order when outs is nullptr) go to emit. parent: the run of the
// enclosing graph, for a subgraph; main: set for the main graph only.
Status RunPlan(const Allocator& alloc, const GraphPlan& p, const RunState* parent,
               const MainRun* main, const TensorRef* const* inputs, const uint32_t* outs,
               size_t num_outs, ValueSink emit, void* user) {
  const onnx::GraphView& g = *p.graph;
  RunState rs;
  rs.alloc = &alloc;
  rs.plan = &p;
  rs.parent = parent;
  rs.label = p.label;
  rs.step = nullptr;
  rs.mplan = main ? main->plan : nullptr;
  rs.arena = main ? main->arena : nullptr;
  rs.mem = main ? main->mem : parent ? parent->mem : nullptr;
  rs.scratch_mark = rs.mem ? rs.mem->scratch_used : 0;
  rs.seen = main ? main->seen : nullptr;
  rs.control = main ? main->control : parent ? parent->control : nullptr;
  rs.pool = main ? main->pool : parent ? parent->pool : nullptr;
  rs.Init();
  rs.slots = main ? main->mem->slots
                  : static_cast<Slot*>(alloc.Alloc(sizeof(Slot) * (p.num_values + 1), 16));
  if (!rs.slots) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for a run", p.label);
  // The main graph's slots outlive the run in its RunMemory: the constants
  // bound by its first run stay bound, later runs reset only the rest.
  const bool primed = main && main->mem->slots_primed;
  if (!primed)
    for (uint32_t v = 0; v <= p.num_values; ++v) rs.slots[v] = Slot{};
  else rs.slots[p.num_values] = Slot{};
  if (main) main->mem->slots_primed = true;
  Status st = [&]() -> Status {
    for (uint32_t v = 0; v < p.num_values; ++v) {
      const Value& val = p.values[v];
      Slot& slot = rs.slots[v];
      slot.remaining = val.consumers;
      if (val.constant >= 0) {
        if (!primed) {
          slot.t = p.constants[val.constant];
          slot.set = true;
        }
      } else if (primed) {
        slot.buf = nullptr;
        slot.bound = nullptr;
        slot.set = false;
      } else if (val.outer != UINT32_MAX && parent) {
        // A capture: the parent's value, owned (and freed) by the parent run.
        slot.t = parent->slots[val.outer].t;
        slot.set = parent->slots[val.outer].set;
      }
    }
    for (uint32_t k = 0; k < g.num_inputs; ++k) {
      if (p.input_ids[k] == UINT32_MAX) continue;
      if (!inputs[k])
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: input '%.*s' was not given", p.label,
                             g.inputs[k].name.len(), g.inputs[k].name.data);
      EPCTX_RETURN_IF_ERROR(check_input(p.label, g.inputs[k], *inputs[k], !p.parent));
      Slot& slot = rs.slots[p.input_ids[k]];
      slot.t = *inputs[k];
      slot.set = true;
    }
    size_t n = outs ? num_outs : g.num_outputs;
    if (main && main->bound)
      for (size_t i = 0; i < n; ++i) {
        uint32_t v = p.output_ids[outs ? outs[i] : i];
        // Constants and inputs passed through are copied out by emit.
        if (main->bound[i] && p.values[v].constant < 0 && p.values[v].graph_input < 0)
          rs.slots[v].bound = main->bound[i];
      }
    EPCTX_RETURN_IF_ERROR(run_steps(rs));
    for (size_t i = 0; i < n; ++i) {
      uint32_t v = p.output_ids[outs ? outs[i] : i];
      if (!rs.slots[v].set)
        return Status::Error(EPCTX_INVALID_GRAPH, "%s: output '%.*s' was not computed", p.label,
                             p.values[v].name.len(), p.values[v].name.data);
      EPCTX_RETURN_IF_ERROR(emit(user, i, rs.slots[v].t));
    }
    return Status::Ok();
  }();
  rs.FreeList(&rs.scratch);
  rs.FreeList(&rs.live);
  // A subgraph leaves the scratch mark where it is: what the calling kernel
  // took while receiving outputs (emit) lives until that kernel's step ends.
  if (!main) alloc.Free(rs.slots);
  return st;
}

Status run_subgraph(void* user, const onnx::AttributeView& attr, const TensorRef* const* inputs,
                    uint32_t num_inputs, ValueSink emit, void* emit_user) {
  RunState* rs = static_cast<RunState*>(user);
  const Step& s = *rs->step;
  const GraphPlan* sub = nullptr;
  if (s.subgraphs && &attr >= s.node->attrs && &attr < s.node->attrs + s.node->num_attrs)
    sub = s.subgraphs[&attr - s.node->attrs];
  if (!sub)
    return node_error(s, rs->label, EPCTX_INVALID_GRAPH, "the attribute is not a planned graph");
  if (num_inputs != sub->graph->num_inputs) {
    char what[128];
    format(what, sizeof what, "subgraph '%.*s' has %u inputs, the kernel gives %u", attr.name.len(),
           attr.name.data, sub->graph->num_inputs, num_inputs);
    return node_error(s, rs->label, EPCTX_INVALID_GRAPH, what);
  }
  return RunPlan(*rs->alloc, *sub, rs, nullptr, inputs, nullptr, 0, emit, emit_user);
}

}  // namespace

Status ExecutionPlan::BuildPlan() {
  pool_mutex_ = epctx_pal_mutex_create();
  if (!pool_mutex_) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: no mutex for runs", m_.label());
  uint64_t* bytes =
      static_cast<uint64_t*>(m_.alloc().Alloc(sizeof(uint64_t) * (main_.num_values + 1), 16));
  if (!bytes) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory planning", m_.label());
  DeclaredBytes(main_, bytes);
  Status st = BuildMemoryPlan(main_, bytes, m_.alloc(), &created_plan_);
  m_.alloc().Free(bytes);
  plan_.store(created_plan_, std::memory_order_release);
  return st;
}

void ExecutionPlan::LearnPlan(const uint64_t* seen) const {
  uint64_t* bytes =
      static_cast<uint64_t*>(m_.alloc().Alloc(sizeof(uint64_t) * (main_.num_values + 1), 16));
  if (!bytes) return;  // the plan at create stays; runs still work
  DeclaredBytes(main_, bytes);
  for (uint32_t v = 0; v < main_.num_values; ++v)
    if (seen[v] > bytes[v]) bytes[v] = seen[v];
  MemoryPlan* plan = nullptr;
  Status st = BuildMemoryPlan(main_, bytes, m_.alloc(), &plan);
  m_.alloc().Free(bytes);
  if (!st.ok()) return;
  learned_plan_ = plan;  // written once: learning_ admits one run here
  plan_.store(plan, std::memory_order_release);
}

uint64_t ExecutionPlan::arena_bytes() const {
  const MemoryPlan* p = plan_.load(std::memory_order_acquire);
  return p ? p->arena_bytes : 0;
}

uint32_t ExecutionPlan::planned_values() const {
  const MemoryPlan* p = plan_.load(std::memory_order_acquire);
  return p ? p->planned : 0;
}

RunMemory* ExecutionPlan::TakeRunMemory(const MemoryPlan* plan, bool caller_arena) const {
  epctx_pal_mutex_lock(pool_mutex_);
  RunMemory* m = pool_;
  if (m) pool_ = m->next_idle;
  epctx_pal_mutex_unlock(pool_mutex_);
  const Allocator& a = m_.alloc();
  if (!m) {
    // Two of the arrays hold TensorRef pointers: sizeof(TensorRef*) is meant.
    // NOLINTBEGIN(bugprone-sizeof-expression)
    const uint32_t nv = main_.num_values, ni = m_.view().graph.num_inputs;
    size_t bytes = sizeof(RunMemory) + sizeof(Slot) * (nv + 1) + sizeof(TensorRef*) * (ni + 1) +
                   sizeof(uint32_t) * kMaxRunOutputs + sizeof(TensorRef*) * kMaxRunOutputs +
                   sizeof(uint64_t) * (nv + 1) + 64;
    uint8_t* p = static_cast<uint8_t*>(a.Alloc(bytes, 64));
    if (!p) return nullptr;
    m = reinterpret_cast<RunMemory*>(p);
    *m = RunMemory{};
    p += (sizeof(RunMemory) + 15) & ~size_t{15};
    m->slots = reinterpret_cast<Slot*>(p);
    p += sizeof(Slot) * (nv + 1);
    m->seen = reinterpret_cast<uint64_t*>(p);
    p += sizeof(uint64_t) * (nv + 1);
    m->bound = reinterpret_cast<const TensorRef**>(p);
    p += sizeof(TensorRef*) * (ni + 1);
    m->bound_out = reinterpret_cast<const TensorRef**>(p);
    p += sizeof(TensorRef*) * kMaxRunOutputs;
    m->outs = reinterpret_cast<uint32_t*>(p);
    // NOLINTEND(bugprone-sizeof-expression)
    epctx_pal_mutex_lock(pool_mutex_);
    m->next_all = all_;
    all_ = m;
    epctx_pal_mutex_unlock(pool_mutex_);
  }
  if (!caller_arena && plan && m->arena_cap < plan->arena_bytes) {
    a.Free(m->arena);
    m->arena = static_cast<uint8_t*>(a.Alloc(static_cast<size_t>(plan->arena_bytes), 64));
    m->arena_cap = m->arena ? plan->arena_bytes : 0;
    if (!m->arena) {
      ReturnRunMemory(m);
      return nullptr;
    }
  }
  return m;
}

void ExecutionPlan::ReturnRunMemory(RunMemory* m) const {
  if (m->scratch_peak > m->scratch_cap) {
    // Grow once to what the busiest step asked for, so the next run fits.
    const Allocator& a = m_.alloc();
    a.Free(m->scratch);
    uint64_t cap = (m->scratch_peak + 4095) & ~uint64_t{4095};
    m->scratch =
        cap <= SIZE_MAX / 2
            ? static_cast<uint8_t*>(a.Alloc(static_cast<size_t>(cap), EPCTX_HAL_MAX_ALIGNMENT))
            : nullptr;
    m->scratch_cap = m->scratch ? cap : 0;
  }
  m->scratch_peak = 0;
  m->scratch_used = 0;
  epctx_pal_mutex_lock(pool_mutex_);
  m->next_idle = pool_;
  pool_ = m;
  epctx_pal_mutex_unlock(pool_mutex_);
}

void ExecutionPlan::FreeRunMemory() {
  const Allocator& a = m_.alloc();
  for (RunMemory* m = all_; m;) {
    RunMemory* next = m->next_all;
    a.Free(m->arena);
    a.Free(m->scratch);
    a.Free(m);
    m = next;
  }
  all_ = pool_ = nullptr;
  FreeMemoryPlan(a, learned_plan_);
  FreeMemoryPlan(a, created_plan_);
  if (pool_mutex_) epctx_pal_mutex_destroy(pool_mutex_);
}

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
