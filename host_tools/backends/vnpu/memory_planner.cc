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
//  3. Place the buffers with the shared greedy planner
//     (runtime/src/core/arena_planner.h: largest first, each in the first
//     gap between overlapping buffers), which also sets the arena size.
#include <algorithm>

#include "core/arena_planner.h"

#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace vnpu {

void PruneTensors(IrGraph& g) {
  std::vector<bool> keep(g.tensors.size(), false);
  for (IrOp& op : g.ops) ForEachTensor(op, [&](int& t) { keep[size_t(t)] = true; });
  for (size_t t = g.tensors.size(); t-- > 0;) {  // an alias keeps its source
    const IrTensor& ten = g.tensors[t];
    if (ten.loc == fb::Location::INPUT || ten.loc == fb::Location::OUTPUT) keep[t] = true;
    if (keep[t] && ten.alias_of >= 0) keep[size_t(ten.alias_of)] = true;
  }
  std::vector<int> to(g.tensors.size(), -1);
  std::vector<IrTensor> kept;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!keep[t]) continue;
    to[t] = int(kept.size());
    kept.push_back(std::move(g.tensors[t]));
  }
  for (IrTensor& ten : kept)
    if (ten.alias_of >= 0) ten.alias_of = to[size_t(ten.alias_of)];
  for (IrOp& op : g.ops) ForEachTensor(op, [&](int& t) { t = to[size_t(t)]; });
  g.tensors = std::move(kept);
}

void PlanMemory(IrGraph& g, uint32_t alignment) {
  auto root = [&](int t) {
    return g.tensors[size_t(t)].alias_of >= 0 ? g.tensors[size_t(t)].alias_of : t;
  };
  std::vector<int> buffer_of(g.tensors.size(), -1);
  std::vector<PlannedBuffer> bufs;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const IrTensor& ten = g.tensors[t];
    if (ten.loc != fb::Location::ARENA || ten.alias_of >= 0) continue;
    buffer_of[t] = int(bufs.size());
    PlannedBuffer b;
    b.size = ten.bytes();
    bufs.push_back(b);
  }
  // Ops in order: a buffer's first touch is its writer, or a read before
  // any write, which keeps it live from there.
  auto touch = [&](int t, uint32_t op) {
    int b = buffer_of[size_t(root(t))];
    if (b < 0) return;
    PlannedBuffer& buf = bufs[size_t(b)];
    if (buf.first == UINT32_MAX) buf.first = op;
    buf.last = std::max(buf.last, op);
  };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const IrOp& op = g.ops[i];
    touch(op.out, uint32_t(i));
    for (int t : op.ins) touch(t, uint32_t(i));
    // int8 level: a DYNAMIC_QUANTIZE writes its scale and zero point into
    // `weights` / `bias`, and a dynamic QCONV2D / QGEMM reads zp_tensor.
    for (int t : {op.weights, op.bias, op.mult, op.zp_tensor, op.table, op.addend})
      if (t >= 0) touch(t, uint32_t(i));
    // RECURRENT writes up to three outputs.
    for (int t : {op.rnn.yh, op.rnn.yc})
      if (t >= 0) touch(t, uint32_t(i));
  }
  std::vector<uint32_t> order(bufs.size()), live(bufs.size());
  uint64_t arena =
      PlanArena(bufs.data(), uint32_t(bufs.size()), alignment, order.data(), live.data());
  if (arena == UINT64_MAX) throw CompileError("vnpu: arena size overflows");
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    IrTensor& ten = g.tensors[t];
    if (ten.loc != fb::Location::ARENA) continue;
    ten.offset = bufs[size_t(buffer_of[size_t(root(int(t)))])].offset;
  }
  g.arena_size = arena;
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
