/* SPDX-License-Identifier: Apache-2.0 */
// The intra-op thread pool: `threads - 1` workers started once (when a
// session is created, never per Run) through the PAL, plus the thread that
// calls ParallelFor, which always works too.
//
// ParallelFor(chunks, fn, user) runs fn(user, chunk, worker) once for every
// chunk in [0, chunks) and returns when all have finished. What a chunk
// covers is fixed by the caller (a static split of rows, columns or
// channels); which thread runs it is not: threads claim the next chunk from
// a shared counter, so a thread the OS delays does not hold the others up.
// Chunks write disjoint outputs and never combine partial results, so the
// output is bit-identical whatever the thread count and the interleaving.
// `worker` is in [0, threads()) and unique among the chunks of one call
// running at one time (a serial call elsewhere may also be worker 0), so it
// may index scratch the call's caller allocated.
//
// One ParallelFor at a time: a call that finds the pool busy (a concurrent
// Run of the same session, or a kernel calling in from inside a chunk) runs
// all its chunks on its own thread as worker 0, so concurrent Runs never
// start more threads than the pool has.
//
// Workers sleep on a condition variable between calls after a short spin
// (about 50 us), which keeps back-to-back layers from paying a wake-up
// each. The pool is destroyed only when no call is in flight.
#ifndef EPCTX_CORE_THREAD_POOL_H
#define EPCTX_CORE_THREAD_POOL_H

#include <atomic>
#include <cstdint>

#include <epctx/pal.h>

#include "core/memory.h"

namespace epctx {

class ThreadPool {
 public:
  using ChunkFn = void (*)(void* user, uint32_t chunk, uint32_t worker);
  static constexpr uint32_t kMaxThreads = 256;
  static constexpr uint32_t kMaxChunks = 1023;

  // A pool of `threads` (caller included, at most kMaxThreads); nullptr
  // when threads <= 1, out of memory, or the PAL starts no thread (bare
  // metal): callers then run serially. Fewer threads than asked when the
  // PAL starts only some.
  static ThreadPool* Create(const Allocator& alloc, uint32_t threads);
  static void Destroy(ThreadPool* pool);

  uint32_t threads() const { return threads_; }
  // Calls that ran on the pool's threads (not serially): for tests.
  uint32_t parallel_calls() const { return parallel_calls_.load(std::memory_order_relaxed); }
  // More than kMaxChunks chunks run serially.
  void ParallelFor(uint32_t chunks, ChunkFn fn, void* user);

  ThreadPool(const Allocator& alloc) : alloc_(alloc) {}  // use Create
  ~ThreadPool();

 private:
  struct Worker {
    ThreadPool* pool;
    uint32_t index;
    epctx_pal_thread* thread;
  };
  static void WorkerMain(void* arg);
  // Runs chunks of job `gen` until none is left or the pool moved on.
  void RunChunks(uint32_t gen, uint32_t worker);

  Allocator alloc_;
  uint32_t threads_ = 1;
  Worker* workers_ = nullptr;
  uint32_t started_ = 0;
  epctx_pal_mutex* mu_ = nullptr;
  epctx_pal_cond* work_cv_ = nullptr;  // a new job, or stop
  epctx_pal_cond* done_cv_ = nullptr;  // the last chunk finished
  bool stop_ = false;                  // under mu_
  std::atomic<uint32_t> busy_{0};      // a ParallelFor is running
  // The job: set by the caller before it publishes the generation.
  ChunkFn fn_ = nullptr;
  void* user_ = nullptr;
  // generation | chunks | next chunk to claim (thread_pool.cc): a claim is
  // one compare-exchange, so a late thread never claims a chunk of a job
  // that has moved on, nor reads a job's fields unless it holds one of its
  // chunks.
  std::atomic<uint32_t> claim_{0};
  std::atomic<uint32_t> done_{0};  // chunks finished in this job
  std::atomic<uint32_t> parallel_calls_{0};
};

// What chunk c of `chunks` covers when [0, n) is cut into that many pieces
// of whole `align` units, as even as possible: [*begin, *end).
inline void ChunkRange(int64_t n, uint32_t chunks, uint32_t c, int64_t align, int64_t* begin,
                       int64_t* end) {
  const int64_t units = (n + align - 1) / align;
  const int64_t base = units / chunks, extra = units % chunks;
  const int64_t u0 = c * base + (c < extra ? c : extra);
  const int64_t u1 = u0 + base + (c < extra ? 1 : 0);
  *begin = u0 * align < n ? u0 * align : n;
  *end = u1 * align < n ? u1 * align : n;
}

// How many chunks to cut `work` units into so that each has at least
// `min_per_chunk`, at most `threads` (1 when the work is too small to pay
// for a wake-up).
inline uint32_t ChunkCount(uint32_t threads, int64_t work, int64_t min_per_chunk) {
  if (threads <= 1 || work < 2 * min_per_chunk) return 1;
  const int64_t most = work / min_per_chunk;
  return most < threads ? static_cast<uint32_t>(most) : threads;
}

}  // namespace epctx

#endif
