// SPDX-License-Identifier: Apache-2.0
// The POSIX PAL (Linux, Android): files through open/mmap, memory through
// posix_memalign, time through CLOCK_MONOTONIC, mutexes and threads through pthreads
// (pal_threads.cc).
// Logging is in pal_log.cc (stderr, or Android's log).
//
// Containment (epctx_pal_map_file_beneath): on Linux >= 5.6 openat2 with
// RESOLVE_BENEATH lets the kernel refuse any resolution that leaves the base
// directory (including through symlinks and ".."). Where openat2 is missing
// (ENOSYS, or seccomp's EPERM; qemu-user, old kernels) we resolve the path
// one component at a time with openat(O_NOFOLLOW), following symlinks by
// hand under the same rule (see open_beneath_walk). The aarch64 tests, run
// under qemu-user, exercise that path.
#include <epctx/pal.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// Older Android NDKs lack the header; the walk below then does the work.
#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif

namespace {

constexpr uintptr_t kReadHandleTag = 1;  // handle low bit: buffer, not mmap

int fail(char* msg, size_t cap, int code, const char* path, const char* what) {
  if (msg && cap) snprintf(msg, cap, "%s: %s", path, what);
  return code;
}

int errno_code(int e) {
  switch (e) {
    case ENOENT:
    case ENOTDIR: return EPCTX_NO_SUCHFILE;
    case ELOOP:
    case EXDEV: return EPCTX_PATH_REJECTED;
    default: return EPCTX_FAIL;
  }
}

// Maps (or reads) an open descriptor; closes it in every case.
// fstat of an opened file that must be a regular file; closes fd on failure.
int stat_regular(int fd, const char* path, struct stat* st, char* msg, size_t cap) {
  int rc = EPCTX_OK;
  if (fstat(fd, st) != 0) rc = fail(msg, cap, EPCTX_FAIL, path, strerror(errno));
  else if (!S_ISREG(st->st_mode))
    rc = fail(msg, cap, EPCTX_PATH_REJECTED, path, "not a regular file");
  if (rc != EPCTX_OK) close(fd);
  return rc;
}

int map_fd(int fd, const char* path, int load_mode, epctx_pal_region* out, char* msg, size_t cap,
           uint64_t max_size = UINT64_MAX) {
  struct stat st;
  int rc = stat_regular(fd, path, &st, msg, cap);
  if (rc != EPCTX_OK) return rc;
  if (static_cast<uint64_t>(st.st_size) > max_size) {
    close(fd);
    char what[96];
    snprintf(what, sizeof what, "%llu bytes exceed the limit of %llu",
             static_cast<unsigned long long>(st.st_size),
             static_cast<unsigned long long>(max_size));
    return fail(msg, cap, EPCTX_INVALID_ARGUMENT, path, what);
  }
  out->data = nullptr;
  out->size = static_cast<uint64_t>(st.st_size);
  out->handle = nullptr;
  if (st.st_size == 0) {
    close(fd);
    return EPCTX_OK;
  }
  if (static_cast<uint64_t>(st.st_size) > SIZE_MAX) {
    close(fd);
    return fail(msg, cap, EPCTX_FAIL, path, "file larger than the address space");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (load_mode == EPCTX_PAL_LOAD_READ) {
    void* buf = nullptr;
    if (posix_memalign(&buf, 4096, size) != 0) {
      close(fd);
      return fail(msg, cap, EPCTX_OUT_OF_MEMORY, path, "out of memory reading file");
    }
    size_t got = 0;
    while (got < size) {
      ssize_t n = read(fd, static_cast<char*>(buf) + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int e = n < 0 ? errno : EIO;
        free(buf);
        close(fd);
        return fail(msg, cap, EPCTX_FAIL, path, n < 0 ? strerror(e) : "file shrank while reading");
      }
      got += static_cast<size_t>(n);
    }
    close(fd);
    out->data = static_cast<const uint8_t*>(buf);
    out->handle = reinterpret_cast<void*>(kReadHandleTag);
    return EPCTX_OK;
  }
  void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) return fail(msg, cap, EPCTX_FAIL, path, strerror(e));
  // Loading touches the header, the metadata and the payloads of the graphs
  // in use: read exactly those pages (read-around would pull in megabytes of
  // weights; see epctx_pal_advise for the switch back).
  madvise(p, size, MADV_RANDOM);
  out->data = static_cast<const uint8_t*>(p);
  return EPCTX_OK;
}

bool has_dotdot_or_empty(const char* rel) {
  const char* c = rel;
  while (true) {
    const char* end = strchr(c, '/');
    size_t n = end ? static_cast<size_t>(end - c) : strlen(c);
    if (n == 0) return true;
    if (n == 2 && c[0] == '.' && c[1] == '.') return true;
    if (!end) return false;
    c = end + 1;
  }
}

// The fallback when openat2 is missing: resolves `rel` beneath dirfd in user
// space the way RESOLVE_BENEATH does. Symlinks are followed when their
// target is relative and every ".." stays at or below the base; an absolute
// target or a ".." above the base is EXDEV. Each step opens with O_NOFOLLOW,
// so a symlink swapped in after its check fails (ELOOP) instead of being
// followed.
int open_beneath_walk(int dirfd, const char* rel) {
  constexpr int kMaxDepth = 64;
  constexpr int kMaxLinks = 40;  // the kernel's limit
  int stack[kMaxDepth];
  int depth = 0;
  stack[0] = dup(dirfd);
  if (stack[0] < 0) return -1;
  char path[4096];  // what is left to resolve
  size_t len = strlen(rel);
  int err = 0, result = -1, links = 0;
  if (len >= sizeof path) err = ENAMETOOLONG;
  else memcpy(path, rel, len + 1);
  size_t pos = 0;
  while (err == 0) {
    while (path[pos] == '/') ++pos;
    if (path[pos] == '\0') {  // ends in a folder: not a file
      err = EISDIR;
      break;
    }
    const char* c = path + pos;
    const char* slash = strchr(c, '/');
    size_t n = slash ? static_cast<size_t>(slash - c) : strlen(c);
    char comp[256];
    if (n >= sizeof comp) {
      err = ENAMETOOLONG;
      break;
    }
    memcpy(comp, c, n);
    comp[n] = '\0';
    pos += n;
    size_t q = pos;
    while (path[q] == '/') ++q;
    bool last = path[q] == '\0';
    if (strcmp(comp, ".") == 0) {
      if (last) err = EISDIR;
      continue;
    }
    if (strcmp(comp, "..") == 0) {
      if (depth == 0) err = EXDEV;
      else if (last) err = EISDIR;
      else close(stack[depth--]);
      continue;
    }
    struct stat st;
    if (fstatat(stack[depth], comp, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      err = errno;
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t t = readlinkat(stack[depth], comp, target, sizeof target);
      const char* rest = path + pos;  // "" or "/..."
      size_t rest_len = strlen(rest);
      if (++links > kMaxLinks) err = ELOOP;
      else if (t < 0) err = errno;
      else if (t == 0 || target[0] == '/') err = EXDEV;
      else if (static_cast<size_t>(t) + rest_len >= sizeof path) err = ENAMETOOLONG;
      if (err) break;
      memmove(path + t, rest, rest_len + 1);
      memcpy(path, target, static_cast<size_t>(t));
      pos = 0;
      continue;
    }
    if (last) {
      result = openat(stack[depth], comp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
      if (result < 0) err = errno;
      break;
    }
    if (depth + 1 >= kMaxDepth) {
      err = ENAMETOOLONG;
      break;
    }
    int next = openat(stack[depth], comp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY);
    if (next < 0) {
      err = errno;
      break;
    }
    stack[++depth] = next;
  }
  for (int i = 0; i <= depth; ++i) close(stack[i]);
  errno = err;
  return result;
}

// Opens `rel` beneath `base` (see epctx_pal_map_file_beneath); writes the
// path as shown in messages into `shown`.
int open_beneath(const char* base_dir, const char* rel_path, char* shown, size_t shown_cap,
                 int* out_fd, char* msg, size_t msg_cap) {
  snprintf(shown, shown_cap, "%s%s%s", base_dir, *base_dir ? "/" : "", rel_path);
  if (rel_path[0] == '\0') return fail(msg, msg_cap, EPCTX_PATH_REJECTED, shown, "empty file name");
  if (rel_path[0] == '/')
    return fail(msg, msg_cap, EPCTX_PATH_REJECTED, rel_path, "absolute path not allowed");
  if (has_dotdot_or_empty(rel_path))
    return fail(msg, msg_cap, EPCTX_PATH_REJECTED, rel_path,
                "'..' or empty path component not allowed");
  int dirfd = open(*base_dir ? base_dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    int e = errno;
    return fail(msg, msg_cap, errno_code(e), *base_dir ? base_dir : ".", strerror(e));
  }
  int fd = -1;
  int e = 0;
#if defined(__linux__) && defined(SYS_openat2) && defined(RESOLVE_BENEATH)
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  fd = static_cast<int>(syscall(SYS_openat2, dirfd, rel_path, &how, sizeof how));
  e = errno;
  if (fd < 0 && (e == ENOSYS || e == EPERM)) {
    fd = open_beneath_walk(dirfd, rel_path);
    e = errno;
  }
#else
  fd = open_beneath_walk(dirfd, rel_path);
  e = errno;
#endif
  close(dirfd);
  if (fd < 0) {
    if (e == EXDEV || e == ELOOP)
      return fail(msg, msg_cap, EPCTX_PATH_REJECTED, shown,
                  "resolves outside the model folder (symlink or '..')");
    return fail(msg, msg_cap, errno_code(e), shown, e == ENOENT ? "No such file" : strerror(e));
  }
  *out_fd = fd;
  return EPCTX_OK;
}

}  // namespace

extern "C" {

int epctx_pal_map_file(const char* path, int load_mode, epctx_pal_region* out, char* msg,
                       size_t msg_cap) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat then
  // rejects it as not a regular file).
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    return fail(msg, msg_cap, errno_code(e), path, e == ENOENT ? "No such file" : strerror(e));
  }
  return map_fd(fd, path, load_mode, out, msg, msg_cap);
}

int epctx_pal_read_file(const char* path, uint64_t max_size, epctx_pal_region* out, char* msg,
                        size_t msg_cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    return fail(msg, msg_cap, errno_code(e), path, e == ENOENT ? "No such file" : strerror(e));
  }
  return map_fd(fd, path, EPCTX_PAL_LOAD_READ, out, msg, msg_cap, max_size);
}

