// SPDX-License-Identifier: Apache-2.0
#include "session/bound_graphs.h"

#include "core/sort.h"

namespace epctx {
namespace {

bool Overlap(Bytes a, Bytes b) {
  if (!a.size || !b.size || !a.data || !b.data) return false;
  // Compare as addresses; both views lie inside the same container.
  uintptr_t a0 = reinterpret_cast<uintptr_t>(a.data), b0 = reinterpret_cast<uintptr_t>(b.data);
  return a0 < b0 + b.size && b0 < a0 + a.size;
}

}  // namespace

Status UnboundPayloads(const ContainerView& c, const GraphNames& names, Arena& arena,
                       const Bytes** out, uint32_t* num) {
  *out = nullptr;
  *num = 0;
  if (c.num_graphs < 2) return Status::Ok();
  const uint32_t n = c.num_graphs;
  // Which graphs the session binds: one look-up per name, O(names log n).
  uint8_t* bound = arena.AllocArray<uint8_t>(n);
  Bytes* skip = arena.AllocArray<Bytes>(n);
  Bytes* read = arena.AllocArray<Bytes>(n + 1);
  if (!bound || !skip || !read)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for %u skip ranges", n);
  auto mark = [&](StrView name) {
    int64_t j = c.Find(name);
    if (j >= 0) bound[j] = 1;
  };
  mark(names.primary);
  for (uint32_t i = 0; i < names.num_others; ++i) mark(names.others[i]);
  // The ranges that are read (bound payloads and the weights), sorted by
  // start with each end raised to the furthest end so far: a payload
  // overlaps one of them iff it overlaps the last range starting below its
  // end, found by binary search. O(n log n) for any graph count.
  uint32_t nr = 0;
  if (c.weights.size && c.weights.data) read[nr++] = c.weights;
  for (uint32_t j = 0; j < n; ++j)
    if (bound[j] && c.graphs[j].payload.size && c.graphs[j].payload.data)
      read[nr++] = c.graphs[j].payload;
  HeapSort(read, nr, [](const Bytes& a, const Bytes& b) { return a.data < b.data; });
  uintptr_t reach = 0;
  for (uint32_t k = 0; k < nr; ++k) {
    uintptr_t end = reinterpret_cast<uintptr_t>(read[k].data) + read[k].size;
    if (end > reach) reach = end;
    read[k].size = reach - reinterpret_cast<uintptr_t>(read[k].data);  // now: to furthest end
  }
  uint32_t m = 0;
  for (uint32_t j = 0; j < n; ++j) {
    const Bytes p = c.graphs[j].payload;
    if (bound[j] || !p.size || !p.data) continue;
    // Last read range starting before p ends.
    uint32_t lo = 0, hi = nr;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (read[mid].data < p.data + p.size) lo = mid + 1;
      else hi = mid;
    }
    bool overlaps = lo > 0 && Overlap(p, read[lo - 1]);
    if (!overlaps) skip[m++] = p;
  }
  *out = skip;
  *num = m;
  return Status::Ok();
}

}  // namespace epctx
