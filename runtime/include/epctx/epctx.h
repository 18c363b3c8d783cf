/* SPDX-License-Identifier: Apache-2.0 */
/* epctx public C API: load precompiled EPContext models and run them.
 *
 * Ownership and lifetimes
 * - Every epctx_status* returned by a call is owned by the caller and freed
 *   with epctx_status_release(); NULL means success.
 * - An env owns the allocator and the driver registry. It must outlive every
 *   session created from it.
 * - A session keeps the model file (or the caller's buffer, see
 *   epctx_session_create_from_buffer) and every context binary mapped for its
 *   whole life; weights and payloads are views into those mappings.
 * - Tensors created with epctx_tensor_create own their data (allocated with
 *   the env allocator); tensors created with epctx_tensor_wrap borrow it.
 * - Output tensors returned by epctx_session_run are owned by the caller.
 *
 * Threads: one session may be run from many threads at once; env and
 * session-options objects are not thread-safe while being configured. */
#ifndef EPCTX_EPCTX_H
#define EPCTX_EPCTX_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/status.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* ---- versions ----
 * EPCTX_API_VERSION is the level of this header: it rises whenever a call,
 * type or field is added (never removed; see runtime/COMPATIBILITY.md). An
 * application built against level N runs with a library of level >= N. */
#define EPCTX_API_VERSION 4

/* The library's release, "MAJOR.MINOR.PATCH" (static storage). */
const char* epctx_version(void);
/* The EPCTX_API_VERSION the library was built with. */
int epctx_api_version(void);
/* The HAL driver ABI version the library accepts (EPCTX_HAL_ABI_VERSION of
 * the <epctx/hal.h> it was built with). */
uint32_t epctx_hal_abi_version(void);

/* ---- status ---- */
typedef struct epctx_status epctx_status;
int epctx_status_code(const epctx_status* status);       /* EPCTX_OK for NULL */
const char* epctx_status_message(const epctx_status* s); /* "" for NULL */
void epctx_status_release(epctx_status* status);

/* ---- allocator (injectable) ----
 * alloc returns memory aligned to `alignment` (a power of two, at most 4096)
 * or NULL. free accepts NULL. */
typedef struct epctx_allocator {
  void* user;
  void* (*alloc)(void* user, size_t size, size_t alignment);
  void (*free)(void* user, void* ptr);
} epctx_allocator;

/* ---- element types (epctx_dtype) and EPCTX_MAX_RANK: <epctx/hal_types.h> ---- */

/* ---- env ---- */
typedef struct epctx_env epctx_env;
typedef struct epctx_hal_driver epctx_hal_driver; /* see <epctx/hal.h> */

/* Log levels: a message is delivered when its level <= the env's level. */
typedef enum epctx_log_level {
  EPCTX_LOG_ERROR = 0,
  EPCTX_LOG_WARNING = 1, /* e.g. a model that should be recompiled */
  EPCTX_LOG_INFO = 2,    /* one line per session created, per context routed */
  EPCTX_LOG_VERBOSE = 3  /* every load step, every run */
} epctx_log_level;

/* allocator may be NULL (the PAL's default allocator). log_level: an
 * epctx_log_level (messages go to the PAL's log, stderr or logcat, until a
 * callback is set). */
epctx_status* epctx_env_create(const epctx_allocator* allocator, int log_level, epctx_env** out);
void epctx_env_release(epctx_env* env);
/* Receives every message at or below the env's level instead of the PAL's
 * log. `message` is one line without a newline, valid for the call only.
 * Called from any thread that creates or runs a session of this env, so it
 * must be thread-safe; it must not call back into epctx. fn NULL: the PAL's
 * log again. Set it before creating sessions. */
typedef void (*epctx_log_fn)(void* user, int level, const char* message);
epctx_status* epctx_env_set_log_callback(epctx_env* env, epctx_log_fn fn, void* user);
/* INVALID_ARGUMENT outside EPCTX_LOG_ERROR..EPCTX_LOG_VERBOSE. */
epctx_status* epctx_env_set_log_level(epctx_env* env, int level);
/* Registers a driver. The driver struct must stay valid while the env lives.
 * Fails with INCOMPATIBLE_DRIVER on a HAL ABI the runtime does not accept
 * (another major, a newer minor) or an alignment above a page, and with
 * INVALID_ARGUMENT on a struct that lacks functions. */