int epctx_pal_map_file_beneath(const char* base_dir, const char* rel_path, int load_mode,
                               epctx_pal_region* out, char* msg, size_t msg_cap) {
  char shown[1024];
  int fd = -1;
  int rc = open_beneath(base_dir, rel_path, shown, sizeof shown, &fd, msg, msg_cap);
  if (rc != EPCTX_OK) return rc;
  return map_fd(fd, shown, load_mode, out, msg, msg_cap);
}

int epctx_pal_counter_read(const char* store, const char* name, uint64_t* value, int* found,
                           char* msg, size_t msg_cap) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", store, name);
  *found = 0;
  *value = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return EPCTX_OK;
    return fail(msg, msg_cap, EPCTX_FAIL, path, strerror(e));
  }
  char buf[32];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  // The file is decimal digits and a newline, nothing else.
  uint64_t v = 0;
  bool ok = n >= 2 && n < static_cast<ssize_t>(sizeof buf) && buf[n - 1] == '\n';
  for (ssize_t i = 0; ok && i < n - 1; ++i) {
    ok = buf[i] >= '0' && buf[i] <= '9' && v <= (UINT64_MAX - 9) / 10;
    v = v * 10 + static_cast<uint64_t>(buf[i] - '0');
  }
  if (!ok) return fail(msg, msg_cap, EPCTX_FAIL, path, "rollback counter file is corrupt");
  *found = 1;
  *value = v;
  return EPCTX_OK;
}

