// A minimal malloc-based PAL for the ONNX reader tests: only what
// runtime/src/core and runtime/src/onnx reference.
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <epctx/pal.h>

extern "C" void* epctx_pal_alloc(size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  return posix_memalign(&p, alignment, size ? size : 1) == 0 ? p : nullptr;
}

extern "C" void epctx_pal_free(void* ptr) { free(ptr); }

extern "C" void epctx_pal_log(int level, const char* message) {
  fprintf(stderr, "[pal %d] %s\n", level, message);
}

extern "C" uint64_t epctx_pal_now_ns(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
