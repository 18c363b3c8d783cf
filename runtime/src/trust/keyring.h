/* SPDX-License-Identifier: Apache-2.0 */
// The application's trust configuration, held by the env: the public keys
// packages may be signed with and the folder of the anti-rollback store.
// Set before sessions are created, read-only afterwards. Keys come only from
// the application (epctx_env_add_trusted_key), never from a model's folder.
#ifndef EPCTX_TRUST_KEYRING_H
#define EPCTX_TRUST_KEYRING_H

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "trust/crypto.h"

namespace epctx {
namespace trust {

struct TrustedKey {
  uint8_t der[kMaxKeyDer];  // SubjectPublicKeyInfo
  size_t der_len;
  uint8_t id[32];  // SHA-256 of der: the manifest's KEY_ID
};

// A data key of encrypted packages (schema/sealed_format.h), by key id.
struct DataKey {
  char id[33];  // 1..32 bytes of [A-Za-z0-9._-], NUL-terminated
  uint8_t key[32];
};

// Asks the application for the data key of `key_id` (epctx.h).
using KeyProviderFn = int (*)(void* user, const char* key_id, uint8_t key[32]);

struct Keyring {
  static constexpr int kMaxKeys = 8;
  static constexpr int kMaxDataKeys = 8;
  static constexpr size_t kMaxPath = 512;

  TrustedKey keys[kMaxKeys];
  int num_keys = 0;
  char counter_dir[kMaxPath + 1] = {0};  // "" = no rollback store
  DataKey data_keys[kMaxDataKeys];
  int num_data_keys = 0;
  KeyProviderFn provider = nullptr;
  void* provider_user = nullptr;

  Keyring() = default;
  ~Keyring();  // wipes the data keys
  Keyring(const Keyring&) = delete;
  Keyring& operator=(const Keyring&) = delete;

  // KEY_REJECTED when the key does not parse or is not P-256;
  // INVALID_ARGUMENT when the ring is full. Adding a key twice is a no-op.
  Status AddKey(const void* key, size_t len);
  Status SetCounterStore(const char* dir);
  const TrustedKey* Find(const uint8_t id[32]) const;
  // INVALID_ARGUMENT for a malformed id, a key not of 32 bytes, a full
  // ring, or an id already holding another key (the same key again is a
  // no-op). Several ids at once serve a key rotation.
  Status AddDataKey(const char* id, const void* key, size_t len);
  void SetKeyProvider(KeyProviderFn fn, void* user) {
    provider = fn;
    provider_user = user;
  }
  // The data key of `id` into out: a key added above, else the provider's.
  // KEY_MISSING when neither has it (naming `what`, the asset), the
  // provider's code when it fails otherwise.
  Status DataKeyFor(const char* id, const char* what, uint8_t out[32]) const;
};

// Whether id is a well-formed key id: 1..32 bytes of [A-Za-z0-9._-].
bool ValidKeyId(const char* id, size_t len);

// Overwrites n bytes at p with zeros in a way the compiler keeps.
void Wipe(void* p, size_t n);

}  // namespace trust
}  // namespace epctx

#endif
