// SPDX-License-Identifier: Apache-2.0
#include "core/memory.h"

#include <epctx/pal.h>

namespace epctx {
namespace {
void* pal_alloc(void*, size_t size, size_t alignment) { return epctx_pal_alloc(size, alignment); }
void pal_free(void*, void* p) { epctx_pal_free(p); }
}  // namespace

Allocator Allocator::Default() { return Allocator(epctx_allocator{nullptr, pal_alloc, pal_free}); }

void* Arena::Alloc(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) return nullptr;
  if (head_) {
    uintptr_t base = reinterpret_cast<uintptr_t>(head_ + 1);
    uintptr_t at = (base + head_->used + alignment - 1) & ~(uintptr_t)(alignment - 1);
    size_t off = at - base;
    if (off <= head_->size && size <= head_->size - off) {
      head_->used = off + size;
      total_ += size;
      return reinterpret_cast<void*>(at);
    }
  }
  // New chunk: large requests get a chunk of their own.
  size_t need = size + alignment;
  if (need < size) return nullptr;
  size_t cap = need > chunk_size_ ? need : chunk_size_;
  if (cap > SIZE_MAX - sizeof(Chunk)) return nullptr;
  void* mem = alloc_.Alloc(sizeof(Chunk) + cap, 64);
  if (!mem) return nullptr;
  Chunk* c = static_cast<Chunk*>(mem);
  c->size = cap;
  c->used = 0;
  c->next = head_;
  head_ = c;
  return Alloc(size, alignment);
}

char* Arena::Strdup(const char* s, size_t n) {
  if (n == SIZE_MAX) return nullptr;
  char* p = static_cast<char*>(Alloc(n + 1, 1));
  if (!p) return nullptr;
  if (n) __builtin_memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

void Arena::Reset() {
  while (head_) {
    Chunk* next = head_->next;
    alloc_.Free(head_);
    head_ = next;
  }
  total_ = 0;
}

}  // namespace epctx
