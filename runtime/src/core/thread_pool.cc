// SPDX-License-Identifier: Apache-2.0
#include "core/thread_pool.h"

namespace epctx {
namespace {

constexpr uint64_t kSpinNs = 50 * 1000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield");
#endif
}

// The claim word: generation (12 bits) << 20 | chunks << 10 | next chunk.
// 32 bits, not 64: Cortex-M has no 64-bit atomics (they would be libatomic
// calls). A generation that wraps is harmless: a compare-exchange that
// succeeds claims a chunk of the job the word describes now.
inline uint32_t GenOf(uint32_t claim) { return claim >> 20; }
inline uint32_t ChunksOf(uint32_t claim) { return (claim >> 10) & 0x3ff; }
inline uint32_t NextOf(uint32_t claim) { return claim & 0x3ff; }

}  // namespace

ThreadPool* ThreadPool::Create(const Allocator& alloc, uint32_t threads) {
  if (threads > kMaxThreads) threads = kMaxThreads;
  if (threads <= 1) return nullptr;
  ThreadPool* p = alloc.New<ThreadPool>(alloc);
  if (!p) return nullptr;
  p->mu_ = epctx_pal_mutex_create();
  p->work_cv_ = epctx_pal_cond_create();
  p->done_cv_ = epctx_pal_cond_create();
  p->workers_ = static_cast<Worker*>(alloc.Alloc(sizeof(Worker) * (threads - 1), 16));
  if (!p->mu_ || !p->work_cv_ || !p->done_cv_ || !p->workers_) {
    Destroy(p);
    return nullptr;
  }
  for (uint32_t i = 0; i + 1 < threads; ++i) {
    Worker& w = p->workers_[i];
    w.pool = p;
    w.index = i + 1;
    w.thread = epctx_pal_thread_start(WorkerMain, &w);
    if (!w.thread) break;
    ++p->started_;
  }
  if (p->started_ == 0) {
    Destroy(p);
    return nullptr;
  }
  p->threads_ = p->started_ + 1;
  return p;
}

void ThreadPool::Destroy(ThreadPool* pool) {
  if (pool) pool->alloc_.Delete(pool);
}

ThreadPool::~ThreadPool() {
  if (started_) {
    epctx_pal_mutex_lock(mu_);
    stop_ = true;
    epctx_pal_cond_broadcast(work_cv_);
    epctx_pal_mutex_unlock(mu_);
    for (uint32_t i = 0; i < started_; ++i) epctx_pal_thread_join(workers_[i].thread);
  }
  alloc_.Free(workers_);
  epctx_pal_cond_destroy(done_cv_);
  epctx_pal_cond_destroy(work_cv_);
  epctx_pal_mutex_destroy(mu_);
}

void ThreadPool::RunChunks(uint32_t gen, uint32_t worker) {
  uint32_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (GenOf(c) != gen || NextOf(c) >= ChunksOf(c)) return;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    // A claimed chunk keeps the job (fn_, user_) alive until it is done.
    const uint32_t chunks = ChunksOf(c);
    fn_(user_, NextOf(c), worker);
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
      // The caller may be asleep; take the lock so the wake-up is not lost.
      epctx_pal_mutex_lock(mu_);
      epctx_pal_cond_broadcast(done_cv_);
      epctx_pal_mutex_unlock(mu_);
    }
    c = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::WorkerMain(void* arg) {
  Worker* w = static_cast<Worker*>(arg);
  ThreadPool* p = w->pool;
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = GenOf(p->claim_.load(std::memory_order_acquire));
    if (gen == seen) {
      // Spin a little: the next layer usually follows at once.
      const uint64_t t0 = epctx_pal_now_ns();
      while (gen == seen && epctx_pal_now_ns() - t0 < kSpinNs) {
        for (int i = 0; i < 64; ++i) CpuRelax();
        gen = GenOf(p->claim_.load(std::memory_order_acquire));
      }
    }
    if (gen == seen) {
      epctx_pal_mutex_lock(p->mu_);
      while (!p->stop_ && (gen = GenOf(p->claim_.load(std::memory_order_acquire))) == seen)
        epctx_pal_cond_wait(p->work_cv_, p->mu_);
      const bool stop = p->stop_;
      epctx_pal_mutex_unlock(p->mu_);
      if (stop) return;
    }
    seen = gen;
    p->RunChunks(gen, w->index);
  }
}

void ThreadPool::ParallelFor(uint32_t chunks, ChunkFn fn, void* user) {
  if (chunks == 0) return;
  uint32_t idle = 0;
  if (chunks == 1 || chunks > kMaxChunks ||
      !busy_.compare_exchange_strong(idle, 1, std::memory_order_acquire)) {
    for (uint32_t c = 0; c < chunks; ++c) fn(user, c, 0);
    return;
  }
  parallel_calls_.fetch_add(1, std::memory_order_relaxed);
  fn_ = fn;
  user_ = user;
  done_.store(0, std::memory_order_relaxed);
  const uint32_t gen = (GenOf(claim_.load(std::memory_order_relaxed)) + 1) & 0xfff;
  epctx_pal_mutex_lock(mu_);
  claim_.store(gen << 20 | chunks << 10, std::memory_order_release);
  epctx_pal_cond_broadcast(work_cv_);
  epctx_pal_mutex_unlock(mu_);
  RunChunks(gen, 0);
  if (done_.load(std::memory_order_acquire) != chunks) {
    const uint64_t t0 = epctx_pal_now_ns();
    while (done_.load(std::memory_order_acquire) != chunks && epctx_pal_now_ns() - t0 < kSpinNs)
      for (int i = 0; i < 64; ++i) CpuRelax();
    epctx_pal_mutex_lock(mu_);
    while (done_.load(std::memory_order_acquire) != chunks) epctx_pal_cond_wait(done_cv_, mu_);
    epctx_pal_mutex_unlock(mu_);
  }
  busy_.store(0, std::memory_order_release);
}

}  // namespace epctx
