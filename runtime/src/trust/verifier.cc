// SPDX-License-Identifier: Apache-2.0
#include "trust/verifier.h"

#include <cstring>

#include <container_header.h>
#include <manifest_format.h>

#include "trust/crypto.h"

namespace epctx {
namespace trust {
namespace {

const char* role_name(uint8_t role) {
  return role == EPCTX_MF_ROLE_MODEL     ? "model"
         : role == EPCTX_MF_ROLE_CONTEXT ? "context binary"
                                         : "external data";
}

}  // namespace

PackageVerifier::~PackageVerifier() { epctx_pal_unmap(&region_); }

Status PackageVerifier::Begin(const Keyring& keys, const VerifyConfig& config, Arena& arena,
                              const char* label) {
  label_ = label;
  keys_ = &keys;
  const Policy policy = config.policy;
  // The application's binding: a package must be signed, and signed for
  // this id (otherwise any validly signed package of another model, or an
  // older one re-signed under a new id, would load under this name).
  const char* expected_id = config.expected_model_id;
  if (policy == Policy::kOff || !config.signature_path) return Status::Ok();

  // 1. Read the manifest into private memory (never a shared map: the bytes
  //    checked must be the bytes parsed).
  sig_path_ = arena.Strdup(config.signature_path, cstr_len(config.signature_path));
  if (!sig_path_) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label_);
  char msg[Status::kMaxMessage];
  // Read privately (the bytes checked are the bytes parsed), with the size
  // limit applied before anything is allocated or read.
  int rc = epctx_pal_read_file(sig_path_, EPCTX_MF_MAX_SIZE, &region_, msg, sizeof msg);
  if (rc == EPCTX_NO_SUCHFILE) {
    if (expected_id)
      return Status::Error(EPCTX_SIGNATURE_INVALID,
                           "%s: session option 'epctx.expected_model_id' = '%s', but the "
                           "package is not signed (no manifest %s)",
                           label_, expected_id, sig_path_);
    if (policy == Policy::kRequired)
      return Status::Error(EPCTX_SIGNATURE_INVALID,
                           "%s: signature policy 'required' but the package is not signed (no "
                           "manifest %s)",
                           label_, sig_path_);
    return Status::Ok();
  }
  if (rc == EPCTX_INVALID_ARGUMENT)
    return Status::Error(EPCTX_SIGNATURE_INVALID, "%s: malformed manifest: %s", label_, msg);
  if (rc != EPCTX_OK) return Status::Error(rc, "%s: signature manifest: %s", label_, msg);
  active_ = true;
  InitCrypto();

  // 2. Structure (bounds only), 3. key, 4. signature, 5. rollback.
  EPCTX_RETURN_IF_ERROR(ParseManifest(Bytes{region_.data, static_cast<size_t>(region_.size)},
                                      sig_path_, arena, &manifest_));
  const TrustedKey* key = keys.Find(manifest_.key_id);
  if (!key)
    return Status::Error(EPCTX_KEY_REJECTED,
                         "%s: signed with key %02x%02x%02x%02x..., which is not among the %d "
                         "trusted keys of this env",
                         sig_path_, manifest_.key_id[0], manifest_.key_id[1], manifest_.key_id[2],
                         manifest_.key_id[3], keys.num_keys);
  uint8_t digest[32];
  Sha256(manifest_.signed_part.data, manifest_.signed_part.size, digest);
  if (!VerifyEcdsaP256(key->der, key->der_len, digest, manifest_.signature.data,
                       manifest_.signature.size))
    return Status::Error(EPCTX_SIGNATURE_INVALID,
                         "%s: the ECDSA P-256 signature does not verify with the trusted key",
                         sig_path_);
  if (expected_id && !manifest_.model_id.eq(expected_id))
    return Status::Error(EPCTX_SIGNATURE_INVALID,
                         "%s: signed for model id '%.*s', the application expects '%s' (session "
                         "option 'epctx.expected_model_id')",
                         sig_path_, manifest_.model_id.len(), manifest_.model_id.data, expected_id);
  if (keys.counter_dir[0]) {
    // One counter per (signing key, model id): a package re-signed under
    // another id, or an id reused by another key, cannot reset it.
    uint8_t id_hash[32];
    const size_t id_len = manifest_.model_id.size;
    uint8_t* keyed = static_cast<uint8_t*>(arena.Alloc(32 + id_len, 1));
    if (!keyed) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label_);
    memcpy(keyed, manifest_.key_id, 32);
    memcpy(keyed + 32, manifest_.model_id.data, id_len);
    Sha256(keyed, 32 + id_len, id_hash);
    static const char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 32; ++i) {
      counter_name_[2 * i] = kHex[id_hash[i] >> 4];
      counter_name_[2 * i + 1] = kHex[id_hash[i] & 15];
    }
    int found = 0;
    rc = epctx_pal_counter_read(keys.counter_dir, counter_name_, &stored_counter_, &found, msg,
                                sizeof msg);
    if (rc != EPCTX_OK) return Status::Error(rc, "%s: rollback store: %s", label_, msg);
    have_stored_ = found != 0;
    if (have_stored_ && manifest_.security_counter < stored_counter_)
      return Status::Error(EPCTX_ROLLBACK,
                           "%s: model '%.*s' has security counter %llu, below the stored %llu: "
                           "an older package than one already loaded",
                           sig_path_, manifest_.model_id.len(), manifest_.model_id.data,
                           (unsigned long long)manifest_.security_counter,
                           (unsigned long long)stored_counter_);
  }
  return Status::Ok();
}

