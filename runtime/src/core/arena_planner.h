/* SPDX-License-Identifier: Apache-2.0 */
// Greedy static memory planning: offsets in one arena for buffers with known
// sizes and lifetimes. One planner serves the session's run arena
// (session/run_plan.cc) and the vnpu compiler's scratch arena
// (host_tools/backends/vnpu/memory_planner.cc); it is freestanding so both
// link the same code.
//
// A buffer needs its bytes from the step that first touches it (`first`) to
// the last step that reads it (`last`), both inclusive. Two buffers whose
// lifetimes do not overlap may share bytes. As TFLM's greedy_memory_planner:
//
//  1. Sort the buffers by size, largest first (ties: earlier first), since
//     big buffers are the hardest to fit later.
//  2. Place each buffer in turn: collect the already placed buffers whose
//     lifetimes overlap its own, sorted by offset, and walk the gaps between
//     them from offset 0 upwards; take the first gap (offsets aligned to
//     `alignment`) the buffer fits in, else the end of the last of them.
//  3. The arena size is the largest end offset, rounded up to `alignment`.
//
// Not optimal (that is NP-hard), but on feed-forward graphs it stays close to
// the largest sum of simultaneously live buffers. Cost: O(n^2 log n) for n
// buffers, so callers bound n (the session plans at most kMaxPlannedBuffers
// and leaves larger graphs to the allocator).
#ifndef EPCTX_CORE_ARENA_PLANNER_H
#define EPCTX_CORE_ARENA_PLANNER_H

#include <cstdint>

namespace epctx {

struct PlannedBuffer {
  uint64_t size = 0;
  uint32_t first = UINT32_MAX;  // UINT32_MAX: never used, gets no bytes
  uint32_t last = 0;
  uint64_t offset = 0;  // set by PlanArena
};

// Sets every used buffer's offset; returns the arena size, or UINT64_MAX when
// sizes overflow. `alignment` is a power of two. order and live are scratch
// arrays of n entries each, owned by the caller.
uint64_t PlanArena(PlannedBuffer* bufs, uint32_t n, uint64_t alignment, uint32_t* order,
                   uint32_t* live);

}  // namespace epctx

#endif
