// SPDX-License-Identifier: Apache-2.0
// epctx-sign: keys, signing and verifying epctx packages. The command line
// follows the convention of every epctx tool (runtime/tools/cli_args.h).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <epctx/session_config_keys.h>

#include "cli_args.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/key_wrap.h"
#include "epctx_host/parse_u64.h"
#include "epctx_host/seal.h"
#include "epctx_host/sign.h"
#include "json_writer.h"

namespace {

enum {
  kKey = 1,
  kPub,
  kManifest,
  kModelId,
  kCounter,
  kChunkLog2,
  kDataKey,
  kKeyId,
  kAlg,
  kSegmentLog2,
  kEncryptModel,
  kDeviceKey,
  kDeviceKeyId
};

const epctx_cli_option kOptions[] = {
    {kKey, "key", 0, "PRIVATE.pem", "sign: the signing key (ECDSA P-256, PEM)"},
    {kPub, "pub", 0, "PUBLIC.pem", "verify: the public key to check against"},
    {kManifest, "manifest", 'o', "MANIFEST",
     "the manifest to write (sign) or read (verify); default model_ctx.onnx.sig\n"
     "(-C epctx.signature_path=MANIFEST says the same)"},
    {kModelId, "model-id", 0, "ID",
     "sign: the id applications bind the package to (epctx.expected_model_id)"},
    {kCounter, "counter", 0, "N", "sign: the anti-rollback security counter (default 0)"},
    {kChunkLog2, "chunk-log2", 0, "N", "sign: hash chunks of 2^N bytes"},
    {kDataKey, "data-key", 0, "KEY",
     "encrypt, wrap-key: the 32-byte data key (keygen-data writes one);\nsign, verify: the data "
     "key of an encrypted model"},
    {kKeyId, "key-id", 0, "ID", "encrypt, wrap-key: the data key's id (1..32 of [A-Za-z0-9._-])"},
    {kAlg, "alg", 0, "ALG", "encrypt, wrap-key: chacha20-poly1305 (default) or aes-256-gcm"},
    {kSegmentLog2, "segment-log2", 0, "N",
     "encrypt: segments of 2^N plaintext bytes (12..24, default 16):\nthe unit a session decrypts"},
    {kEncryptModel, "encrypt-model", 0, nullptr,
     "encrypt: the model_ctx.onnx too (graph, names, CPU weights);\nonly epctx reads it then"},
    {kDeviceKey, "device-key", 0, "KEY",
     "wrap-key: the device's 32-byte key (keygen-data writes one), which\nits application "
     "passes as a decryption key"},
    {kDeviceKeyId, "device-key-id", 0, "DEVID",
     "wrap-key: the device key's id (1..32 of [A-Za-z0-9._-])"},
    {0, nullptr, 0, nullptr, nullptr}};

const epctx_cli_tool kTool = {
    "epctx-sign",
    "keygen PRIVATE.pem PUBLIC.pem\n"
    "keygen-data DATA.key\n"
    "encrypt --data-key DATA.key --key-id ID [--alg ALG] [--segment-log2 N] [--encrypt-model] "
    "model_ctx.onnx\n"
    "wrap-key --data-key DATA.key --key-id ID --device-key DEV.key --device-key-id DEVID "
    "[--alg ALG] model_ctx.onnx\n"
    "sign --key PRIVATE.pem --model-id ID [--counter N] [-o MANIFEST] [--data-key DATA.key] "
    "model_ctx.onnx\n"
    "verify --pub PUBLIC.pem [--manifest MANIFEST] [--data-key DATA.key] model_ctx.onnx",
    "Signs epctx packages: sign writes model_ctx.onnx.sig (ECDSA P-256 over SHA-256) covering\n"
    "the model, its context binaries and external data; verify checks every byte of them.\n"
    "encrypt encrypts a package's context binaries and external data in place (before\n"
    "signing it); wrap-key adds the data key wrapped for one device key to\n"
    "model_ctx.onnx.keys, which is not signed: devices are re-keyed without signing again.",
    kOptions,
    nullptr,
    "print the result as one JSON object"};

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

uint64_t ParseU64(const std::string& opt, const std::string& v) {
  uint64_t n = 0;
  if (!epctx::host::ParseU64(v, &n))
    throw UsageError(opt + " needs a non-negative integer below 2^64, not '" + v + "'");
  return n;
}

// No exception may cross the C parser: errors go back through err.
int AddConfig(void* user, const char* key, const char* value, char* err, size_t err_size) {
  // The one session-config key that means something here.
  if (std::string(key) != EPCTX_CONFIG_SIGNATURE_PATH) {
    std::snprintf(err, err_size, "-C '%s': epctx-sign reads only %s", key,
                  EPCTX_CONFIG_SIGNATURE_PATH);
    return -1;
  }
  *static_cast<std::string*>(user) = value;
  return 0;
}

void PrintJson(const char* command, const std::string& file, const epctx::host::VerifyReport* r) {
  epctx_json j;
  epctx_json_init(&j, stdout, 0);
  epctx_json_begin_object(&j);
  epctx_json_key(&j, "command");
  epctx_json_string(&j, command);
  epctx_json_key(&j, r ? "model" : "wrote");
  epctx_json_string(&j, file.c_str());
  if (r) {
    epctx_json_key(&j, "ok");
    epctx_json_bool(&j, 1);
    epctx_json_key(&j, "model_id");
    epctx_json_string(&j, r->model_id.c_str());
    epctx_json_key(&j, "security_counter");
    epctx_json_uint(&j, r->security_counter);
    epctx_json_key(&j, "files");
    epctx_json_begin_array(&j);
    for (const auto& f : r->files) epctx_json_string(&j, f.c_str());
    epctx_json_end_array(&j);
    epctx_json_key(&j, "bytes_verified");
    epctx_json_uint(&j, r->bytes);
  }
  epctx_json_end_object(&j);
  epctx_json_finish(&j);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace epctx::host;
  try {
    std::string key, pub, manifest;
    SignOptions so;
    SealOptions seal;
    std::string data_key, device_key;
    WrapOptions wrap;
    bool json = false;
    epctx_cli_parser p;
    epctx_cli_init(&p, &kTool, argc, argv);
    const char* v = nullptr;
    int id;
    while ((id = epctx_cli_next(&p, &v)) > 0) {
      char err[512];
      switch (id) {
        case EPCTX_CLI_HELP: epctx_cli_help(&kTool, stdout); return 0;
        case EPCTX_CLI_VERSION: epctx_cli_version(&kTool, stdout); return 0;
        case EPCTX_CLI_JSON: json = true; break;
        case EPCTX_CLI_CONFIG:
          if (epctx_cli_split_config(const_cast<char*>(v), AddConfig, &manifest, err, sizeof err))
            throw UsageError(err);
          break;
        case kKey: key = v; break;
        case kPub: pub = v; break;
        case kManifest: manifest = v; break;
        case kModelId: so.model_id = v; break;
        case kCounter: so.security_counter = ParseU64("--counter", v); break;
        case kChunkLog2:
          so.chunk_log2 = static_cast<int>(ParseU64("--chunk-log2", v) & 0xff);
          break;
        case kDataKey: data_key = v; break;
        case kEncryptModel: seal.encrypt_model = true; break;
        case kKeyId: seal.key_id = v; break;
        case kDeviceKey: device_key = v; break;
        case kDeviceKeyId: wrap.device_key_id = v; break;
        case kSegmentLog2:
          seal.segment_log2 =
              static_cast<int>(std::min<uint64_t>(ParseU64("--segment-log2", v), 99));
          break;
        case kAlg: try { seal.alg = ParseSealAlg(v);
          } catch (const ToolError& e) {
            throw UsageError(std::string("--alg: ") + e.what());
          }
          break;
        default: break;
      }
    }
    if (id < 0) return EPCTX_CLI_EXIT_USAGE;
    if (p.num_operands == 0) throw UsageError("missing command");
    const std::string cmd = p.operands[0];
    std::vector<std::string> args(p.operands + 1, p.operands + p.num_operands);
    if (cmd == "keygen") {
      if (args.size() != 2) throw UsageError("keygen needs PRIVATE.pem and PUBLIC.pem");
      GenerateKeyPair(args[0], args[1]);
      if (json) PrintJson("keygen", args[0], nullptr);
      else std::cout << "epctx-sign: wrote " << args[0] << " and " << args[1] << "\n";
    } else if (cmd == "keygen-data") {
      if (args.size() != 1) throw UsageError("keygen-data needs one output file");
      GenerateDataKey(args[0]);
      if (json) PrintJson("keygen-data", args[0], nullptr);
      else std::cout << "epctx-sign: wrote " << args[0] << " (32 random bytes, mode 0600)\n";
    } else if (cmd == "encrypt") {
      if (args.size() != 1 || data_key.empty() || seal.key_id.empty())
        throw UsageError("encrypt needs --data-key, --key-id and one model");
      const std::string k = ReadDataKey(data_key);
      CheckSealOptions(seal);  // before any file is written
      const std::vector<std::string> done = EncryptPackage(args[0], k, seal);
      if (json) PrintJson("encrypt", args[0], nullptr);
      else
        for (const std::string& f : done)
          std::cout << "epctx-sign: encrypted " << f << " (key id " << seal.key_id << ")\n";
      if (!json && done.empty()) std::cout << "epctx-sign: nothing to encrypt\n";
    } else if (cmd == "wrap-key") {
      if (args.size() != 1 || data_key.empty() || seal.key_id.empty() || device_key.empty() ||
          wrap.device_key_id.empty())
        throw UsageError(
            "wrap-key needs --data-key, --key-id, --device-key, --device-key-id and one model");
      wrap.data_key_id = seal.key_id;
      wrap.alg = seal.alg;
      CheckWrapOptions(wrap);  // before any file is read
      const std::string dk = ReadDataKey(data_key), dev = ReadDataKey(device_key);
      const WrapReport r = WrapKeyForDevice(args[0], dk, dev, wrap);
      if (json) PrintJson("wrap-key", r.keys_path, nullptr);
      else
        std::cout << "epctx-sign: wrote " << r.keys_path << ": "
                  << (r.replaced ? "replaced" : "added") << " the entry of key id "
                  << wrap.data_key_id << " for device key id " << wrap.device_key_id
                  << " (entries now: " << r.entries << "; the data key decrypts " << r.files.size()
                  << " encrypted file" << (r.files.size() == 1 ? "" : "s") << " of the package)\n";
    } else if (cmd == "sign") {
      if (args.size() != 1 || key.empty()) throw UsageError("sign needs --key and one model");
      if (so.model_id.empty())
        throw UsageError("sign needs --model-id: the id applications bind the package to");
      so.manifest_path = manifest;
      if (!data_key.empty()) so.data_key = ReadDataKey(data_key);
      std::string out = SignPackage(args[0], key, so);
      if (json) PrintJson("sign", out, nullptr);
      else std::cout << "epctx-sign: wrote " << out << "\n";
    } else if (cmd == "verify") {
      if (args.size() != 1 || pub.empty()) throw UsageError("verify needs --pub and one model");
      VerifyReport r =
          VerifyPackage(args[0], pub, manifest, data_key.empty() ? "" : ReadDataKey(data_key));
      if (json) PrintJson("verify", args[0], &r);
      else
        std::cout << "epctx-sign: OK: model '" << r.model_id << "' counter " << r.security_counter
                  << ", " << r.files.size() << " files, " << r.bytes << " bytes verified\n";
    } else {
      throw UsageError("unknown command '" + cmd + "'");
    }
    return 0;
  } catch (const UsageError& e) {
    return epctx_cli_usage_error(&kTool, "%s", e.what());
  } catch (const ToolError& e) {
    std::cerr << "epctx-sign: error: " << (e.file().empty() ? "" : e.file() + ": ") << e.what()
              << "\n";
    return EPCTX_CLI_EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::cerr << "epctx-sign: error: " << e.what() << "\n";
    return EPCTX_CLI_EXIT_FAILURE;
  }
}