epctx_status* epctx_env_register_driver(epctx_env* env, const epctx_hal_driver* driver);
/* Registers every driver compiled into this build (the CMake list
 * EPCTX_DRIVERS; vnpu by default). */
epctx_status* epctx_env_register_builtin_drivers(epctx_env* env);
/* Loads a driver shared library (Linux, Android) and registers the driver
 * its entry point EPCTX_HAL_ENTRY_POINT (<epctx/hal.h>) returns; the library
 * stays loaded until the env is released. NO_SUCHFILE / FAIL naming the path
 * when it cannot be opened, INCOMPATIBLE_DRIVER when it lacks the entry
 * point or refuses this runtime's HAL ABI, NOT_IMPLEMENTED on bare metal. */
epctx_status* epctx_env_load_driver_library(epctx_env* env, const char* path);

/* ---- session options: string config entries ----
 * Keys use ORT's names (ep.context_file_path, ...) and epctx.* for ours;
 * <epctx/session_config_keys.h> lists every key with its values and default.
 * Unknown keys are rejected with INVALID_ARGUMENT naming the key. */
typedef struct epctx_session_options epctx_session_options;
epctx_status* epctx_session_options_create(epctx_session_options** out);
void epctx_session_options_release(epctx_session_options* options);
epctx_status* epctx_session_options_set(epctx_session_options* options, const char* key,
                                        const char* value);
/* Binds sessions to the signed package of one model: the same as
 * epctx.expected_model_id = model_id. A package must then carry a manifest
 * that verifies and names exactly this model id (epctx-sign --model-id),
 * else SIGNATURE_INVALID; with epctx.signature_policy=off, INVALID_ARGUMENT.
 * The anti-rollback counter is kept per (signing key, model id). */
epctx_status* epctx_session_options_set_expected_model_id(epctx_session_options* options,
                                                          const char* model_id);
/* Caps what a session takes from the env's allocator for its metadata
 * (the parsed model, plans) and its runs (arena, intermediates): the same
 * as epctx.max_memory_bytes = bytes (the key also takes a K, M or G suffix).
 * A request that would exceed it is refused before anything is allocated:
 * create or run fails with OUT_OF_MEMORY naming the limit. Driver contexts
 * and the caller's tensors are not counted. 0 is INVALID_ARGUMENT. */
epctx_status* epctx_session_options_set_max_memory_bytes(epctx_session_options* options,
                                                         uint64_t bytes);

/* External files from memory or a file descriptor (Android APK assets, a
 * package downloaded into memory): a file the model names by a relative path
 * (an EPContext node's ep_cache_context such as "model_vnpu.bin", an
 * initializer's external location) is taken from here instead of the file
 * system, exactly when `name` equals that path. Sessions then need no
 * ep.context_file_path for it, also when created from a buffer. Signed
 * packages verify these bytes as they would the file's. At most 8 per
 * options object; INVALID_ARGUMENT for an empty, absolute or repeated name.
 *
 * _buffer: the bytes are borrowed, never copied, whatever epctx.load_mode
 * says: they must stay valid and unchanged while the sessions live.
 * _fd: `length` bytes at `offset` of the open descriptor (e.g.
 * AAsset_openFileDescriptor64's range) are mapped (epctx.load_mode=mmap) or
 * read (read) when a session is created; the app may close fd afterwards.
 * Not on bare metal (NOT_IMPLEMENTED at create). */
epctx_status* epctx_session_options_add_external_buffer(epctx_session_options* options,
                                                        const char* name, const void* data,
                                                        size_t size);
epctx_status* epctx_session_options_add_external_fd(epctx_session_options* options,
                                                    const char* name, int fd, uint64_t offset,
                                                    uint64_t length);

/* ---- tensors ---- */
typedef struct epctx_tensor epctx_tensor;
epctx_status* epctx_tensor_create(epctx_env* env, epctx_dtype dtype, const int64_t* dims,
                                  size_t rank, epctx_tensor** out);
/* Borrows data (must hold the product of dims elements; stays owned by the
 * caller and must outlive the tensor). */