int epctx_pal_counter_write(const char* store, const char* name, uint64_t value, char* msg,
                            size_t msg_cap) {
  char path[1024], tmp[1100], text[32];
  snprintf(path, sizeof path, "%s/%s", store, name);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, static_cast<long>(getpid()));
  int len = snprintf(text, sizeof text, "%llu\n", static_cast<unsigned long long>(value));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(msg, msg_cap, EPCTX_FAIL, tmp, strerror(errno));
  bool ok = write(fd, text, static_cast<size_t>(len)) == len && fsync(fd) == 0;
  int e = errno;
  close(fd);
  if (!ok || rename(tmp, path) != 0) {
    if (ok) e = errno;
    unlink(tmp);
    return fail(msg, msg_cap, EPCTX_FAIL, path, strerror(e));
  }
  int dfd = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return EPCTX_OK;
}

int epctx_pal_file_id_beneath(const char* base_dir, const char* rel_path, epctx_pal_file_id* out,
                              char* msg, size_t msg_cap) {
  char shown[1024];
  int fd = -1;
  int rc = open_beneath(base_dir, rel_path, shown, sizeof shown, &fd, msg, msg_cap);
  if (rc != EPCTX_OK) return rc;
  struct stat st;
  rc = stat_regular(fd, shown, &st, msg, msg_cap);
  if (rc != EPCTX_OK) return rc;
  close(fd);
  out->device = static_cast<uint64_t>(st.st_dev);
  out->inode = static_cast<uint64_t>(st.st_ino);
  out->size = static_cast<uint64_t>(st.st_size);
  out->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return EPCTX_OK;
}

