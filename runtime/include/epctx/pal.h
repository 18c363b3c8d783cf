/* SPDX-License-Identifier: Apache-2.0 */
/* epctx PAL: every OS service the runtime core uses, as link-time functions.
 *
 * The core static library has undefined references only to these functions
 * and to mem* (plus the libm functions its kernels call). A platform links
 * exactly one PAL: runtime/src/pal/posix (Linux, Android),
 * runtime/src/pal/baremetal (no OS: "files" are named memory regions, see
 * <epctx/pal_baremetal.h>) or a board's own.
 *
 * Errors: functions returning int return an epctx_code and, on failure, write
 * a NUL-terminated message (at most msg_cap bytes) naming the path and the OS
 * reason. */
#ifndef EPCTX_PAL_H
#define EPCTX_PAL_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A read-only view of a file. `handle` is PAL-private. */
typedef struct epctx_pal_region {
  const uint8_t* data;
  uint64_t size;
  void* handle;
} epctx_pal_region;

/* load_mode for epctx_pal_map_file. */
#define EPCTX_PAL_LOAD_MMAP 0 /* shared, read-only mapping */
#define EPCTX_PAL_LOAD_READ 1 /* plain read into PAL-allocated memory */

/* Maps `path` (a NUL-terminated path, absolute or relative to the working
 * directory). A new mapping reads only the pages that are touched (no
 * read-around, so parsing the head of a large file does not pull in the
 * weights behind it); EPCTX_PAL_ADVISE_NORMAL restores the OS default once
 * loading is done. NO_SUCHFILE when it does not exist; PATH_REJECTED when it is
 * not a regular file; FAIL for other OS errors. An empty file maps to
 * data=NULL, size=0. */
int epctx_pal_map_file(const char* path, int load_mode, epctx_pal_region* out, char* msg,
                       size_t msg_cap);

/* Reads `path` whole into PAL-allocated private memory, like
 * EPCTX_PAL_LOAD_READ, but refuses a file larger than max_size with
 * INVALID_ARGUMENT before allocating or reading anything (for small files of
 * untrusted size, such as signature manifests). Release with
 * epctx_pal_unmap. */
int epctx_pal_read_file(const char* path, uint64_t max_size, epctx_pal_region* out, char* msg,
                        size_t msg_cap);

/* Maps `rel_path` resolved beneath directory `base_dir` ("" = working
 * directory) without leaving it: absolute paths, ".." components and
 * symlinks that escape are PATH_REJECTED. */
int epctx_pal_map_file_beneath(const char* base_dir, const char* rel_path, int load_mode,
                               epctx_pal_region* out, char* msg, size_t msg_cap);

/* Maps (or, with EPCTX_PAL_LOAD_READ, reads) `length` bytes at `offset` of
 * the open file descriptor `fd`, which the caller keeps and may close once
 * this returns: e.g. an Android APK asset's range from
 * AAsset_openFileDescriptor64. PATH_REJECTED when fd is not a regular file;
 * INVALID_ARGUMENT when the range is not inside the file; NOT_IMPLEMENTED on
 * a PAL without file descriptors (bare metal). Release with epctx_pal_unmap. */
int epctx_pal_map_fd(int fd, uint64_t offset, uint64_t length, int load_mode, epctx_pal_region* out,
                     char* msg, size_t msg_cap);

void epctx_pal_unmap(epctx_pal_region* region);

/* What identifies a file's contents for sharing one loaded copy between
 * sessions: same device, inode, size and modification time = same bytes. */
typedef struct epctx_pal_file_id {
  uint64_t device;
  uint64_t inode;
  uint64_t size;
  int64_t mtime_ns;
} epctx_pal_file_id;

/* Identifies `rel_path` beneath `base_dir` with the same containment rules
 * as epctx_pal_map_file_beneath (and the same error codes). A PAL without
 * files may return NOT_IMPLEMENTED: sessions then load their own copies. */
