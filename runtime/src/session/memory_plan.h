/* SPDX-License-Identifier: Apache-2.0 */
// The static memory plan of the main graph: where each intermediate lives in
// a run's arena.
//
// Built from bytes per value: at create from the types the model declares
// (value_info, graph outputs; epctx-compile writes them after shape
// inference), and, for values whose shape was unknown then, once more from
// the sizes the first run allocated (ORT's memory pattern). Lifetimes come
// from the step order: a value lives from its producer to its last reader
// (graph outputs to the end of the run). A view output (Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, Dropout: kernels that ViewOutput input 0)
// shares its input's bytes, so the input's buffer lives as long as its
// last view. An EPContext step's driver arena is planned for that step.
// core/arena_planner.h places the buffers.
//
// The plan is a promise the run checks, never trusts: an output larger than
// its planned bytes, or a view the plan did not expect, goes to the
// allocator (run_memory.cc). Values of subgraphs are not planned.
//
// Ownership: one allocator block, read-only once built, freed with the
// session; any number of runs share it.
#ifndef EPCTX_SESSION_MEMORY_PLAN_H
#define EPCTX_SESSION_MEMORY_PLAN_H

#include "core/memory.h"
#include "core/status.h"
#include "session/plan.h"

namespace epctx {

// More buffers than this are left to the allocator: placement is quadratic.
constexpr uint32_t kMaxPlannedBuffers = 8192;
constexpr uint64_t kArenaAlignment = 64;

struct ValuePlacement {
  uint64_t offset = UINT64_MAX;  // in the arena; UINT64_MAX: not planned
  uint64_t bytes = 0;
  bool arena_view = false;  // a view output whose input's buffer lives long enough
};

struct MemoryPlan {
  ValuePlacement* values = nullptr;    // per value of the main plan
  uint64_t* driver_scratch = nullptr;  // per step: offset of its driver arena, or UINT64_MAX
  uint64_t arena_bytes = 0;
  uint32_t planned = 0;  // values with an offset
};

// The bytes each value of p declares with a static shape and a known type
// (0 when it does not).
void DeclaredBytes(const GraphPlan& p, uint64_t* bytes);

// Plans p (the main graph) for `bytes` per value (0: left to the allocator).
Status BuildMemoryPlan(const GraphPlan& p, const uint64_t* bytes, const Allocator& alloc,
                       MemoryPlan** out);
void FreeMemoryPlan(const Allocator& alloc, MemoryPlan* plan);

}  // namespace epctx

#endif
