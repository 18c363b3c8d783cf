/* SPDX-License-Identifier: Apache-2.0 */
// Encrypted ("sealed") assets, schema/sealed_format.h: the strict header
// parser and the segment decryptor. A session decrypts only the segments
// of the byte ranges it uses, each one copied into private memory, its tag
// checked on that copy and only then written out as plaintext, so a file
// rewritten while mapped can only make a segment fail, never get unchecked
// bytes used. In a signed package the copy is also what is hashed against
// the manifest (copy, hash, decrypt: one pass over each segment).
#ifndef EPCTX_TRUST_SEALED_H
#define EPCTX_TRUST_SEALED_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <sealed_format.h>

#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"
#include "trust/keyring.h"
#include "trust/manifest.h"

namespace epctx {
namespace trust {

// Whether the file starts like a sealed asset (its magic).
inline bool LooksSealed(Bytes file) {
  return file.size >= EPCTX_SEALED_MAGIC_SIZE &&
         memcmp(file.data, EPCTX_SEALED_MAGIC, EPCTX_SEALED_MAGIC_SIZE) == 0;
}

// The AEADs of sealed assets and key-wrap files (EPCTX_SEALED_ALG_*):
// whether this build's mbedtls has `alg` (and HKDF), its name, and the
// list of those built ("none" when there is none), for messages.
bool AeadBuilt(uint8_t alg);
const char* AeadName(uint8_t alg);
const char* AeadsBuilt();

struct KeyWrapFile;  // trust/key_wrap.h

struct SealedHeader {
  uint8_t alg = 0;
  uint32_t segment_size = 0;  // plaintext bytes per segment
  uint64_t plaintext_size = 0;
  uint64_t segments = 0;
  char key_id[33] = {0};
};

// Checks the header against the file's size. INVALID_CONTAINER naming
// `what` and the field (expected vs found), UNSUPPORTED_ALGORITHM for an
// alg this build does not have.
Status ParseSealedHeader(Bytes file, const char* what, SealedHeader* h);

// One sealed asset open for decryption. Holds the asset key and the
// cipher state (from the allocator), wiped when it goes.
class SealedAsset {
 public:
  explicit SealedAsset(const Allocator& alloc) : alloc_(alloc) {}
  ~SealedAsset();
  SealedAsset(const SealedAsset&) = delete;
  SealedAsset& operator=(const SealedAsset&) = delete;

  // Parses the header of `file` (kept as a view: the caller keeps it
  // mapped), gets the data key of its key id from `keys`, else unwraps it
  // from `wraps` (the package's key-wrap file, nullptr: none; see
  // DataKeyFor in trust/key_wrap.h), and derives the asset key for
  // `name`, the name the model references the file by. `what` names the
  // file in every message (copied).
  // `listed` (optional) is the signed manifest's entry for the file, its
  // size already checked: the header is then hashed before it is parsed,
  // and every segment Decrypt copies is hashed on that copy, chunk by
  // chunk, before Decrypt returns (HASH_MISMATCH naming the chunk).
  Status Open(Bytes file, StrView name, const Keyring& keys, const char* what,
              const ManifestFile* listed = nullptr, const KeyWrapFile* wraps = nullptr);
  const SealedHeader& header() const { return h_; }
  // Decrypts the segments that cover plaintext bytes [begin, end) into out
  // (the plaintext_size bytes of the whole plaintext; each segment lands
  // at its own offset), skipping segments already decrypted.
  // DECRYPTION_FAILED names the segment; the bytes of the failed run of
  // segments in out are zero then.
  Status Decrypt(uint64_t begin, uint64_t end, uint8_t* out);

 private:
  struct State;
  // Segments [first, last], none decrypted yet, in one pass.
  Status DecryptRun(uint64_t first, uint64_t last, uint8_t* out);
  // Hashes the manifest's chunks covering file bytes [from, to) from the
  // file itself: which of a tampered file or a wrong key a segment failed
  // on.
  Status CheckChunks(uint64_t from, uint64_t to) const;
  Allocator alloc_;
  Bytes file_{};
  const ManifestFile* listed_ = nullptr;
  SealedHeader h_{};
  State* st_ = nullptr;
  char what_[160] = {0};
};

}  // namespace trust
}  // namespace epctx

#endif
