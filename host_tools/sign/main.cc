// SPDX-License-Identifier: Apache-2.0
// epctx-sign: keys, signing and verifying epctx packages.
#include <stdexcept>
#include <iostream>
#include <string>

#include "epctx_host/diagnostics.h"
#include "epctx_host/parse_u64.h"
#include "epctx_host/sign.h"

namespace {

const char kUsage[] =
    "usage: epctx-sign keygen PRIVATE.pem PUBLIC.pem\n"
    "       epctx-sign sign --key PRIVATE.pem --model-id ID [--counter N] [--chunk-log2 N]\n"
    "                       [-o MANIFEST] model_ctx.onnx\n"
    "       epctx-sign verify --pub PUBLIC.pem [--manifest MANIFEST] model_ctx.onnx\n"
    "  sign writes model_ctx.onnx.sig (ECDSA P-256 over SHA-256) covering the model, its\n"
    "  context binaries and external data; verify checks every byte of them. The model id\n"
    "  is what applications bind a package to (session option epctx.expected_model_id).\n";

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

uint64_t ParseU64(const std::string& opt, const std::string& v) {
  uint64_t n = 0;
  if (!epctx::host::ParseU64(v, &n))
    throw UsageError(opt + " needs a non-negative integer below 2^64, not '" + v + "'");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace epctx::host;
  try {
    if (argc < 2) throw UsageError("missing command");
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help") {
      std::cout << kUsage;
      return 0;
    }
    std::string key, pub, manifest;
    SignOptions so;
    std::string positional[2];
    int npos = 0;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw UsageError(a + " needs a value");
        return argv[++i];
      };
      if (a == "--key") key = value();
      else if (a == "--pub") pub = value();
      else if (a == "--manifest" || a == "-o") manifest = value();
      else if (a == "--model-id") so.model_id = value();
      else if (a == "--counter") so.security_counter = ParseU64(a, value());
      else if (a == "--chunk-log2") so.chunk_log2 = static_cast<int>(ParseU64(a, value()) & 0xff);
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else if (npos < 2) positional[npos++] = a;
      else throw UsageError("too many arguments");
    }
    if (cmd == "keygen") {
      if (npos != 2) throw UsageError("keygen needs PRIVATE.pem and PUBLIC.pem");
      GenerateKeyPair(positional[0], positional[1]);
      std::cout << "epctx-sign: wrote " << positional[0] << " and " << positional[1] << "\n";
    } else if (cmd == "sign") {
      if (npos != 1 || key.empty()) throw UsageError("sign needs --key and one model");
      if (so.model_id.empty())
        throw UsageError("sign needs --model-id: the id applications bind the package to");
      so.manifest_path = manifest;
      std::string out = SignPackage(positional[0], key, so);
      std::cout << "epctx-sign: wrote " << out << "\n";
    } else if (cmd == "verify") {
      if (npos != 1 || pub.empty()) throw UsageError("verify needs --pub and one model");
      VerifyReport r = VerifyPackage(positional[0], pub, manifest);
      std::cout << "epctx-sign: OK: model '" << r.model_id << "' counter " << r.security_counter
                << ", " << r.files.size() << " files, " << r.bytes << " bytes verified\n";
    } else {
      throw UsageError("unknown command '" + cmd + "'");
    }
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "epctx-sign: error: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const ToolError& e) {
    std::cerr << "epctx-sign: error: " << e.file() << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "epctx-sign: error: " << e.what() << "\n";
    return 1;
  }
}
