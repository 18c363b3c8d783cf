/* SPDX-License-Identifier: Apache-2.0 */
// Package verification for one session: the signed manifest, then a hash
// check of every byte range the session reads before it is used.
//
// Order (Session::Load): Begin reads the manifest into private memory,
// parses it strictly, checks the key, the signature and the rollback
// counter, all before the model is parsed; VerifyModel hashes the whole
// model; contexts.cc calls VerifyContainerHead before the container parser
// reads a context file and VerifyRange for every range handed to a driver;
// session.cc calls VerifyRange for external initializer data. Commit raises
// the stored counter once the session has loaded.
//
// Threat model: a file replaced or altered at rest is caught (each range is
// hashed when the session reads it). With epctx.load_mode=mmap the hashed
// bytes are a shared mapping that a writer of the file can still change
// after the check; epctx.load_mode=read hashes private copies, so what was
// checked is what the kernels and drivers see (strict mode).
//
// Lifetime: views into the manifest stay valid until the verifier dies.
#ifndef EPCTX_TRUST_VERIFIER_H
#define EPCTX_TRUST_VERIFIER_H

#include <epctx/pal.h>

#include "core/memory.h"
#include "core/status.h"
#include "trust/keyring.h"
#include "trust/manifest.h"

namespace epctx {
namespace trust {

enum class Policy { kOff, kIfSigned, kRequired };

// Session option values: "off", "if_signed", "required".
bool ParsePolicy(const char* value, Policy* out);
// The policy without the option: required when built with
// EPCTX_REQUIRE_SIGNATURES, else if_signed.
Policy DefaultPolicy();

// What the verifier is told, resolved by the session from its options
// (session/trust_config.h): trust reads no session options itself.
struct VerifyConfig {
  Policy policy = DefaultPolicy();
  // The model id the manifest must name (the application's binding);
  // nullptr: any.
  const char* expected_model_id = nullptr;
  // The manifest to read; nullptr when none can be known (a model from a
  // buffer without a path), which only if_signed accepts.
  const char* signature_path = nullptr;
};

class PackageVerifier {
 public:
  PackageVerifier() = default;
  ~PackageVerifier();
  PackageVerifier(const PackageVerifier&) = delete;
  PackageVerifier& operator=(const PackageVerifier&) = delete;

  // Reads and checks the manifest config.signature_path names (copied).
  Status Begin(const Keyring& keys, const VerifyConfig& config, Arena& arena, const char* label);
  // True when a manifest was found and verified (Begin succeeded).
  bool active() const { return active_; }
  const Manifest& manifest() const { return manifest_; }
  const char* signature_path() const { return sig_path_; }

  Status VerifyModel(Bytes model) const;
  // `file` is the whole file named `name` (as the model references it); it
  // must be listed with `role` and the manifest's size, and the chunks
  // covering [off, off + len) must match.
  Status VerifyRange(uint8_t role, StrView name, Bytes file, uint64_t off, uint64_t len) const;
  // A context container's fixed header and flatbuffer metadata, so nothing
  // unverified reaches the container parser. *verified (optional) receives
  // the end of the leading run of chunks checked, for VerifyFileExcept.
  Status VerifyContainerHead(StrView name, Bytes file, uint64_t* verified = nullptr) const;
  // Every chunk of `file` from offset `from` (a chunk boundary already
  // checked up to, or 0) except those lying wholly inside one of the `skip`
  // views (payloads of graphs the session does not load): the lazy path.
  // Bytes outside every used range (padding) are checked too, so a package
  // is accepted only as signed.
  Status VerifyFileExcept(uint8_t role, StrView name, Bytes file, const Bytes* skip,
                          uint32_t num_skip, uint64_t from = 0) const;
  // The manifest's entry for `file` (listed with `role` and the
  // manifest's size), for a reader that hashes its own copies (sealed.h);
  // nullptr when no manifest is active.
  Status Listed(uint8_t role, StrView name, Bytes file, const ManifestFile** out) const;
  // Raises the stored counter to the manifest's (after a successful load).
  Status Commit() const;

  uint64_t bytes_hashed() const { return bytes_hashed_; }

 private:
  Status Lookup(uint8_t role, StrView name, Bytes file, const ManifestFile** out) const;
  Status HashChunks(const ManifestFile& f, Bytes file, uint64_t off, uint64_t len) const;

  bool active_ = false;
  const char* label_ = "";
  const char* sig_path_ = "";
  epctx_pal_region region_{};
  Manifest manifest_;
  const Keyring* keys_ = nullptr;
  char counter_name_[65] = {0};
  uint64_t stored_counter_ = 0;
  bool have_stored_ = false;
  mutable uint64_t bytes_hashed_ = 0;
};

}  // namespace trust
}  // namespace epctx

#endif
