// SPDX-License-Identifier: Apache-2.0
// The greedy planner of arena_planner.h.
#include "core/arena_planner.h"

#include "core/sort.h"

namespace epctx {
namespace {

bool align_up(uint64_t v, uint64_t a, uint64_t* out) {
  if (v > UINT64_MAX - (a - 1)) return false;
  *out = (v + a - 1) & ~(a - 1);
  return true;
}

}  // namespace

uint64_t PlanArena(PlannedBuffer* bufs, uint32_t n, uint64_t alignment, uint32_t* order,
                   uint32_t* live) {
  uint32_t used = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (bufs[i].first != UINT32_MAX) order[used++] = i;
  HeapSort(order, used, [&](uint32_t a, uint32_t b) {
    if (bufs[a].size != bufs[b].size) return bufs[a].size > bufs[b].size;
    if (bufs[a].first != bufs[b].first) return bufs[a].first < bufs[b].first;
    return a < b;  // a total order keeps the result independent of the sort
  });
  uint64_t arena = 0;
  for (uint32_t k = 0; k < used; ++k) {
    PlannedBuffer& b = bufs[order[k]];
    uint32_t nl = 0;
    for (uint32_t j = 0; j < k; ++j) {
      const PlannedBuffer& o = bufs[order[j]];
      if (o.first <= b.last && b.first <= o.last) live[nl++] = order[j];
    }
    HeapSort(live, nl, [&](uint32_t x, uint32_t y) { return bufs[x].offset < bufs[y].offset; });
    uint64_t candidate = 0;
    for (uint32_t j = 0; j < nl; ++j) {
      const PlannedBuffer& o = bufs[live[j]];
      if (candidate <= o.offset && b.size <= o.offset - candidate) break;  // fits before o
      uint64_t end;
      if (o.offset + o.size < o.offset || !align_up(o.offset + o.size, alignment, &end))
        return UINT64_MAX;
      if (end > candidate) candidate = end;
    }
    if (b.size > UINT64_MAX - candidate) return UINT64_MAX;
    b.offset = candidate;
    if (candidate + b.size > arena) arena = candidate + b.size;
  }
  uint64_t size;
  return align_up(arena, alignment, &size) ? size : UINT64_MAX;
}

}  // namespace epctx
