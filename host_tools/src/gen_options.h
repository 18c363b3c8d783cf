/* SPDX-License-Identifier: Apache-2.0 */
// Internal to the compile library: session config entries -> GenOptions,
// and the output naming rules of research/ort_epcontext.md §3.2/§3.4.
#ifndef EPCTX_HOST_SRC_GEN_OPTIONS_H
#define EPCTX_HOST_SRC_GEN_OPTIONS_H

#include <string>

#include "epctx_host/compile_api.h"

namespace epctx {
namespace host {

// The resolved config. `set_*` record which keys were given explicitly.
struct GenOptions {
  std::string file_path;
  int embed_mode = 0;
  std::string prefix;
  std::string external_initializers_file;
  std::string external_folder;
  bool share = false, stop_share = false;
  bool set_file_path = false, set_embed_mode = false, set_share = false, set_stop_share = false;
};

// Throws ToolError(INVALID_ARGUMENT) naming the key; a key given twice keeps
// the last value (as ORT's AddConfigEntry does).
GenOptions ResolveConfig(const ConfigEntries& config);

// Where one model's files go.
struct OutputPlan {
  std::string output_path;  // the _ctx.onnx (empty: in memory, no path)
  // [model_name] in [model_name]_[ep].bin and graph names: the source's
  // stem, or the output's for a buffer.
  std::string model_name;
  std::string bin_name;                    // [model_name]_[ep].bin (embed_mode 0)
  std::string bin_path;                    // beside the output
  std::string external_initializers_path;  // empty unless the key is set
};

// Applies the naming rules; throws ToolError: INVALID_ARGUMENT "should not
// point to a folder", FAIL for a buffer without ep.context_file_path.
// With `to_memory` the output_path may stay empty (buffer input, embed 1).
OutputPlan PlanOutputs(const ModelInput& input, const GenOptions& gen, const std::string& ep,
                       bool to_memory = false);

// FAIL "exists already" if `path` exists.
void RefuseExisting(const std::string& path);

}  // namespace host
}  // namespace epctx

#endif