epctx_status* epctx_tensor_wrap(epctx_env* env, epctx_dtype dtype, const int64_t* dims, size_t rank,
                                void* data, size_t data_bytes, epctx_tensor** out);
void epctx_tensor_release(epctx_tensor* tensor);
epctx_dtype epctx_tensor_dtype(const epctx_tensor* t);
size_t epctx_tensor_rank(const epctx_tensor* t);
const int64_t* epctx_tensor_dims(const epctx_tensor* t);
size_t epctx_tensor_bytes(const epctx_tensor* t);
void* epctx_tensor_data(epctx_tensor* t);
size_t epctx_dtype_size(epctx_dtype dtype); /* 0 for STRING/UNDEFINED */

/* ---- sessions ---- */
typedef struct epctx_session epctx_session;
epctx_status* epctx_session_create(epctx_env* env, const char* model_path,
                                   const epctx_session_options* options, epctx_session** out);
/* The buffer is borrowed: it must stay valid and unchanged while the session
 * lives. External context binaries are looked up beside
 * ep.context_file_path, which must then be set. */
epctx_status* epctx_session_create_from_buffer(epctx_env* env, const void* data, size_t size,
                                               const epctx_session_options* options,
                                               epctx_session** out);
void epctx_session_release(epctx_session* session);

typedef struct epctx_io_info {
  const char* name;  /* valid while the session lives */
  epctx_dtype dtype; /* UNDEFINED for a type this enum does not name */
  size_t rank;
  const int64_t* dims; /* -1 for a symbolic dimension */
} epctx_io_info;
size_t epctx_session_input_count(const epctx_session* s);
size_t epctx_session_output_count(const epctx_session* s);
epctx_status* epctx_session_input_info(const epctx_session* s, size_t index, epctx_io_info* out);
epctx_status* epctx_session_output_info(const epctx_session* s, size_t index, epctx_io_info* out);

/* A tensor for graph input or output `name` that an NPU reaches without a
 * copy. When an EPContext node reads that input (or writes that output)
 * directly on a driver with device-visible I/O memory (a carve-out, an IOMMU
 * window: hal.h alloc_io), the buffer is the driver's, in the type and shape
 * its graph takes; bound as that input, or as that output in
 * epctx_run_args.outputs, it is not staged (no copy in or out) when the
 * driver recognises its own buffers (is_device_visible). Otherwise it is
 * ordinary memory in the type and shape the model declares
 * (INVALID_ARGUMENT for a symbolic dimension), usable the same way.
 * Contents start zeroed. epctx_tensor_release frees it; the session must
 * outlive it. */
/* (API level 3) */
epctx_status* epctx_session_create_io_tensor(epctx_session* session, const char* name,
                                             epctx_tensor** out);
/* 1 when the tensor's buffer came from a driver (above), else 0. */
int epctx_tensor_is_device_io(const epctx_tensor* t);

/* Most inputs and outputs one run takes. */
#define EPCTX_MAX_RUN_TENSORS 256

/* Runs the model. inputs[i] binds to input_names[i]; every graph input must
 * be bound, with its declared element type and shape (a scalar input also
 * takes a 1-element rank-1 tensor, as ONNX Runtime does; it runs as the
 * scalar). outputs receives output_count tensors for output_names (NULL
 * output_names: every graph output in order), owned by the caller. At most
 * EPCTX_MAX_RUN_TENSORS of each (INVALID_ARGUMENT beyond). */
epctx_status* epctx_session_run(epctx_session* session, const char* const* input_names,
                                const epctx_tensor* const* inputs, size_t input_count,
                                const char* const* output_names, epctx_tensor** outputs,
                                size_t output_count);

/* ---- run memory: arena and bound outputs ----
 * Session creation plans every intermediate of the main graph whose shape
 * the model declares (epctx-compile writes the inferred shapes; use
 * --input-shape to fix symbolic input dimensions) into one arena; the
 * first successful run adds the values whose shapes were unknown. A run
 * whose shapes match the plan makes no allocator call: each concurrent run
 * takes an arena from a pool the session keeps (or the caller's, below),
 * outputs bound by the caller are written in place, and kernel scratch
 * comes from a block that grows to the largest step once.
 *
 * Bytes of the arena a run needs now (0: nothing planned). May grow once,
 * after the first run completes; a caller arena sized before that keeps
 * working with the plan made at create. */
