/* SPDX-License-Identifier: Apache-2.0 */
// The epctx compile library: what epctx-compile does, callable from other
// tools. One call compiles one source model (from a path or from bytes in
// memory) into an EPContext model; a Compiler object also carries the shared
// context of a weight-sharing group across calls, the way ORT's sessions do
// with ep.share_ep_contexts / ep.stop_share_ep_contexts.
//
// Options are session-style config entries with ORT's keys
// (research/ort_epcontext.md §2):
//   ep.context_enable                      "1" (compiling always generates; "0" is rejected)
//   ep.context_file_path                   output model; default <model>_ctx.onnx
//   ep.context_embed_mode                  "0" (default): [model_name]_[ep].bin beside the
//                                          output ([model_name]: the source's stem, or the
//                                          output's for a buffer);
//                                          "1": the context binary inside the model
//   ep.context_node_name_prefix            prefix of every EPContext node, partition_name
//                                          and graph name in the binary
//   ep.context_model_external_initializers_file_name
//                                          all CPU-fallback initializers go to this file
//                                          (beside the output); default: embedded
//   session.model_external_initializers_file_folder_path
//                                          folder of the source's external data when the
//                                          model is given as a buffer
//   ep.share_ep_contexts                   "1": join (or open) the Compiler's group
//   ep.stop_share_ep_contexts              "1": last model of the group: write the one .bin
// Unknown keys and bad values are INVALID_ARGUMENT naming the key.
//
// Errors never throw out of this API: every call returns a CompileResult
// whose status carries an epctx_code (<epctx/status.h>, ORT's numbers:
// FAIL 1, INVALID_ARGUMENT 2, NO_SUCHFILE 3, INVALID_PROTOBUF 7,
// INVALID_GRAPH 10, EP_FAIL 11) and a one-line message naming the file.
// Nothing is written before every check that can fail without compiling
// has passed (output exists, folder path, already compiled).
#ifndef EPCTX_HOST_COMPILE_API_H
#define EPCTX_HOST_COMPILE_API_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <epctx/status.h>

#include "epctx_host/diagnostics.h"
#include "epctx_host/specialize.h"

namespace epctx {
namespace host {

using ConfigEntries = std::vector<std::pair<std::string, std::string>>;

// A source model. From a path, external data is found beside the model; from
// a buffer, through session.model_external_initializers_file_folder_path, and
// an output path (ep.context_file_path) is required.
struct ModelInput {
  std::string path;   // empty for a buffer
  std::string bytes;  // the model, when in memory
  std::string name;   // used in messages; defaults to the path or "<memory>"

