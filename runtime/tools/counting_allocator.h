/* SPDX-License-Identifier: Apache-2.0 */
/* An epctx_allocator that counts what the runtime asks of it, for the
 * benchmarks: calls, bytes, and the peak of live bytes since the last mark.
 *
 * It serves from malloc'd blocks with a small header (the size, so frees can
 * be counted in bytes too), so it is as fast as the default allocator but
 * not the same: measure speed with it knowing that. All counters are atomic,
 * so runs on many threads may share one; a peak measured while several runs
 * overlap is their combined peak. The struct must outlive every env using it.
 * Plain C11 + libc: for the tools only, never the runtime. */
#ifndef EPCTX_TOOLS_COUNTING_ALLOCATOR_H
#define EPCTX_TOOLS_COUNTING_ALLOCATOR_H

#include <stdatomic.h>

#include <epctx/epctx.h>

typedef struct epctx_counting_allocator {
  epctx_allocator allocator; /* hand this to epctx_env_create */
  atomic_llong allocs, frees;
  atomic_llong bytes; /* requested by allocs, total */
  atomic_llong live;  /* requested bytes not yet freed */
  atomic_llong peak;  /* most live bytes since the last mark */
} epctx_counting_allocator;

/* A snapshot of the counters. */
typedef struct epctx_alloc_counts {
  long long allocs, frees, bytes, live, peak;
} epctx_alloc_counts;

void epctx_counting_allocator_init(epctx_counting_allocator* a);
/* Starts a new peak at the current live bytes and returns the counters. */
epctx_alloc_counts epctx_counting_allocator_mark(epctx_counting_allocator* a);
epctx_alloc_counts epctx_counting_allocator_read(epctx_counting_allocator* a);

#endif
