/* SPDX-License-Identifier: Apache-2.0 */
/* epctx HAL: the versioned C ABI between the runtime and NPU drivers.
 *
 * A driver is one const epctx_hal_driver struct of function pointers. The
 * runtime calls, in this order:
 *   get_info            once, at registration
 *   check_compatibility before any payload byte reaches the driver
 *   load_context        once per primary EPContext node (main_context=1)
 *   get_graph           once per EPContext node bound to that context
 *   execute             any number of times, from many threads at once
 *   release_context     when the last session using the context goes away
 * A context may serve several sessions (context groups): get_graph is then
 * called once per binding session, never concurrently on one context.
 *
 * Ownership and lifetimes
 * - Every pointer the runtime passes in (blobs, names, tensors) stays valid
 *   only for the call, except the payload views of epctx_hal_blob: those stay
 *   valid and unchanged until release_context for that context returns. A
 *   driver may keep pointers into them (weights are never copied).
 * - Every pointer a driver returns in epctx_hal_driver_info and
 *   epctx_hal_graph_info must stay valid while the driver (for info) or the
 *   context (for graph info) lives.
 * - Memory a driver needs comes from the host allocator passed to
 *   load_context; execute must not allocate: the runtime passes a scratch
 *   arena of the size the graph asked for, private to that call.
 *
 * Errors: every function returns an epctx_code and, on failure, writes a
 * NUL-terminated message into msg (at most msg_cap bytes) that names the
 * graph, field or tensor and what was expected vs found. */
#ifndef EPCTX_HAL_H
#define EPCTX_HAL_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to the structs below. */
#define EPCTX_HAL_ABI_VERSION 1u

typedef struct epctx_hal_version {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
} epctx_hal_version;

/* Driver accepts EPContext nodes that have no `source` attribute when it is
 * the only registered driver. */
#define EPCTX_HAL_FLAG_ACCEPTS_UNNAMED_SOURCE 0x1u

typedef struct epctx_hal_driver_info {
  const char* name;                 /* short name, e.g. "vnpu" */
  epctx_hal_version driver_version;
  epctx_hal_version sdk_version;
  /* "<family>-<major>.<minor>", e.g. "vnpu-1.0" */
  const char* hardware_architecture;
  /* Accepted `source` values, compared case-insensitively. */
  const char* const* source_keys;
  uint32_t num_source_keys;
  /* Required alignment (bytes, power of two) of payload and weight views. */
  uint32_t payload_alignment;
  uint32_t flags; /* EPCTX_HAL_FLAG_* */
} epctx_hal_driver_info;

/* What an EPContext node and its binary say they were compiled for. Strings
 * are NUL-terminated; empty when absent. */
typedef struct epctx_hal_context_desc {
  const char* source;
  const char* ep_sdk_version;
  const char* hardware_architecture;
  const char* node_name;
} epctx_hal_context_desc;

typedef struct epctx_hal_graph_blob {
  const char* name;    /* graph name inside the container */
  const uint8_t* data; /* driver payload (command stream) */
  uint64_t size;
} epctx_hal_graph_blob;

/* A context as the runtime hands it over. `data/size` is always the whole
 * blob as found (the embedded ep_cache_context bytes or the mapped file).
 * When the blob is an epctx container (see runtime/schema/container.fbs) the
 * runtime has already verified it, and the parsed segments are given too. */
typedef struct epctx_hal_blob {
  const uint8_t* data;
  uint64_t size;
  uint32_t is_container;
  const uint8_t* weights; /* container weight segment (NULL if none) */
  uint64_t weights_size;
  const epctx_hal_graph_blob* graphs; /* valid for the call only */
  uint32_t num_graphs;
} epctx_hal_blob;

/* Services the runtime offers drivers (allocation, logging). */
typedef struct epctx_hal_host {
  void* user;
  void* (*alloc)(void* user, size_t size, size_t alignment);
  void (*free)(void* user, void* ptr);
  void (*log)(void* user, int level, const char* message);
} epctx_hal_host;

typedef struct epctx_hal_tensor_desc {
  const char* name;
  int32_t dtype; /* epctx_dtype */
  uint32_t rank;
  int64_t dims[8];
} epctx_hal_tensor_desc;

typedef struct epctx_hal_graph_info {
  uint32_t num_inputs;
  uint32_t num_outputs;
  const epctx_hal_tensor_desc* inputs;  /* in EPContext node input order */
  const epctx_hal_tensor_desc* outputs; /* in EPContext node output order */
  uint64_t scratch_bytes;     /* arena execute needs */
  uint32_t scratch_alignment; /* power of two */
} epctx_hal_graph_info;

typedef struct epctx_hal_tensor {
  int32_t dtype;
  uint32_t rank;
  const int64_t* dims;
  void* data;
  uint64_t bytes;
} epctx_hal_tensor;

typedef struct epctx_hal_context epctx_hal_context; /* driver-defined */
typedef struct epctx_hal_graph epctx_hal_graph;     /* driver-defined */

typedef struct epctx_hal_driver {
  uint32_t abi_version; /* EPCTX_HAL_ABI_VERSION */
  uint32_t struct_size; /* sizeof(epctx_hal_driver) */
  void* user;           /* driver state, passed back as `self->user` */

  int (*get_info)(const struct epctx_hal_driver* self,
                  epctx_hal_driver_info* out);

  /* Decides from names and versions alone; reads no payload. */
  int (*check_compatibility)(const struct epctx_hal_driver* self,
                             const epctx_hal_context_desc* desc, char* msg,
                             size_t msg_cap);

  int (*load_context)(const struct epctx_hal_driver* self,
                      const epctx_hal_blob* blob, const epctx_hal_host* host,
                      epctx_hal_context** out, char* msg, size_t msg_cap);

  /* name: the graph to bind. When the context holds exactly one graph the
   * driver returns it whatever its name. The graph lives as long as its
   * context.
   * A graph's payload may be read from its first get_graph on, never
   * earlier (not in load_context): a session checks (signed packages) and
   * pages in only the payloads of the graphs it binds, so the others may be
   * unverified.
   * Payload bytes may be a shared mapping of a file that another process
   * can rewrite after they were checked. Everything execute computes an
   * address or a size from (shapes, offsets, op parameters) must be copied
   * into private memory and validated there, here in get_graph; execute
   * reads only that copy. Weights may stay mapped (a rewrite then changes
   * numbers, never an address). */
  int (*get_graph)(const struct epctx_hal_driver* self,
                   epctx_hal_context* ctx, const char* name,
                   epctx_hal_graph** out, epctx_hal_graph_info* info,
                   char* msg, size_t msg_cap);

  /* Thread-safe: concurrent calls on one graph each get their own scratch. */
  int (*execute)(const struct epctx_hal_driver* self, epctx_hal_graph* graph,
                 const epctx_hal_tensor* inputs, uint32_t num_inputs,
                 epctx_hal_tensor* outputs, uint32_t num_outputs,
                 void* scratch, uint64_t scratch_bytes, char* msg,
                 size_t msg_cap);

  void (*release_context)(const struct epctx_hal_driver* self,
                          epctx_hal_context* ctx);
} epctx_hal_driver;

#ifdef __cplusplus
}
#endif
#endif
