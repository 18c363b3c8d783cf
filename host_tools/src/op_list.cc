// SPDX-License-Identifier: Apache-2.0
// --emit-op-list: the CPU ops compiled models leave to the runtime, checked
// against the runtime's kernel list (the same ops.inc its registry expands).
#include "epctx_host/op_list.h"

#include <cstring>

#include "epctx_host/diagnostics.h"
#include "epctx_host/model_io.h"

namespace epctx {
namespace host {
namespace {

struct KernelOp {
  const char* domain;
  const char* op;
};

// Opset ranges are left to the runtime: the list selects ops, not versions.
#define EPCTX_CPU_OP(domain, op, min_opset, max_opset, fn) {domain, #op},
const KernelOp kKernelOps[] = {
#include "kernels/ops.inc"
};
#undef EPCTX_CPU_OP

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

bool HasKernel(const std::string& domain, const std::string& op) {
  for (const KernelOp& k : kKernelOps) {
    const bool same_domain = k.domain[0] == '\0' ? IsDefaultDomain(domain) : domain == k.domain;
    if (same_domain && op == k.op) return true;
  }
  return false;
}

bool IsEpContext(const onnx::NodeProto& n) {
  return n.op_type() == "EPContext" && n.domain() == "com.microsoft";
}

void CollectGraph(const onnx::GraphProto& g, const std::string& name, std::set<std::string>* ops) {
  for (const onnx::NodeProto& n : g.node()) {
    if (IsEpContext(n)) continue;
    if (!HasKernel(n.domain(), n.op_type()))
      throw ToolError(name,
                      "node '" + n.name() + "': op " +
                          (n.domain().empty() ? "" : n.domain() + ".") + n.op_type() +
                          " has no CPU kernel in epctx; compile the model for a backend that "
                          "takes it",
                      EPCTX_MODEL_REQUIRES_COMPILATION);
    ops->insert(IsDefaultDomain(n.domain()) ? n.op_type() : n.domain() + ":" + n.op_type());
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) CollectGraph(a.g(), name, ops);
      for (const onnx::GraphProto& sub : a.graphs()) CollectGraph(sub, name, ops);
    }
  }
}

bool HasEpContextNode(const onnx::ModelProto& m) {
  for (const onnx::NodeProto& n : m.graph().node())
    if (IsEpContext(n)) return true;
  return false;
}

}  // namespace

void CollectCpuOps(const onnx::ModelProto& model, const std::string& name,
                   std::set<std::string>* ops) {
  CollectGraph(model.graph(), name, ops);
}

std::set<std::string> CpuOpsOfModels(const std::vector<std::string>& paths,
                                     const CompileSettings& settings) {
  std::set<std::string> ops;
  for (const std::string& path : paths) {
    std::string bytes = ReadFileBytes(path);
    const onnx::ModelProto given = ParseModel(bytes, path);
    if (HasEpContextNode(given)) {
      CollectCpuOps(given, path, &ops);
      continue;
    }
    // Compiled in memory, alone (never as a weight-sharing group): only the
    // backend, its options and the input shapes shape the partition.
    CompileSettings s;
    s.ep = settings.ep;
    s.backend_options = settings.backend_options;
    s.input_shapes = settings.input_shapes;
    s.input_values = settings.input_values;
    s.output_to_memory = true;
    s.config.emplace_back("ep.context_embed_mode", "1");
    s.config.emplace_back("session.model_external_initializers_file_folder_path",
                          PathDir(path).empty() ? "." : PathDir(path));
    CompileResult r = CompileModel(ModelInput::FromBuffer(std::move(bytes), path), s);
    if (!r.ok()) throw ToolError("", r.status.message, r.status.code);  // names the model
    const ModelReport* m = r.models.empty() ? nullptr : &r.models[0];
    if (m && m->written) CollectCpuOps(ParseModel(m->model_data, path), path, &ops);
    else CollectCpuOps(given, path, &ops);  // nothing compiled: the runtime loads it as it is
  }
  return ops;
}

std::string FormatOpList(const std::set<std::string>& ops) {
  std::string out;
  for (const std::string& op : ops) out += op + "\n";
  return out;
}

}  // namespace host
}  // namespace epctx
