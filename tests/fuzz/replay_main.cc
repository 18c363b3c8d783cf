// SPDX-License-Identifier: Apache-2.0
// main() for the fuzz targets in ordinary builds (GCC, host and host-asan):
// runs LLVMFuzzerTestOneInput on every file named, or every file in every
// folder named, so the inputs of past findings (regressions/<target>/) stay
// tests under ASan/UBSan without libFuzzer. Exits 0 when all ran.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

int RunFile(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path.c_str());
    return 1;
  }
  std::vector<uint8_t> buf;
  uint8_t chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf.insert(buf.end(), chunk, chunk + n);
  fclose(f);
  // A copy of exactly the file's size, so reads past it are caught.
  uint8_t* data = static_cast<uint8_t*>(malloc(buf.size() ? buf.size() : 1));
  if (!buf.empty()) std::copy(buf.begin(), buf.end(), data);
  fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), buf.size());
  LLVMFuzzerTestOneInput(data, buf.size());
  free(data);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int failed = 0, ran = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: no such file or folder %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      failed += RunFile(argv[i]);
      ++ran;
      continue;
    }
    DIR* d = opendir(argv[i]);
    if (!d) return 1;
    std::vector<std::string> names;
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(std::string(argv[i]) + "/" + e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      failed += RunFile(n);
      ++ran;
    }
  }
  fprintf(stderr, "replay: %d inputs, %d unreadable\n", ran, failed);
  return failed || ran == 0 ? 1 : 0;
}
