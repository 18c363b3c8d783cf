#include "session/bound_graphs.h"

namespace epctx {
namespace {

bool Overlap(Bytes a, Bytes b) {
  if (!a.size || !b.size || !a.data || !b.data) return false;
  // Compare as addresses; both views lie inside the same container.
  uintptr_t a0 = reinterpret_cast<uintptr_t>(a.data), b0 = reinterpret_cast<uintptr_t>(b.data);
  return a0 < b0 + b.size && b0 < a0 + a.size;
}

// True when a session asking for `names` binds graph j of c. The lone graph
// of a single-graph container binds whatever the name (as get_graph does).
bool BindsGraph(const ContainerView& c, uint32_t j, const GraphNames& names) {
  if (c.num_graphs == 1) return j == 0;
  if (j >= c.num_graphs) return false;
  const char* name = c.graphs[j].name ? c.graphs[j].name : "";
  if (names.primary.eq(name)) return true;
  for (uint32_t i = 0; i < names.num_others; ++i)
    if (names.others[i].eq(name)) return true;
  return false;
}

}  // namespace

Status UnboundPayloads(const ContainerView& c, const GraphNames& names, Arena& arena,
                       const Bytes** out, uint32_t* num) {
  *out = nullptr;
  *num = 0;
  if (c.num_graphs < 2) return Status::Ok();
  Bytes* skip = arena.AllocArray<Bytes>(c.num_graphs);
  if (!skip) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for %u skip ranges",
                                  c.num_graphs);
  uint32_t n = 0;
  for (uint32_t j = 0; j < c.num_graphs; ++j) {
    if (BindsGraph(c, j, names)) continue;
    Bytes p = c.graphs[j].payload;
    bool read = Overlap(p, c.weights);
    for (uint32_t k = 0; k < c.num_graphs && !read; ++k)
      read = k != j && BindsGraph(c, k, names) && Overlap(p, c.graphs[k].payload);
    if (!read && p.size) skip[n++] = p;
  }
  *out = skip;
  *num = n;
  return Status::Ok();
}

}  // namespace epctx
