// SPDX-License-Identifier: Apache-2.0
// ListPackageFiles: which files a _ctx.onnx package consists of.
#include <set>
#include <utility>

#include <manifest_format.h>

#include "core/types.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"
#include "epctx_host/sign.h"

namespace epctx {
namespace host {
namespace {

// The runtime resolves these beneath the model's folder and refuses
// anything else (core/types.h's rule, shared with it); refuse to sign what
// it would refuse to load.
void CheckRelative(const std::string& model, const std::string& name) {
  if (name.size() > EPCTX_MF_MAX_STRING || relative_path_problem(StrView{name.data(), name.size()}))
    throw ToolError(model, "referenced file '" + name + "' is not a plain relative path");
}

}  // namespace

std::vector<PackageFile> ListPackageFiles(const std::string& ctx_model_path) {
  return ListPackageFiles(ParseModel(ReadFileBytes(ctx_model_path), ctx_model_path),
                          ctx_model_path);
}

std::vector<PackageFile> ListPackageFiles(const onnx::ModelProto& model,
                                          const std::string& ctx_model_path) {
  std::string dir = PathDir(ctx_model_path);
  std::vector<PackageFile> files;
  files.push_back({EPCTX_MF_ROLE_MODEL, PathBaseName(ctx_model_path), ctx_model_path});
  std::set<std::pair<int, std::string>> seen;
  auto add = [&](int role, const std::string& name) {
    CheckRelative(ctx_model_path, name);
    if (seen.insert({role, name}).second) files.push_back({role, name, dir + name});
  };
  const onnx::GraphProto& g = model.graph();
  for (const onnx::NodeProto& node : g.node()) {
    if (node.op_type() != "EPContext") continue;
    int64_t embed_mode = 1;  // the contrib op's default
    int64_t main_context = 1;
    std::string cache;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "embed_mode") embed_mode = a.i();
      if (a.name() == "main_context") main_context = a.i();
      if (a.name() == "ep_cache_context") cache = a.s();
    }
    // A main_context=0 node names no file: its graph lives in a primary's.
    if (embed_mode == 0 && (main_context == 1 || !cache.empty())) add(EPCTX_MF_ROLE_CONTEXT, cache);
  }
  for (const onnx::TensorProto& t : g.initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    for (const onnx::StringStringEntryProto& e : t.external_data())
      if (e.key() == "location") add(EPCTX_MF_ROLE_DATA, e.value());
  }
  return files;
}

}  // namespace host
}  // namespace epctx
