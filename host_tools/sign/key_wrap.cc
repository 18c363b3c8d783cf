// SPDX-License-Identifier: Apache-2.0
// Wrapping data keys for devices (epctx_host/key_wrap.h) with mbedtls: the
// writer of runtime/schema/keys_format.h. Existing files and the package's
// encrypted context binaries are read with the runtime's own parsers, so
// the tool accepts exactly what a device will.
#include "epctx_host/key_wrap.h"

#include <cstring>
#include <initializer_list>

#include <keys_format.h>
#include <manifest_format.h>
#include <mbedtls/chachapoly.h>
#include <mbedtls/gcm.h>
#include <mbedtls/hkdf.h>
#include <mbedtls/md.h>
#include <mbedtls/platform_util.h>
#include <sealed_format.h>

#include "core/memory.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/seal.h"
#include "epctx_host/sign.h"
#include "sign_internal.h"
#include "trust/key_wrap.h"
#include "trust/keyring.h"
#include "trust/sealed.h"

namespace epctx {
namespace host {
namespace {

void PutLe(std::string& s, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s[at + size_t(i)] = static_cast<char>(v >> (8 * i));
}

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

struct Wiped {
  uint8_t b[EPCTX_KEYS_KEY_SIZE];
  ~Wiped() { mbedtls_platform_zeroize(b, sizeof b); }
};

// Decrypts the first segment of sealed file `bytes` (asset `name`) with
// `data_key` under `key_id`; the runtime's message when it does not.
std::string FirstSegmentProblem(const std::string& bytes, const std::string& name,
                                const std::string& data_key, const std::string& key_id) {
  trust::Keyring ring;
  Status st = ring.AddDataKey(key_id.c_str(), data_key.data(), data_key.size());
  trust::SealedAsset sa(Allocator::Default());
  if (st.ok())
    st = sa.Open(Bytes{U8(bytes), bytes.size()}, StrView{name.data(), name.size()}, ring,
                 name.c_str());
  if (st.ok()) {
    std::vector<uint8_t> plain(size_t(sa.header().plaintext_size) + 1);
    st = sa.Decrypt(0, 1, plain.data());
    mbedtls_platform_zeroize(plain.data(), plain.size());
  }
  return st.ok() ? std::string() : std::string(st.message());
}

}  // namespace

void CheckWrapOptions(const WrapOptions& o) {
  for (const std::string* id : {&o.data_key_id, &o.device_key_id})
    if (!trust::ValidKeyId(id->c_str(), id->size()))
      throw ToolError("", "key id '" + *id + "': expected 1..32 characters of [A-Za-z0-9._-]");
  if (o.data_key_id == o.device_key_id)
    throw ToolError("", "device key id '" + o.device_key_id +
                            "' is the data key id: the application's key of that id would be "
                            "taken as the data key; give the device key another id");
  if (o.alg != EPCTX_SEALED_ALG_CHACHA20_POLY1305 && o.alg != EPCTX_SEALED_ALG_AES_256_GCM)
    throw ToolError("", "unknown encryption algorithm " + std::to_string(o.alg));
}

std::string WrapDataKey(const std::string& data_key, const std::string& device_key,
                        const WrapOptions& o) {
  CheckWrapOptions(o);
  if (data_key.size() != EPCTX_KEYS_KEY_SIZE || device_key.size() != EPCTX_KEYS_KEY_SIZE)
    throw ToolError("", "data and device keys must be 32 bytes each");
  if (data_key == device_key)
    throw ToolError("", "the device key is the data key: a device that holds it needs no entry");
  std::string e(EPCTX_KEYS_ENTRY_SIZE, '\0');
  memcpy(&e[EPCTX_KEYS_ENTRY_OFF_DATA_KEY_ID], o.data_key_id.data(), o.data_key_id.size());
  memcpy(&e[EPCTX_KEYS_ENTRY_OFF_WRAP_KEY_ID], o.device_key_id.data(), o.device_key_id.size());
  e[EPCTX_KEYS_ENTRY_OFF_ALG] = static_cast<char>(o.alg);
  uint8_t* nonce = reinterpret_cast<uint8_t*>(&e[EPCTX_KEYS_ENTRY_OFF_NONCE]);
  {
    Drbg drbg;
    if (mbedtls_ctr_drbg_random(&drbg.ctr, nonce, EPCTX_KEYS_NONCE_SIZE))
      throw ToolError("", "cannot draw a random nonce");
  }
  static const char kInfo[] = EPCTX_KEYS_INFO;
  Wiped wrap_key;
  if (mbedtls_hkdf(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), nullptr, 0, U8(device_key),
                   device_key.size(), reinterpret_cast<const uint8_t*>(kInfo), sizeof kInfo - 1,
                   wrap_key.b, sizeof wrap_key.b))
    throw ToolError("", "HKDF failed");
  uint8_t aad[EPCTX_KEYS_AAD_SIZE];
  epctx_keys_aad(U8(e), aad);
  auto* ct = reinterpret_cast<uint8_t*>(&e[EPCTX_KEYS_ENTRY_OFF_WRAPPED_KEY]);
  auto* tag = reinterpret_cast<uint8_t*>(&e[EPCTX_KEYS_ENTRY_OFF_TAG]);
  int rc;
  if (o.alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305) {
    mbedtls_chachapoly_context c;
    mbedtls_chachapoly_init(&c);
    rc = mbedtls_chachapoly_setkey(&c, wrap_key.b);
    if (!rc)
      rc = mbedtls_chachapoly_encrypt_and_tag(&c, EPCTX_KEYS_KEY_SIZE, nonce, aad, sizeof aad,
                                              U8(data_key), ct, tag);
    mbedtls_chachapoly_free(&c);
  } else {
    mbedtls_gcm_context g;
    mbedtls_gcm_init(&g);
    rc = mbedtls_gcm_setkey(&g, MBEDTLS_CIPHER_ID_AES, wrap_key.b, 256);
    if (!rc)
      rc = mbedtls_gcm_crypt_and_tag(&g, MBEDTLS_GCM_ENCRYPT, EPCTX_KEYS_KEY_SIZE, nonce,
                                     EPCTX_KEYS_NONCE_SIZE, aad, sizeof aad, U8(data_key), ct,
                                     EPCTX_KEYS_TAG_SIZE, tag);
    mbedtls_gcm_free(&g);
  }
  if (rc) throw ToolError("", "wrapping the data key failed");
  return e;
}

std::string PutKeyWrapEntry(const std::string& keys_file, const std::string& entry,
                            const std::string& what, bool* replaced) {
  *replaced = false;
  std::string out = keys_file;
  uint32_t count = 0;
  if (keys_file.empty()) {
    out.assign(EPCTX_KEYS_HEADER_SIZE, '\0');
    memcpy(&out[0], EPCTX_KEYS_MAGIC, EPCTX_KEYS_MAGIC_SIZE);
    PutLe(out, EPCTX_KEYS_OFF_MAJOR, EPCTX_KEYS_FORMAT_MAJOR, 2);
    PutLe(out, EPCTX_KEYS_OFF_MINOR, EPCTX_KEYS_FORMAT_MINOR, 2);
    PutLe(out, EPCTX_KEYS_OFF_HEADER_SIZE, EPCTX_KEYS_HEADER_SIZE, 4);
    PutLe(out, EPCTX_KEYS_OFF_ENTRY_SIZE, EPCTX_KEYS_ENTRY_SIZE, 4);
  } else {
    trust::KeyWrapFile f;
    Status st = trust::ParseKeyWrapFile(Bytes{U8(keys_file), keys_file.size()}, what.c_str(), &f);
    if (!st.ok())
      throw ToolError(what, std::string(st.message()) +
                                " (the file is not rewritten; move it away to start a new one)");
    count = f.count;
  }
  if (entry.size() != EPCTX_KEYS_ENTRY_SIZE) throw ToolError(what, "a key-wrap entry of bad size");
  const size_t ids = 2 * EPCTX_KEYS_KEY_ID_SIZE;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = EPCTX_KEYS_HEADER_SIZE + size_t(i) * EPCTX_KEYS_ENTRY_SIZE;
    if (out.compare(at, ids, entry, 0, ids) != 0) continue;
    out.replace(at, EPCTX_KEYS_ENTRY_SIZE, entry);
    *replaced = true;
    return out;
  }
  if (count == EPCTX_KEYS_MAX_ENTRIES)
    throw ToolError(what, "already holds " + std::to_string(count) + " entries, the most a file " +
                              "may have");
  out += entry;
  PutLe(out, EPCTX_KEYS_OFF_ENTRY_COUNT, count + 1, 4);
  return out;
}