int epctx_pal_file_id_beneath(const char* base_dir, const char* rel_path, epctx_pal_file_id* out,
                              char* msg, size_t msg_cap);

/* Access hints for part of a mapped region; a PAL may ignore them, and
 * regions read into memory (EPCTX_PAL_LOAD_READ) ignore them. */
#define EPCTX_PAL_ADVISE_WILLNEED 1 /* start reading these pages in now */
#define EPCTX_PAL_ADVISE_DONTNEED 2 /* drop these pages from this mapping */
#define EPCTX_PAL_ADVISE_NORMAL 3   /* the OS's default read-ahead */
void epctx_pal_advise(const epctx_pal_region* region, uint64_t offset, uint64_t size, int advice);

/* Default allocator. alignment is a power of two <= 4096. */
void* epctx_pal_alloc(size_t size, size_t alignment);
void epctx_pal_free(void* ptr);

/* Monotonic clock in nanoseconds. */
uint64_t epctx_pal_now_ns(void);

/* level: 0 error, 1 warning, 2 info, 3 verbose. */
void epctx_pal_log(int level, const char* message);

typedef struct epctx_pal_mutex epctx_pal_mutex;
epctx_pal_mutex* epctx_pal_mutex_create(void);
void epctx_pal_mutex_destroy(epctx_pal_mutex* m);
void epctx_pal_mutex_lock(epctx_pal_mutex* m);
void epctx_pal_mutex_unlock(epctx_pal_mutex* m);

/* Threads, for the intra-op thread pool (runtime/src/core/thread_pool.h).
 * A PAL without threads (bare metal) returns 1 from cpu_count and NULL from
 * thread_start; the pool then runs everything on the caller. */
/* Cores this process may run on (Linux: its affinity mask), at least 1. */
uint32_t epctx_pal_cpu_count(void);
typedef struct epctx_pal_thread epctx_pal_thread;
/* Starts fn(arg) on a new thread; NULL when that is not possible. */
epctx_pal_thread* epctx_pal_thread_start(void (*fn)(void* arg), void* arg);
/* Waits for the thread to return and releases it. */
void epctx_pal_thread_join(epctx_pal_thread* t);
/* A condition variable used with an epctx_pal_mutex: wait releases the
 * mutex while it sleeps and holds it again on return (wakeups may be
 * spurious); broadcast wakes every waiter. */
typedef struct epctx_pal_cond epctx_pal_cond;
epctx_pal_cond* epctx_pal_cond_create(void);
void epctx_pal_cond_destroy(epctx_pal_cond* c);
void epctx_pal_cond_wait(epctx_pal_cond* c, epctx_pal_mutex* m);
void epctx_pal_cond_broadcast(epctx_pal_cond* c);

/* Anti-rollback counters (signed packages): one unsigned 64-bit value per
 * `name` (64 hex digits, made by the runtime from the model id) inside the
 * folder `store` the application configured. read: *found = 0 and OK when
 * there is none yet; a value that cannot be read back is FAIL (never
 * silently 0). write: atomic replace (a crash leaves the old or the new
 * value). On a board these may live in OTP, RPMB or secure storage. */
int epctx_pal_counter_read(const char* store, const char* name, uint64_t* value, int* found,
                           char* msg, size_t msg_cap);
int epctx_pal_counter_write(const char* store, const char* name, uint64_t value, char* msg,
                            size_t msg_cap);

/* Shared libraries (driver plugins, epctx_env_load_driver_library). open:
 * NO_SUCHFILE when `path` does not exist, FAIL with the loader's reason for
 * anything else, NOT_IMPLEMENTED on a platform without a loader (bare metal).
 * symbol: NULL when the library does not export `name`. close: unloads. */
int epctx_pal_library_open(const char* path, void** handle, char* msg, size_t msg_cap);
void* epctx_pal_library_symbol(void* handle, const char* name);
void epctx_pal_library_close(void* handle);

#ifdef __cplusplus
}
#endif
#endif
