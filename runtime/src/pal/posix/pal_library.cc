// SPDX-License-Identifier: Apache-2.0
// Shared libraries for the POSIX PAL: dlopen, for driver plugins.
#include <epctx/pal.h>

#include <dlfcn.h>
#include <stdio.h>
#include <sys/stat.h>

extern "C" {

int epctx_pal_library_open(const char* path, void** handle, char* msg, size_t msg_cap) {
  *handle = nullptr;
  struct stat st;
  // dlopen's message for a missing file varies by libc; the code must not.
  // A name without '/' is searched for by the loader, so only paths are
  // checked here.
  bool has_slash = false;
  for (const char* p = path; *p; ++p) has_slash |= *p == '/';
  if (has_slash && stat(path, &st) != 0) {
    snprintf(msg, msg_cap, "no such file");
    return EPCTX_NO_SUCHFILE;
  }
  // RTLD_LOCAL: two driver libraries may use the same internal names.
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    snprintf(msg, msg_cap, "%s", why ? why : "dlopen failed");
    return EPCTX_FAIL;
  }
  *handle = h;
  return EPCTX_OK;
}

void* epctx_pal_library_symbol(void* handle, const char* name) {
  return handle ? dlsym(handle, name) : nullptr;
}

void epctx_pal_library_close(void* handle) {
  if (handle) dlclose(handle);
}

}  // extern "C"
