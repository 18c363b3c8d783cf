// SPDX-License-Identifier: Apache-2.0
// The data keys of encrypted packages (schema/sealed_format.h): held by the
// env, wiped when it goes. Built with and without EPCTX_TRUST (no
// cryptography here; trust/sealed.cc decrypts).
#include <cstring>

#include "core/types.h"
#include "trust/keyring.h"

namespace epctx {
namespace trust {

void Wipe(void* p, size_t n) {
  volatile uint8_t* b = static_cast<volatile uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = 0;
}

bool ValidKeyId(const char* id, size_t len) {
  if (!id || len == 0 || len > 32) return false;
  for (size_t i = 0; i < len; ++i) {
    const char c = id[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Keyring::~Keyring() { Wipe(data_keys, sizeof data_keys); }

Status Keyring::AddDataKey(const char* id, const void* key, size_t len) {
  size_t n = 0;
  while (id && n < 33 && id[n]) ++n;
  if (!ValidKeyId(id, n))
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "decryption key: key id must be 1..32 characters of [A-Za-z0-9._-]");
  if (!key || len != 32)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "decryption key '%s': %zu bytes, expected a 32-byte data key", id, len);
  for (int i = 0; i < num_data_keys; ++i) {
    if (!cstr_eq(data_keys[i].id, id)) continue;
    if (memcmp(data_keys[i].key, key, 32) == 0) return Status::Ok();
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "decryption key '%s': the id already holds another key", id);
  }
  if (num_data_keys == kMaxDataKeys)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "decryption key '%s': at most %d keys", id,
                         kMaxDataKeys);
  DataKey& k = data_keys[num_data_keys++];
  memcpy(k.id, id, n + 1);
  memcpy(k.key, key, 32);
  return Status::Ok();
}

Status Keyring::DataKeyFor(const char* id, const char* what, uint8_t out[32]) const {
  for (int i = 0; i < num_data_keys; ++i)
    if (cstr_eq(data_keys[i].id, id)) {
      memcpy(out, data_keys[i].key, 32);
      return Status::Ok();
    }
  if (provider) {
    const int rc = provider(provider_user, id, out);
    if (rc == EPCTX_OK) return Status::Ok();
    Wipe(out, 32);
    if (rc != EPCTX_KEY_MISSING && rc != EPCTX_NOT_FOUND)
      return Status::Error(rc, "%s: the key provider failed for key id '%s' (%s)", what, id,
                           epctx_code_name(rc));
  }
  return Status::Error(EPCTX_KEY_MISSING,
                       "%s: encrypted with key id '%s', which the application did not provide "
                       "(epctx_env_add_decryption_key or a key provider)",
                       what, id);
}

}  // namespace trust
}  // namespace epctx
