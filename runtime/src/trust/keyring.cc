// SPDX-License-Identifier: Apache-2.0
#include "trust/keyring.h"

#include <cstring>

#include "core/types.h"

namespace epctx {
namespace trust {

Status Keyring::AddKey(const void* key, size_t len) {
  TrustedKey k;
  EPCTX_RETURN_IF_ERROR(ParsePublicKey(key, len, k.der, &k.der_len));
  Sha256(k.der, k.der_len, k.id);
  if (Find(k.id)) return Status::Ok();
  if (num_keys == kMaxKeys)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "trusted key: at most %d keys", kMaxKeys);
  keys[num_keys++] = k;
  return Status::Ok();
}

Status Keyring::SetCounterStore(const char* dir) {
  size_t n = dir ? cstr_len(dir) : 0;
  if (n == 0 || n > kMaxPath)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "rollback store: folder path of %zu bytes, expected 1..%zu", n, kMaxPath);
  memcpy(counter_dir, dir, n + 1);
  return Status::Ok();
}

const TrustedKey* Keyring::Find(const uint8_t id[32]) const {
  for (int i = 0; i < num_keys; ++i)
    if (memcmp(keys[i].id, id, 32) == 0) return &keys[i];
  return nullptr;
}

}  // namespace trust
}  // namespace epctx
