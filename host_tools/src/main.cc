// SPDX-License-Identifier: Apache-2.0
// epctx-compile: ONNX model(s) -> EPContext model(s) + context binary. A thin
// command line over the compile library (epctx_host/compile_api.h); its
// -e / -i / -C options and the comma-separated model list follow ORT's
// ep_weight_sharing_ctx_gen.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "cli_args.h"
#include "epctx_host/compile_api.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/op_list.h"
#include "epctx_host/parse_u64.h"
#include "epctx_host/seal.h"
#include "epctx_host/sign.h"

namespace {

enum {
  kOutput = 1,
  kEp,
  kEmbedMode,
  kPrefix,
  kExternalInitializers,
  kBackendOptions,
  kInputShape,
  kInputValue,
  kErrorIfNoCompiledNodes,
  kSignKey,
  kModelId,
  kSecurityCounter,
  kQuiet,
  kForce,
  kEmitOpList,
  kEncryptKey,
  kKeyId,
  kEncryptAlg,
  kEncryptModel
};

const epctx_cli_option kOptions[] = {
    {kOutput, "output", 'o', "FILE", "output model (ep.context_file_path; default model_ctx.onnx)"},
    {kEp, "ep", 'e', "NAME", "backend to compile for (default vnpu); none: a CPU-only model"},
    {kEmbedMode, "embed-mode", 0, "N",
     "ep.context_embed_mode: 0 = [model]_[ep].bin (default), 1 = inside"},
    {kPrefix, "prefix", 0, "P", "ep.context_node_name_prefix (EPContext node and graph names)"},
    {kExternalInitializers, "external-initializers", 0, "FILE",
     "ep.context_model_external_initializers_file_name"},
    {kBackendOptions, "backend-options", 'i', "\"key|value ...\"",
     "backend options (vnpu: disable_ops|Op1,Op2)"},
    {kInputShape, "input-shape", 0, "SPEC",
     "fix the dimensions of a graph input: name:d0,d1,... (repeatable)"},
    {kInputValue, "input-value", 0, "SPEC",
     "fix the values of a graph input: name:v1,v2,... (repeatable); it\nbecomes a constant "
     "(the compiled model no longer has that input)"},
    {kErrorIfNoCompiledNodes, "error-if-no-compiled-nodes", 0, nullptr,
     "fail when no node can run on the backend\n(default: write the model with every node "
     "on the CPU, as --ep none\ndoes, and print a warning)"},
    {kSignKey, "sign-key", 0, "KEY.pem",
     "sign each written package (writes model_ctx.onnx.sig; see epctx-sign)"},
    {kModelId, "model-id", 0, "ID[,ID..]",
     "manifest model id, required with --sign-key (one per model\nof a group, in order); "
     "apps bind it with epctx.expected_model_id"},
    {kSecurityCounter, "security-counter", 0, "N", "manifest anti-rollback counter (default 0)"},
    {kEncryptKey, "encrypt-key", 0, "KEY",
     "encrypt each context binary with this 32-byte data key\n(epctx-sign keygen-data), before "
     "signing; needs --key-id"},
    {kKeyId, "key-id", 0, "ID",
     "the data key's id (1..32 of [A-Za-z0-9._-]), which apps\npass "
     "with the key"},
    {kEncryptAlg, "encrypt-alg", 0, "ALG", "chacha20-poly1305 (default) or aes-256-gcm"},
    {kEncryptModel, "encrypt-model", 0, nullptr,
     "with --encrypt-key: encrypt the _ctx.onnx too (graph, names,\nCPU weights); only epctx "
     "reads it then"},
    {kQuiet, "quiet", 'q', nullptr, "no progress on stderr"},
    {kForce, "force", 0, nullptr, "overwrite existing outputs"},
    {kEmitOpList, "emit-op-list", 0, "FILE",
     "write nothing else: list in FILE the CPU ops the models need\nonce compiled with these "
     "options (one a line; several models\nmay be given), for a runtime built with "
     "EPCTX_CPU_OPS=FILE"},
    {0, nullptr, 0, nullptr, nullptr}};

const epctx_cli_tool kTool = {
    "epctx-compile",
    "[options] model.onnx\n[options] model1.onnx,model2.onnx,...   (weight sharing)",
    "Compiles ONNX models into EPContext models and a context binary.",
    kOptions,
    "A comma-separated model list compiles a weight-sharing group: N model_ctx.onnx and one\n"
    "[model1]_[ep].bin in which identical weights are stored once.\n",
    "print the report (placement, MACs, CPU node reasons) as JSON"};

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// -C and -i entries go to a ConfigEntries; no exception crosses the C parser.
int AddEntry(void* user, const char* key, const char* value, char*, size_t) {
  static_cast<epctx::host::ConfigEntries*>(user)->emplace_back(key, value);
  return 0;
}

std::vector<std::string> SplitModels(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty()) throw UsageError("empty model name in the list '" + list + "'");
    out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace epctx::host;
  CompileSettings settings;
  std::vector<std::string> models;
  std::vector<std::string> more_models;  // --emit-op-list takes several arguments
  std::string op_list;
  bool quiet = false;
  bool json = false;
  std::string sign_key;
  epctx::host::SignOptions sign_options;
  std::vector<std::string> model_ids;  // one per model, with --sign-key
  std::string encrypt_key;
  SealOptions seal;
  bool embedded = false;
  try {
    epctx_cli_parser p;
    epctx_cli_init(&p, &kTool, argc, argv);
    const char* cv = nullptr;
    int id;
    while ((id = epctx_cli_next(&p, &cv)) > 0) {
      const std::string v = cv ? cv : "";
      char err[512];
      switch (id) {
        case EPCTX_CLI_HELP: epctx_cli_help(&kTool, stdout); return 0;
        case EPCTX_CLI_VERSION: epctx_cli_version(&kTool, stdout); return 0;
        case EPCTX_CLI_JSON: json = true; break;
        case kQuiet: quiet = true; break;
        case kForce: settings.force = true; break;
        case kErrorIfNoCompiledNodes:
          settings.if_no_compiled_nodes = IfNoCompiledNodes::kError;
          break;
        case kOutput: settings.config.emplace_back("ep.context_file_path", v); break;
        case kEp: settings.ep = v; break;
        case kEmbedMode:
          if (v != "0" && v != "1")
            throw UsageError("--embed-mode must be 0 or 1, not '" + v + "'");
          settings.config.emplace_back("ep.context_embed_mode", v);
          embedded = v == "1";
          break;
        case kPrefix: settings.config.emplace_back("ep.context_node_name_prefix", v); break;
        case kExternalInitializers:
          settings.config.emplace_back("ep.context_model_external_initializers_file_name", v);
          break;
        case EPCTX_CLI_CONFIG:
          if (epctx_cli_split_config(const_cast<char*>(cv), AddEntry, &settings.config, err,
                                     sizeof err))
            throw UsageError(err);
          break;
        case kBackendOptions:
          if (epctx_cli_split_config(const_cast<char*>(cv), AddEntry, &settings.backend_options,
                                     err, sizeof err))
            throw UsageError(std::string("-i: ") + err);
          break;
        case kSignKey: sign_key = v; break;
        case kModelId: sign_options.model_id = v; break;
        case kSecurityCounter:
          if (!epctx::host::ParseU64(v, &sign_options.security_counter))
            throw UsageError("--security-counter must be a non-negative integer, not '" + v + "'");
          break;
        case kEmitOpList: op_list = v; break;
        case kEncryptKey: encrypt_key = v; break;
        case kKeyId: seal.key_id = v; break;
        case kEncryptModel: seal.encrypt_model = true; break;
        case kEncryptAlg: try { seal.alg = ParseSealAlg(v);
          } catch (const ToolError& e) {
            throw UsageError(std::string("--encrypt-alg: ") + e.what());
          }
          break;
        case kInputShape: settings.input_shapes.push_back(ParseInputShape(v)); break;
        case kInputValue: settings.input_values.push_back(epctx::host::ParseInputValue(v)); break;
        default: break;
      }
    }
    if (id < 0) return EPCTX_CLI_EXIT_USAGE;
    for (int k = 0; k < p.num_operands; ++k) {
      if (models.empty()) models = SplitModels(p.operands[k]);
      else
        for (auto& m : SplitModels(p.operands[k])) more_models.push_back(m);
    }
    if (op_list.empty() && !more_models.empty()) {
      throw UsageError("more than one input argument ('" + models[0] + "', '" + more_models[0] +
                       "'); list the models of a group as m1.onnx,m2.onnx");
    }
    models.insert(models.end(), more_models.begin(), more_models.end());
    if (models.empty()) throw UsageError("no input model given");
    if (!op_list.empty() && !sign_key.empty())
      throw UsageError("--emit-op-list writes no package to sign (drop --sign-key)");
    if (encrypt_key.empty() != seal.key_id.empty())
      throw UsageError("--encrypt-key and --key-id go together");
    if (!encrypt_key.empty() && !op_list.empty())
      throw UsageError("--emit-op-list writes no package to encrypt (drop --encrypt-key)");
    if (seal.encrypt_model && encrypt_key.empty())
      throw UsageError("--encrypt-model needs --encrypt-key and --key-id");
    if (!encrypt_key.empty() && embedded && !seal.encrypt_model)
      throw UsageError(
          "--encrypt-key with --embed-mode 1 needs --encrypt-model: an embedded context is "
          "encrypted with the model");
    if (sign_key.empty() && (!sign_options.model_id.empty() || sign_options.security_counter))
      throw UsageError("--model-id and --security-counter need --sign-key");
    if (!sign_key.empty()) {
      // No silent default: the id is what an application binds a package to.
      if (!sign_options.model_id.empty()) model_ids = SplitModels(sign_options.model_id);
      if (model_ids.size() != models.size())
        throw UsageError("--sign-key needs --model-id with one id per model (" +
                         std::to_string(models.size()) + " model" +
                         (models.size() > 1 ? "s, comma-separated" : "") + ")");
    }
  } catch (const std::invalid_argument& e) {
    return epctx_cli_usage_error(&kTool, "%s", e.what());
  }

