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

#include "epctx_host/compile_api.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/op_list.h"
#include "epctx_host/parse_u64.h"
#include "epctx_host/sign.h"

namespace {

const char kUsage[] =
    "usage: epctx-compile [options] model.onnx\n"
    "       epctx-compile [options] model1.onnx,model2.onnx,...   (weight sharing)\n"
    "  -o, --output FILE     output model (ep.context_file_path; default model_ctx.onnx)\n"
    "  -e, --ep NAME         backend to compile for (default vnpu); none: a CPU-only model\n"
    "  --embed-mode N        ep.context_embed_mode: 0 = [model]_[ep].bin (default), 1 = inside\n"
    "  --prefix P            ep.context_node_name_prefix (EPContext node and graph names)\n"
    "  --external-initializers FILE\n"
    "                        ep.context_model_external_initializers_file_name\n"
    "  -C \"key|value ...\"    session config entries (ep.context_*, ep.share_ep_contexts, ...)\n"
    "  -i \"key|value ...\"    backend options (vnpu: disable_ops|Op1,Op2)\n"
    "  --input-shape SPEC    fix the dimensions of a graph input: name:d0,d1,... (repeatable)\n"
    "  --input-value SPEC    fix the values of a graph input: name:v1,v2,... (repeatable); it\n"
    "                        becomes a constant (the compiled model no longer has that input)\n"
    "  --error-if-no-compiled-nodes   fail when no node can run on the backend\n"
    "                        (default: write nothing and say so)\n"
    "  --sign-key KEY.pem    sign each written package (writes model_ctx.onnx.sig; see epctx-sign)\n"
    "  --model-id ID[,ID..]  manifest model id, required with --sign-key (one per model\n"
    "                        of a group, in order); apps bind it with epctx.expected_model_id\n"
    "  --security-counter N  manifest anti-rollback counter (default 0)\n"
    "  --json                print the report (placement, MACs, CPU node reasons) as JSON\n"
    "  --quiet               no progress on stderr\n"
    "  --force               overwrite existing outputs\n"
    "  --emit-op-list FILE   write nothing else: list in FILE the CPU ops the models need\n"
    "                        once compiled with these options (one a line; several models\n"
    "                        may be given), for a runtime built with EPCTX_CPU_OPS=FILE\n"
    "A comma-separated model list compiles a weight-sharing group: N model_ctx.onnx and one\n"
    "[model1]_[ep].bin in which identical weights are stored once.\n";

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Value of "--opt VALUE" or "--opt=VALUE"; advances i.
bool TakeValue(int argc, char** argv, int& i, const char* opt, std::string* value) {
  const char* a = argv[i];
  size_t n = std::strlen(opt);
  if (std::strncmp(a, opt, n) != 0) return false;
  if (a[n] == '=') {
    *value = a + n + 1;
    return true;
  }
  if (a[n] != '\0') return false;
  if (i + 1 >= argc) throw UsageError(std::string(opt) + " needs a value");
  *value = argv[++i];
  return true;
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
  try {
    for (int i = 1; i < argc; ++i) {
      std::string v;
      const std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      } else if (a == "--quiet" || a == "-q") {
        quiet = true;
      } else if (a == "--json") {
        json = true;
      } else if (a == "--force") {
        settings.force = true;
      } else if (a == "--error-if-no-compiled-nodes") {
        settings.if_no_compiled_nodes = IfNoCompiledNodes::kError;
      } else if (TakeValue(argc, argv, i, "-o", &v) || TakeValue(argc, argv, i, "--output", &v)) {
        settings.config.emplace_back("ep.context_file_path", v);
      } else if (TakeValue(argc, argv, i, "--ep", &v) || TakeValue(argc, argv, i, "-e", &v)) {
        settings.ep = v;
      } else if (TakeValue(argc, argv, i, "--embed-mode", &v)) {
        if (v != "0" && v != "1") throw UsageError("--embed-mode must be 0 or 1, not '" + v + "'");
        settings.config.emplace_back("ep.context_embed_mode", v);
      } else if (TakeValue(argc, argv, i, "--prefix", &v)) {
        settings.config.emplace_back("ep.context_node_name_prefix", v);
      } else if (TakeValue(argc, argv, i, "--external-initializers", &v)) {
        settings.config.emplace_back("ep.context_model_external_initializers_file_name", v);
      } else if (TakeValue(argc, argv, i, "-C", &v)) {
        for (auto& kv : ParseConfigEntries(v, "-C")) settings.config.push_back(kv);
      } else if (TakeValue(argc, argv, i, "-i", &v)) {
        for (auto& kv : ParseConfigEntries(v, "-i")) settings.backend_options.push_back(kv);
      } else if (TakeValue(argc, argv, i, "--sign-key", &v)) {
        sign_key = v;
      } else if (TakeValue(argc, argv, i, "--model-id", &v)) {
        sign_options.model_id = v;
      } else if (TakeValue(argc, argv, i, "--security-counter", &v)) {
        if (!epctx::host::ParseU64(v, &sign_options.security_counter))
          throw UsageError("--security-counter must be a non-negative integer, not '" + v + "'");
      } else if (TakeValue(argc, argv, i, "--emit-op-list", &v)) {
        op_list = v;
      } else if (TakeValue(argc, argv, i, "--input-shape", &v)) {
        settings.input_shapes.push_back(ParseInputShape(v));
      } else if (TakeValue(argc, argv, i, "--input-value", &v)) {
        settings.input_values.push_back(epctx::host::ParseInputValue(v));
      } else if (!a.empty() && a[0] == '-') {
        throw UsageError("unknown option '" + a + "'");
      } else if (models.empty()) {
        models = SplitModels(a);
      } else {
        for (auto& m : SplitModels(a)) more_models.push_back(m);
      }
    }
    if (op_list.empty() && !more_models.empty()) {
      throw UsageError("more than one input argument ('" + models[0] + "', '" + more_models[0] +
                       "'); list the models of a group as m1.onnx,m2.onnx");
    }
    models.insert(models.end(), more_models.begin(), more_models.end());
    if (models.empty()) throw UsageError("no input model given");
    if (!op_list.empty() && !sign_key.empty())
      throw UsageError("--emit-op-list writes no package to sign (drop --sign-key)");
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
    std::cerr << "epctx-compile: error: " << e.what() << " (see --help)\n";
    return 2;
  }

  if (!sign_key.empty() && !std::ifstream(sign_key, std::ios::binary)) {
    // Before compiling: a typo in the key path must not leave unsigned outputs.
    std::cerr << "epctx-compile: error: signing: " << sign_key
              << ": cannot open the signing key\n";
    return 1;
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
      std::cerr << "epctx-compile: error: " << (e.file().empty() ? "" : e.file() + ": ")
                << e.what() << "\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "epctx-compile: error: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }
  std::vector<ModelInput> inputs;
  for (const auto& m : models) inputs.push_back(ModelInput::FromPath(m));
  CompileResult r = inputs.size() == 1 ? CompileModel(inputs[0], settings)
                                       : CompileModelGroup(inputs, settings);
  if (!r.ok()) {
    std::cerr << "epctx-compile: error: " << r.status.message << "\n";
    return 1;
  }
  // The result, also with --quiet.
  std::cout << (json ? FormatResultJson(r, settings.ep) : FormatResult(r, settings.ep));
  if (sign_key.empty()) return 0;
  try {
    for (size_t k = 0; k < r.models.size(); ++k) {
      const ModelReport& m = r.models[k];
      if (!m.written || m.output_path.empty()) continue;
      sign_options.model_id = model_ids[k < model_ids.size() ? k : 0];
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