Status PackageVerifier::Lookup(uint8_t role, StrView name, Bytes file,
                               const ManifestFile** out) const {
  const ManifestFile* f =
      role == EPCTX_MF_ROLE_MODEL ? manifest_.Model() : manifest_.Find(role, name);
  if (!f)
    return Status::Error(EPCTX_HASH_MISMATCH, "%s: %s '%.*s' is not listed in the signed manifest",
                         label_, role_name(role), name.len(), name.data);
  if (file.size != f->size)
    return Status::Error(
        EPCTX_HASH_MISMATCH, "%s: %s '%.*s' is %zu bytes, the signed manifest says %llu", label_,
        role_name(role), f->name.len(), f->name.data, file.size, (unsigned long long)f->size);
  *out = f;
  return Status::Ok();
}

Status PackageVerifier::HashChunks(const ManifestFile& f, Bytes file, uint64_t off,
                                   uint64_t len) const {
  if (off > file.size || len > file.size - off)
    return Status::Error(EPCTX_HASH_MISMATCH, "%s: '%.*s': range [%llu, +%llu) outside %zu bytes",
                         label_, f.name.len(), f.name.data, (unsigned long long)off,
                         (unsigned long long)len, file.size);
  if (len == 0) return Status::Ok();
  uint64_t chunk = uint64_t{1} << f.chunk_log2;
  uint64_t first = off >> f.chunk_log2, last = (off + len - 1) >> f.chunk_log2;
  for (uint64_t c = first; c <= last; ++c) {
    uint64_t start = c << f.chunk_log2;
    uint64_t n = file.size - start < chunk ? file.size - start : chunk;
    uint8_t h[32];
    Sha256(file.data + start, static_cast<size_t>(n), h);
    bytes_hashed_ += n;
    if (memcmp(h, f.chunk_hashes + c * EPCTX_MF_HASH_SIZE, EPCTX_MF_HASH_SIZE) != 0)
      return Status::Error(EPCTX_HASH_MISMATCH,
                           "%s: '%.*s' chunk %llu of %llu (bytes %llu..%llu) does not match the "
                           "signed manifest",
                           label_, f.name.len(), f.name.data, (unsigned long long)c,
                           (unsigned long long)f.num_chunks, (unsigned long long)start,
                           (unsigned long long)(start + n - 1));
  }
  return Status::Ok();
}

Status PackageVerifier::VerifyModel(Bytes model) const {
  if (!active_) return Status::Ok();
  const ManifestFile* f = nullptr;
  EPCTX_RETURN_IF_ERROR(Lookup(EPCTX_MF_ROLE_MODEL, StrView{}, model, &f));
  return HashChunks(*f, model, 0, model.size);
}

