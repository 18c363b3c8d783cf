/* SPDX-License-Identifier: Apache-2.0 */
// The memory of a run (ExecutionPlan::Run, run.cc) and the kernels' hooks
// that allocate from it (run_memory.cc).
//
// A run takes a RunMemory from the session's pool (one per
// concurrent run, kept for the next): the arena the memory plan places the
// main graph's intermediates in (memory_plan.h), the value slots, and a
// grow-only scratch block kernels bump-allocate from (reset after each
// step). Outputs the caller bound are written in place. Anything the plan
// did not foresee (a value whose shape was unknown at create, a larger
// output, a subgraph's values, scratch beyond the block) is one allocation
// from the env allocator with a small header (a reference count and list
// links), released when its last consumer has run; a view output (Reshape,
// Flatten ...) shares the buffer of the input it points into, so the buffer
// lives until both are dead. The first run records what it allocated that
// way; the session then plans those values too (LearnPlan) and grows the
// scratch block, so later runs of the same shapes make no allocator call.
// Constants and caller inputs are never owned by the run.
#ifndef EPCTX_SESSION_RUN_MEMORY_H
#define EPCTX_SESSION_RUN_MEMORY_H

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "kernels/kernel.h"

namespace epctx {
namespace runmem {

// A buffer the plan did not foresee; the env allocation starts with this
// header, linked into the run's live or scratch list.
struct Buffer {
  Buffer* prev;
  Buffer* next;
  uint32_t refs;
  uint64_t bytes;
  // data follows at kHeader
};
constexpr size_t kHeader = 64;

// A value's tensor during a run, and the buffer it holds a reference to.
struct Slot {
  TensorRef t;
  Buffer* buf;
  const TensorRef* bound;  // the caller's buffer for this graph output
  uint32_t remaining;
  bool set;
};

// The kernels' allocation hooks (KernelHost, kernels/kernel.h) for the
// step being run: `user` is its RunState (executor.h).
Status alloc_output(void* user, uint32_t index, int32_t dtype, uint32_t rank, const int64_t* dims,
                    TensorRef** out);
Status view_output(void* user, uint32_t index, int32_t dtype, uint32_t rank, const int64_t* dims,
                   const void* data);
void* scratch(void* user, uint64_t bytes, uint32_t alignment);

}  // namespace runmem

using runmem::Buffer;
using runmem::Slot;
using runmem::kHeader;

constexpr uint32_t kMaxRunOutputs = 256;

// One concurrent run's memory, pooled by the ExecutionPlan (TakeRunMemory,
// ReturnRunMemory): one allocation holds it and its arrays; the arena and
// the scratch block are allocations of their own, kept across runs.
struct RunMemory {
  RunMemory* next_idle;
  RunMemory* next_all;
  uint8_t* arena;  // owned, arena_cap bytes
  uint64_t arena_cap;
  uint8_t* scratch;  // owned, scratch_cap bytes
  uint64_t scratch_cap;
  uint64_t scratch_used;  // may pass scratch_cap: the demand of this step
  uint64_t scratch_peak;
  Slot* slots;                  // the main graph's, num_values + 1
  const TensorRef** bound;      // per graph input, num_inputs + 1
  uint32_t* outs;               // kMaxRunOutputs
  const TensorRef** bound_out;  // kMaxRunOutputs: RunRequest::bound_output_objects read in place
  uint64_t* seen;               // per value: bytes allocated beyond the plan
  bool slots_primed;            // slots hold the constants (after a first run)
};

}  // namespace epctx

#endif
