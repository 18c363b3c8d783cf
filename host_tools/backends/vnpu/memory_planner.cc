// SPDX-License-Identifier: Apache-2.0
// Static memory planning of the vnpu scratch arena.
//
// Every intermediate (ARENA) tensor needs bytes only from the op that writes
// it to the last op that reads it. Two tensors whose lifetimes do not
// overlap may share bytes; the planner packs them greedily, as TFLM's
// greedy_memory_planner does:
//
//  1. Resolve aliases: a reshape-like node that became an alias shares its
//     source's bytes, so the source's lifetime is extended to cover every use
//     of the alias. From here on a "buffer" is an alias root.
//  2. For each buffer record first_use (the op writing it) and last_use (the
//     last op reading it; the writer itself if nobody reads it).
//  3. Sort the buffers by size, largest first (ties: earlier first_use), since
//     big buffers are the hardest to fit later.
//  4. Place each buffer in turn: collect the already placed buffers whose
//     lifetimes overlap its own, sorted by offset, and walk the gaps between
//     them from offset 0 upwards; take the first gap (aligned to `alignment`)
//     the buffer fits in, or the end of the last overlapping buffer.
//  5. The arena size is the largest end offset, rounded up to the alignment.
//
// This is not optimal (that is NP-hard) but on the feed-forward graphs we
// compile it stays close to the largest sum of simultaneously live tensors.
#include <algorithm>

#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace vnpu {

namespace {
struct Buffer {
  uint64_t size;
  int first = -1, last = -1;
  uint64_t offset = 0;
  bool placed = false;
};

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

void PlanMemory(IrGraph& g, uint32_t alignment) {
  auto root = [&](int t) { return g.tensors[size_t(t)].alias_of >= 0 ? g.tensors[size_t(t)].alias_of : t; };
  std::vector<int> buffer_of(g.tensors.size(), -1);
  std::vector<Buffer> bufs;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const IrTensor& ten = g.tensors[t];
    if (ten.loc != fb::Location::ARENA || ten.alias_of >= 0) continue;
    buffer_of[t] = int(bufs.size());
    bufs.push_back({ten.bytes()});
  }
  // Ops in order: a buffer's first touch is its writer, or a read before
  // any write, which keeps it live from there.
  auto touch = [&](int t, int op) {
    int b = buffer_of[size_t(root(t))];
    if (b < 0) return;
    Buffer& buf = bufs[size_t(b)];
    if (buf.first < 0) buf.first = op;
    buf.last = std::max(buf.last, op);
  };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const IrOp& op = g.ops[i];
    touch(op.out, int(i));
    for (int t : op.ins) touch(t, int(i));
  }
  std::vector<size_t> order(bufs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (bufs[a].size != bufs[b].size) return bufs[a].size > bufs[b].size;
    return bufs[a].first < bufs[b].first;
  });
  uint64_t arena = 0;
  std::vector<const Buffer*> live;
  for (size_t idx : order) {
    Buffer& b = bufs[idx];
    if (b.first < 0) continue;  // never used: needs no bytes
    live.clear();
    for (const Buffer& o : bufs)
      if (o.placed && o.first <= b.last && b.first <= o.last) live.push_back(&o);
    std::sort(live.begin(), live.end(),
              [](const Buffer* x, const Buffer* y) { return x->offset < y->offset; });
    uint64_t candidate = 0;
    for (const Buffer* o : live) {
      if (candidate + b.size <= o->offset) break;  // fits in the gap before o
      candidate = std::max(candidate, AlignUp(o->offset + o->size, alignment));
    }
    b.offset = candidate;
    b.placed = true;
    arena = std::max(arena, b.offset + b.size);
  }
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    IrTensor& ten = g.tensors[t];
    if (ten.loc != fb::Location::ARENA) continue;
    ten.offset = bufs[size_t(buffer_of[size_t(root(int(t)))])].offset;
  }
  g.arena_size = AlignUp(arena, alignment);
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
