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

struct Keyring {
  static constexpr int kMaxKeys = 8;
  static constexpr size_t kMaxPath = 512;

  TrustedKey keys[kMaxKeys];
  int num_keys = 0;
  char counter_dir[kMaxPath + 1] = {0};  // "" = no rollback store

  // KEY_REJECTED when the key does not parse or is not P-256;
  // INVALID_ARGUMENT when the ring is full. Adding a key twice is a no-op.
  Status AddKey(const void* key, size_t len);
  Status SetCounterStore(const char* dir);
  const TrustedKey* Find(const uint8_t id[32]) const;
};

}  // namespace trust
}  // namespace epctx

#endif