#define EPCTX_ARENA_ALIGNMENT 64
size_t epctx_session_arena_size(const epctx_session* s);
/* Intermediates the current plan places in the arena. */
size_t epctx_session_planned_value_count(const epctx_session* s);

typedef struct epctx_run_args {
  const char* const* input_names;
  const epctx_tensor* const* inputs;
  size_t input_count;
  const char* const* output_names; /* NULL: every graph output in order */
  /* output_count entries. A non-NULL entry is the caller's tensor
   * (epctx_tensor_wrap or _create): the output is written into its data in
   * place (ORT's IoBinding) and it stays the caller's; its dtype and dims
   * must be exactly those the model produces (INVALID_ARGUMENT naming the
   * output otherwise). A NULL entry receives a new tensor, owned by the
   * caller. On failure the new tensors are released and their entries NULL
   * again. */
  epctx_tensor** outputs;
  size_t output_count;
  /* Optional: the caller's arena, EPCTX_ARENA_ALIGNMENT-aligned, at least
   * epctx_session_arena_size bytes; used for this run only and never freed
   * by epctx. NULL: the session's own. Concurrent runs need one each. */
  void* arena;
  size_t arena_size;
  /* Optional (API level 2): terminate flag and deadline; NULL: none. */
  const struct epctx_run_options* run_options;
} epctx_run_args;
epctx_status* epctx_session_run_with(epctx_session* session, const epctx_run_args* args);

/* ---- run options: stopping a run ----
 * A run given run options checks them before every step of every graph it
 * runs (subgraphs too): a set terminate flag stops it with
 * EPCTX_RUN_TERMINATED, a passed deadline with EPCTX_RUN_DEADLINE_EXCEEDED.
 * A step already started (one CPU kernel, one driver execute) is finished
 * first, so a run stops within one step; its outputs are released as for
 * any failed run. One options object may serve many concurrent runs; the
 * terminate flag then stops all of them. The options must outlive the runs
 * using them. */
typedef struct epctx_run_options epctx_run_options;
epctx_status* epctx_run_options_create(epctx_run_options** out);
void epctx_run_options_release(epctx_run_options* options);
/* Thread-safe: may be called from any thread while runs are going on.
 * 1 asks every run using these options to stop (and every later one, until
 * it is set back to 0); 0 lets runs proceed (ORT's RunOptionsUnsetTerminate). */
void epctx_run_options_set_terminate(epctx_run_options* options, int terminate);
/* Each run using these options must end within timeout_us microseconds of
 * its start (0: no deadline, the default). Not thread-safe: set it before
 * the runs start. */
epctx_status* epctx_run_options_set_timeout_us(epctx_run_options* options, uint64_t timeout_us);

/* ---- model metadata ----
 * Fields of the model's ModelProto, NUL-terminated copies valid while the
 * session lives ("" when the model does not set one). */
typedef enum epctx_metadata_field {
  EPCTX_METADATA_PRODUCER_NAME = 0,    /* ModelProto.producer_name */
  EPCTX_METADATA_PRODUCER_VERSION = 1, /* ModelProto.producer_version */
  EPCTX_METADATA_DOMAIN = 2,           /* ModelProto.domain */
  EPCTX_METADATA_GRAPH_NAME = 3        /* GraphProto.name of the main graph */
} epctx_metadata_field;
/* NULL for a NULL session or a field this library does not know. */
const char* epctx_session_metadata(const epctx_session* s, epctx_metadata_field field);
/* ModelProto.model_version and ir_version. */
int64_t epctx_session_model_version(const epctx_session* s);
int64_t epctx_session_ir_version(const epctx_session* s);
/* ModelProto.metadata_props, in file order (duplicate keys kept). */
size_t epctx_session_metadata_prop_count(const epctx_session* s);
epctx_status* epctx_session_metadata_prop(const epctx_session* s, size_t index, const char** key,
                                          const char** value);
/* The value of the first entry named key; NULL when there is none. */
const char* epctx_session_metadata_lookup(const epctx_session* s, const char* key);

/* Number of nodes handled by drivers (EPContext nodes, those inside If, Loop
 * and Scan bodies included) and by CPU kernels (main graph; an If, Loop or
 * Scan is one). */
