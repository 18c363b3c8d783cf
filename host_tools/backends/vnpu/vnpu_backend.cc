// VnpuBackend: names and versions of the vnpu target, the support decision
// per node, and Compile = lower -> plan memory -> emit.
#include "vnpu_backend.h"

#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace {

class VnpuBackend : public Backend {
 public:
  std::string name() const override { return "vnpu"; }
  std::string source_key() const override { return "vnpu"; }
  Version sdk_version() const override { return {1, 0, 0}; }
  std::string hardware_architecture() const override { return "vnpu-1.0"; }
  Version min_driver_version() const override { return {1, 0, 0}; }

  void SetOption(const std::string& key, const std::string&) override {
    throw CompileError("vnpu: unknown backend option '" + key + "' (the vnpu backend has none)");
  }

  Support Supports(const onnx::NodeProto& node, const GraphInfo& info) const override {
    Support s;
    s.reason = vnpu::Unsupported(node, info);
    s.supported = s.reason.empty();
    return s;
  }

  CompiledGraph Compile(const Partition& partition, const GraphInfo& info,
                        WeightStore& weights) override {
    vnpu::IrGraph g = vnpu::Lower(partition, info, weights);
    vnpu::PlanMemory(g, 64);
    return {partition.name, vnpu::Emit(g)};
  }
};

}  // namespace

std::unique_ptr<Backend> CreateVnpuBackend() { return std::unique_ptr<Backend>(new VnpuBackend); }

}  // namespace host
}  // namespace epctx
