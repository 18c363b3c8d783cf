// SPDX-License-Identifier: Apache-2.0
#include "trust/crypto.h"

#include <cstring>

#include <epctx/pal.h>
#include <mbedtls/ecp.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform.h>
#include <mbedtls/sha256.h>

namespace epctx {
namespace trust {
namespace {

#if defined(MBEDTLS_PLATFORM_MEMORY)
void* mbed_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return nullptr;
  void* p = epctx_pal_alloc(n * size, 16);
  if (p) memset(p, 0, n * size);
  return p;
}
void mbed_free(void* p) { epctx_pal_free(p); }
#endif

constexpr size_t kMaxKeyInput = 4096;

}  // namespace

void InitCrypto() {
#if defined(MBEDTLS_PLATFORM_MEMORY)
  mbedtls_platform_set_calloc_free(mbed_calloc, mbed_free);
#endif
}

void Sha256(const void* data, size_t size, uint8_t out[32]) {
  mbedtls_sha256_context c;
  mbedtls_sha256_init(&c);
  mbedtls_sha256_starts_ret(&c, 0);
  mbedtls_sha256_update_ret(&c, static_cast<const unsigned char*>(data), size);
  mbedtls_sha256_finish_ret(&c, out);
  mbedtls_sha256_free(&c);
}

static_assert(sizeof(mbedtls_sha256_context) <= 128, "Sha256Stream::state_ too small");

Sha256Stream::Sha256Stream() {
  auto* c = reinterpret_cast<mbedtls_sha256_context*>(state_);
  mbedtls_sha256_init(c);
  mbedtls_sha256_starts_ret(c, 0);
}
Sha256Stream::~Sha256Stream() {
  mbedtls_sha256_free(reinterpret_cast<mbedtls_sha256_context*>(state_));
}
void Sha256Stream::Restart() {
  mbedtls_sha256_starts_ret(reinterpret_cast<mbedtls_sha256_context*>(state_), 0);
}
void Sha256Stream::Update(const void* data, size_t size) {
  mbedtls_sha256_update_ret(reinterpret_cast<mbedtls_sha256_context*>(state_),
                            static_cast<const unsigned char*>(data), size);
}
void Sha256Stream::Finish(uint8_t out[32]) {
  mbedtls_sha256_finish_ret(reinterpret_cast<mbedtls_sha256_context*>(state_), out);
}

Status ParsePublicKey(const void* key, size_t len, uint8_t der[kMaxKeyDer], size_t* der_len) {
  *der_len = 0;
  if (!key || len == 0 || len > kMaxKeyInput)
    return Status::Error(EPCTX_KEY_REJECTED, "trusted key: %zu bytes, expected 1..%zu", len,
                         kMaxKeyInput);
  // Keys are parsed when the application adds them, before any manifest has
  // made the verifier set mbedtls's allocator (a build with
  // MBEDTLS_PLATFORM_MEMORY has none until then).
  InitCrypto();
  // mbedtls reads PEM only from a NUL-terminated buffer whose length counts
  // the NUL.
  unsigned char buf[kMaxKeyInput + 1];
  memcpy(buf, key, len);
  size_t n = len;
  bool pem = len > 10 && memcmp(key, "-----BEGIN", 10) == 0;
  if (pem && buf[n - 1] != '\0') buf[n++] = '\0';
  mbedtls_pk_context pk;
  mbedtls_pk_init(&pk);
  int rc = mbedtls_pk_parse_public_key(&pk, buf, n);
  Status st;
  if (rc != 0) {
    st = Status::Error(EPCTX_KEY_REJECTED, "trusted key: not a %s public key (mbedtls -0x%04x)",
                       pem ? "PEM" : "DER", static_cast<unsigned>(-rc));
  } else if (mbedtls_pk_get_type(&pk) != MBEDTLS_PK_ECKEY ||
             mbedtls_pk_ec(pk)->grp.id != MBEDTLS_ECP_DP_SECP256R1) {
    st = Status::Error(EPCTX_KEY_REJECTED, "trusted key: not an EC P-256 key (type %s)",
                       mbedtls_pk_get_name(&pk));
  } else {
    // mbedtls writes DER at the end of the buffer.
    unsigned char out[kMaxKeyDer];
    int w = mbedtls_pk_write_pubkey_der(&pk, out, sizeof out);
    if (w <= 0) {
      st = Status::Error(EPCTX_KEY_REJECTED, "trusted key: cannot encode (mbedtls -0x%04x)",
                         static_cast<unsigned>(-w));
    } else {
      memcpy(der, out + sizeof out - w, static_cast<size_t>(w));
      *der_len = static_cast<size_t>(w);
    }
  }
  mbedtls_pk_free(&pk);
  return st;
}

bool VerifyEcdsaP256(const uint8_t* key_der, size_t key_len, const uint8_t hash[32],
                     const uint8_t* sig, size_t sig_len) {
  mbedtls_pk_context pk;
  mbedtls_pk_init(&pk);
  bool ok = mbedtls_pk_parse_public_key(&pk, key_der, key_len) == 0 &&
            mbedtls_pk_get_type(&pk) == MBEDTLS_PK_ECKEY &&
            mbedtls_pk_ec(pk)->grp.id == MBEDTLS_ECP_DP_SECP256R1;
  // Any nonzero result fails, SIG_LEN_MISMATCH (trailing bytes) included.
  if (ok) ok = mbedtls_pk_verify(&pk, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len) == 0;
  mbedtls_pk_free(&pk);
  return ok;
}

}  // namespace trust
}  // namespace epctx
