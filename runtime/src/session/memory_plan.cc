// SPDX-License-Identifier: Apache-2.0
// Building the main graph's memory plan (memory_plan.h).
#include "session/memory_plan.h"

#include <new>

#include "core/arena_planner.h"

namespace epctx {
namespace {

bool is_view_op(const Step& s) {
  if (!s.kernel || !s.node->domain.empty()) return false;
  static const char* const kViews[] = {"Reshape",   "Flatten",  "Squeeze",
                                       "Unsqueeze", "Identity", "Dropout"};
  for (const char* op : kViews)
    if (s.node->op_type.eq(op)) return true;
  return false;
}

uint64_t static_bytes(const onnx::ValueInfoView& vi) {
  size_t esize = vi.is_tensor ? dtype_size(vi.dtype) : 0;
  uint64_t elems = 0;
  if (!esize || !vi.has_shape || vi.rank > static_cast<uint32_t>(kMaxRank) ||
      !shape_elements(vi.dims, vi.rank, &elems) || elems > (UINT64_MAX >> 8) / esize)
    return 0;
  return elems * esize;
}

}  // namespace

void DeclaredBytes(const GraphPlan& p, uint64_t* bytes) {
  const onnx::GraphView& g = *p.graph;
  for (uint32_t v = 0; v < p.num_values; ++v) bytes[v] = 0;
  auto take = [&](const onnx::ValueInfoView& vi) {
    uint32_t v = p.Find(vi.name);
    if (v != UINT32_MAX) bytes[v] = static_bytes(vi);
  };
  for (uint32_t i = 0; i < g.num_value_infos; ++i) take(g.value_infos[i]);
  for (uint32_t i = 0; i < g.num_outputs; ++i) take(g.outputs[i]);
}

void FreeMemoryPlan(const Allocator& alloc, MemoryPlan* plan) { alloc.Free(plan); }

Status BuildMemoryPlan(const GraphPlan& p, const uint64_t* bytes, const Allocator& alloc,
                       MemoryPlan** out) {
  *out = nullptr;
  const uint32_t n = p.num_values, steps = p.num_steps;
  const uint64_t nb = static_cast<uint64_t>(n) + steps;  // values and driver arenas
  // One block: the plan, then its arrays, then what planning needs only here.
  uint64_t size = sizeof(MemoryPlan) + n * sizeof(ValuePlacement) + (steps + 1) * sizeof(uint64_t);
  const uint64_t keep = (size + 63) & ~uint64_t{63};
  size = keep + nb * sizeof(PlannedBuffer) + (3 * static_cast<uint64_t>(n) + 3 * nb) * 4;
  uint8_t* mem = static_cast<uint8_t*>(alloc.Alloc(static_cast<size_t>(size), 64));
  if (!mem)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for the memory plan", p.label);
  MemoryPlan* plan = new (mem) MemoryPlan();
  plan->values = reinterpret_cast<ValuePlacement*>(mem + sizeof(MemoryPlan));
  plan->driver_scratch = reinterpret_cast<uint64_t*>(plan->values + n);
  PlannedBuffer* bufs = reinterpret_cast<PlannedBuffer*>(mem + keep);
  uint32_t* producer = reinterpret_cast<uint32_t*>(bufs + nb);
  uint32_t* last = producer + n;
  uint32_t* root = last + n;
  uint32_t* order = root + n;
  uint32_t* live = order + nb;
  uint32_t* owner = live + nb;  // the value (or driver step) of each buffer
  for (uint32_t v = 0; v < n; ++v) {
    plan->values[v] = ValuePlacement{};
    producer[v] = UINT32_MAX;
    last[v] = 0;
    root[v] = v;
  }
  for (uint32_t s = 0; s <= steps; ++s) plan->driver_scratch[s] = UINT64_MAX;
  *out = plan;

  for (uint32_t s = 0; s < steps; ++s) {
    const Step& st = p.steps[s];
    for (uint32_t o = 0; o < st.num_outputs; ++o)
      if (st.outputs[o] != UINT32_MAX) producer[st.outputs[o]] = s;
    for (uint32_t k = 0; k < st.num_inputs + st.num_implicit; ++k) {
      uint32_t v = k < st.num_inputs ? st.inputs[k] : st.implicit[k - st.num_inputs];
      if (v != UINT32_MAX) last[v] = s;  // steps run in order: the latest reader wins
    }
    if (is_view_op(st) && st.num_inputs && st.num_outputs && st.inputs[0] != UINT32_MAX &&
        st.outputs[0] != UINT32_MAX && producer[st.inputs[0]] != UINT32_MAX) {
      root[st.outputs[0]] = root[st.inputs[0]];
      plan->values[st.outputs[0]].arena_view = true;
    }
  }
  for (uint32_t v = 0; v < n; ++v) {
    if (p.values[v].graph_output) last[v] = steps;
    if (producer[v] != UINT32_MAX && last[v] < producer[v]) last[v] = producer[v];
  }
  for (uint32_t v = 0; v < n; ++v)
    if (root[v] != v && last[v] > last[root[v]]) last[root[v]] = last[v];

  uint32_t count = 0;
  for (uint32_t v = 0; v < n; ++v) {
    if (root[v] != v || producer[v] == UINT32_MAX || !bytes[v]) continue;
    bufs[count] = PlannedBuffer{};
    bufs[count].size = bytes[v];
    bufs[count].first = producer[v];
    bufs[count].last = last[v];
    owner[count++] = v;
  }
  const uint32_t value_buffers = count;
  for (uint32_t s = 0; s < steps; ++s) {
    const Step& st = p.steps[s];
    if (st.kernel || !st.graph_info.scratch_bytes ||
        st.graph_info.scratch_alignment > kArenaAlignment)
      continue;
    bufs[count] = PlannedBuffer{};
    bufs[count].size = st.graph_info.scratch_bytes;
    bufs[count].first = bufs[count].last = s;
    owner[count++] = s;
  }
  if (count == 0 || count > kMaxPlannedBuffers) return Status::Ok();  // all to the allocator
  uint64_t arena = PlanArena(bufs, count, kArenaAlignment, order, live);
  if (arena == UINT64_MAX || arena > SIZE_MAX / 2) return Status::Ok();
  for (uint32_t b = 0; b < count; ++b) {
    if (b < value_buffers) {
      ValuePlacement& vp = plan->values[owner[b]];
      vp.offset = bufs[b].offset;
      vp.bytes = bufs[b].size;
      ++plan->planned;
    } else {
      plan->driver_scratch[owner[b]] = bufs[b].offset;
    }
  }
  plan->arena_bytes = arena;
  return Status::Ok();
}

}  // namespace epctx
