/* SPDX-License-Identifier: Apache-2.0 */
// The executor: the state of one run of one graph and the loop over its
// steps (executor.cc), for ExecutionPlan::Run (run.cc).
//
// One loop (RunPlan) runs the main graph and every subgraph: a control-flow
// kernel calls run_subgraph, which runs the subgraph's plan with a RunState
// of its own whose parent is the calling run, so captures read the parent's
// slots. Nesting is bounded by the plans (kMaxGraphDepth), and each level
// frees what it allocated on every exit.
#ifndef EPCTX_SESSION_EXECUTOR_H
#define EPCTX_SESSION_EXECUTOR_H

#include "session/execution_plan.h"
#include "session/run_memory.h"

namespace epctx {

// The state of one run of one graph, on RunPlan's frame; kernels reach it
// as KernelHost::user, a subgraph's run through `parent`.
struct RunState {
  const Allocator* alloc;
  const GraphPlan* plan;
  const RunState* parent;  // the run of the enclosing graph, for captures
  Slot* slots;
  // The main graph's run: its plan and arena; nullptr in a subgraph's run.
  const MemoryPlan* mplan;
  uint8_t* arena;
  RunMemory* mem;         // the scratch block, shared with subgraph runs
  uint64_t scratch_mark;  // mem->scratch_used when this run started
  uint64_t* seen;         // learning: bytes of values beyond the plan
  Buffer live;            // sentinel of the list of live buffers
  Buffer scratch;         // sentinel of this step's scratch buffers
  const Step* step;
  const char* label;          // plan->label
  const RunControl* control;  // terminate flag and deadline; nullptr: none
  ThreadPool* pool;           // the session's intra-op pool, or nullptr

  void Init() {
    live.prev = live.next = &live;
    scratch.prev = scratch.next = &scratch;
  }
  void* Allocate(Buffer* list, uint64_t bytes, uint32_t alignment, Buffer** out) {
    // Above kHeader (driver arenas up to a page): the header grows to the
    // alignment, so the data after it is aligned too. Only scratch buffers
    // ask for that; live buffers (found again from their data) use kHeader.
    const size_t head = alignment > kHeader ? alignment : kHeader;
    if (alignment > EPCTX_HAL_MAX_ALIGNMENT || bytes > SIZE_MAX - head) return nullptr;
    Buffer* b = static_cast<Buffer*>(alloc->Alloc(static_cast<size_t>(bytes) + head, head));
    if (!b) return nullptr;
    b->refs = 1;
    b->bytes = bytes;
    b->next = list->next;
    b->prev = list;
    list->next->prev = b;
    list->next = b;
    if (out) *out = b;
    return reinterpret_cast<uint8_t*>(b) + head;
  }
  void Release(Buffer* b) {
    if (!b || --b->refs) return;
    b->prev->next = b->next;
    b->next->prev = b->prev;
    alloc->Free(b);
  }
  void FreeList(Buffer* list) {
    while (list->next != list) {
      Buffer* b = list->next;
      b->refs = 1;
      Release(b);
    }
  }
};

// A failure of step s, naming its node (executor.cc).
Status node_error(const Step& s, const char* label, int code, const char* what);

// An EPContext step: the driver executes its graph (driver_step.cc).
Status run_driver_step(RunState& rs, const Step& s, const TensorRef* const* in_refs);

// What a run of the main graph brings beyond its inputs: its memory, the
// plan in force, the arena (the pool's or the caller's), and the caller's
// output buffers per requested output (nullptr: none).
struct MainRun {
  RunMemory* mem;
  const MemoryPlan* plan;
  uint8_t* arena;
  const TensorRef* const* bound;
  uint64_t* seen;  // nullptr once the session has learned from a first run
  const RunControl* control;
  ThreadPool* pool;
};

// Runs plan p. Graph input i is inputs[i] (initializer-backed inputs keep
// their initializer); outputs outs[0..num_outs) (graph output indices, or
// all in order when outs is nullptr) go to emit. parent: the run of the
// enclosing graph, for a subgraph; main: set for the main graph only.
Status RunPlan(const Allocator& alloc, const GraphPlan& p, const RunState* parent,
               const MainRun* main, const TensorRef* const* inputs, const uint32_t* outs,
               size_t num_outs, ValueSink emit, void* user);

}  // namespace epctx

#endif
