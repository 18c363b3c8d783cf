// mbedtls helpers shared by the signer, the verifier and the CLI: RAII
// wrappers and one-line operations that throw ToolError.
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

std::string Sha256(const void* data, size_t size);  // 32 raw bytes
void LoadPrivateKey(const std::string& pem_path, Pk* out);  // must be EC P-256
void LoadPublicKey(const std::string& pem_path, Pk* out);   // must be EC P-256
std::string KeyId(Pk& key);                          // SHA-256 of the SPKI DER
std::string SignDigest(Pk& key, const std::string& digest, const std::string& key_path);
bool VerifyDigest(Pk& key, const std::string& digest, const void* sig, size_t sig_len);

}  // namespace host
}  // namespace epctx

#endif
