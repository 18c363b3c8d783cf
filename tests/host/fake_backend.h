/* SPDX-License-Identifier: Apache-2.0 */
// A Backend for host tests that supports a fixed set of op types; Compile
// returns the op types as payload and stores each constant input as weight.
#ifndef EPCTX_TESTS_HOST_FAKE_BACKEND_H
#define EPCTX_TESTS_HOST_FAKE_BACKEND_H

#include <set>
#include <string>

#include "epctx_host/backend.h"

namespace testutil {

class FakeBackend : public epctx::host::Backend {
 public:
  explicit FakeBackend(std::set<std::string> ops) : ops_(std::move(ops)) {}
  std::string name() const override { return "vnpu"; }
  std::string source_key() const override { return "vnpu"; }
  epctx::host::Version sdk_version() const override { return {1, 2, 3}; }
  std::string hardware_architecture() const override { return "vnpu-1.0"; }
  epctx::host::Version min_driver_version() const override { return {1, 0, 0}; }
  void SetOption(const std::string& key, const std::string&) override {
    throw epctx::host::CompileError("unknown option " + key);
  }
  epctx::host::Support Supports(const onnx::NodeProto& node,
                                const epctx::host::GraphInfo&) const override {
    epctx::host::Support s;
    s.supported = ops_.count(node.op_type()) > 0;
    if (!s.supported) s.reason = "op not supported";
    return s;
  }
  epctx::host::CompiledGraph Compile(const epctx::host::Partition& p,
                                     const epctx::host::GraphInfo& info,
                                     epctx::host::WeightStore& weights) override {
    epctx::host::CompiledGraph g;
    g.name = p.name;
    for (const auto* n : p.nodes) {
      g.payload.insert(g.payload.end(), n->op_type().begin(), n->op_type().end());
      for (const auto& in : n->input())
        if (const onnx::TensorProto* t = info.constant(in))
          weights.Add(t->raw_data().empty() ? static_cast<const void*>(t->float_data().data())
                                            : t->raw_data().data(),
                      t->raw_data().empty() ? t->float_data_size() * sizeof(float)
                                            : t->raw_data().size());
    }
    return g;
  }

 private:
  std::set<std::string> ops_;
};

}  // namespace testutil

#endif
