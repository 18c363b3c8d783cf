/* SPDX-License-Identifier: Apache-2.0 */
// A memory budget in front of an Allocator (session option
// epctx.max_memory_bytes): a request that would take the bytes in use above
// the limit is refused with nullptr before it reaches the inner allocator,
// so the callers' usual OUT_OF_MEMORY path reports it and nothing of that
// size is ever allocated. Safe to use from many threads (runs allocate
// concurrently).
//
// Every block carries a header in front of it that records its size, so Free
// returns exactly what Alloc took. The counter is a size_t: lock-free on
// every target (a 64-bit atomic needs libatomic on some 32-bit ones), and no
// block larger than size_t can exist there anyway.
//
// allocator() refers to this object: a Budget must stay where it was built
// for as long as memory taken from it is in use.
#ifndef EPCTX_CORE_BUDGET_H
#define EPCTX_CORE_BUDGET_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/memory.h"

namespace epctx {

class Budget {
 public:
  explicit Budget(const Allocator& inner);
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // 0: no limit. Set before the first allocation.
  void set_limit(uint64_t limit);
  uint64_t limit() const { return limit_; }
  // Bytes taken now, headers included.
  uint64_t in_use() const { return used_.load(std::memory_order_relaxed); }
  // The size of the last refused request; 0 when none was refused.
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  const Allocator& allocator() const { return alloc_; }

 private:
  static void* AllocFn(void* user, size_t size, size_t alignment);
  static void FreeFn(void* user, void* p);

  Allocator inner_;
  Allocator alloc_;
  size_t limit_ = SIZE_MAX;
  std::atomic<size_t> used_{0};
  std::atomic<size_t> refused_{0};
};

// Parses a limit in bytes: decimal digits, optionally followed by K, M or G
// (binary multiples). False for anything else, for 0 and on overflow.
bool ParseByteCount(const char* s, uint64_t* out);

}  // namespace epctx

#endif