WrapReport WrapKeyForDevice(const std::string& ctx_model_path, const std::string& data_key,
                            const std::string& device_key, const WrapOptions& options) {
  CheckWrapOptions(options);
  WrapReport r;
  std::vector<std::string> other_ids;
  // Every encrypted file of the package under the data key id must decrypt
  // with the data key: a wrong key would be wrapped for nothing.
  auto check = [&](const std::string& path, const std::string& name, const std::string& bytes) {
    if (!trust::LooksSealed(Bytes{U8(bytes), bytes.size()})) return;
    trust::SealedHeader h;
    Status st = trust::ParseSealedHeader(Bytes{U8(bytes), bytes.size()}, path.c_str(), &h);
    if (!st.ok()) throw ToolError(path, st.message());
    if (options.data_key_id != h.key_id) {
      other_ids.push_back(h.key_id);
      return;
    }
    const std::string problem = FirstSegmentProblem(bytes, name, data_key, options.data_key_id);
    if (!problem.empty())
      throw ToolError(path, "the data key does not decrypt it (" + problem + ")");
    r.files.push_back(path);
  };
  const std::string raw = ReadFileBytes(ctx_model_path);
  check(ctx_model_path, PathBaseName(ctx_model_path), raw);
  if (trust::LooksSealed(Bytes{U8(raw), raw.size()}) && r.files.empty())
    throw ToolError(ctx_model_path, "the model is encrypted with key id '" + other_ids.back() +
                                        "', not '" + options.data_key_id + "'");
  const onnx::ModelProto model =
      ParseModel(PlainModelBytes(raw, ctx_model_path, data_key), ctx_model_path);
  for (const PackageFile& f : ListPackageFiles(model, ctx_model_path))
    if (f.role != EPCTX_MF_ROLE_MODEL) check(f.path, f.name, ReadFileBytes(f.path));
  if (r.files.empty()) {
    std::string found;
    for (const std::string& id : other_ids) found += (found.empty() ? "" : ", ") + ("'" + id + "'");
    throw ToolError(ctx_model_path,
                    "no file of the package is encrypted with key id '" + options.data_key_id +
                        "' (" + (found.empty() ? "none is encrypted" : "found " + found) + ")");
  }
  r.keys_path = ctx_model_path + EPCTX_KEYS_SUFFIX;
  const bool exists = FileExists(r.keys_path);
  const std::string old = exists ? ReadFileBytes(r.keys_path) : std::string();
  if (exists && old.empty())
    throw ToolError(r.keys_path,
                    "empty file, not a key-wrap file (move it away to start a new one)");
  const std::string out =
      PutKeyWrapEntry(old, WrapDataKey(data_key, device_key, options), r.keys_path, &r.replaced);
  WriteFileAtomic(r.keys_path, out.data(), out.size());
  r.entries = uint32_t((out.size() - EPCTX_KEYS_HEADER_SIZE) / EPCTX_KEYS_ENTRY_SIZE);
  return r;
}

}  // namespace host
}  // namespace epctx
