/* SPDX-License-Identifier: Apache-2.0 */
// Internal to the compile library: the per-model pipeline (load, specialise,
// partition, compile, write) and the context binary it feeds. A
// SharedBinary belongs to one model, or to a weight-sharing group for as
// long as the group is open (Compiler owns it then).
#ifndef EPCTX_HOST_SRC_PIPELINE_H
#define EPCTX_HOST_SRC_PIPELINE_H

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "epctx_host/backend.h"
#include "epctx_host/compile_api.h"
#include "gen_options.h"

namespace epctx {
namespace host {

struct SharedBinary {
  std::string ep;
  ConfigEntries backend_options;
  std::unique_ptr<Backend> backend;
  WeightStore weights;
  std::vector<CompiledGraph> graphs;
  std::map<std::string, std::string> graph_owner;  // graph name -> model that added it
  std::string bin_name, bin_path;                  // fixed by the first model
};

// Creates the backend and applies the backend options. Throws ToolError
// (INVALID_ARGUMENT) for an unknown backend or option.
std::unique_ptr<SharedBinary> MakeSharedBinary(const CompileSettings& settings,
                                               const OutputPlan& first);

// Stages 1-6 for one model; appends a ModelReport and the files written to
// `result`. `bin` is nullptr for ep "none". With embed_mode 1 the container
// of this model's graphs is embedded; with 0 the model refers to
// bin->bin_name and FinishBinary writes the file later.
void CompileOneModel(const ModelInput& input, const CompileSettings& settings,
                     const GenOptions& gen, const OutputPlan& plan, SharedBinary* bin,
                     CompileResult* result);

// Packs bin's graphs and writes bin->bin_path (nothing if it has no graph);
// fills the binary fields of `result`.
void FinishBinary(SharedBinary& bin, const Progress& progress, CompileResult* result);

}  // namespace host
}  // namespace epctx

#endif
