// SPDX-License-Identifier: Apache-2.0
// Transposes of dequantised constant weights (epctx_host/transpose_dq.h):
// torch's quantized Linear, DequantizeLinear(int8 W [N, K], per-channel
// scales on axis 0) -> Transpose -> MatMul -> Add(bias) -> QuantizeLinear,
// compiles to one vnpu partition with no CPU node and computes what the
// graph computes (within one output step of a double-precision reference);
// the pass moves the per-channel axis with the permutation and leaves a
// DequantizeLinear read by other nodes alone.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "epctx_host/compile_api.h"
#include "epctx_host/transpose_dq.h"
#include "model_builder.h"
#include "run_model.h"

// cmocka last: its fail() macro clashes with <ios>.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace epctx::host;
using testutil::ModelBuilder;

namespace {

constexpr int64_t kM = 20, kK = 24, kN = 12;
constexpr float kSx = 0.02f, kSy = 0.05f;
constexpr int kZx = 128, kZy = 100;

int8_t WAt(int64_t n, int64_t k) { return int8_t((n * 37 + k * 11) % 201 - 100); }
float WScale(int64_t n) { return 0.002f + 0.0003f * float(n); }
float BiasAt(int64_t n) { return 0.1f * float(n) - 0.5f; }
float XAt(int64_t i) { return std::sin(0.37f * float(i)) * 2.0f; }

// y = DQ(Q(Add(MatMul(DQ(Q(x)), Transpose(DQ(W))), bias))); with `shared`,
// the weights' DequantizeLinear also feeds a second output.
onnx::ModelProto LinearModel(bool shared = false) {
  ModelBuilder b(13);
  b.Input("x", {kM, kK}).Output("y", {kM, kN});
  if (shared) b.Output("wd_out", {kN, kK});
  std::vector<int8_t> w(size_t(kN * kK));
  std::vector<float> ws(kN), bias(kN);
  for (int64_t n = 0; n < kN; ++n) {
    ws[size_t(n)] = WScale(n);
    bias[size_t(n)] = BiasAt(n);
    for (int64_t k = 0; k < kK; ++k) w[size_t(n * kK + k)] = WAt(n, k);
  }
  b.InitRaw("w_q", onnx::TensorProto::INT8, {kN, kK}, testutil::RawBytes(w));
  b.InitRaw("w_s", onnx::TensorProto::FLOAT, {kN}, testutil::RawBytes(ws));
  b.InitRaw("w_z", onnx::TensorProto::INT8, {kN}, std::string(size_t(kN), '\0'));
  b.InitRaw("bias", onnx::TensorProto::FLOAT, {kN}, testutil::RawBytes(bias));
  b.InitRaw("sx", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{kSx}));
  b.InitRaw("zx", onnx::TensorProto::UINT8, {}, std::string(1, char(kZx)));
  b.InitRaw("sy", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{kSy}));
  b.InitRaw("zy", onnx::TensorProto::UINT8, {}, std::string(1, char(kZy)));
  b.Node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  b.Node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  auto& wd = b.Node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"wd"});
  auto* axis = wd.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  testutil::SetIntsAttr(b.Node("Transpose", {"wd"}, {"wt"}), "perm", {1, 0});
  b.Node("MatMul", {"xd", "wt"}, {"mm"});
  b.Node("Add", {"mm", "bias"}, {"sum"});
  b.Node("QuantizeLinear", {"sum", "sy", "zy"}, {"yq"});
  b.Node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  if (shared) b.Node("Identity", {"wd"}, {"wd_out"});
  return b.model();
}

void linear_is_one_partition_and_matches_the_graph(void**) {
  onnx::ModelProto m = LinearModel();
  assert_int_equal(TransposeDequantizedConstants(m), 1);
  for (const auto& n : m.graph().node()) assert_string_not_equal(n.op_type().c_str(), "Transpose");
  bool moved = false;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "DequantizeLinear" && n.output(0) == "wt")
      for (const auto& a : n.attribute())
        if (a.name() == "axis") moved = a.i() == 1;  // [K, N]: the channels are now axis 1
  assert_true(moved);
  for (const auto& t : m.graph().initializer()) assert_string_not_equal(t.name().c_str(), "w_q");

  CompileSettings st;
  st.ep = "vnpu";
  st.output_to_memory = true;
  st.config.emplace_back("ep.context_embed_mode", "1");
  const CompileResult r =
      CompileModel(ModelInput::FromBuffer(LinearModel().SerializeAsString(), "m.onnx"), st);
  if (!r.ok()) fail_msg("compile: %s", r.status.message.c_str());
  const ModelReport& rep = r.models.at(0);
  assert_int_equal(rep.cpu_nodes.size(), 0);
  assert_int_equal(rep.partitions, 1);

  std::vector<float> x(size_t(kM * kK));
  for (size_t i = 0; i < x.size(); ++i) x[i] = XAt(int64_t(i));
  const std::vector<float> y = testutil::RunOne(rep.model_data, "x", {kM, kK}, x, "y");
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t n = 0; n < kN; ++n) {
      double acc = BiasAt(n);
      for (int64_t k = 0; k < kK; ++k) {
        const double q =
            std::fmin(255, std::fmax(0, std::nearbyint(x[size_t(i * kK + k)] / kSx) + kZx));
        acc += (q - kZx) * kSx * double(WAt(n, k)) * WScale(n);
      }
      const double want =
          (std::fmin(255, std::fmax(0, std::nearbyint(acc / kSy) + kZy)) - kZy) * kSy;
      const double got = y[size_t(i * kN + n)];
      if (std::fabs(got - want) > kSy * 1.01)
        fail_msg("y[%lld][%lld] = %g, want %g", (long long)i, (long long)n, got, want);
    }
}

void a_dequantised_constant_read_elsewhere_stays(void**) {
  onnx::ModelProto m = LinearModel(true);
  assert_int_equal(TransposeDequantizedConstants(m), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(linear_is_one_partition_and_matches_the_graph),
      cmocka_unit_test(a_dequantised_constant_read_elsewhere_stays),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
