// SPDX-License-Identifier: Apache-2.0
// VnpuBackend: names and versions of the vnpu target, the support decision
// per node, and Compile = lower -> plan memory -> emit.
#include "vnpu_backend.h"

#include <set>

#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace {

class VnpuBackend : public Backend {
 public:
  std::string name() const override { return "vnpu"; }
  std::string source_key() const override { return "vnpu"; }
  // A package that uses the int8 level says so (SDK 1.1, hardware
  // vnpu-1.1), so a device without it refuses it by the version rules
  // before reading a payload; float packages keep running on vnpu-1.0.
  Version sdk_version() const override {
    reported_ = true;
    return int8_ ? Version{1, 1, 0} : Version{1, 0, 0};
  }
  std::string hardware_architecture() const override {
    reported_ = true;
    return int8_ ? "vnpu-1.1" : "vnpu-1.0";
  }
  Version min_driver_version() const override { return {1, 0, 0}; }

  // disable_ops: comma-separated op types left to the CPU even where the
  // vnpu could run them (to split a graph, or to work around a driver).
  void SetOption(const std::string& key, const std::string& value) override {
    if (key != "disable_ops")
      throw CompileError("vnpu: unknown backend option '" + key + "' (known: disable_ops)");
    disabled_.clear();
    if (value.empty()) return;
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      std::string op = value.substr(start, comma - start);
      if (op.empty())
        throw CompileError("vnpu: backend option disable_ops='" + value +
                           "': expected op types separated by ','");
      disabled_.insert(op);
      start = comma + 1;
    }
  }

  Support Supports(const onnx::NodeProto& node, const GraphInfo& info) const override {
    Support s;
    if (disabled_.count(node.op_type())) {
      s.reason = "disabled by backend option disable_ops";
      return s;
    }
    s.reason = vnpu::Unsupported(node, info);
    s.supported = s.reason.empty();
    return s;
  }

  CompiledGraph Compile(const Partition& partition, const GraphInfo& info,
                        WeightStore& weights) override {
    vnpu::IrGraph g = vnpu::Lower(partition, info, weights);
    if (vnpu::UsesInt8(g) && !int8_) {
      // A weight-sharing group whose earlier models were already written
      // for vnpu-1.0 would get a container header that disagrees with them.
      if (reported_)
        throw CompileError("vnpu: partition '" + partition.name +
                           "' needs the int8 level (SDK 1.1, vnpu-1.1), but models of its "
                           "weight-sharing group were already written for vnpu-1.0: list the "
                           "quantised models first");
      int8_ = true;
    }
    vnpu::PlanMemory(g, 64);
    return {partition.name, vnpu::Emit(g)};
  }

 private:
  std::set<std::string> disabled_;
  bool int8_ = false;
  mutable bool reported_ = false;  // a version was handed out (written into a model)
};

}  // namespace

std::unique_ptr<Backend> CreateVnpuBackend() { return std::unique_ptr<Backend>(new VnpuBackend); }

}  // namespace host
}  // namespace epctx
