/* SPDX-License-Identifier: Apache-2.0 */
// Wrapping a package's data key for devices (runtime/schema/keys_format.h):
// the writer of "<model>.keys", which runtime/src/trust/key_wrap.cc reads.
// The file sits beside the package and outside its signature, so adding,
// replacing or dropping a device's entry needs no signing key.
//
// Every failure throws ToolError naming the file and the reason.
#ifndef EPCTX_HOST_KEY_WRAP_H
#define EPCTX_HOST_KEY_WRAP_H

#include <cstdint>
#include <string>
#include <vector>

namespace epctx {
namespace host {

struct WrapOptions {
  std::string data_key_id;    // the key id the package's context binaries name
  std::string device_key_id;  // the id the device's application gives its key under
  int alg = 1;                // EPCTX_SEALED_ALG_*: 1 ChaCha20-Poly1305, 2 AES-256-GCM
};

// Throws ToolError (no file) for a malformed id, two equal ids (the
// application's key of the data key id would shadow the device key) or an
// unknown algorithm: what a CLI checks before reading the package.
void CheckWrapOptions(const WrapOptions& options);

// One entry (EPCTX_KEYS_ENTRY_SIZE bytes): the 32-byte data key wrapped
// under the 32-byte device key, with a fresh random nonce.
std::string WrapDataKey(const std::string& data_key, const std::string& device_key,
                        const WrapOptions& options);

// The bytes of key-wrap file `keys_file` ("": none yet) with `entry` added,
// or in place of the entry for the same (data key id, device key id);
// *replaced says which. The existing file is read with the runtime's strict
// parser: a malformed one is refused (ToolError naming `what`).
std::string PutKeyWrapEntry(const std::string& keys_file, const std::string& entry,
                            const std::string& what, bool* replaced);

struct WrapReport {
  std::string keys_path;           // <model>.keys
  bool replaced = false;           // an entry of the same ids was replaced
  uint32_t entries = 0;            // entries in the file now
  std::vector<std::string> files;  // encrypted files the data key was checked on
};

// epctx-sign wrap-key: checks that `data_key` decrypts every file of the
// package encrypted under options.data_key_id (the model itself, context
// binaries, external data; there must be one), then adds its entry for the
// device key to "<ctx_model_path>.keys", replacing the file atomically.
WrapReport WrapKeyForDevice(const std::string& ctx_model_path, const std::string& data_key,
                            const std::string& device_key, const WrapOptions& options);

}  // namespace host
}  // namespace epctx

#endif
