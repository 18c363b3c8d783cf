// SPDX-License-Identifier: Apache-2.0
#include "core/budget.h"

namespace epctx {
namespace {

// In front of each block: the total taken (header included) and the offset
// from the inner block's start to the user pointer.
struct Header {
  size_t total;
  size_t offset;
};
constexpr size_t kHeaderRoom = 16;
static_assert(sizeof(Header) <= kHeaderRoom, "header fits in front of a 16-aligned block");

}  // namespace

Budget::Budget(const Allocator& inner) : inner_(inner) {
  epctx_allocator a;
  a.user = this;
  a.alloc = AllocFn;
  a.free = FreeFn;
  alloc_ = Allocator(a);
}

void Budget::set_limit(uint64_t limit) {
  limit_ = limit == 0 || limit > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(limit);
}

void* Budget::AllocFn(void* user, size_t size, size_t alignment) {
  Budget* b = static_cast<Budget*>(user);
  const size_t room = alignment > kHeaderRoom ? alignment : kHeaderRoom;
  if (size > SIZE_MAX - room) return nullptr;
  const size_t total = size + room;
  size_t used = b->used_.load(std::memory_order_relaxed);
  do {
    if (total > b->limit_ - used) {
      b->refused_.store(total, std::memory_order_relaxed);
      return nullptr;
    }
  } while (!b->used_.compare_exchange_weak(used, used + total, std::memory_order_relaxed));
  uint8_t* base = static_cast<uint8_t*>(b->inner_.Alloc(total, room));
  if (!base) {
    b->used_.fetch_sub(total, std::memory_order_relaxed);
    return nullptr;
  }
  uint8_t* p = base + room;
  Header h{total, room};
  __builtin_memcpy(p - sizeof(Header), &h, sizeof h);
  return p;
}

void Budget::FreeFn(void* user, void* ptr) {
  if (!ptr) return;
  Budget* b = static_cast<Budget*>(user);
  uint8_t* p = static_cast<uint8_t*>(ptr);
  Header h;
  __builtin_memcpy(&h, p - sizeof(Header), sizeof h);
  b->used_.fetch_sub(h.total, std::memory_order_relaxed);
  b->inner_.Free(p - h.offset);
}

bool ParseByteCount(const char* s, uint64_t* out) {
  if (!s || *s < '0' || *s > '9') return false;
  uint64_t v = 0;
  for (; *s >= '0' && *s <= '9'; ++s) {
    const uint64_t d = static_cast<uint64_t>(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  unsigned shift = 0;
  if (*s == 'K') shift = 10, ++s;
  else if (*s == 'M') shift = 20, ++s;
  else if (*s == 'G') shift = 30, ++s;
  if (*s != '\0' || v == 0 || v > (UINT64_MAX >> shift)) return false;
  *out = v << shift;
  return true;
}

}  // namespace epctx
