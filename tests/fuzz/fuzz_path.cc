// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the path resolver (epctx_pal_map_file_beneath): the
// input is a relative path tried beneath a fixed folder that holds a file, a
// subfolder, a symlink that stays inside and symlinks that escape (to a
// file and to a folder outside). Whatever the path, the result is a mapping
// of a file inside the folder (identified by its contents, which name the
// file) or a refusal with a code and a message: never the outside file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <epctx/pal.h>

namespace {

std::string g_base;

void Write(const std::string& path, const char* text) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) abort();
  fputs(text, f);
  fclose(f);
}

void Setup() {
  char tmpl[] = "/tmp/epctx-fuzz-path-XXXXXX";
  if (!mkdtemp(tmpl)) abort();
  std::string root = tmpl;
  mkdir((root + "/outside").c_str(), 0755);
  Write(root + "/outside/secret.bin", "OUTSIDE");
  Write(root + "/secret.bin", "OUTSIDE");
  g_base = root + "/model";
  mkdir(g_base.c_str(), 0755);
  mkdir((g_base + "/sub").c_str(), 0755);
  Write(g_base + "/model_vnpu.bin", "INSIDE");
  Write(g_base + "/sub/a.bin", "INSIDE");
  if (symlink("sub/a.bin", (g_base + "/inlink").c_str()) != 0 ||
      symlink("../secret.bin", (g_base + "/outlink").c_str()) != 0 ||
      symlink("../outside", (g_base + "/outdir").c_str()) != 0 ||
      symlink("/etc/passwd", (g_base + "/abslink").c_str()) != 0 ||
      symlink("loop", (g_base + "/loop").c_str()) != 0)
    abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return -1;
  std::string rel(reinterpret_cast<const char*>(data), size);
  rel = rel.c_str();  // the API takes a NUL-terminated path
  epctx_pal_region r;
  memset(&r, 0, sizeof r);
  char msg[512];
  msg[0] = '\0';
  int rc = epctx_pal_map_file_beneath(g_base.c_str(), rel.c_str(), EPCTX_PAL_LOAD_READ, &r, msg,
                                      sizeof msg);
  if (rc != 0) {
    if (msg[0] == '\0') abort();
    return 0;
  }
  if (r.size == 0 || memcmp(r.data, "INSIDE", r.size < 6 ? r.size : 6) != 0) {
    fprintf(stderr, "path '%s' mapped a file outside the base folder\n", rel.c_str());
    abort();
  }
  epctx_pal_unmap(&r);
  return 0;
}
