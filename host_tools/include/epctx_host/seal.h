/* SPDX-License-Identifier: Apache-2.0 */
// Encrypting package files (runtime/schema/sealed_format.h) with mbedtls:
// ChaCha20-Poly1305 (default) or AES-256-GCM in fixed-size segments, the
// key of each file derived (HKDF-SHA256) from a 32-byte data key and the
// name the model references the file by. Encrypt before signing: the
// manifest then lists the ciphertext.
//
// Every failure throws ToolError naming the file and the reason.
#ifndef EPCTX_HOST_SEAL_H
#define EPCTX_HOST_SEAL_H

#include <cstdint>
#include <string>
#include <vector>

namespace epctx {
namespace host {

struct SealOptions {
  std::string key_id;  // 1..32 characters of [A-Za-z0-9._-]: names the key for the app
  int alg = 1;         // EPCTX_SEALED_ALG_*: 1 ChaCha20-Poly1305, 2 AES-256-GCM
  int segment_log2 = 16;
  bool encrypt_model = false;  // the _ctx.onnx too (then only epctx reads the package)
};

// "chacha20-poly1305" or "aes-256-gcm" -> EPCTX_SEALED_ALG_*; throws
// ToolError for any other name.
int ParseSealAlg(const std::string& name);

// A data key file: exactly 32 raw bytes.
std::string ReadDataKey(const std::string& path);
// Writes 32 random bytes (mode 0600); refuses to overwrite.
void GenerateDataKey(const std::string& path);

// `plain` as a sealed asset named `asset_name` (fresh random salt).
std::string SealBytes(const std::string& plain, const std::string& data_key,
                      const std::string& asset_name, const SealOptions& options);

// Throws ToolError (no file) for a malformed key id, an unknown algorithm
// or a segment size out of range: what a CLI checks before writing files.
void CheckSealOptions(const SealOptions& options);

// `file` (a sealed asset named `asset_name`) decrypted whole with
// data_key; ToolError naming `what` for a malformed file, a key of another
// id or a segment that does not verify.
std::string UnsealBytes(const std::string& file, const std::string& data_key,
                        const std::string& asset_name, const std::string& what);

// The bytes of a package's model file as ONNX: `bytes` (read from
// ctx_model_path) themselves, or decrypted with data_key when the model
// was encrypted (ToolError when data_key is empty then).
std::string PlainModelBytes(const std::string& bytes, const std::string& ctx_model_path,
                            const std::string& data_key);

// Encrypts, in place (atomically replaced), every context binary (EPContext
// ep_cache_context with embed_mode=0) and external-data file the package
// of ctx_model_path references, then the model itself when
// options.encrypt_model. Files already encrypted are left as they are (a
// weight-sharing group's models share one; an encrypted model is read with
// data_key). Returns the paths it encrypted. A package with embedded
// contexts (embed_mode=1) is refused: encrypt the model instead of
// embedding, or compile with --embed-mode 0.
std::vector<std::string> EncryptPackage(const std::string& ctx_model_path,
                                        const std::string& data_key, const SealOptions& options);

}  // namespace host
}  // namespace epctx

#endif
