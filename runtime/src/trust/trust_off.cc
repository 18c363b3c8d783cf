// SPDX-License-Identifier: Apache-2.0
// Built instead of the verifier when EPCTX_TRUST=OFF: no cryptography is
// linked, so a session that would have to verify a package refuses to load
// it rather than loading it unchecked.
#include <manifest_format.h>

#include "trust/key_wrap.h"
#include "trust/keyring.h"
#include "trust/sealed.h"
#include "trust/verifier.h"

namespace epctx {
namespace trust {

Status Keyring::AddKey(const void*, size_t) {
  return Status::Error(EPCTX_NOT_IMPLEMENTED,
                       "trusted key: this runtime was built without signature support "
                       "(EPCTX_TRUST=OFF)");
}
Status Keyring::SetCounterStore(const char*) { return AddKey(nullptr, 0); }
const TrustedKey* Keyring::Find(const uint8_t*) const { return nullptr; }

PackageVerifier::~PackageVerifier() {}

Status PackageVerifier::Begin(const Keyring&, const VerifyConfig& config, Arena&,
                              const char* label) {
  if (config.policy == Policy::kOff) return Status::Ok();
  bool signed_pkg = false;
  if (config.signature_path) {
    epctx_pal_region r{};
    char msg[Status::kMaxMessage];
    // Only whether it exists matters: a limit of 0 bytes reads nothing.
    signed_pkg =
        epctx_pal_read_file(config.signature_path, 0, &r, msg, sizeof msg) != EPCTX_NO_SUCHFILE;
    epctx_pal_unmap(&r);
  }
  if (config.policy == Policy::kRequired || signed_pkg || config.expected_model_id)
    return Status::Error(EPCTX_NOT_IMPLEMENTED,
                         "%s: signed package, but this runtime was built without signature "
                         "support (EPCTX_TRUST=OFF)",
                         label);
  return Status::Ok();
}
Status PackageVerifier::VerifyModel(Bytes) const { return Status::Ok(); }
Status PackageVerifier::VerifyRange(uint8_t, StrView, Bytes, uint64_t, uint64_t) const {
  return Status::Ok();
}
Status PackageVerifier::VerifyContainerHead(StrView, Bytes, uint64_t* verified) const {
  if (verified) *verified = 0;
  return Status::Ok();
}
Status PackageVerifier::VerifyFileExcept(uint8_t, StrView, Bytes, const Bytes*, uint32_t,
                                         uint64_t) const {
  return Status::Ok();
}
Status PackageVerifier::Listed(uint8_t, StrView, Bytes, const ManifestFile** out) const {
  *out = nullptr;
  return Status::Ok();
}
Status PackageVerifier::Commit() const { return Status::Ok(); }

Status ParseSealedHeader(Bytes, const char* what, SealedHeader* h) {
  *h = SealedHeader{};
  return Status::Error(EPCTX_UNSUPPORTED_ALGORITHM,
                       "%s: encrypted, but this runtime was built without cryptography "
                       "(EPCTX_TRUST=OFF)",
                       what);
}
SealedAsset::~SealedAsset() {}
Status SealedAsset::Open(Bytes file, StrView, const Keyring&, const char* what, const ManifestFile*,
                         const KeyWrapFile*) {
  return ParseSealedHeader(file, what, &h_);
}
Status SealedAsset::Decrypt(uint64_t, uint64_t, uint8_t*) {
  return Status::Error(EPCTX_UNSUPPORTED_ALGORITHM, "built without cryptography");
}
// Nothing can be unwrapped: the sealed asset is refused before its key.
Status KeyWraps::Get(const char*, const KeyWrapFile** out) {
  *out = nullptr;
  return Status::Ok();
}
void KeyWraps::Release() {}

}  // namespace trust
}  // namespace epctx
