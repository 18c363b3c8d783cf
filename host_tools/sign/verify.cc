// SPDX-License-Identifier: Apache-2.0
// VerifyPackage: the whole package, every chunk. The manifest is parsed by
// the runtime's own parser (trust/manifest.h) and the key and signature are
// checked by its crypto (trust/crypto.h), so the host accepts exactly what
// devices accept.
#include <cstring>
#include <set>

#include <manifest_format.h>

#include "core/memory.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/seal.h"
#include "epctx_host/sign.h"
#include "trust/crypto.h"
#include "trust/manifest.h"

namespace epctx {
namespace host {

VerifyReport VerifyPackage(const std::string& ctx_model_path,
                           const std::string& public_key_pem_path, const std::string& manifest_path,
                           const std::string& data_key) {
  std::string mpath = manifest_path.empty() ? ctx_model_path + EPCTX_MF_SIG_SUFFIX : manifest_path;
  std::string pem = ReadFileBytes(public_key_pem_path);
  uint8_t key_der[trust::kMaxKeyDer];
  size_t key_len = 0;
  Status st = trust::ParsePublicKey(pem.data(), pem.size(), key_der, &key_len);
  if (!st.ok()) throw ToolError(public_key_pem_path, st.message());
  uint8_t key_id[32];
  trust::Sha256(key_der, key_len, key_id);

  std::string bytes = ReadFileBytes(mpath);
  Arena arena(Allocator::Default());
  trust::Manifest m;
  st = trust::ParseManifest(Bytes{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()},
                            mpath.c_str(), arena, &m);
  if (!st.ok()) throw ToolError(mpath, st.message());
  if (std::memcmp(m.key_id, key_id, sizeof key_id) != 0)
    throw ToolError(mpath, "signed with another key than " + public_key_pem_path);
  uint8_t digest[32];
  trust::Sha256(m.signed_part.data, m.signed_part.size, digest);
  if (!trust::VerifyEcdsaP256(key_der, key_len, digest, m.signature.data, m.signature.size))
    throw ToolError(mpath, "the signature does not verify");

  VerifyReport r;
  r.model_id.assign(m.model_id.data, m.model_id.size);
  r.security_counter = m.security_counter;
  const std::string model_bytes = ReadFileBytes(ctx_model_path);
  std::set<std::pair<int, std::string>> listed;
  for (const PackageFile& f : ListPackageFiles(
           ParseModel(PlainModelBytes(model_bytes, ctx_model_path, data_key), ctx_model_path),
           ctx_model_path)) {
    const trust::ManifestFile* mf =
        f.role == EPCTX_MF_ROLE_MODEL
            ? m.Model()
            : m.Find(static_cast<uint8_t>(f.role), StrView{f.name.data(), f.name.size()});
    if (!mf) throw ToolError(f.path, "referenced by the model but not listed in " + mpath);
    listed.insert({f.role, f.name});
    std::string read;
    const std::string& data =
        f.role == EPCTX_MF_ROLE_MODEL ? model_bytes : (read = ReadFileBytes(f.path));
    if (data.size() != mf->size)
      throw ToolError(f.path, std::to_string(data.size()) + " bytes, the manifest says " +
                                  std::to_string(mf->size));
    size_t chunk = size_t{1} << mf->chunk_log2;
    for (uint64_t c = 0; c < mf->num_chunks; ++c) {
      size_t off = static_cast<size_t>(c) * chunk;
      uint8_t h[32];
      trust::Sha256(data.data() + off, std::min(chunk, data.size() - off), h);
      if (std::memcmp(h, mf->chunk_hashes + EPCTX_MF_HASH_SIZE * c, EPCTX_MF_HASH_SIZE) != 0)
        throw ToolError(f.path, "chunk " + std::to_string(c) + " of " +
                                    std::to_string(mf->num_chunks) +
                                    " does not match the manifest");
    }
    r.bytes += data.size();
    r.files.push_back(f.name);
  }
  if (listed.size() != m.num_files)
    throw ToolError(mpath, "lists " + std::to_string(m.num_files) + " files, the model uses " +
                               std::to_string(listed.size()));
  return r;
}

}  // namespace host
}  // namespace epctx
