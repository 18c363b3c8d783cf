/* SPDX-License-Identifier: Apache-2.0 */
// mbedtls helpers for signing (private keys, key generation): RAII wrappers
// and one-line operations that throw ToolError. Hashing, public keys and
// signature checks are the runtime's own (trust/crypto.h), so host and device
// agree on key ids and signatures.
#ifndef EPCTX_HOST_SIGN_INTERNAL_H
#define EPCTX_HOST_SIGN_INTERNAL_H

#include <string>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>

namespace epctx {
namespace host {

struct Pk {
  mbedtls_pk_context pk;
  Pk() { mbedtls_pk_init(&pk); }
  ~Pk() { mbedtls_pk_free(&pk); }
  Pk(const Pk&) = delete;
  Pk& operator=(const Pk&) = delete;
};

struct Drbg {
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context ctr;
  Drbg();
  ~Drbg();
  Drbg(const Drbg&) = delete;
  Drbg& operator=(const Drbg&) = delete;
};

std::string Sha256(const void* data, size_t size);          // trust::Sha256 as 32 raw bytes
void LoadPrivateKey(const std::string& pem_path, Pk* out);  // must be EC P-256
// The key id of a private key's public half, as trust::Keyring::AddKey
// computes it (SHA-256 of the SubjectPublicKeyInfo DER).
std::string KeyId(Pk& key, const std::string& key_path);
std::string SignDigest(Pk& key, const std::string& digest, const std::string& key_path);

}  // namespace host
}  // namespace epctx

#endif
