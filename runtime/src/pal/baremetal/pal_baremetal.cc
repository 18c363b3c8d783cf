// SPDX-License-Identifier: Apache-2.0
// The bare-metal PAL: files are named memory regions, memory is one static
// arena, logging is a board hook. Contract and limits in
// <epctx/pal_baremetal.h>. Freestanding: only mem* from the C library.
#include <epctx/pal.h>
#include <epctx/pal_baremetal.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace {

const epctx_baremetal_platform* g_platform = nullptr;

// ---- messages (no snprintf on the device) ----

class Msg {
 public:
  Msg(char* buf, size_t cap) : buf_(buf), cap_(buf ? cap : 0) {
    if (cap_) buf_[0] = '\0';
  }
  Msg& s(const char* text) {
    for (; text && *text; ++text) put(*text);
    return *this;
  }
  Msg& u(uint64_t v) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (n) put(digits[--n]);
    return *this;
  }

 private:
  void put(char c) {
    if (len_ + 1 >= cap_) return;
    buf_[len_++] = c;
    buf_[len_] = '\0';
  }
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

int fail(char* msg, size_t cap, int code, const char* path, const char* what) {
  Msg(msg, cap).s(path).s(": ").s(what);
  return code;
}

size_t str_len(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

// ---- the arena allocator ----
//
// First fit over an address-ordered free list. Every block starts with its
// size; the pointer handed out is preceded by the address of its block, so
// over-aligned allocations (padding between header and payload) free the
// same way as plain ones. Freeing inserts the block in address order and
// merges it with free neighbours, so the arena does not fragment into
// pieces smaller than what was freed.

constexpr size_t kGrain = 16;  // block sizes and starts are multiples of this

struct Block {
  size_t size;  // bytes of the whole block, header included
  Block* next;  // next free block by address (free blocks only)
};

uintptr_t g_heap_begin = 0, g_heap_end = 0;
Block* g_free = nullptr;
size_t g_used = 0, g_peak = 0;

uintptr_t align_up(uintptr_t v, size_t a) { return (v + (a - 1)) & ~static_cast<uintptr_t>(a - 1); }

void heap_init(void* mem, size_t size) {
  uintptr_t b = align_up(reinterpret_cast<uintptr_t>(mem), kGrain);
  uintptr_t e = (reinterpret_cast<uintptr_t>(mem) + size) & ~static_cast<uintptr_t>(kGrain - 1);
  g_heap_begin = b;
  g_heap_end = e;
  g_free = reinterpret_cast<Block*>(b);
  g_free->size = e - b;
  g_free->next = nullptr;
  g_used = g_peak = 0;
}

void* heap_alloc(size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (alignment & (alignment - 1) || alignment > 4096) return nullptr;
  for (Block** link = &g_free; *link; link = &(*link)->next) {
    Block* b = *link;
    uintptr_t start = reinterpret_cast<uintptr_t>(b);
    uintptr_t block_end = start + b->size;
    uintptr_t p = align_up(start + sizeof(Block), alignment);
    if (p >= block_end || size > block_end - p) continue;
    // p + size <= block_end, a multiple of kGrain: rounding up stays inside.
    uintptr_t end = align_up(p + size, kGrain);
    size_t need = end - start;
    if (b->size - need >= 2 * kGrain) {
      Block* rest = reinterpret_cast<Block*>(end);
      rest->size = b->size - need;
      rest->next = b->next;
      *link = rest;
      b->size = need;
    } else {
      *link = b->next;
    }
    reinterpret_cast<Block**>(p)[-1] = b;
    g_used += b->size;
    if (g_used > g_peak) g_peak = g_used;
    return reinterpret_cast<void*>(p);
  }
  return nullptr;
}

void heap_free(void* ptr) {
  if (!ptr) return;
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  if (p < g_heap_begin + sizeof(Block) || p >= g_heap_end) return;  // not ours
  Block* b = reinterpret_cast<Block**>(p)[-1];
  uintptr_t start = reinterpret_cast<uintptr_t>(b);
  if (start < g_heap_begin || start + sizeof(Block) > p) return;
  g_used -= b->size;
  Block* prev = nullptr;
  Block* next = g_free;
  while (next && next < b) {
    prev = next;
    next = next->next;
  }
  b->next = next;
  if (next && reinterpret_cast<uintptr_t>(b) + b->size == reinterpret_cast<uintptr_t>(next)) {
    b->size += next->size;
    b->next = next->next;
  }
  if (prev && reinterpret_cast<uintptr_t>(prev) + prev->size == reinterpret_cast<uintptr_t>(b)) {
    prev->size += b->size;
    prev->next = b->next;
  } else if (prev) {
    prev->next = b;
  } else {
    g_free = b;
  }
}

// ---- files ----

// Finds `dir` + "/" + `rel` ("" dir: `rel` alone) in the file table.
const epctx_baremetal_file* find_file(const char* dir, const char* rel) {
  if (!g_platform) return nullptr;
  size_t dn = str_len(dir), rn = str_len(rel);
  for (size_t i = 0; i < g_platform->num_files; ++i) {
    const char* name = g_platform->files[i].name;
    size_t nn = str_len(name);
    if (dn == 0) {
      if (nn == rn && memcmp(name, rel, rn) == 0) return &g_platform->files[i];
    } else if (nn == dn + 1 + rn && memcmp(name, dir, dn) == 0 && name[dn] == '/' &&
               memcmp(name + dn + 1, rel, rn) == 0) {
      return &g_platform->files[i];
    }
  }
  return nullptr;
}

// The containment rules of the POSIX PAL, on names: no absolute path, no
// ".." component (a table has no symlinks to follow).
bool escapes(const char* rel) {
  if (rel[0] == '/') return true;
  for (const char* c = rel; *c;) {
    const char* e = c;
    while (*e && *e != '/') ++e;
    if (e - c == 2 && c[0] == '.' && c[1] == '.') return true;
    c = *e ? e + 1 : e;
  }
  return false;
}

int open_region(const epctx_baremetal_file* f, const char* path, int load_mode, uint64_t max_size,
                epctx_pal_region* out, char* msg, size_t cap) {
  *out = epctx_pal_region{};
  if (!f) return fail(msg, cap, EPCTX_NO_SUCHFILE, path, "no such file in the board's file table");
  if (f->size > max_size) {
    Msg(msg, cap).s(path).s(": ").u(f->size).s(" bytes exceed the limit of ").u(max_size);
    return EPCTX_INVALID_ARGUMENT;
  }
  out->size = f->size;
  if (f->size == 0) return EPCTX_OK;
  if (load_mode != EPCTX_PAL_LOAD_READ) {
    out->data = static_cast<const uint8_t*>(f->data);
    return EPCTX_OK;
  }
  void* copy = heap_alloc(f->size, 64);
  if (!copy) {
    Msg(msg, cap).s(path).s(": out of memory for a private copy of ").u(f->size).s(" bytes");
    return EPCTX_OUT_OF_MEMORY;
  }
  memcpy(copy, f->data, f->size);
  out->data = static_cast<const uint8_t*>(copy);
  out->handle = copy;
  return EPCTX_OK;
}

// ---- anti-rollback counters: RAM stand-in for OTP / NV storage ----

constexpr int kMaxCounters = 8;
constexpr size_t kMaxStoreName = 64;
constexpr size_t kCounterName = 64;  // 64 hex digits (pal.h)

struct Counter {
  bool used;
  char store[kMaxStoreName + 1];
  char name[kCounterName + 1];
  uint64_t value;
};
Counter g_counters[kMaxCounters];

int check_counter_names(const char* store, const char* name, char* msg, size_t cap) {
  if (str_len(store) > kMaxStoreName) {
    Msg(msg, cap).s("rollback store '").s(store).s("': name longer than ").u(kMaxStoreName);
    return EPCTX_INVALID_ARGUMENT;
  }
  if (str_len(name) != kCounterName) {
    Msg(msg, cap)
        .s("rollback counter '")
        .s(name)
        .s("': expected ")
        .u(kCounterName)
        .s(" hex digits");
    return EPCTX_INVALID_ARGUMENT;
  }
  return EPCTX_OK;
}

Counter* find_counter(const char* store, const char* name) {
  for (Counter& c : g_counters)
    if (c.used && memcmp(c.store, store, str_len(store) + 1) == 0 &&
        memcmp(c.name, name, kCounterName + 1) == 0)
      return &c;
  return nullptr;
}

}  // namespace

