/* SPDX-License-Identifier: Apache-2.0 */
// Signing and verifying epctx packages (the manifest format is in
// runtime/schema/manifest_format.h): ECDSA P-256 over SHA-256 through
// mbedtls, keys in PEM.
//
// A package is a _ctx.onnx plus the files its EPContext nodes
// (embed_mode=0: ep_cache_context) and external initializers (location)
// reference, relative to its folder. SignPackage discovers those files by
// parsing the model, hashes them in chunks and writes "<model>.sig" beside
// it; call it right after epctx-compile has written its outputs.
//
// Every failure throws ToolError naming the file and the reason.
#ifndef EPCTX_HOST_SIGN_H
#define EPCTX_HOST_SIGN_H

#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace epctx {
namespace host {

struct SignOptions {
  std::string model_id;           // required: what applications bind the package to
  uint64_t security_counter = 0;  // anti-rollback: raise it to retire older packages
  int chunk_log2 = 16;            // 64 KiB chunks (12..24)
  // The manifest's versions come from the package: the first EPContext
  // node (ep_sdk_version, hardware_architecture), its context binary
  // (min_driver_version) and the model (producer_name producer_version).
  std::string manifest_path;  // default: "<ctx_model_path>.sig"
  std::string data_key;       // an encrypted model's: to list the files it references
};

struct PackageFile {
  int role = 0;      // EPCTX_MF_ROLE_*: 0 model, 1 context binary, 2 external data
  std::string name;  // as the model references it (the model: its file name)
  std::string path;  // on disk
};

// The model first, then each referenced file once, in model order.
std::vector<PackageFile> ListPackageFiles(const std::string& ctx_model_path);
// The same for a model already parsed from ctx_model_path (names resolve
// beside it), so callers that need the model's bytes read them once.
std::vector<PackageFile> ListPackageFiles(const onnx::ModelProto& model,
                                          const std::string& ctx_model_path);

// Returns the manifest's path.
std::string SignPackage(const std::string& ctx_model_path, const std::string& key_pem_path,
                        const SignOptions& options = SignOptions());

struct VerifyReport {
  std::string model_id;
  uint64_t security_counter = 0;
  std::vector<std::string> files;  // names checked
  uint64_t bytes = 0;              // bytes hashed
};

// Checks the manifest (strictly, as the runtime does), its signature with
// the public key (PEM) and every chunk of every listed file, and that the
// model references no file the manifest does not list.
// data_key: an encrypted model's (to list the files it references).
VerifyReport VerifyPackage(const std::string& ctx_model_path,
                           const std::string& public_key_pem_path,
                           const std::string& manifest_path = "", const std::string& data_key = "");

// A new P-256 key pair: the private key (PEM, mode 0600) and its public key.
void GenerateKeyPair(const std::string& private_pem_path, const std::string& public_pem_path);

}  // namespace host
}  // namespace epctx

#endif