  if (!sign_key.empty() && !std::ifstream(sign_key, std::ios::binary)) {
    // Before compiling: a typo in the key path must not leave unsigned outputs.
    std::cerr << "epctx-compile: error: signing: " << sign_key << ": cannot open the signing key\n";
    return 1;
  }
  std::string data_key;
  if (!encrypt_key.empty()) {
    // Before compiling: a bad key must not leave unencrypted outputs.
    try {
      data_key = ReadDataKey(encrypt_key);
      CheckSealOptions(seal);
    } catch (const ToolError& e) {
      std::cerr << "epctx-compile: error: encryption: " << (e.file().empty() ? "" : e.file() + ": ")
                << e.what() << "\n";
      return 1;
    }
  }
  settings.progress = Progress(quiet ? nullptr : &std::cerr);
  if (!op_list.empty()) {
    try {
      const std::string text = FormatOpList(CpuOpsOfModels(models, settings));
      WriteFileAtomic(op_list, text.data(), text.size());
      if (!quiet)
        std::cerr << "epctx-compile: " << op_list << ": "
                  << std::count(text.begin(), text.end(), '\n') << " CPU ops\n";
    } catch (const ToolError& e) {
      std::cerr << "epctx-compile: error: " << (e.file().empty() ? "" : e.file() + ": ") << e.what()
                << "\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "epctx-compile: error: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }
  std::vector<ModelInput> inputs;
  inputs.reserve(models.size());
  for (const auto& m : models) inputs.push_back(ModelInput::FromPath(m));
  CompileResult r =
      inputs.size() == 1 ? CompileModel(inputs[0], settings) : CompileModelGroup(inputs, settings);
  if (!r.ok()) {
    std::cerr << "epctx-compile: error: " << r.status.message << "\n";
    return 1;
  }
  // Warnings (a model nothing of which runs on the backend), also with --quiet.
  for (const ModelReport& m : r.models)
    if (!m.message.empty())
      std::cerr << "epctx-compile: warning: " << m.input << ": " << m.message << "\n";
  // The result, also with --quiet.
  std::cout << (json ? FormatResultJson(r, settings.ep) : FormatResult(r, settings.ep));
  // Encrypt, then sign: the manifest lists the ciphertext.
  if (!data_key.empty()) {
    try {
      for (const ModelReport& m : r.models) {
        if (!m.written || m.output_path.empty()) continue;
        for (const std::string& f : EncryptPackage(m.output_path, data_key, seal))
          if (!json) std::cout << "encrypted: " << f << " (key id " << seal.key_id << ")\n";
      }
    } catch (const ToolError& e) {
      std::cerr << "epctx-compile: error: encryption: " << e.file() << ": " << e.what() << "\n";
      return 1;
    }
  }
  if (sign_key.empty()) return 0;
  try {
    for (size_t k = 0; k < r.models.size(); ++k) {
      const ModelReport& m = r.models[k];
      if (!m.written || m.output_path.empty()) continue;
      sign_options.model_id = model_ids[k < model_ids.size() ? k : 0];
      sign_options.data_key = data_key;  // lists an encrypted model's files
      std::string sig = SignPackage(m.output_path, sign_key, sign_options);
      std::cout << "signed: " << sig << "\n";
    }
  } catch (const ToolError& e) {
    std::cerr << "epctx-compile: error: signing: " << e.file() << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "epctx-compile: error: signing: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
