// VerifyPackage: the whole package, every chunk. The manifest is parsed by
// the runtime's own parser (trust/manifest.h), so the host accepts exactly
// what devices accept.
#include <cstring>
#include <set>

#include <manifest_format.h>

#include "core/memory.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/sign.h"
#include "sign_internal.h"
#include "trust/manifest.h"

namespace epctx {
namespace host {

VerifyReport VerifyPackage(const std::string& ctx_model_path,
                           const std::string& public_key_pem_path,
                           const std::string& manifest_path) {
  std::string mpath = manifest_path.empty() ? ctx_model_path + EPCTX_MF_SIG_SUFFIX : manifest_path;
  Pk key;
  LoadPublicKey(public_key_pem_path, &key);
  std::string bytes = ReadFileBytes(mpath);
  Arena arena(Allocator::Default());
  trust::Manifest m;
  Status st = trust::ParseManifest(
      Bytes{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, mpath.c_str(), arena,
      &m);
  if (!st.ok()) throw ToolError(mpath, st.message());
  if (std::memcmp(m.key_id, KeyId(key).data(), 32) != 0)
    throw ToolError(mpath, "signed with another key than " + public_key_pem_path);
  if (!VerifyDigest(key, Sha256(m.signed_part.data, m.signed_part.size), m.signature.data,
                    m.signature.size))
    throw ToolError(mpath, "the signature does not verify");

  VerifyReport r;
  r.model_id.assign(m.model_id.data, m.model_id.size);
  r.security_counter = m.security_counter;
  std::set<std::pair<int, std::string>> listed;
  for (const PackageFile& f : ListPackageFiles(ctx_model_path)) {
    const trust::ManifestFile* mf =
        f.role == EPCTX_MF_ROLE_MODEL ? m.Model()
                                      : m.Find(static_cast<uint8_t>(f.role),
                                               StrView{f.name.data(), f.name.size()});
    if (!mf) throw ToolError(f.path, "referenced by the model but not listed in " + mpath);
    listed.insert({f.role, f.name});
    std::string data = ReadFileBytes(f.path);
    if (data.size() != mf->size)
      throw ToolError(f.path, std::to_string(data.size()) + " bytes, the manifest says " +
                                  std::to_string(mf->size));
    size_t chunk = size_t{1} << mf->chunk_log2;
    for (uint64_t c = 0; c < mf->num_chunks; ++c) {
      size_t off = static_cast<size_t>(c) * chunk;
      std::string h = Sha256(data.data() + off, std::min(chunk, data.size() - off));
      if (std::memcmp(h.data(), mf->chunk_hashes + 32 * c, 32) != 0)
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