extern "C" {

int epctx_pal_baremetal_init(const epctx_baremetal_platform* platform) {
  if (!platform || !platform->heap || platform->heap_size < 256) return EPCTX_INVALID_ARGUMENT;
  if (platform->num_files && !platform->files) return EPCTX_INVALID_ARGUMENT;
  for (size_t i = 0; i < platform->num_files; ++i) {
    const epctx_baremetal_file& f = platform->files[i];
    if (!f.name || !f.name[0] || (f.size && !f.data)) return EPCTX_INVALID_ARGUMENT;
  }
  g_platform = platform;
  heap_init(platform->heap, platform->heap_size);
  memset(g_counters, 0, sizeof g_counters);
  return EPCTX_OK;
}

size_t epctx_pal_baremetal_heap_used(void) { return g_used; }
size_t epctx_pal_baremetal_heap_peak(void) { return g_peak; }

int epctx_pal_map_file(const char* path, int load_mode, epctx_pal_region* out, char* msg,
                       size_t msg_cap) {
  return open_region(find_file("", path), path, load_mode, UINT64_MAX, out, msg, msg_cap);
}

int epctx_pal_read_file(const char* path, uint64_t max_size, epctx_pal_region* out, char* msg,
                        size_t msg_cap) {
  return open_region(find_file("", path), path, EPCTX_PAL_LOAD_READ, max_size, out, msg, msg_cap);
}

int epctx_pal_map_file_beneath(const char* base_dir, const char* rel_path, int load_mode,
                               epctx_pal_region* out, char* msg, size_t msg_cap) {
  *out = epctx_pal_region{};
  if (escapes(rel_path))
    return fail(msg, msg_cap, EPCTX_PATH_REJECTED, rel_path,
                "absolute path or '..' component leaves the model's folder");
  return open_region(find_file(base_dir, rel_path), rel_path, load_mode, UINT64_MAX, out, msg,
                     msg_cap);
}

int epctx_pal_map_fd(int fd, uint64_t offset, uint64_t length, int load_mode, epctx_pal_region* out,
                     char* msg, size_t msg_cap) {
  (void)fd, (void)offset, (void)length, (void)load_mode;
  *out = epctx_pal_region{};
  return fail(msg, msg_cap, EPCTX_NOT_IMPLEMENTED, "file descriptor",
              "the bare-metal PAL has no file descriptors (files are named flash regions)");
}

void epctx_pal_unmap(epctx_pal_region* region) {
  if (!region) return;
  heap_free(region->handle);
  *region = epctx_pal_region{};
}

int epctx_pal_file_id_beneath(const char* base_dir, const char* rel_path, epctx_pal_file_id* out,
                              char* msg, size_t msg_cap) {
  if (escapes(rel_path))
    return fail(msg, msg_cap, EPCTX_PATH_REJECTED, rel_path,
                "absolute path or '..' component leaves the model's folder");
  const epctx_baremetal_file* f = find_file(base_dir, rel_path);
  if (!f)
    return fail(msg, msg_cap, EPCTX_NO_SUCHFILE, rel_path,
                "no such file in the board's file table");
  // The table entry is the file's identity: its contents never change.
  out->device = 0;
  out->inode = static_cast<uint64_t>(f - g_platform->files) + 1;
  out->size = f->size;
  out->mtime_ns = 0;
  return EPCTX_OK;
}

void epctx_pal_advise(const epctx_pal_region*, uint64_t, uint64_t, int) {}

void* epctx_pal_alloc(size_t size, size_t alignment) {
  return g_platform ? heap_alloc(size, alignment) : nullptr;
}
void epctx_pal_free(void* ptr) { heap_free(ptr); }

uint64_t epctx_pal_now_ns(void) {
  return g_platform && g_platform->now_ns ? g_platform->now_ns() : 0;
}

void epctx_pal_log(int level, const char* message) {
  if (!g_platform || !g_platform->write) return;
  static const char* const kLevels[] = {
      "epctx error: ", "epctx warning: ", "epctx info: ", "epctx verbose: "};
  g_platform->write(kLevels[level < 0 ? 0 : level > 3 ? 3 : level]);
  g_platform->write(message);
  g_platform->write("\n");
}

// One core, no threads: a mutex is a non-null token that guards nothing.
struct epctx_pal_mutex {
  char unused;
};
epctx_pal_mutex* epctx_pal_mutex_create(void) {
  static epctx_pal_mutex token;
  return &token;
}
void epctx_pal_mutex_destroy(epctx_pal_mutex*) {}
void epctx_pal_mutex_lock(epctx_pal_mutex*) {}
void epctx_pal_mutex_unlock(epctx_pal_mutex*) {}

// No threads to start: the intra-op pool runs everything on the caller.
uint32_t epctx_pal_cpu_count(void) { return 1; }
epctx_pal_thread* epctx_pal_thread_start(void (*)(void*), void*) { return nullptr; }
void epctx_pal_thread_join(epctx_pal_thread*) {}
struct epctx_pal_cond {
  char unused;
};
epctx_pal_cond* epctx_pal_cond_create(void) {
  static epctx_pal_cond token;
  return &token;
}
void epctx_pal_cond_destroy(epctx_pal_cond*) {}
void epctx_pal_cond_wait(epctx_pal_cond*, epctx_pal_mutex*) {}
void epctx_pal_cond_broadcast(epctx_pal_cond*) {}

int epctx_pal_counter_read(const char* store, const char* name, uint64_t* value, int* found,
                           char* msg, size_t msg_cap) {
  *found = 0;
  int rc = check_counter_names(store, name, msg, msg_cap);
  if (rc != EPCTX_OK) return rc;
  if (const Counter* c = find_counter(store, name)) {
    *value = c->value;
    *found = 1;
  }
  return EPCTX_OK;
}

int epctx_pal_counter_write(const char* store, const char* name, uint64_t value, char* msg,
                            size_t msg_cap) {
  int rc = check_counter_names(store, name, msg, msg_cap);
  if (rc != EPCTX_OK) return rc;
  Counter* c = find_counter(store, name);
  for (int i = 0; !c && i < kMaxCounters; ++i)
    if (!g_counters[i].used) c = &g_counters[i];
  if (!c)
    return fail(msg, msg_cap, EPCTX_FAIL, name,
                "rollback counter table full (8 counters in RAM on this board)");
  c->used = true;
  memcpy(c->store, store, str_len(store) + 1);
  memcpy(c->name, name, kCounterName + 1);
  c->value = value;
  return EPCTX_OK;
}

// No loader without an OS: drivers are linked into the image
// (EPCTX_DRIVERS) and registered with epctx_env_register_builtin_drivers.
int epctx_pal_library_open(const char* path, void** handle, char* msg, size_t msg_cap) {
  *handle = nullptr;
  return fail(msg, msg_cap, EPCTX_NOT_IMPLEMENTED, path,
              "shared libraries are not supported on bare metal (link the driver in)");
}
void* epctx_pal_library_symbol(void*, const char*) { return nullptr; }
void epctx_pal_library_close(void*) {}

}  // extern "C"
