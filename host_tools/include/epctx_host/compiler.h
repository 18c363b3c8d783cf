// The epctx-compile pipeline: load, specialise, partition, compile, pack,
// write, report. main.cc parses the command line into CompileOptions; tests
// call CompileFile directly.
#ifndef EPCTX_HOST_COMPILER_H
#define EPCTX_HOST_COMPILER_H

#include <cstdint>
#include <string>
#include <vector>

#include "epctx_host/diagnostics.h"
#include "epctx_host/specialize.h"

namespace epctx {
namespace host {

struct CompileOptions {
  std::string input_path;
  std::string output_path;  // empty: DefaultOutputPath(input_path)
  std::string ep = "vnpu";  // backend name or "none"
  int embed_mode = 0;
  std::vector<InputShape> input_shapes;
  bool force = false;  // overwrite an existing output
};

struct CompileSummary {
  std::string output_path;
  std::string binary_path;  // empty unless embed_mode 0 with partitions
  size_t nodes_total = 0, nodes_npu = 0, nodes_cpu = 0, partitions = 0;
  uint64_t payload_bytes = 0, weight_bytes = 0;
  double compile_ms = 0;
  std::string ep;
};

// Throws ToolError (and std::invalid_argument for bad options).
CompileSummary CompileFile(const CompileOptions& options, const Progress& progress);

// The summary line printed on stdout.
std::string FormatSummary(const CompileSummary& summary);

}  // namespace host
}  // namespace epctx

#endif