Status PackageVerifier::VerifyRange(uint8_t role, StrView name, Bytes file, uint64_t off,
                                    uint64_t len) const {
  if (!active_) return Status::Ok();
  const ManifestFile* f = nullptr;
  EPCTX_RETURN_IF_ERROR(Lookup(role, name, file, &f));
  return HashChunks(*f, file, off, len);
}

Status PackageVerifier::Listed(uint8_t role, StrView name, Bytes file,
                               const ManifestFile** out) const {
  *out = nullptr;
  if (!active_) return Status::Ok();
  return Lookup(role, name, file, out);
}

Status PackageVerifier::VerifyFileExcept(uint8_t role, StrView name, Bytes file, const Bytes* skip,
                                         uint32_t num_skip, uint64_t from) const {
  if (!active_) return Status::Ok();
  const ManifestFile* f = nullptr;
  EPCTX_RETURN_IF_ERROR(Lookup(role, name, file, &f));
  uint64_t chunk = uint64_t{1} << f->chunk_log2;
  // Chunks wholly below `from` are checked already (from is a chunk
  // boundary or the file's end).
  for (uint64_t c = (from + chunk - 1) >> f->chunk_log2; c < f->num_chunks; ++c) {
    uint64_t start = c * chunk;
    uint64_t end = file.size - start < chunk ? file.size : start + chunk;
    bool skipped = false;
    for (uint32_t i = 0; i < num_skip && !skipped; ++i) {
      if (!skip[i].size || skip[i].data < file.data) continue;
      uint64_t s = static_cast<uint64_t>(skip[i].data - file.data);
      skipped = s <= start && s <= file.size && skip[i].size >= end - s;
    }
    if (!skipped) EPCTX_RETURN_IF_ERROR(HashChunks(*f, file, start, end - start));
  }
  return Status::Ok();
}

Status PackageVerifier::VerifyContainerHead(StrView name, Bytes file, uint64_t* verified) const {
  if (verified) *verified = 0;
  if (!active_) return Status::Ok();
  const ManifestFile* f = nullptr;
  EPCTX_RETURN_IF_ERROR(Lookup(EPCTX_MF_ROLE_CONTEXT, name, file, &f));
  if (file.size < EPCTX_CONTAINER_HEADER_SIZE) {
    if (verified) *verified = file.size;
    return HashChunks(*f, file, 0, file.size);
  }
  EPCTX_RETURN_IF_ERROR(HashChunks(*f, file, 0, EPCTX_CONTAINER_HEADER_SIZE));
  // The header is verified now; its metadata range may be out of bounds
  // (the container parser reports that), so clamp to the file.
  uint64_t off = load_le64(file.data + EPCTX_CONTAINER_OFF_METADATA_OFFSET);
  uint64_t len = load_le64(file.data + EPCTX_CONTAINER_OFF_METADATA_SIZE);
  if (off > file.size) off = file.size;
  if (len > file.size - off) len = file.size - off;
  // Chunk 0 (the header's) is checked; hash each metadata chunk once more
  // only if it is not that one, and report how far the checked run reaches.
  uint64_t chunk = uint64_t{1} << f->chunk_log2;
  uint64_t end = len ? off + len : 0;
  if (off < chunk) off = chunk < end ? chunk : end;
  if (end > off) EPCTX_RETURN_IF_ERROR(HashChunks(*f, file, off, end - off));
  if (verified) {
    // Contiguous from chunk 0 when the metadata starts in chunk 0 or 1.
    uint64_t reach = (end > chunk && (off >> f->chunk_log2) <= 1)
                         ? ((end - 1) >> f->chunk_log2) * chunk + chunk
                         : chunk;
    *verified = reach < file.size ? reach : file.size;
  }
  return Status::Ok();
}

Status PackageVerifier::Commit() const {
  if (!active_ || !keys_->counter_dir[0]) return Status::Ok();
  if (have_stored_ && manifest_.security_counter <= stored_counter_) return Status::Ok();
  char msg[Status::kMaxMessage];
  int rc = epctx_pal_counter_write(keys_->counter_dir, counter_name_, manifest_.security_counter,
                                   msg, sizeof msg);
  if (rc != EPCTX_OK) return Status::Error(rc, "%s: rollback store: %s", label_, msg);
  return Status::Ok();
}

}  // namespace trust
}  // namespace epctx
