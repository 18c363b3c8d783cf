// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for encrypted assets (runtime/src/trust/sealed.h): every
// input either opens and decrypts whole, its plaintext inside the input's
// size, or fails with one of the sealed reader's codes and a message. The
// ring holds a key for id "k1" and a provider that knows none, so inputs
// reach the key lookup, the key derivation and the segment checks.
#include <cstdlib>

#include "core/memory.h"
#include "trust/keyring.h"
#include "trust/sealed.h"

namespace {
int NoKey(void*, const char*, uint8_t*) { return EPCTX_KEY_MISSING; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static epctx::trust::Keyring* ring = [] {
    auto* r = new epctx::trust::Keyring;
    uint8_t key[32];
    for (int i = 0; i < 32; ++i) key[i] = uint8_t(i);
    if (!r->AddDataKey("k1", key, sizeof key).ok()) abort();
    r->SetKeyProvider(NoKey, nullptr);
    return r;
  }();
  epctx::trust::SealedAsset sa(epctx::Allocator::Default());
  epctx::Status st = sa.Open(epctx::Bytes{data, size}, epctx::StrView{"m.bin", 5}, *ring, "fuzz");
  uint8_t* out = nullptr;
  if (st.ok()) {
    const uint64_t n = sa.header().plaintext_size;
    if (n > size) abort();
    out = static_cast<uint8_t*>(malloc(size_t(n) + 1));
    st = sa.Decrypt(0, n, out);
  }
  free(out);
  if (st.ok()) return 0;
  const int c = st.code();
  if ((c != EPCTX_INVALID_CONTAINER && c != EPCTX_UNSUPPORTED_ALGORITHM && c != EPCTX_KEY_MISSING &&
       c != EPCTX_DECRYPTION_FAILED) ||
      st.message()[0] == '\0')
    abort();
  return 0;
}
