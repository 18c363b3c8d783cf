// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for key-wrap files (runtime/src/trust/key_wrap.h): every
// input either parses into entries that lie inside it, with well-formed
// ids, or fails with INVALID_CONTAINER or UNSUPPORTED_ALGORITHM and a
// message. A parsed file then serves the data key lookup of its first
// entry's data key id with a ring holding a key for device key id "dev-a"
// (and a provider that knows none), so inputs reach the unwrap: it
// succeeds, or fails with KEY_MISSING or DECRYPTION_FAILED and leaves no
// byte of a key behind.
#include <cstdlib>
#include <cstring>

#include <keys_format.h>

#include "trust/key_wrap.h"
#include "trust/keyring.h"

namespace {
int NoKey(void*, const char*, uint8_t*) { return EPCTX_KEY_MISSING; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static epctx::trust::Keyring* ring = [] {
    auto* r = new epctx::trust::Keyring;
    uint8_t key[32];
    for (int i = 0; i < 32; ++i) key[i] = uint8_t(i);
    if (!r->AddDataKey("dev-a", key, sizeof key).ok()) abort();
    r->SetKeyProvider(NoKey, nullptr);
    return r;
  }();
  epctx::trust::KeyWrapFile f;
  epctx::Status st = epctx::trust::ParseKeyWrapFile(epctx::Bytes{data, size}, "fuzz.keys", &f);
  if (!st.ok()) {
    const int c = st.code();
    if ((c != EPCTX_INVALID_CONTAINER && c != EPCTX_UNSUPPORTED_ALGORITHM) || !st.message()[0])
      abort();
    return 0;
  }
  if (f.count == 0 || f.count > EPCTX_KEYS_MAX_ENTRIES ||
      size != EPCTX_KEYS_HEADER_SIZE + size_t(f.count) * EPCTX_KEYS_ENTRY_SIZE)
    abort();
  for (uint32_t i = 0; i < f.count; ++i) {
    const epctx::trust::KeyWrapEntry e = epctx::trust::KeyWrapEntryAt(f, i);
    if (e.bytes < data || e.bytes + EPCTX_KEYS_ENTRY_SIZE > data + size ||
        !epctx::trust::ValidKeyId(e.data_key_id, strlen(e.data_key_id)) ||
        !epctx::trust::ValidKeyId(e.wrap_key_id, strlen(e.wrap_key_id)))
      abort();
  }
  const epctx::trust::KeyWrapEntry first = epctx::trust::KeyWrapEntryAt(f, 0);
  uint8_t out[32];
  memset(out, 0xa5, sizeof out);
  st = epctx::trust::DataKeyFor(*ring, &f, first.data_key_id, "fuzz asset", out);
  if (st.ok()) return 0;
  const int c = st.code();
  if ((c != EPCTX_KEY_MISSING && c != EPCTX_DECRYPTION_FAILED &&
       c != EPCTX_UNSUPPORTED_ALGORITHM) ||
      !st.message()[0])
    abort();
  for (uint8_t b : out)
    if (b != 0 && b != 0xa5) abort();
  return 0;
}
