// Session::Run: executes the ordered steps with per-run state only.
//
// Every intermediate tensor is one allocation from the env allocator with a
// small header (a reference count and list links). A value is released when
// its last consumer has run; a view output (Reshape, Flatten ...) shares the
// buffer of the input it points into, so the buffer lives until both are
// dead. Constants and caller inputs are never owned by the run. All state is
// local to the call, so any number of Runs may proceed at once.
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
  Slot* slots;
  Buffer live;     // sentinel of the list of live buffers
  Buffer scratch;  // sentinel of this step's scratch buffers
  const Step* step;
  const char* label;

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

}  // namespace

Status Session::Run(const RunRequest& req) const {
  const onnx::GraphView& g = model_.graph;
  RunState rs;
  rs.alloc = &env_->alloc;
  rs.label = label_;
  rs.step = nullptr;
  rs.Init();
  rs.slots = static_cast<Slot*>(env_->alloc.Alloc(sizeof(Slot) * (num_values_ + 1), 16));
  if (!rs.slots) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for a run", label_);
  for (uint32_t v = 0; v <= num_values_; ++v) rs.slots[v] = Slot{};
  Status st = [&]() -> Status {
    for (uint32_t v = 0; v < num_values_; ++v) {
      rs.slots[v].remaining = values_[v].consumers;
      if (values_[v].constant >= 0) {
        rs.slots[v].t = constants_[values_[v].constant];
        rs.slots[v].set = true;
      }
    }
    // Bind the caller's inputs.
    for (size_t i = 0; i < req.num_inputs; ++i) {
      const char* name = req.input_names[i];
      uint32_t k = 0;
      while (k < g.num_inputs && !g.inputs[k].name.eq(name)) ++k;
      if (k == g.num_inputs || input_ids_[k] == UINT32_MAX)
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: '%s' is not an input of the model",
                             label_, name);
      const onnx::ValueInfoView& info = g.inputs[k];
      const TensorRef& t = req.inputs[i];
      if (info.is_tensor && info.dtype != t.dtype)
        return Status::Error(EPCTX_INVALID_ARGUMENT,
                             "%s: input '%s': expected element type %s, found %s", label_, name,
                             dtype_name(info.dtype), dtype_name(t.dtype));
      if (t.dtype == EPCTX_DTYPE_BOOL) {
        const int64_t bad = first_non_bool(t.data, t.bytes);
        if (bad >= 0)
          return Status::Error(EPCTX_INVALID_ARGUMENT,
                               "%s: input '%s': bool element %lld is byte %u, expected 0 or 1",
                               label_, name, static_cast<long long>(bad),
                               static_cast<const uint8_t*>(t.data)[bad]);
      }
      if (!shape_matches(info, t)) {
        char want[128], got[128];
        size_t a = 0, b = 0;
        for (uint32_t d = 0; d < info.rank; ++d)
          a += format(want + a, sizeof want - a, "%s%lld", d ? "," : "", (long long)info.dims[d]);
        for (uint32_t d = 0; d < t.rank; ++d)
          b += format(got + b, sizeof got - b, "%s%lld", d ? "," : "", (long long)t.dims[d]);
        want[a < sizeof want ? a : sizeof want - 1] = '\0';
        got[b < sizeof got ? b : sizeof got - 1] = '\0';
        return Status::Error(EPCTX_INVALID_ARGUMENT,
                             "%s: input '%s': expected shape [%s] (-1 = any), found [%s]", label_,
                             name, want, got);
      }
      Slot& slot = rs.slots[input_ids_[k]];
      slot.t = t;
      slot.set = true;
    }
    for (uint32_t k = 0; k < g.num_inputs; ++k)
      if (input_ids_[k] != UINT32_MAX && !rs.slots[input_ids_[k]].set)
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: input '%.*s' was not given", label_,
                             g.inputs[k].name.len(), g.inputs[k].name.data);
    KernelHost host{&rs, alloc_output, view_output, scratch};
    const TensorRef* in_refs[64];
    epctx_hal_tensor hal_in[64], hal_out[64];
    for (uint32_t si = 0; si < num_steps_; ++si) {
      const Step& s = steps_[si];
      rs.step = &s;
      if (s.num_inputs > 64 || s.num_outputs > 64)
        return node_error(s, label_, EPCTX_NOT_IMPLEMENTED, "more than 64 inputs or outputs");
      for (uint32_t i = 0; i < s.num_inputs; ++i) {
        uint32_t v = s.inputs[i];
        in_refs[i] = v == UINT32_MAX ? nullptr : &rs.slots[v].t;
        if (v != UINT32_MAX && !rs.slots[v].set)
          return node_error(s, label_, EPCTX_INVALID_GRAPH, "an input was never computed");
      }
      if (s.kernel) {
        KernelContext kc(*s.node, s.opset, in_refs, s.num_inputs, host);
        Status ks = s.kernel(kc);
        Status as = kc.AttrStatus();  // a mistyped attribute explains any other failure
        if (!as.ok()) ks = as;
        if (!ks.ok()) return ks.Prefix("%s", label_);
      } else {
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
          return node_error(s, label_, EPCTX_OUT_OF_MEMORY, "out of memory for the driver arena");
        char msg[Status::kMaxMessage];
        msg[0] = '\0';
        int rc = s.driver->driver->execute(s.driver->driver, s.graph, hal_in, s.num_inputs,
                                           hal_out, s.num_outputs, arena, gi.scratch_bytes, msg,
                                           sizeof msg);
        if (rc != EPCTX_OK)
          return Status::Error(rc == EPCTX_INVALID_ARGUMENT ? rc : EPCTX_EP_FAIL,
                               "%s: EPContext node '%.*s' on driver '%s': %s", label_,
                               s.node->name.len(), s.node->name.data, s.driver->info.name, msg);
      }
      rs.FreeList(&rs.scratch);
      for (uint32_t o = 0; o < s.num_outputs; ++o)
        if (s.outputs[o] != UINT32_MAX && !rs.slots[s.outputs[o]].set)
          return node_error(s, label_, EPCTX_INVALID_GRAPH, "the kernel did not produce an output");
      for (uint32_t i = 0; i < s.num_inputs; ++i) {
        uint32_t v = s.inputs[i];
        if (v == UINT32_MAX) continue;
        Slot& slot = rs.slots[v];
        if (--slot.remaining == 0 && !values_[v].graph_output) rs.Release(slot.buf);
      }
    }
    // Emit the requested outputs.
    size_t n = req.output_names ? req.num_outputs : g.num_outputs;
    for (size_t i = 0; i < n; ++i) {
      uint32_t v = UINT32_MAX;
      if (req.output_names) {
        for (uint32_t k = 0; k < g.num_outputs && v == UINT32_MAX; ++k)
          if (g.outputs[k].name.eq(req.output_names[i])) v = output_ids_[k];
        if (v == UINT32_MAX)
          return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: '%s' is not an output of the model",
                               label_, req.output_names[i]);
      } else {
        v = output_ids_[i];
      }
      if (!rs.slots[v].set)
        return Status::Error(EPCTX_INVALID_GRAPH, "%s: output '%.*s' was not computed", label_,
                             values_[v].name.len(), values_[v].name.data);
      EPCTX_RETURN_IF_ERROR(req.emit(req.user, i, rs.slots[v].t));
    }
    return Status::Ok();
  }();
  rs.FreeList(&rs.scratch);
  rs.FreeList(&rs.live);
  env_->alloc.Free(rs.slots);
  return st;
}

}  // namespace epctx
