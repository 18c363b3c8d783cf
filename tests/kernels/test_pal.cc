// The part of the PAL the kernel tests need (allocation and logging),
// backed by the C library; the real PALs live in runtime/src/pal.
#include <epctx/pal.h>

#include <cstdio>
#include <cstdlib>

extern "C" void* epctx_pal_alloc(size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  return posix_memalign(&p, alignment, size ? size : 1) == 0 ? p : nullptr;
}

extern "C" void epctx_pal_free(void* ptr) { free(ptr); }

extern "C" void epctx_pal_log(int level, const char* message) {
  fprintf(stderr, "[%d] %s\n", level, message);
}