size_t epctx_session_driver_node_count(const epctx_session* s);
size_t epctx_session_cpu_node_count(const epctx_session* s);
/* Threads one Run may use, the caller's included: session.intra_op_num_threads
 * (0 or unset: the cores the process may use), 1 when the model has no CPU
 * node or the platform has no threads. Concurrent Runs share them: a Run
 * that finds them busy runs on its own thread. */
size_t epctx_session_intra_op_thread_count(const epctx_session* s);

/* ---- signed packages (see runtime/schema/manifest_format.h) ----
 * A package is signed when "<model>.sig" lies beside the model (for a model
 * loaded from a buffer: session option epctx.signature_path, else
 * "<ep.context_file_path>.sig"). Session option epctx.signature_policy:
 *   required   load only packages whose manifest verifies
 *   if_signed  verify a manifest when there is one (the default)
 *   off        ignore manifests
 * A build with EPCTX_REQUIRE_SIGNATURES allows only `required`.
 * Errors: SIGNATURE_INVALID (no/malformed manifest, bad signature),
 * KEY_REJECTED (signer not trusted), HASH_MISMATCH (file, chunk), ROLLBACK.
 *
 * Adds a trusted ECDSA P-256 public key, PEM or DER (copied). Keys come
 * only from the application, never from a model's folder. At most 8. */
epctx_status* epctx_env_add_trusted_key(epctx_env* env, const void* key, size_t size);
/* Folder of the anti-rollback store (one counter file per model id). A
 * package whose security counter is below the stored one is ROLLBACK; the
 * stored value rises after a successful load. Without a store, counters are
 * not checked. */
epctx_status* epctx_env_set_rollback_store(epctx_env* env, const char* folder);

/* ---- encrypted packages (runtime/SECURITY.md "Encrypted packages") ----
 * A context binary compiled with `epctx-compile --encrypt-key` is stored
 * encrypted (runtime/schema/sealed_format.h) under a key id. A session
 * decrypts only what it binds, into private memory wiped when the session
 * goes; the file mapping never reaches a driver. The application holds the
 * 32-byte data keys; nothing in a package, an option or the environment
 * selects a key or the cryptography.
 * Errors: KEY_MISSING (no key for the file's key id), DECRYPTION_FAILED (a
 * wrong key or a changed file), UNSUPPORTED_ALGORITHM.
 *
 * Keys per device: "<model>.keys" beside the model (session option
 * epctx.keys_path, for a buffer "<ep.context_file_path>.keys"; format
 * runtime/schema/keys_format.h; not part of the signature) may hold the
 * data key wrapped under device keys. When the application has no key for
 * a file's key id, the session asks it for the device key of each entry
 * for that id, the same way (added keys, then the provider), and unwraps
 * the data key with the first it has (DECRYPTION_FAILED when that entry
 * does not verify; KEY_MISSING listing the device key ids tried).
 *
 * Adds the data key, or a device key, of `key_id` (1..32 characters of
 * [A-Za-z0-9._-]; the 32 bytes are copied and wiped with the env). Several
 * ids may be held at once (key rotation); at most 8. */
epctx_status* epctx_env_add_decryption_key(epctx_env* env, const char* key_id, const void* key,
                                           size_t size);
/* Asked for a key id no added key has: writes the 32-byte key and returns
 * EPCTX_OK, or returns EPCTX_KEY_MISSING; any other code fails the load
 * with that code. Called while a session loads, from its thread; asked for
 * device key ids too (see above). */
typedef int (*epctx_key_provider_fn)(void* user, const char* key_id, uint8_t key[32]);
epctx_status* epctx_env_set_key_provider(epctx_env* env, epctx_key_provider_fn fn, void* user);

/* ---- context groups: sharing loaded context binaries between sessions ----
 * Sessions created with options that carry a group take their context
 * binaries (files, embed_mode=0) from the group when another session of the
 * group already loaded the same file (same device, inode, size and mtime,
 * same load mode), instead of mapping and loading it again: the weights are
 * mapped once and the driver holds one context. A loaded context is released
 * when the last session using it is released.
 * ep.share_ep_contexts=1 does the same with a group the env owns;
 * ep.stop_share_ep_contexts=1 makes the contexts loaded so far invisible to
 * later sessions (they stay with the sessions that use them).
 * A group is reference-counted: the handle and every session using it hold a
 * reference, so handles, options and sessions may be released in any order.
 * All group calls are thread-safe; sessions sharing a group may be created
 * and released from many threads at once. The env must outlive the group. */
