// SPDX-License-Identifier: Apache-2.0
// Private-key operations for epctx-sign (mbedtls); see sign_internal.h.
#include <cstdio>

#include <mbedtls/ecp.h>

#include "epctx_host/diagnostics.h"
#include "sign_internal.h"
#include "trust/crypto.h"

namespace epctx {
namespace host {
namespace {

void CheckP256(Pk& key, const std::string& path) {
  if (mbedtls_pk_get_type(&key.pk) != MBEDTLS_PK_ECKEY ||
      mbedtls_pk_ec(key.pk)->grp.id != MBEDTLS_ECP_DP_SECP256R1)
    throw ToolError(path, "not an EC P-256 key (epctx signs with ECDSA P-256)");
}

std::string MbedError(int rc) {
  char hex[16];
  snprintf(hex, sizeof hex, "-0x%04x", static_cast<unsigned>(-rc));
  return hex;
}

}  // namespace

Drbg::Drbg() {
  mbedtls_entropy_init(&entropy);
  mbedtls_ctr_drbg_init(&ctr);
  static const char kPers[] = "epctx-sign";
  if (mbedtls_ctr_drbg_seed(&ctr, mbedtls_entropy_func, &entropy,
                            reinterpret_cast<const unsigned char*>(kPers), sizeof kPers - 1) != 0)
    throw ToolError("entropy", "cannot seed the random generator");
}

Drbg::~Drbg() {
  mbedtls_ctr_drbg_free(&ctr);
  mbedtls_entropy_free(&entropy);
}

std::string Sha256(const void* data, size_t size) {
  uint8_t out[32];
  trust::Sha256(data, size, out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

void LoadPrivateKey(const std::string& pem_path, Pk* out) {
  Pk& key = *out;
  int rc = mbedtls_pk_parse_keyfile(&key.pk, pem_path.c_str(), nullptr);
  if (rc != 0)
    throw ToolError(pem_path, "cannot read a PEM private key (mbedtls " + MbedError(rc) + ")");
  CheckP256(key, pem_path);
}

std::string KeyId(Pk& key, const std::string& key_path) {
  unsigned char buf[512];
  int n = mbedtls_pk_write_pubkey_der(&key.pk, buf, sizeof buf);
  if (n <= 0) throw ToolError(key_path, "cannot encode the public key");
  uint8_t der[trust::kMaxKeyDer];
  size_t der_len = 0;
  Status st = trust::ParsePublicKey(buf + sizeof buf - n, static_cast<size_t>(n), der, &der_len);
  if (!st.ok()) throw ToolError(key_path, st.message());
  return Sha256(der, der_len);
}

std::string SignDigest(Pk& key, const std::string& digest, const std::string& key_path) {
  Drbg drbg;
  unsigned char sig[MBEDTLS_PK_SIGNATURE_MAX_SIZE];
  size_t len = 0;
  int rc = mbedtls_pk_sign(&key.pk, MBEDTLS_MD_SHA256,
                           reinterpret_cast<const unsigned char*>(digest.data()), 32, sig, &len,
                           mbedtls_ctr_drbg_random, &drbg.ctr);
  if (rc != 0) throw ToolError(key_path, "signing failed (mbedtls " + MbedError(rc) + ")");
  return std::string(reinterpret_cast<char*>(sig), len);
}

}  // namespace host
}  // namespace epctx
