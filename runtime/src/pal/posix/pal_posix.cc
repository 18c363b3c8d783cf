// The POSIX PAL (Linux, Android): files through open/mmap, memory through
// posix_memalign, time through CLOCK_MONOTONIC, mutexes through pthreads.
//
// Containment (epctx_pal_map_file_beneath): on Linux >= 5.6 openat2 with
// RESOLVE_BENEATH lets the kernel refuse any resolution that leaves the base
// directory (including through symlinks and ".."). Where openat2 is missing
// (ENOSYS, or seccomp's EPERM) we walk the path one component at a time with
// openat(O_NOFOLLOW): stricter than the kernel (a symlink that would stay
// inside is refused too), never looser.
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

#if defined(__linux__)
#include <linux/openat2.h>
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
int map_fd(int fd, const char* path, int load_mode, epctx_pal_region* out,
           char* msg, size_t cap) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return fail(msg, cap, EPCTX_FAIL, path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return fail(msg, cap, EPCTX_PATH_REJECTED, path, "not a regular file");
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

// Component walk with O_NOFOLLOW (the fallback when openat2 is missing).
int open_beneath_walk(int dirfd, const char* rel) {
  char comp[256];
  int cur = dup(dirfd);
  const char* c = rel;
  while (cur >= 0) {
    const char* end = strchr(c, '/');
    size_t n = end ? static_cast<size_t>(end - c) : strlen(c);
    if (n >= sizeof(comp)) {
      close(cur);
      errno = ENAMETOOLONG;
      return -1;
    }
    memcpy(comp, c, n);
    comp[n] = '\0';
    int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (end ? O_DIRECTORY : O_NONBLOCK);
    int next = openat(cur, comp, flags);
    int e = errno;
    close(cur);
    errno = e;
    if (!end) return next;
    cur = next;
    c = end + 1;
  }
  return -1;
}

}  // namespace

extern "C" {

int epctx_pal_map_file(const char* path, int load_mode, epctx_pal_region* out,
                       char* msg, size_t msg_cap) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat then
  // rejects it as not a regular file).
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    return fail(msg, msg_cap, errno_code(e), path, e == ENOENT ? "No such file" : strerror(e));
  }
  return map_fd(fd, path, load_mode, out, msg, msg_cap);
}

int epctx_pal_map_file_beneath(const char* base_dir, const char* rel_path,
                               int load_mode, epctx_pal_region* out, char* msg,
                               size_t msg_cap) {
  char shown[1024];
  snprintf(shown, sizeof shown, "%s%s%s", base_dir, *base_dir ? "/" : "", rel_path);
  if (rel_path[0] == '\0')
    return fail(msg, msg_cap, EPCTX_PATH_REJECTED, shown, "empty file name");
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
#if defined(__linux__) && defined(SYS_openat2)
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
  return map_fd(fd, shown, load_mode, out, msg, msg_cap);
}

void epctx_pal_unmap(epctx_pal_region* region) {
  if (!region || !region->data) return;
  if (reinterpret_cast<uintptr_t>(region->handle) == kReadHandleTag)
    free(const_cast<uint8_t*>(region->data));
  else
    munmap(const_cast<uint8_t*>(region->data), static_cast<size_t>(region->size));
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

void epctx_pal_log(int level, const char* message) {
  static const char* const kNames[] = {"error", "warning", "info", "verbose"};
  const char* name = level >= 0 && level <= 3 ? kNames[level] : "log";
  fprintf(stderr, "epctx %s: %s\n", name, message);
}

struct epctx_pal_mutex {
  pthread_mutex_t m;
};

epctx_pal_mutex* epctx_pal_mutex_create(void) {
  epctx_pal_mutex* m = static_cast<epctx_pal_mutex*>(malloc(sizeof(epctx_pal_mutex)));
  if (m && pthread_mutex_init(&m->m, nullptr) != 0) {
    free(m);
    return nullptr;
  }
  return m;
}
void epctx_pal_mutex_destroy(epctx_pal_mutex* m) {
  if (!m) return;
  pthread_mutex_destroy(&m->m);
  free(m);
}
void epctx_pal_mutex_lock(epctx_pal_mutex* m) { pthread_mutex_lock(&m->m); }
void epctx_pal_mutex_unlock(epctx_pal_mutex* m) { pthread_mutex_unlock(&m->m); }

}  // extern "C"
