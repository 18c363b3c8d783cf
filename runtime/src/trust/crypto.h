/* SPDX-License-Identifier: Apache-2.0 */
// The cryptography the verifier needs, behind three functions so the
// backend (mbedtls 2.28's libmbedcrypto today; PSA or a hardware engine on
// a board) can change without touching callers.
//
// Memory: mbedtls allocates bignums while parsing keys and verifying. When
// mbedtls is built with MBEDTLS_PLATFORM_MEMORY, InitCrypto routes that to
// the PAL allocator; Debian's build lacks it, so there mbedtls calls libc
// calloc/free itself (listed in tests/runtime/freestanding_allowlist.txt).
#ifndef EPCTX_TRUST_CRYPTO_H
#define EPCTX_TRUST_CRYPTO_H

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace epctx {
namespace trust {

constexpr size_t kMaxKeyDer = 160;  // P-256 SubjectPublicKeyInfo is 91 bytes

void InitCrypto();

void Sha256(const void* data, size_t size, uint8_t out[32]);

// SHA-256 in pieces, for hashing bytes as they are copied (one pass).
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void Restart();
  void Update(const void* data, size_t size);
  void Finish(uint8_t out[32]);

 private:
  alignas(8) unsigned char state_[128];  // the backend's context
};

// Parses a PEM (with or without a trailing NUL) or DER public key; it must
// be an EC key on P-256. Writes its DER SubjectPublicKeyInfo (the form the
// key id hashes) into der/der_len. KEY_REJECTED with the reason otherwise.
Status ParsePublicKey(const void* key, size_t len, uint8_t der[kMaxKeyDer], size_t* der_len);

// True only when `sig` (DER) is a valid ECDSA signature of `hash` by the key
// (DER SubjectPublicKeyInfo) and nothing follows it.
bool VerifyEcdsaP256(const uint8_t* key_der, size_t key_len, const uint8_t hash[32],
                     const uint8_t* sig, size_t sig_len);

}  // namespace trust
}  // namespace epctx

#endif
