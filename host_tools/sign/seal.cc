// SPDX-License-Identifier: Apache-2.0
// Sealing package files (epctx_host/seal.h) with mbedtls: the writer of
// runtime/schema/sealed_format.h, which runtime/src/trust/sealed.cc reads.
#include "epctx_host/seal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include <manifest_format.h>
#include <mbedtls/chachapoly.h>
#include <mbedtls/gcm.h>
#include <mbedtls/hkdf.h>
#include <mbedtls/md.h>
#include <mbedtls/platform_util.h>
#include <sealed_format.h>

#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/sign.h"
#include "sign_internal.h"
#include "trust/keyring.h"
#include "trust/sealed.h"

namespace epctx {
namespace host {
namespace {

void PutLe(std::string& s, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s[at + size_t(i)] = static_cast<char>(v >> (8 * i));
}

// The 32 bytes stay in this string only as long as the caller keeps it.
struct Wiped {
  uint8_t b[EPCTX_SEALED_KEY_SIZE];
  ~Wiped() { mbedtls_platform_zeroize(b, sizeof b); }
};

}  // namespace

int ParseSealAlg(const std::string& name) {
  if (name == "chacha20-poly1305") return EPCTX_SEALED_ALG_CHACHA20_POLY1305;
  if (name == "aes-256-gcm") return EPCTX_SEALED_ALG_AES_256_GCM;
  throw ToolError("", "unknown encryption algorithm '" + name +
                          "' (expected chacha20-poly1305 or aes-256-gcm)");
}

std::string ReadDataKey(const std::string& path) {
  std::string key = ReadFileBytes(path);
  if (key.size() != EPCTX_SEALED_KEY_SIZE) {
    const size_t n = key.size();
    mbedtls_platform_zeroize(&key[0], key.size());
    throw ToolError(path, "data key of " + std::to_string(n) +
                              " bytes, expected 32 raw bytes (epctx-sign keygen-data writes one)");
  }
  return key;
}

void GenerateDataKey(const std::string& path) {
  Drbg drbg;
  Wiped key;
  if (mbedtls_ctr_drbg_random(&drbg.ctr, key.b, sizeof key.b))
    throw ToolError(path, "cannot draw random bytes");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw ToolError(path, std::string("cannot create the key file: ") + strerror(errno));
  const ssize_t w = write(fd, key.b, sizeof key.b);
  const bool ok = w == ssize_t(sizeof key.b) && fsync(fd) == 0;
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    throw ToolError(path, "cannot write the key file");
  }
}

void CheckSealOptions(const SealOptions& o) {
  if (!trust::ValidKeyId(o.key_id.c_str(), o.key_id.size()))
    throw ToolError("", "key id '" + o.key_id + "': expected 1..32 characters of [A-Za-z0-9._-]");
  if (o.alg != EPCTX_SEALED_ALG_CHACHA20_POLY1305 && o.alg != EPCTX_SEALED_ALG_AES_256_GCM)
    throw ToolError("", "unknown encryption algorithm " + std::to_string(o.alg));
  if (o.segment_log2 < EPCTX_SEALED_MIN_SEGMENT_LOG2 ||
      o.segment_log2 > EPCTX_SEALED_MAX_SEGMENT_LOG2)
    throw ToolError("", "segment_log2 " + std::to_string(o.segment_log2) + ", expected 12..24");
}

std::string SealBytes(const std::string& plain, const std::string& data_key,
                      const std::string& asset_name, const SealOptions& o) {
  if (data_key.size() != EPCTX_SEALED_KEY_SIZE)
    throw ToolError(asset_name, "data key must be 32 bytes");
  try {
    CheckSealOptions(o);
  } catch (const ToolError& e) {
    throw ToolError(asset_name, e.what());
  }
  const uint64_t seg = uint64_t(1) << o.segment_log2;
  const uint64_t segments = plain.empty() ? 1 : (plain.size() + seg - 1) / seg;
  std::string out(EPCTX_SEALED_HEADER_SIZE, '\0');
  memcpy(&out[0], EPCTX_SEALED_MAGIC, EPCTX_SEALED_MAGIC_SIZE);
  PutLe(out, EPCTX_SEALED_OFF_MAJOR, EPCTX_SEALED_FORMAT_MAJOR, 2);
  PutLe(out, EPCTX_SEALED_OFF_MINOR, EPCTX_SEALED_FORMAT_MINOR, 2);
  PutLe(out, EPCTX_SEALED_OFF_HEADER_SIZE, EPCTX_SEALED_HEADER_SIZE, 4);
  out[EPCTX_SEALED_OFF_ALG] = static_cast<char>(o.alg);
  out[EPCTX_SEALED_OFF_SEGMENT_LOG2] = static_cast<char>(o.segment_log2);
  PutLe(out, EPCTX_SEALED_OFF_PLAINTEXT_SIZE, plain.size(), 8);
  memcpy(&out[EPCTX_SEALED_OFF_KEY_ID], o.key_id.data(), o.key_id.size());
  {
    Drbg drbg;
    if (mbedtls_ctr_drbg_random(&drbg.ctr, reinterpret_cast<uint8_t*>(&out[EPCTX_SEALED_OFF_SALT]),
                                EPCTX_SEALED_SALT_SIZE))
      throw ToolError(asset_name, "cannot draw a random salt");
  }
  std::string info(EPCTX_SEALED_INFO, sizeof EPCTX_SEALED_INFO);  // with its NUL
  info += asset_name;
  Wiped key;
  if (mbedtls_hkdf(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256),
                   reinterpret_cast<const uint8_t*>(&out[EPCTX_SEALED_OFF_SALT]),
                   EPCTX_SEALED_SALT_SIZE, reinterpret_cast<const uint8_t*>(data_key.data()),
                   data_key.size(), reinterpret_cast<const uint8_t*>(info.data()), info.size(),
                   key.b, sizeof key.b))
    throw ToolError(asset_name, "HKDF failed");
  const std::string header = out;
  out.resize(EPCTX_SEALED_HEADER_SIZE + plain.size() + segments * EPCTX_SEALED_TAG_SIZE);
  mbedtls_chachapoly_context cp;
  mbedtls_gcm_context gcm;
  mbedtls_chachapoly_init(&cp);
  mbedtls_gcm_init(&gcm);
  struct Free {
    mbedtls_chachapoly_context* cp;
    mbedtls_gcm_context* gcm;
    ~Free() {
      mbedtls_chachapoly_free(cp);
      mbedtls_gcm_free(gcm);
    }
  } free_ctx{&cp, &gcm};
  const int set = o.alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305
                      ? mbedtls_chachapoly_setkey(&cp, key.b)
                      : mbedtls_gcm_setkey(&gcm, MBEDTLS_CIPHER_ID_AES, key.b, 256);
  if (set) throw ToolError(asset_name, "cannot set the cipher key");
  const auto* aad = reinterpret_cast<const uint8_t*>(header.data());
  for (uint64_t i = 0; i < segments; ++i) {
    const uint64_t at = i * seg;
    const uint64_t n = plain.size() - at < seg ? plain.size() - at : seg;
    uint8_t nonce[EPCTX_SEALED_NONCE_SIZE];
    epctx_sealed_nonce(i, segments, nonce);
    auto* dst = reinterpret_cast<uint8_t*>(
        &out[EPCTX_SEALED_HEADER_SIZE + size_t(i * (seg + EPCTX_SEALED_TAG_SIZE))]);
    const auto* src = reinterpret_cast<const uint8_t*>(plain.data()) + at;
    const int rc = o.alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305
                       ? mbedtls_chachapoly_encrypt_and_tag(&cp, size_t(n), nonce, aad,
                                                            header.size(), src, dst, dst + n)
                       : mbedtls_gcm_crypt_and_tag(&gcm, MBEDTLS_GCM_ENCRYPT, size_t(n), nonce,
                                                   sizeof nonce, aad, header.size(), src, dst,
                                                   EPCTX_SEALED_TAG_SIZE, dst + n);
    if (rc) throw ToolError(asset_name, "encryption failed at segment " + std::to_string(i));
  }
  return out;
}

