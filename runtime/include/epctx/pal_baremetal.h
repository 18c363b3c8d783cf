/* SPDX-License-Identifier: Apache-2.0 */
/* The bare-metal PAL (runtime/src/pal/baremetal): the PAL of a board without
 * an operating system, linked with libepctx_freestanding.a.
 *
 * - Files are named memory regions the board lists (typically linked into
 *   flash): a path is looked up by exact name, so a package is its
 *   `_ctx.onnx`, its context binaries and its `.sig` under the names the
 *   package uses. Mapping returns a view of the region (nothing is copied);
 *   EPCTX_PAL_LOAD_READ and epctx_pal_read_file copy into the heap.
 * - The default allocator is a first-fit allocator over one static arena the
 *   board hands over (freed blocks coalesce with their neighbours).
 * - Logging goes to the board's `write` hook (semihosting, a UART, ...).
 * - Mutexes do nothing: one core, no threads. A board with an RTOS must not
 *   use this PAL from several threads.
 * - Anti-rollback counters live in a small RAM table: a STAND-IN for a real
 *   monotonic counter in OTP or other non-volatile storage, which a product
 *   must provide (the table forgets everything at reset, so it protects only
 *   within one boot).
 *
 * Call epctx_pal_baremetal_init once before any other epctx function. The
 * platform struct, the file table and the arena are borrowed and must stay
 * valid (and the files unchanged) for as long as the runtime is used. */
#ifndef EPCTX_PAL_BAREMETAL_H
#define EPCTX_PAL_BAREMETAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct epctx_baremetal_file {
  const char* name; /* the path the runtime asks for, e.g. "model_ctx.onnx" */
  const void* data;
  size_t size;
} epctx_baremetal_file;

typedef struct epctx_baremetal_platform {
  const epctx_baremetal_file* files;
  size_t num_files;
  void* heap; /* the allocator's arena */
  size_t heap_size;
  void (*write)(const char* text); /* console output; NULL: logging is dropped */
  uint64_t (*now_ns)(void);        /* monotonic clock; NULL: always 0 */
} epctx_baremetal_platform;

/* Returns EPCTX_OK, or EPCTX_INVALID_ARGUMENT when the platform is NULL, a
 * file has no name or no data, or the arena is smaller than 256 bytes. */
int epctx_pal_baremetal_init(const epctx_baremetal_platform* platform);

/* Bytes of the arena in use now and at most so far (block headers and
 * alignment padding included). */
size_t epctx_pal_baremetal_heap_used(void);
size_t epctx_pal_baremetal_heap_peak(void);

#ifdef __cplusplus
}
#endif
#endif
