/* SPDX-License-Identifier: Apache-2.0 */
// Parsing a signed package manifest (runtime/schema/manifest_format.h).
//
// ParseManifest reads untrusted bytes: every length is bounds-checked before
// use, the layout must be exact (no unknown critical TLV, no TLV other than
// the signature after the protected area, no byte after the signature). It
// does not check the signature: the caller verifies `signed_part` with
// `signature` before trusting any field. Views point into `bytes`, which must
// outlive the Manifest; arrays live in `arena`.
#ifndef EPCTX_TRUST_MANIFEST_H
#define EPCTX_TRUST_MANIFEST_H

#include <cstdint>

#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"

namespace epctx {
namespace trust {

struct ManifestFile {
  uint8_t role = 0;
  uint8_t chunk_log2 = 0;
  StrView name;
  uint64_t size = 0;
  uint64_t num_chunks = 0;
  const uint8_t* chunk_hashes = nullptr;  // num_chunks x 32 bytes
};

struct Manifest {
  uint16_t format_minor = 0;
  const uint8_t* key_id = nullptr;  // 32 bytes
  StrView model_id;
  uint64_t security_counter = 0;
  StrView sdk_version, hw_arch, min_driver_version, producer;  // empty when absent
  ManifestFile* files = nullptr;
  uint32_t num_files = 0;
  // Indices of files sorted by (role, name), for Find's binary search.
  uint32_t* by_name = nullptr;
  uint32_t model_index = 0;  // the one MODEL entry (ParseManifest requires it)
  Bytes signed_part;         // [0, protected_size)
  Bytes signature;           // DER ECDSA signature

  // The file with this role and name, or nullptr. O(log n).
  const ManifestFile* Find(uint8_t role, StrView name) const;
  const ManifestFile* Model() const;
};

// SIGNATURE_INVALID ("malformed manifest: ...") naming `label` and the field.
Status ParseManifest(Bytes bytes, const char* label, Arena& arena, Manifest* out);

}  // namespace trust
}  // namespace epctx

#endif