typedef struct epctx_context_group epctx_context_group;
epctx_status* epctx_context_group_create(epctx_env* env, epctx_context_group** out);
void epctx_context_group_release(epctx_context_group* group);
/* Context binaries the group currently holds for later sessions. */
size_t epctx_context_group_loaded_count(epctx_context_group* group);
/* Sessions created with these options join `group` (NULL: none). The options
 * keep a reference until released or given another group. */
epctx_status* epctx_session_options_set_context_group(epctx_session_options* options,
                                                      epctx_context_group* group);

/* ---- status cause ----
 * The detailed code behind a status: a context that failed to load is
 * reported as INVALID_GRAPH (ORT's contract) while its cause says why, e.g.
 * EPCTX_INCOMPATIBLE_SDK / _HARDWARE / _DRIVER, NO_SUCHFILE or
 * INVALID_CONTAINER. Equals epctx_status_code when there is no other cause;
 * EPCTX_OK for NULL. */
int epctx_status_cause(const epctx_status* status);

/* ---- pre-flight compatibility ----
 * Whether a model can run with the env's registered drivers, answered from
 * the model alone (the counterpart of ORT's GetModelCompatibilityForEpDevices):
 * no context binary is read; embed_mode=0 files are not opened, embedded
 * payloads only as far as their epctx container header. Rules: SDK major
 * equal and device minor >= compiled minor; hardware family and major equal
 * and device minor >= compiled minor; driver version >= the container's
 * minimum; node attributes agree with the container header; the driver's
 * own check_compatibility. A device newer in minor is PREFER_RECOMPILATION
 * (the model still loads, unless the options set
 * session.fail_on_suboptimal_compiled_model=1, which makes it UNSUPPORTED).
 * The options' ep.context_file_path, when set, is the base folder for
 * external files (required for a buffer that has any). */
typedef enum epctx_compat {
  EPCTX_COMPAT_OPTIMAL = 0,
  EPCTX_COMPAT_PREFER_RECOMPILATION = 1,
  EPCTX_COMPAT_UNSUPPORTED = 2
} epctx_compat;

typedef struct epctx_compat_report epctx_compat_report;

/* One EPContext node's answer; strings live as long as the report. */
typedef struct epctx_compat_node {
  const char* node_name;
  const char* source; /* "" when the node has none */
  const char* driver; /* the driver its source routes to; NULL: none */
  int main_context;
  int embed_mode;
  epctx_compat verdict;
  int cause;             /* epctx_code session creation would report as cause */
  const char* reason;    /* "" when OPTIMAL */
  int container_checked; /* 1: an embedded container header was checked too */
} epctx_compat_node;

/* Fails only for a model that cannot be parsed or a bad argument; every
 * other outcome is in the report (caller-owned, epctx_compat_report_release). */
epctx_status* epctx_model_check_compatibility(epctx_env* env, const char* model_path,
                                              const epctx_session_options* options,
                                              epctx_compat_report** out);
epctx_status* epctx_model_check_compatibility_from_buffer(epctx_env* env, const void* data,
                                                          size_t size,
                                                          const epctx_session_options* options,
                                                          epctx_compat_report** out);
/* Worst verdict over the nodes and the model-level check (every non-EPContext
 * node needs a CPU kernel, else UNSUPPORTED with cause
 * MODEL_REQUIRES_COMPILATION). */
epctx_compat epctx_compat_report_overall(const epctx_compat_report* r);
int epctx_compat_report_cause(const epctx_compat_report* r);
const char* epctx_compat_report_reason(const epctx_compat_report* r); /* model level */
size_t epctx_compat_report_node_count(const epctx_compat_report* r);
epctx_status* epctx_compat_report_node(const epctx_compat_report* r, size_t index,
                                       epctx_compat_node* out);
void epctx_compat_report_release(epctx_compat_report* r);
const char* epctx_compat_name(epctx_compat verdict); /* "OPTIMAL", ... */

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
