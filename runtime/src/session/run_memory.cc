// SPDX-License-Identifier: Apache-2.0
// The memory of a run (run_memory.h): the kernels' allocation hooks, the
// pool of RunMemory the plan keeps, and the memory plan at create and after
// the first run.
#include <cstring>

#include "session/executor.h"

namespace epctx {
namespace runmem {
namespace {

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

}  // namespace

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

}  // namespace runmem

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

}  // namespace epctx