  static ModelInput FromPath(const std::string& path);
  static ModelInput FromBuffer(std::string bytes, const std::string& name = "<memory>");
  bool in_memory() const { return path.empty(); }
};

// What to do when no node can run on the backend (ORT's
// action_if_no_compiled_nodes). kGenerate, the default, writes the model
// --ep none would write (every node on the CPU) and sets
// ModelReport::message to a warning; kError fails with EPCTX_FAIL and
// writes nothing. Nothing claimable is not an error by itself: the model
// still runs, only slower.
enum class IfNoCompiledNodes { kGenerate, kError };

struct CompileSettings {
  ConfigEntries config;           // session config entries (keys above)
  std::string ep = "vnpu";        // backend, or "none"
  ConfigEntries backend_options;  // -i "key|value": passed to Backend::SetOption
  std::vector<InputShape> input_shapes;
  std::vector<InputValue> input_values;  // --input-value: inputs become constants
  bool force = false;                    // overwrite existing outputs (ORT's compile API default)
  // Return the ctx model in ModelReport::model_data instead of writing it.
  // ep.context_file_path then only places the .bin (embed_mode 0) and the
  // external initializers; a buffer input with embed_mode 1 needs no path.
  bool output_to_memory = false;
  IfNoCompiledNodes if_no_compiled_nodes = IfNoCompiledNodes::kGenerate;
  Progress progress;  // stage notes; default silent
};

struct CompileStatus {
  int code = EPCTX_OK;
  std::string message;  // "<file>: <what>", empty when ok
  bool ok() const { return code == EPCTX_OK; }
};

// What one partition holds: its op types (with counts) and the
// multiply-accumulates of its nodes (epctx_host/macs.h).
struct PartitionReport {
  std::string name;
  size_t nodes = 0;
  std::map<std::string, size_t> op_types;
  uint64_t macs = 0;
  size_t macs_unknown_nodes = 0;  // nodes that do MACs but whose shapes are unknown
};

// A node left to the CPU, and why the backend did not take it.
struct CpuNodeReport {
  std::string name;    // may be empty
  std::string output;  // its first output (names an unnamed node)
  std::string op_type;
  std::string reason;
  uint64_t macs = 0;
  bool macs_known = true;  // false: it does MACs, but its shapes are unknown
};

struct ModelReport {
  std::string input;        // path or buffer name
  std::string output_path;  // the _ctx.onnx (empty if none written or in memory)
  std::string model_data;   // the ctx model, with output_to_memory
  bool written = false;     // the model was written (to output_path or model_data)
  std::string message;      // a warning, e.g. no node could run on the backend; or empty
  size_t nodes_total = 0, nodes_npu = 0, nodes_cpu = 0, partitions = 0;
  // The most EPContext nodes one run executes (each a round trip to the
  // device): an If's branches count as the larger of the two, a Loop or
  // Scan body once (per iteration).
  size_t partitions_per_run = 0;
  std::vector<std::string> partition_names;  // EPContext node == graph names
  uint64_t payload_bytes = 0;                // command streams of this model's graphs
  uint64_t weight_bytes = 0;                 // weights this model's graphs reference (before dedup)
  uint64_t model_bytes = 0;                  // size of the written _ctx.onnx
  double compile_ms = 0;
  std::vector<PartitionReport> partition_reports;
  std::vector<CpuNodeReport> cpu_nodes;
  // Multiply-accumulates of all nodes, of the partitions' nodes and of the
  // CPU's; nodes whose shapes stayed unknown count 0 in these and are
  // counted in macs_unknown_nodes instead.
  uint64_t macs_total = 0, macs_npu = 0, macs_cpu = 0;
  size_t macs_unknown_nodes = 0;
};

struct CompileResult {
  CompileStatus status;
  std::vector<ModelReport> models;
  std::vector<std::string> files_written;  // every file, in the order written
  // The context binary: written when this call ended a group or compiled a
  // single model with embed_mode 0 (else empty; see binary_pending).
  std::string binary_path;
  bool binary_pending = false;  // a group is open: the .bin comes with its last model
  uint64_t binary_bytes = 0;
  uint64_t weight_bytes_before_dedup = 0;  // sum over all graphs in the binary
  uint64_t weight_bytes_after_dedup = 0;   // distinct weights (content hash), stored once
  uint64_t weight_segment_bytes = 0;       // the same with 64-byte alignment padding
  uint64_t payload_bytes = 0;
  double compile_ms = 0;
  bool ok() const { return status.ok(); }
};

// Holds the open weight-sharing group between calls (ORT's SharedContext,
// but owned by the caller instead of a process singleton). Not thread-safe:
// one Compiler per thread. Destroying a Compiler with an open group drops
// the group: the ctx models already written then refer to a .bin that was
// never written.
class Compiler {
 public:
  Compiler();
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  CompileResult Compile(const ModelInput& input, const CompileSettings& settings);
  bool group_open() const;

 private:
  struct Group;
  std::unique_ptr<Group> group_;
};

// One model, no group (share keys are rejected here: use a Compiler).
CompileResult CompileModel(const ModelInput& input, const CompileSettings& settings);

// A weight-sharing group in one call (ORT's ep_weight_sharing_ctx_gen):
// forces ep.context_enable=1, embed_mode 0, ep.share_ep_contexts=1 and
// ep.stop_share_ep_contexts=1 on the last model; rejects a config that sets
// ep.context_file_path or changes those keys. Writes N _ctx.onnx and one
// [model1_name]_[ep].bin. All outputs are checked before anything compiles.
CompileResult CompileModelGroup(const std::vector<ModelInput>& inputs,
                                const CompileSettings& settings);

// "k|v k|v" (ORT's -C / -i syntax) -> entries. Throws std::invalid_argument
// naming the malformed item.
ConfigEntries ParseConfigEntries(const std::string& text, const char* option);

// The summary lines printed on stdout (one per model, one for the binary).
std::string FormatResult(const CompileResult& result, const std::string& ep);
// The same as one JSON document (epctx-compile --json).
std::string FormatResultJson(const CompileResult& result, const std::string& ep);

}  // namespace host
}  // namespace epctx

#endif
