// Session::Run: executes the ordered steps with per-run state only.
//
// Every intermediate tensor is one allocation from the env allocator with a
// small header (a reference count and list links). A value is released when
// its last consumer has run; a view output (Reshape, Flatten ...) shares the
// buffer of the input it points into, so the buffer lives until both are
// dead. Constants and caller inputs are never owned by the run. All state is
// local to the call, so any number of Runs may proceed at once.
//
// One loop (RunPlan) runs the main graph and every subgraph: a control-flow
// kernel calls run_subgraph, which runs the subgraph's plan with a RunState
// of its own whose parent is the calling run, so captures read the parent's
// slots. Nesting is bounded by the plans (kMaxGraphDepth), and each level
// frees what it allocated on every exit.
#include <cstring>

#include "session/session.h"

namespace epctx {
namespace {

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
  uint32_t remaining;
  bool set;
};

struct RunState {
  const Allocator* alloc;
  const GraphPlan* plan;
  const RunState* parent;  // the run of the enclosing graph, for captures
  Slot* slots;
  Buffer live;     // sentinel of the list of live buffers
  Buffer scratch;  // sentinel of this step's scratch buffers
  const Step* step;
  const char* label;  // plan->label

  void Init() {
    live.prev = live.next = &live;
    scratch.prev = scratch.next = &scratch;
  }
  void* Allocate(Buffer* list, uint64_t bytes, uint32_t alignment, Buffer** out) {
    if (alignment > kHeader || bytes > SIZE_MAX - kHeader) return nullptr;
    Buffer* b = static_cast<Buffer*>(alloc->Alloc(static_cast<size_t>(bytes) + kHeader, kHeader));
    if (!b) return nullptr;
    b->refs = 1;
    b->bytes = bytes;
    b->next = list->next;
    b->prev = list;
    list->next->prev = b;
    list->next = b;
    if (out) *out = b;
    return reinterpret_cast<uint8_t*>(b) + kHeader;
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

Status alloc_output(void* user, uint32_t index, int32_t dtype, uint32_t rank,
                    const int64_t* dims, TensorRef** out) {
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
  Slot tmp{};
  Slot* slot = v == UINT32_MAX ? &tmp : &rs->slots[v];
  // An omitted output still needs storage: it goes with the step's scratch.
  Buffer* b = nullptr;
  void* data = rs->Allocate(v == UINT32_MAX ? &rs->scratch : &rs->live, bytes, 64, &b);
  if (!data) return node_error(s, rs->label, EPCTX_OUT_OF_MEMORY, "out of memory for an output");
  if (v == UINT32_MAX) {
    // Keep the TensorRef somewhere that outlives this call: the scratch list.
    TensorRef* t = static_cast<TensorRef*>(rs->Allocate(&rs->scratch, sizeof(TensorRef), 16, nullptr));
    if (!t) return node_error(s, rs->label, EPCTX_OUT_OF_MEMORY, "out of memory");
    *t = TensorRef{};
    t->dtype = dtype;
    t->rank = rank;
    for (uint32_t i = 0; i < rank; ++i) t->dims[i] = dims[i];
    t->data = data;
    t->bytes = bytes;
    *out = t;
    return Status::Ok();
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
  const uint8_t* p = static_cast<const uint8_t*>(data);
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
  return rs->Allocate(&rs->scratch, bytes, alignment ? alignment : 16, nullptr);
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
    return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: input '%.*s': expected element type %s, "
                         "found %s", label, info.name.len(), info.name.data,
                         dtype_name(info.dtype), dtype_name(t.dtype));
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
  epctx_hal_tensor hal_in[64], hal_out[64];
  const epctx_hal_graph_info& gi = s.graph_info;
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
  void* arena = gi.scratch_bytes
                    ? rs.Allocate(&rs.scratch, gi.scratch_bytes,
                                  gi.scratch_alignment ? gi.scratch_alignment : 64, nullptr)
                    : nullptr;
  if (gi.scratch_bytes && !arena)
    return node_error(s, rs.label, EPCTX_OUT_OF_MEMORY, "out of memory for the driver arena");
  char msg[Status::kMaxMessage];
  msg[0] = '\0';
  int rc = s.driver->driver->execute(s.driver->driver, s.graph, hal_in, s.num_inputs, hal_out,
                                     s.num_outputs, arena, gi.scratch_bytes, msg, sizeof msg);
  if (rc != EPCTX_OK)
    return Status::Error(rc == EPCTX_INVALID_ARGUMENT ? rc : EPCTX_EP_FAIL,
                         "%s: EPContext node '%.*s' on driver '%s': %s", rs.label,
                         s.node->name.len(), s.node->name.data, s.driver->info.name, msg);
  return Status::Ok();
}

Status run_subgraph(void* user, const onnx::AttributeView& attr, const TensorRef* const* inputs,
                    uint32_t num_inputs, ValueSink emit, void* emit_user);

// Runs the ordered steps of rs.plan; the graph inputs are bound already.
Status run_steps(RunState& rs) {
  const GraphPlan& p = *rs.plan;
  KernelHost host{&rs, alloc_output, view_output, scratch, run_subgraph};
  const TensorRef* in_refs[64];
  for (uint32_t si = 0; si < p.num_steps; ++si) {
    const Step& s = p.steps[si];
    rs.step = &s;
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
      KernelContext kc(*s.node, s.opset, in_refs, s.num_inputs, host);
      Status ks = s.kernel(kc);
      Status as = kc.AttrStatus();  // a mistyped attribute explains any other failure
      if (!as.ok()) ks = as;
      if (!ks.ok()) {
        // A subgraph's scope goes in front while the message has room.
        if (!p.parent || ks.HasRoom())
          ks.Prefix("%s", rs.label);
        return ks;
      }
    } else {
      EPCTX_RETURN_IF_ERROR(run_driver_step(rs, s, in_refs));
    }
    rs.FreeList(&rs.scratch);
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

// Runs plan p. Graph input i is inputs[i] (initializer-backed inputs keep
// their initializer); outputs outs[0..num_outs) (graph output indices, or
// all in order when outs is nullptr) go to emit. parent: the run of the
// enclosing graph, for a subgraph.
Status RunPlan(const Allocator& alloc, const GraphPlan& p, const RunState* parent,
               const TensorRef* const* inputs, const uint32_t* outs, size_t num_outs,
               ValueSink emit, void* user) {
  const onnx::GraphView& g = *p.graph;
  RunState rs;
  rs.alloc = &alloc;
  rs.plan = &p;
  rs.parent = parent;
  rs.label = p.label;
  rs.step = nullptr;
  rs.Init();
  rs.slots = static_cast<Slot*>(alloc.Alloc(sizeof(Slot) * (p.num_values + 1), 16));
  if (!rs.slots) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for a run", p.label);
  for (uint32_t v = 0; v <= p.num_values; ++v) rs.slots[v] = Slot{};
  Status st = [&]() -> Status {
    for (uint32_t v = 0; v < p.num_values; ++v) {
      const Value& val = p.values[v];
      Slot& slot = rs.slots[v];
      slot.remaining = val.consumers;
      if (val.constant >= 0) {
        slot.t = p.constants[val.constant];
        slot.set = true;
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
    EPCTX_RETURN_IF_ERROR(run_steps(rs));
    size_t n = outs ? num_outs : g.num_outputs;
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
  alloc.Free(rs.slots);
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
    format(what, sizeof what, "subgraph '%.*s' has %u inputs, the kernel gives %u",
           attr.name.len(), attr.name.data, sub->graph->num_inputs, num_inputs);
    return node_error(s, rs->label, EPCTX_INVALID_GRAPH, what);
  }
  return RunPlan(*rs->alloc, *sub, rs, inputs, nullptr, 0, emit, emit_user);
}

}  // namespace

Status Session::Run(const RunRequest& req) const {
  const onnx::GraphView& g = model_.graph;
  size_t n_out = req.output_names ? req.num_outputs : 0;
  if (n_out > UINT32_MAX)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: too many outputs requested", label_);
  size_t bytes = (g.num_inputs + 1) * sizeof(TensorRef*) + n_out * sizeof(uint32_t);
  void* mem = env_->alloc.Alloc(bytes, 16);
  if (!mem) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for a run", label_);
  const TensorRef** bound = static_cast<const TensorRef**>(mem);
  uint32_t* outs = reinterpret_cast<uint32_t*>(bound + g.num_inputs + 1);
  Status st = [&]() -> Status {
    for (uint32_t k = 0; k < g.num_inputs; ++k) bound[k] = nullptr;
    for (size_t i = 0; i < req.num_inputs; ++i) {
      const char* name = req.input_names[i];
      uint32_t k = 0;
      while (k < g.num_inputs && !g.inputs[k].name.eq(name)) ++k;
      if (k == g.num_inputs || main_.input_ids[k] == UINT32_MAX)
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: '%s' is not an input of the model",
                             label_, name);
      bound[k] = &req.inputs[i];
    }
    for (size_t i = 0; i < n_out; ++i) {
      uint32_t k = 0;
      while (k < g.num_outputs && !g.outputs[k].name.eq(req.output_names[i])) ++k;
      if (k == g.num_outputs)
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: '%s' is not an output of the model",
                             label_, req.output_names[i]);
      outs[i] = k;
    }
    return RunPlan(env_->alloc, main_, nullptr, bound, req.output_names ? outs : nullptr, n_out,
                   req.emit, req.user);
  }();
  env_->alloc.Free(mem);
  return st;
}

}  // namespace epctx
