/* SPDX-License-Identifier: Apache-2.0 */
// Memory for the device code: the application's allocator and arenas on it.
//
// Allocator wraps the injectable epctx_allocator. Arena hands out memory in
// chunks taken from an Allocator and frees them all at once; load-time
// metadata (parsed model arrays) and each run's intermediates live in
// separate arenas. Nothing here throws: every allocation can fail and says so
// by returning nullptr.
#ifndef EPCTX_CORE_MEMORY_H
#define EPCTX_CORE_MEMORY_H

#include <cstddef>
#include <cstdint>
#include <new>

#include <epctx/epctx.h>

#include "core/types.h"

namespace epctx {

class Allocator {
 public:
  Allocator() = default;
  explicit Allocator(const epctx_allocator& a) : a_(a) {}
  // The PAL's default allocator.
  static Allocator Default();

  void* Alloc(size_t size, size_t alignment = 16) const {
    return a_.alloc ? a_.alloc(a_.user, size ? size : 1, alignment) : nullptr;
  }
  void Free(void* p) const {
    if (p && a_.free) a_.free(a_.user, p);
  }
  // Constructs a T (placement new); nullptr when out of memory.
  template <typename T, typename... Args>
  T* New(Args&&... args) const {
    void* p = Alloc(sizeof(T), alignof(T) < 16 ? 16 : alignof(T));
    return p ? new (p) T(static_cast<Args&&>(args)...) : nullptr;
  }
  template <typename T>
  void Delete(T* p) const {
    if (!p) return;
    p->~T();
    Free(p);
  }
  const epctx_allocator& raw() const { return a_; }

 private:
  epctx_allocator a_{nullptr, nullptr, nullptr};
};

class Arena {
 public:
  explicit Arena(const Allocator& a, size_t chunk_size = 16 * 1024)
      : alloc_(a), chunk_size_(chunk_size) {}
  ~Arena() { Reset(); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // nullptr on overflow or out of memory. alignment: power of two <= 4096.
  void* Alloc(size_t size, size_t alignment = 16);
  // Zero-initialised array of n T (T must be trivially constructible; a
  // pointer type makes an array of pointers, hence the NOLINT).
  // NOLINTBEGIN(bugprone-sizeof-expression)
  template <typename T>
  T* AllocArray(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) return nullptr;
    void* p = Alloc(n * sizeof(T), alignof(T));
    if (p) __builtin_memset(p, 0, n * sizeof(T));
    return static_cast<T*>(p);
  }
  // NOLINTEND(bugprone-sizeof-expression)
  // NUL-terminated copy of [s, s+n).
  char* Strdup(const char* s, size_t n);
  // NUL-terminated copy of a view; "" when out of memory (names for
  // messages and driver descriptors, where an empty name is harmless).
  const char* CStr(StrView s) {
    const char* p = Strdup(s.data, s.size);
    return p ? p : "";
  }
  void Reset();
  size_t bytes_allocated() const { return total_; }

 private:
  struct Chunk {
    Chunk* next;
    size_t size;
    size_t used;
  };
  Allocator alloc_;
  size_t chunk_size_;
  Chunk* head_ = nullptr;
  size_t total_ = 0;
};

}  // namespace epctx

#endif