void epctx_pal_advise(const epctx_pal_region* region, uint64_t offset, uint64_t size, int advice) {
  if (!region || !region->data || reinterpret_cast<uintptr_t>(region->handle) == kReadHandleTag)
    return;
  if (offset > region->size || size > region->size - offset || size == 0) return;
  // madvise wants a page-aligned start: widen the range down to its page.
  uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = reinterpret_cast<uintptr_t>(region->data) + offset;
  uintptr_t aligned = start & ~(page - 1);
  int how = advice == EPCTX_PAL_ADVISE_DONTNEED ? MADV_DONTNEED
            : advice == EPCTX_PAL_ADVISE_NORMAL ? MADV_NORMAL
                                                : MADV_WILLNEED;
  madvise(reinterpret_cast<void*>(aligned), static_cast<size_t>(size + (start - aligned)), how);
}

int epctx_pal_map_fd(int fd, uint64_t offset, uint64_t length, int load_mode, epctx_pal_region* out,
                     char* msg, size_t msg_cap) {
  char label[48];
  snprintf(label, sizeof label, "file descriptor %d", fd);
  *out = epctx_pal_region{};
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0)
    return fail(msg, msg_cap, EPCTX_INVALID_ARGUMENT, label, "not an open file descriptor");
  if (!S_ISREG(st.st_mode))
    return fail(msg, msg_cap, EPCTX_PATH_REJECTED, label, "not a regular file");
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (offset > file_size || length > file_size - offset) {
    char what[128];
    snprintf(what, sizeof what, "range [%llu, +%llu) is not inside the file of %llu bytes",
             static_cast<unsigned long long>(offset), static_cast<unsigned long long>(length),
             static_cast<unsigned long long>(file_size));
    return fail(msg, msg_cap, EPCTX_INVALID_ARGUMENT, label, what);
  }
  if (length == 0) return EPCTX_OK;
  if (length > SIZE_MAX / 2)
    return fail(msg, msg_cap, EPCTX_FAIL, label, "range larger than the address space");
  size_t size = static_cast<size_t>(length);
  if (load_mode == EPCTX_PAL_LOAD_READ) {
    void* buf = nullptr;
    if (posix_memalign(&buf, 4096, size) != 0)
      return fail(msg, msg_cap, EPCTX_OUT_OF_MEMORY, label, "out of memory reading the range");
    size_t got = 0;
    while (got < size) {
      ssize_t n =
          pread(fd, static_cast<char*>(buf) + got, size - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int e = n < 0 ? errno : EIO;
        free(buf);
        return fail(msg, msg_cap, EPCTX_FAIL, label,
                    n < 0 ? strerror(e) : "file shrank while reading");
      }
      got += static_cast<size_t>(n);
    }
    out->data = static_cast<const uint8_t*>(buf);
    out->size = length;
    out->handle = reinterpret_cast<void*>(kReadHandleTag);
    return EPCTX_OK;
  }
  // mmap wants a page-aligned file offset: map from the page holding
  // `offset`; the handle keeps the mapping's start for epctx_pal_unmap.
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t start = offset & ~(page - 1);
  size_t lead = static_cast<size_t>(offset - start);
  void* p = mmap(nullptr, size + lead, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(start));
  if (p == MAP_FAILED) return fail(msg, msg_cap, EPCTX_FAIL, label, strerror(errno));
  madvise(p, size + lead, MADV_RANDOM);
  out->data = static_cast<const uint8_t*>(p) + lead;
  out->size = length;
  out->handle = p;
  return EPCTX_OK;
}

void epctx_pal_unmap(epctx_pal_region* region) {
  if (!region || !region->data) return;
  if (reinterpret_cast<uintptr_t>(region->handle) == kReadHandleTag) {
    free(const_cast<uint8_t*>(region->data));
  } else if (region->handle) {  // a range of a descriptor: the mapping starts at handle
    uint8_t* base = static_cast<uint8_t*>(region->handle);
    munmap(base, static_cast<size_t>(region->data + region->size - base));
  } else {
    munmap(const_cast<uint8_t*>(region->data), static_cast<size_t>(region->size));
  }
  region->data = nullptr;
  region->size = 0;
}

void* epctx_pal_alloc(size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  return posix_memalign(&p, alignment, size ? size : 1) == 0 ? p : nullptr;
}

void epctx_pal_free(void* ptr) { free(ptr); }

uint64_t epctx_pal_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Mutexes, condition variables and threads: pal_threads.cc.

}  // extern "C"
