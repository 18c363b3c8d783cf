// SPDX-License-Identifier: Apache-2.0
// SignPackage and GenerateKeyPair: writing manifests with mbedtls.
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <memory>

#include <manifest_format.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>

#include "container/container.h"
#include "core/memory.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/seal.h"
#include "epctx_host/sign.h"
#include "sign_internal.h"

namespace epctx {
namespace host {
namespace {

void Put16(std::string& s, uint16_t v) {
  for (int i = 0; i < 2; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
void Put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
void Put64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
void PutTlv(std::string& s, uint16_t type, const std::string& value) {
  Put16(s, type);
  Put16(s, 0);
  Put32(s, static_cast<uint32_t>(value.size()));
  s += value;
}

std::string NodeAttribute(const onnx::ModelProto& m, const char* name) {
  for (const onnx::NodeProto& n : m.graph().node()) {
    if (n.op_type() != "EPContext") continue;
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == name) return a.s();
    return "";
  }
  return "";
}

int64_t NodeIntAttribute(const onnx::ModelProto& m, const char* name, int64_t absent) {
  for (const onnx::NodeProto& n : m.graph().node()) {
    if (n.op_type() != "EPContext") continue;
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == name) return a.i();
    return absent;
  }
  return absent;
}

// "X.Y.Z" from a context binary's min_driver_version, read by the runtime's
// container parser (the value the runtime checks against the driver); ""
// when the bytes are no container or carry no minimum.
std::string MinDriverVersion(const std::string& blob) {
  Bytes b{reinterpret_cast<const uint8_t*>(blob.data()), blob.size()};
  if (!LooksLikeContainer(b)) return "";
  Arena arena(Allocator::Default());
  ContainerView c;
  if (!ParseContainer(b, "context", arena, &c).ok()) return "";
  const ContainerVersion& v = c.min_driver_version;
  if (!v.major && !v.minor && !v.patch) return "";
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

// `bytes`: the file's contents.
std::string FileTlv(const PackageFile& f, const std::string& bytes, int chunk_log2) {
  std::string v;
  v.push_back(static_cast<char>(f.role));
  v.push_back(static_cast<char>(chunk_log2));
  Put16(v, static_cast<uint16_t>(f.name.size()));
  Put64(v, bytes.size());
  v += f.name;
  size_t chunk = size_t{1} << chunk_log2;
  for (size_t off = 0; off < bytes.size(); off += chunk)
    v += Sha256(bytes.data() + off, std::min(chunk, bytes.size() - off));
  return v;
}

}  // namespace

std::string SignPackage(const std::string& ctx_model_path, const std::string& key_pem_path,
                        const SignOptions& o) {
  if (o.chunk_log2 < EPCTX_MF_MIN_CHUNK_LOG2 || o.chunk_log2 > EPCTX_MF_MAX_CHUNK_LOG2)
    throw ToolError(ctx_model_path,
                    "chunk size 2^" + std::to_string(o.chunk_log2) + " outside 2^12..2^24");
  Pk key;
  LoadPrivateKey(key_pem_path, &key);
  const std::string model_bytes = ReadFileBytes(ctx_model_path);
  // The manifest lists the model's own bytes (ciphertext when encrypted).
  const onnx::ModelProto model =
      ParseModel(PlainModelBytes(model_bytes, ctx_model_path, o.data_key), ctx_model_path);
  const std::vector<PackageFile> files = ListPackageFiles(model, ctx_model_path);
  std::string model_id = o.model_id;
  if (model_id.empty()) throw std::invalid_argument("a model id is required to sign a package");
  std::string producer = model.producer_name();
  if (!model.producer_version().empty()) producer += " " + model.producer_version();
  std::string sdk = NodeAttribute(model, "ep_sdk_version");
  std::string hw = NodeAttribute(model, "hardware_architecture");

  // Hash every file, reading each once; the first EPContext node's context
  // binary (embedded, else its file) gives the minimum driver version.
  const bool embedded = NodeIntAttribute(model, "embed_mode", 1) == 1;
  std::string drv = embedded ? MinDriverVersion(NodeAttribute(model, "ep_cache_context")) : "";
  bool want_context_file = !embedded;
  std::string file_tlvs;
  for (const PackageFile& f : files) {
    std::string read;
    const std::string& bytes =
        f.role == EPCTX_MF_ROLE_MODEL ? model_bytes : (read = ReadFileBytes(f.path));
    if (want_context_file && f.role == EPCTX_MF_ROLE_CONTEXT) {
      drv = MinDriverVersion(bytes);
      want_context_file = false;
    }
    PutTlv(file_tlvs, EPCTX_MF_TLV_FILE, FileTlv(f, bytes, o.chunk_log2));
  }
  for (const std::string* s : {&model_id, &sdk, &hw, &drv, &producer})
    if (s->size() > EPCTX_MF_MAX_STRING || s->find('\0') != std::string::npos)
      throw ToolError(ctx_model_path, "manifest string '" + *s + "' is too long or has a NUL");

  std::string tlvs;
  PutTlv(tlvs, EPCTX_MF_TLV_KEY_ID, KeyId(key, key_pem_path));
  PutTlv(tlvs, EPCTX_MF_TLV_MODEL_ID, model_id);
  std::string counter;
  Put64(counter, o.security_counter);
  PutTlv(tlvs, EPCTX_MF_TLV_SECURITY_COUNTER, counter);
  if (!sdk.empty()) PutTlv(tlvs, EPCTX_MF_TLV_SDK_VERSION, sdk);
  if (!hw.empty()) PutTlv(tlvs, EPCTX_MF_TLV_HW_ARCH, hw);
  if (!drv.empty()) PutTlv(tlvs, EPCTX_MF_TLV_MIN_DRIVER_VERSION, drv);
  if (!producer.empty()) PutTlv(tlvs, EPCTX_MF_TLV_PRODUCER, producer);
  tlvs += file_tlvs;

  std::string m(EPCTX_MF_MAGIC, EPCTX_MF_MAGIC_SIZE);
  Put16(m, EPCTX_MF_FORMAT_MAJOR);
  Put16(m, EPCTX_MF_FORMAT_MINOR);
  Put32(m, EPCTX_MF_HEADER_SIZE);
  uint64_t prot = EPCTX_MF_HEADER_SIZE + tlvs.size();
  if (prot + 128 > EPCTX_MF_MAX_SIZE)
    throw ToolError(ctx_model_path, "manifest of " + std::to_string(prot) +
                                        " bytes exceeds the limit; use larger chunks");
  Put32(m, static_cast<uint32_t>(prot));
  Put32(m, 0);
  Put64(m, 0);
  m += tlvs;
  PutTlv(m, EPCTX_MF_TLV_SIGNATURE, SignDigest(key, Sha256(m.data(), m.size()), key_pem_path));
  std::string out =
      o.manifest_path.empty() ? ctx_model_path + EPCTX_MF_SIG_SUFFIX : o.manifest_path;
  WriteFileAtomic(out, m.data(), m.size());
  return out;
}

void GenerateKeyPair(const std::string& private_pem_path, const std::string& public_pem_path) {
  Pk key;
  Drbg drbg;
  if (mbedtls_pk_setup(&key.pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) != 0 ||
      mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key.pk), mbedtls_ctr_drbg_random,
                          &drbg.ctr) != 0)
    throw ToolError(private_pem_path, "P-256 key generation failed");
  unsigned char buf[4096];
  if (mbedtls_pk_write_key_pem(&key.pk, buf, sizeof buf) != 0)
    throw ToolError(private_pem_path, "cannot encode the private key");
  std::string priv(reinterpret_cast<char*>(buf));
  if (mbedtls_pk_write_pubkey_pem(&key.pk, buf, sizeof buf) != 0)
    throw ToolError(public_pem_path, "cannot encode the public key");
  std::string pub(reinterpret_cast<char*>(buf));
  if (FileExists(private_pem_path))
    throw ToolError(private_pem_path, "exists already; not overwriting a key");
  WriteFileAtomic(private_pem_path, priv.data(), priv.size());
  chmod(private_pem_path.c_str(), 0600);
  WriteFileAtomic(public_pem_path, pub.data(), pub.size());
}

}  // namespace host
}  // namespace epctx