std::string UnsealBytes(const std::string& file, const std::string& data_key,
                        const std::string& asset_name, const std::string& what) {
  const Bytes b{reinterpret_cast<const uint8_t*>(file.data()), file.size()};
  trust::SealedHeader h;
  Status st = trust::ParseSealedHeader(b, what.c_str(), &h);
  trust::Keyring ring;
  if (st.ok()) st = ring.AddDataKey(h.key_id, data_key.data(), data_key.size());
  trust::SealedAsset sa(Allocator::Default());
  if (st.ok()) st = sa.Open(b, StrView{asset_name.data(), asset_name.size()}, ring, what.c_str());
  std::string plain;
  if (st.ok()) {
    plain.resize(size_t(h.plaintext_size));
    st = sa.Decrypt(0, h.plaintext_size, reinterpret_cast<uint8_t*>(&plain[0]));
  }
  if (!st.ok()) {
    mbedtls_platform_zeroize(&plain[0], plain.size());
    throw ToolError(what, st.message());
  }
  return plain;
}

std::string PlainModelBytes(const std::string& bytes, const std::string& ctx_model_path,
                            const std::string& data_key) {
  if (!trust::LooksSealed(Bytes{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}))
    return bytes;
  if (data_key.empty())
    throw ToolError(ctx_model_path,
                    "the model is encrypted: pass its data key (--data-key) to read the files it "
                    "references");
  return UnsealBytes(bytes, data_key, PathBaseName(ctx_model_path), ctx_model_path);
}

std::vector<std::string> EncryptPackage(const std::string& ctx_model_path,
                                        const std::string& data_key, const SealOptions& options) {
  const std::string raw = ReadFileBytes(ctx_model_path);
  const onnx::ModelProto model =
      ParseModel(PlainModelBytes(raw, ctx_model_path, data_key), ctx_model_path);
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() != "EPContext") continue;
    int64_t embed_mode = 1;
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == "embed_mode") embed_mode = a.i();
    // An embedded context is encrypted with the model, or not at all.
    if (embed_mode != 0 && !options.encrypt_model)
      throw ToolError(ctx_model_path, "EPContext node '" + n.name() +
                                          "' embeds its context (embed_mode=1), which is "
                                          "encrypted only with the model (--encrypt-model), or "
                                          "compile with --embed-mode 0");
  }
  std::vector<std::string> sealed;
  auto seal = [&](const std::string& path, const std::string& name, std::string bytes) {
    if (trust::LooksSealed(Bytes{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}))
      return;
    const std::string out = SealBytes(bytes, data_key, name, options);
    mbedtls_platform_zeroize(&bytes[0], bytes.size());
    WriteFileAtomic(path, out.data(), out.size());
    sealed.push_back(path);
  };
  // The model last: the files it references are listed from its plaintext.
  for (const PackageFile& f : ListPackageFiles(model, ctx_model_path))
    if (f.role != EPCTX_MF_ROLE_MODEL) seal(f.path, f.name, ReadFileBytes(f.path));
  if (options.encrypt_model) seal(ctx_model_path, PathBaseName(ctx_model_path), raw);
  return sealed;
}

}  // namespace host
}  // namespace epctx
