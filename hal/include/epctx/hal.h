/* SPDX-License-Identifier: Apache-2.0 */
/* epctx HAL: the versioned C ABI between the runtime and NPU drivers.
 *
 * A driver is one const epctx_hal_driver struct of function pointers. The
 * runtime calls, in this order:
 *   get_info            once, at registration
 *   check_compatibility before any payload byte reaches the driver
 *   load_context        once per primary EPContext node (main_context=1)
 *   get_graph           once per EPContext node bound to that context
 *   prepare_graph       (optional) once per get_graph, before the first execute
 *   alloc_io            (optional) staging buffers for I/O the device
 *                       cannot reach, around each execute (free_io after)
 *   sync_for_device     (optional) on the inputs, before each execute
 *   execute             any number of times, from many threads at once
 *   sync_for_cpu        (optional) on the outputs, after each execute
 *   unprepare_graph     (optional) once per prepare_graph, when that session
 *                       lets the graph go
 *   release_context     when the last session using the context goes away
 *   alloc_context_memory / free_context_memory
 *                       (optional) around a load_context / release_context
 *                       pair whose context binary was encrypted: the memory
 *                       the runtime decrypts it into
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
 * graph, field or tensor and what was expected vs found. The runtime reports
 * a driver failure under its own code (EP_FAIL, INVALID_GRAPH) and keeps the
 * driver's code as the status cause (epctx_status_cause).
 *
 * Versions (compatibility rules: hal/PORTING.md)
 * - abi_version = EPCTX_HAL_ABI(major, minor). A runtime accepts a driver of
 *   its own major and any minor up to its own; a driver of an older minor
 *   has a shorter epctx_hal_driver (struct_size says how long) and the
 *   runtime treats the hooks it lacks as absent.
 * - Structs the runtime fills for the driver (blob, context desc, host) and
 *   the ones the driver fills for the runtime (driver info, graph info) begin
 *   with struct_size. The runtime zero-fills the latter and sets struct_size
 *   to its own size; a driver writes only fields that fit. A new minor only
 *   appends fields, and zero always means "the default".
 * - Array element structs (tensor, tensor desc, graph blob) never change
 *   within a major.
 *
 * A driver shipped as a shared library exports one function,
 * EPCTX_HAL_ENTRY_POINT (define it with EPCTX_HAL_DEFINE_ENTRY). */
