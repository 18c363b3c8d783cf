// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the manifest parser (built only with clang):
//   fuzz_manifest_libfuzzer <corpus dir with *.sig files from the trust tests>
// Every input either parses into views that lie inside it or fails with
// SIGNATURE_INVALID and a message; nothing else is allowed.
#include <cstdlib>
#include <cstring>

#include "core/memory.h"
#include "trust/manifest.h"

namespace {
bool Inside(const uint8_t* p, size_t n, const uint8_t* base, size_t size) {
  return n == 0 || (p >= base && n <= size && static_cast<size_t>(p - base) <= size - n);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  epctx::Arena arena(epctx::Allocator::Default());
  epctx::trust::Manifest m;
  epctx::Status st = epctx::trust::ParseManifest(epctx::Bytes{data, size}, "fuzz.sig", arena, &m);
  if (!st.ok()) {
    if (st.code() != EPCTX_SIGNATURE_INVALID || st.message()[0] == '\0') abort();
    return 0;
  }
  if (!Inside(m.signed_part.data, m.signed_part.size, data, size) ||
      !Inside(m.signature.data, m.signature.size, data, size))
    abort();
  for (uint32_t i = 0; i < m.num_files; ++i) {
    const epctx::trust::ManifestFile& f = m.files[i];
    if (!Inside(reinterpret_cast<const uint8_t*>(f.name.data), f.name.size, data, size)) abort();
    if (f.num_chunks > size / 32 ||
        !Inside(f.chunk_hashes, static_cast<size_t>(f.num_chunks) * 32, data, size))
      abort();
  }
  return 0;
}
