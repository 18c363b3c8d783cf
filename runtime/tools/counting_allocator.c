/* SPDX-License-Identifier: Apache-2.0 */
#include "counting_allocator.h"

#include <stdint.h>
#include <stdlib.h>

/* The header sits right before the returned pointer; its slot is as wide as
 * the alignment asked for (at least 16) so the pointer keeps that alignment. */
typedef struct header {
  size_t size;
  size_t offset; /* from the malloc'd block to the returned pointer */
} header;

static void* count_alloc(void* user, size_t size, size_t alignment) {
  epctx_counting_allocator* a = user;
  size_t slot = alignment < 16 ? 16 : alignment;
  if (size > SIZE_MAX - slot) return NULL;
  void* block = NULL;
  if (posix_memalign(&block, slot, slot + size) != 0) return NULL;
  unsigned char* p = (unsigned char*)block + slot;
  header* h = (header*)(void*)(p - sizeof(header));
  h->size = size;
  h->offset = slot;
  atomic_fetch_add(&a->allocs, 1);
  atomic_fetch_add(&a->bytes, (long long)size);
  long long live = atomic_fetch_add(&a->live, (long long)size) + (long long)size;
  long long peak = atomic_load(&a->peak);
  while (live > peak && !atomic_compare_exchange_weak(&a->peak, &peak, live)) {
  }
  return p;
}

static void count_free(void* user, void* ptr) {
  if (!ptr) return;
  epctx_counting_allocator* a = user;
  header* h = (header*)(void*)((unsigned char*)ptr - sizeof(header));
  atomic_fetch_add(&a->frees, 1);
  atomic_fetch_sub(&a->live, (long long)h->size);
  free((unsigned char*)ptr - h->offset);
}

void epctx_counting_allocator_init(epctx_counting_allocator* a) {
  a->allocator.user = a;
  a->allocator.alloc = count_alloc;
  a->allocator.free = count_free;
  atomic_init(&a->allocs, 0);
  atomic_init(&a->frees, 0);
  atomic_init(&a->bytes, 0);
  atomic_init(&a->live, 0);
  atomic_init(&a->peak, 0);
}

epctx_alloc_counts epctx_counting_allocator_read(epctx_counting_allocator* a) {
  epctx_alloc_counts c = {atomic_load(&a->allocs), atomic_load(&a->frees), atomic_load(&a->bytes),
                          atomic_load(&a->live), atomic_load(&a->peak)};
  return c;
}

epctx_alloc_counts epctx_counting_allocator_mark(epctx_counting_allocator* a) {
  atomic_store(&a->peak, atomic_load(&a->live));
  return epctx_counting_allocator_read(a);
}