#ifndef EPCTX_HAL_H
#define EPCTX_HAL_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/hal_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The major changes on any incompatible change to the structs below; the
 * minor when fields or hooks are appended. 2.0: struct sizes everywhere;
 * 2.1: the optional graph hooks (prepare/unprepare, cache sync, I/O
 * buffers); 2.2: execute_parallel (the session's intra-op threads); 2.3:
 * driver memory for decrypted context binaries (alloc/free_context_memory). */
#define EPCTX_HAL_ABI_MAJOR 2u
#define EPCTX_HAL_ABI_MINOR 3u
#define EPCTX_HAL_ABI(major, minor) (((uint32_t)(major) << 16) | (uint32_t)(minor))
#define EPCTX_HAL_ABI_VERSION EPCTX_HAL_ABI(EPCTX_HAL_ABI_MAJOR, EPCTX_HAL_ABI_MINOR)
#define EPCTX_HAL_ABI_MAJOR_OF(v) ((uint32_t)(v) >> 16)
#define EPCTX_HAL_ABI_MINOR_OF(v) ((uint32_t)(v)&0xffffu)

/* The most alignment a driver may ask for (payload, scratch): a page. */
#define EPCTX_HAL_MAX_ALIGNMENT 4096u

typedef struct epctx_hal_version {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
} epctx_hal_version;

/* Driver accepts EPContext nodes that have no `source` attribute when it is
 * the only registered driver. */
#define EPCTX_HAL_FLAG_ACCEPTS_UNNAMED_SOURCE 0x1u

typedef struct epctx_hal_driver_info {
  uint32_t struct_size; /* set by the runtime, see "Versions" */
  const char* name;     /* short name, e.g. "vnpu" */
  epctx_hal_version driver_version;
  epctx_hal_version sdk_version;
  /* "<family>-<major>.<minor>", e.g. "vnpu-1.0" */
  const char* hardware_architecture;
  /* Accepted `source` values, compared case-insensitively. */
  const char* const* source_keys;
  uint32_t num_source_keys;
  /* Required alignment (bytes, power of two, at most
   * EPCTX_HAL_MAX_ALIGNMENT; 0 = 1) of payload and weight views. */
  uint32_t payload_alignment;
  uint32_t flags; /* EPCTX_HAL_FLAG_* */
} epctx_hal_driver_info;

/* What an EPContext node and its binary say they were compiled for. Strings
 * are NUL-terminated; empty when absent. */
typedef struct epctx_hal_context_desc {
  uint32_t struct_size;
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
  uint32_t struct_size;
  const uint8_t* data;
  uint64_t size;
  uint32_t is_container;
  const uint8_t* weights; /* container weight segment (NULL if none) */
  uint64_t weights_size;
  const epctx_hal_graph_blob* graphs; /* valid for the call only */
  uint32_t num_graphs;
} epctx_hal_blob;

/* Services the runtime offers drivers (allocation, logging). Fields a later
 * minor appends are read only when struct_size covers them (an older
 * runtime passes a shorter struct). */
typedef struct epctx_hal_host {
  uint32_t struct_size;
  void* user;
  void* (*alloc)(void* user, size_t size, size_t alignment);
  void (*free)(void* user, void* ptr);
  void (*log)(void* user, int level, const char* message);
} epctx_hal_host;

typedef struct epctx_hal_tensor_desc {
  const char* name;
  int32_t dtype; /* epctx_dtype */
  uint32_t rank;
  int64_t dims[EPCTX_MAX_RANK];
} epctx_hal_tensor_desc;

typedef struct epctx_hal_graph_info {
  uint32_t struct_size; /* set by the runtime, see "Versions" */
  uint32_t num_inputs;
  uint32_t num_outputs;
  const epctx_hal_tensor_desc* inputs;  /* in EPContext node input order */
  const epctx_hal_tensor_desc* outputs; /* in EPContext node output order */
  uint64_t scratch_bytes;               /* arena execute needs */
  /* Power of two, at most EPCTX_HAL_MAX_ALIGNMENT; 0 = 16. */
  uint32_t scratch_alignment;
} epctx_hal_graph_info;

typedef struct epctx_hal_tensor {
  int32_t dtype;
  uint32_t rank;
  const int64_t* dims;
  void* data;
  uint64_t bytes;
} epctx_hal_tensor;

/* ABI 2.2: the session's intra-op threads, lent to one execute_parallel
 * call. parallel_for calls fn(arg, chunk, worker) once for every chunk in
 * [0, chunks), on up to `threads` workers at once (worker < threads, the
 * caller's thread among them), and returns when all are done. Chunks must
 * write disjoint memory; which worker runs a chunk changes from call to
 * call, so results must not depend on it (per-worker scratch is indexed by
 * worker). parallel_for may be called any number of times within the
 * execute, never after it returns, and never from inside a chunk. */
typedef void (*epctx_hal_chunk_fn)(void* arg, uint32_t chunk, uint32_t worker);
typedef struct epctx_hal_parallel {
  uint32_t struct_size;
  uint32_t threads; /* >= 1 */
  void* user;
  void (*parallel_for)(void* user, uint32_t chunks, epctx_hal_chunk_fn fn, void* arg);
} epctx_hal_parallel;

typedef struct epctx_hal_context epctx_hal_context; /* driver-defined */
typedef struct epctx_hal_graph epctx_hal_graph;     /* driver-defined */

typedef struct epctx_hal_driver {
  uint32_t abi_version; /* EPCTX_HAL_ABI_VERSION */
  uint32_t struct_size; /* sizeof(epctx_hal_driver) */
  void* user;           /* driver state, passed back as `self->user` */

  int (*get_info)(const struct epctx_hal_driver* self, epctx_hal_driver_info* out);

  /* Decides from names and versions alone; reads no payload. */
  int (*check_compatibility)(const struct epctx_hal_driver* self,
                             const epctx_hal_context_desc* desc, char* msg, size_t msg_cap);

  int (*load_context)(const struct epctx_hal_driver* self, const epctx_hal_blob* blob,
                      const epctx_hal_host* host, epctx_hal_context** out, char* msg,
                      size_t msg_cap);

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
  int (*get_graph)(const struct epctx_hal_driver* self, epctx_hal_context* ctx, const char* name,
                   epctx_hal_graph** out, epctx_hal_graph_info* info, char* msg, size_t msg_cap);

  /* Thread-safe: concurrent calls on one graph each get their own scratch. */
  int (*execute)(const struct epctx_hal_driver* self, epctx_hal_graph* graph,
                 const epctx_hal_tensor* inputs, uint32_t num_inputs, epctx_hal_tensor* outputs,
                 uint32_t num_outputs, void* scratch, uint64_t scratch_bytes, char* msg,
                 size_t msg_cap);

  void (*release_context)(const struct epctx_hal_driver* self, epctx_hal_context* ctx);

  /* ---- ABI 2.1: optional hooks (NULL: not needed) ---- */

  /* Makes a bound graph ready to run, e.g. pages its command stream and
   * weights into NPU memory. Called once per successful get_graph (a graph
   * bound by two sessions is prepared twice: count if it matters). */
  int (*prepare_graph)(const struct epctx_hal_driver* self, epctx_hal_graph* graph, char* msg,
                       size_t msg_cap);
  /* Undoes one prepare_graph; called before the context is released. */
  void (*unprepare_graph)(const struct epctx_hal_driver* self, epctx_hal_graph* graph);
  /* Non-coherent devices: cleans the CPU caches over the input tensors
   * before execute, and invalidates them over the output tensors after it
   * (so the CPU reads what the device wrote). Thread-safe like execute. */
  void (*sync_for_device)(const struct epctx_hal_driver* self, epctx_hal_graph* graph,
                          const epctx_hal_tensor* tensors, uint32_t count);
  void (*sync_for_cpu)(const struct epctx_hal_driver* self, epctx_hal_graph* graph,
                       const epctx_hal_tensor* tensors, uint32_t count);
  /* Device-visible I/O memory, for an NPU that reaches only some memory (a
   * carve-out, an IOMMU window). When alloc_io is set, every input and output
   * of execute whose bytes is_device_visible denies (all of them when it is
   * NULL) is staged: the runtime copies the input into a buffer from
   * alloc_io before execute, has execute write the output into one, copies
   * it out after, and frees both with free_io. alloc_io returns NULL when
   * out of memory; free_io takes what alloc_io returned. alloc_io and
   * free_io come together. All three are thread-safe like execute. */
  void* (*alloc_io)(const struct epctx_hal_driver* self, epctx_hal_graph* graph, uint64_t bytes,
                    uint32_t alignment);
  void (*free_io)(const struct epctx_hal_driver* self, epctx_hal_graph* graph, void* ptr);
  int (*is_device_visible)(const struct epctx_hal_driver* self, epctx_hal_graph* graph,
                           const void* ptr, uint64_t bytes);

  /* ---- ABI 2.2: optional ---- */

  /* execute, with threads: a driver whose device is the CPU (or that has
   * host-side work worth splitting) may run chunks of it on `par`. The
   * runtime calls it instead of execute when the session has more than one
   * intra-op thread; same contract as execute, and the outputs must be the
   * same bytes as execute's at every thread count. */
  int (*execute_parallel)(const struct epctx_hal_driver* self, epctx_hal_graph* graph,
                          const epctx_hal_tensor* inputs, uint32_t num_inputs,
                          epctx_hal_tensor* outputs, uint32_t num_outputs, void* scratch,
                          uint64_t scratch_bytes, const epctx_hal_parallel* par, char* msg,
                          size_t msg_cap);

  /* ---- ABI 2.3: optional pair (NULL: the application's allocator) ---- */

  /* Memory for a decrypted context binary. An encrypted ("sealed") context
   * file is decrypted by the runtime, segment by segment, into `bytes`
   * bytes from alloc_context_memory (alignment: a power of two, at least
   * 64 and the driver's payload_alignment, at most EPCTX_HAL_MAX_ALIGNMENT);
   * the plaintext is then the epctx_hal_blob of load_context (data and
   * every view into it). Offer it when the plaintext is better kept in
   * memory of the driver's choosing: an NPU carve-out or memory the NPU
   * reads directly (no copy of the weights), or memory a secure-world (TEE)
   * driver can lock away from the rich OS once it is written.
   * The runtime writes into the memory until load_context and never touches
   * it after release_context returns; it then calls free_context_memory
   * with the pointer and `bytes` alloc_context_memory was given, once (also
   * when the load fails: after release_context if there is a context).
   * free_context_memory must wipe all `bytes` (they hold decrypted weights)
   * before it frees them: the runtime wipes only memory from its own
   * allocator. alloc_context_memory returns NULL when out of memory (the
   * session fails with OUT_OF_MEMORY naming the driver); nothing is freed
   * then. `host` is the one load_context gets (it outlives every context):
   * a driver without memory of its own may allocate from it. Unencrypted
   * context binaries never come here. The two come together, and both are
   * thread-safe like execute (sessions are created from many threads). */
  void* (*alloc_context_memory)(const struct epctx_hal_driver* self, const epctx_hal_host* host,
                                uint64_t bytes, uint32_t alignment);
  void (*free_context_memory)(const struct epctx_hal_driver* self, const epctx_hal_host* host,
                              void* ptr, uint64_t bytes);
} epctx_hal_driver;

/* The one function a driver shared library exports (the major is part of
 * its name). runtime_abi is the loading runtime's EPCTX_HAL_ABI_VERSION; the
 * driver returns its struct, or NULL when it cannot serve that runtime. */
#define EPCTX_HAL_ENTRY_POINT "epctx_hal_driver_entry_v2"
typedef const epctx_hal_driver* (*epctx_hal_entry_fn)(uint32_t runtime_abi);

#ifdef __cplusplus
#define EPCTX_HAL_EXTERN_C extern "C"
#else
#define EPCTX_HAL_EXTERN_C
#endif
/* Defines the entry point of a driver library returning `driver` (a const
 * epctx_hal_driver* expression) to runtimes of the same major. */
#define EPCTX_HAL_DEFINE_ENTRY(driver)                                              \
  EPCTX_HAL_EXTERN_C __attribute__((visibility("default"))) const epctx_hal_driver* \
  epctx_hal_driver_entry_v2(uint32_t runtime_abi) {                                 \
    return EPCTX_HAL_ABI_MAJOR_OF(runtime_abi) == EPCTX_HAL_ABI_MAJOR               \
               ? (driver)                                                           \
               : (const epctx_hal_driver*)0;                                        \
  }

#ifdef __cplusplus
}
#endif
#endif
