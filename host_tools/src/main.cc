// epctx-compile: ONNX model -> EPContext model + context binary.
#include <cstring>
#include <iostream>
#include <string>

#include "epctx_host/compiler.h"

namespace {

const char kUsage[] =
    "usage: epctx-compile model.onnx [-o out_ctx.onnx] [--ep vnpu|none] [--embed-mode 0|1]\n"
    "                     [--input-shape name:d0,d1,...]... [--quiet] [--force]\n"
    "  -o FILE             output model (default: model_ctx.onnx beside the input)\n"
    "  --ep NAME           backend to compile for (default vnpu); none: no partitions\n"
    "  --embed-mode N      0: context binary in [model]_[ep].bin (default); 1: inside the model\n"
    "  --input-shape SPEC  fix the dimensions of a graph input (repeatable)\n"
    "  --quiet             no progress on stderr\n"
    "  --force             overwrite an existing output\n";

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

}  // namespace

int main(int argc, char** argv) {
  using namespace epctx::host;
  CompileOptions options;
  bool quiet = false;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string v;
      const std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      } else if (a == "--quiet" || a == "-q") {
        quiet = true;
      } else if (a == "--force") {
        options.force = true;
      } else if (TakeValue(argc, argv, i, "-o", &v) || TakeValue(argc, argv, i, "--output", &v)) {
        options.output_path = v;
      } else if (TakeValue(argc, argv, i, "--ep", &v)) {
        options.ep = v;
      } else if (TakeValue(argc, argv, i, "--embed-mode", &v)) {
        if (v != "0" && v != "1") throw UsageError("--embed-mode must be 0 or 1, not '" + v + "'");
        options.embed_mode = v[0] - '0';
      } else if (TakeValue(argc, argv, i, "--input-shape", &v)) {
        options.input_shapes.push_back(ParseInputShape(v));
      } else if (!a.empty() && a[0] == '-') {
        throw UsageError("unknown option '" + a + "'");
      } else if (options.input_path.empty()) {
        options.input_path = a;
      } else {
        throw UsageError("more than one input model ('" + options.input_path + "', '" + a + "')");
      }
    }
    if (options.input_path.empty()) throw UsageError("no input model given");
  } catch (const std::invalid_argument& e) {
    std::cerr << "epctx-compile: error: " << e.what() << " (see --help)\n";
    return 2;
  }

  try {
    Progress progress(quiet ? nullptr : &std::cerr);
    CompileSummary s = CompileFile(options, progress);
    std::cout << FormatSummary(s) << "\n";  // the result, also with --quiet
    return 0;
  } catch (const ToolError& e) {
    std::cerr << "epctx-compile: error: " << e.file() << ": " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "epctx-compile: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "epctx-compile: error: " << options.input_path << ": internal error: " << e.what()
              << "\n";
  } catch (...) {
    std::cerr << "epctx-compile: error: " << options.input_path << ": internal error\n";
  }
  return 1;
}
