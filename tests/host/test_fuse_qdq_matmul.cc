// SPDX-License-Identifier: Apache-2.0
// QDQ Linear layers fused for the CPU (epctx_host/fuse_qdq_matmul.h):
// torch's DequantizeLinear(x) -> MatMul(DequantizeLinear(int8 W^T, per
// column)) -> Add(DequantizeLinear(int32 bias)) -> QuantizeLinear becomes
// Reshape -> com.microsoft QGemm -> Reshape that computes the graph's
// values (within one output step of a double-precision reference); a Gemm
// (transB) whose float result nothing requantises becomes a float QGemm;
// a MatMul whose weights are float stays.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "epctx_host/compile_api.h"
#include "epctx_host/fuse_qdq_matmul.h"
#include "epctx_host/specialize.h"
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

constexpr int64_t kB = 2, kT = 5, kK = 21, kN = 13;
constexpr float kSx = 0.02f, kSy = 0.05f;
constexpr int kZx = 120, kZy = 131;

int8_t WAt(int64_t k, int64_t n) { return int8_t(((k * kN + n) * 37) % 201 - 100); }
float WScale(int64_t n) { return 0.003f + 0.0005f * float(n); }
float BiasAt(int64_t n) { return 0.07f * float(n) - 0.4f; }
float XAt(int64_t i) { return std::sin(0.37f * float(i)) * 2.2f; }
int32_t BiasQ(int64_t n) { return int32_t(std::nearbyint(BiasAt(n) / (kSx * WScale(n)))); }

void Axis(onnx::NodeProto& n, int64_t axis) {
  auto* a = n.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
}

// Weights W^T [K, N] (trans: W [N, K]) per column, int32 bias in the
// accumulator's scale, x quantised to uint8 at kSx, kZx.
void Weights(ModelBuilder& b, bool trans) {
  std::vector<int8_t> w(size_t(kK * kN));
  for (int64_t k = 0; k < kK; ++k)
    for (int64_t n = 0; n < kN; ++n) w[size_t(trans ? n * kK + k : k * kN + n)] = WAt(k, n);
  std::vector<float> ws(kN), bs(kN);
  std::vector<int32_t> bq(kN);
  for (int64_t n = 0; n < kN; ++n) {
    ws[size_t(n)] = WScale(n);
    bs[size_t(n)] = kSx * WScale(n);
    bq[size_t(n)] = BiasQ(n);
  }
  b.InitRaw("w_q", onnx::TensorProto::INT8,
            trans ? std::vector<int64_t>{kN, kK} : std::vector<int64_t>{kK, kN},
            testutil::RawBytes(w));
  b.InitRaw("w_s", onnx::TensorProto::FLOAT, {kN}, testutil::RawBytes(ws));
  b.InitRaw("w_z", onnx::TensorProto::INT8, {kN}, std::string(size_t(kN), '\0'));
  b.InitRaw("b_q", onnx::TensorProto::INT32, {kN}, testutil::RawBytes(bq));
  b.InitRaw("b_s", onnx::TensorProto::FLOAT, {kN}, testutil::RawBytes(bs));
  b.InitRaw("b_z", onnx::TensorProto::INT32, {kN}, std::string(size_t(kN) * 4, '\0'));
  b.InitRaw("sx", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{kSx}));
  b.InitRaw("zx", onnx::TensorProto::UINT8, {}, std::string(1, char(kZx)));
  b.Node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  b.Node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  Axis(b.Node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"wd"}), trans ? 0 : 1);
  Axis(b.Node("DequantizeLinear", {"b_q", "b_s", "b_z"}, {"bd"}), 0);
}

// y = DQ(Q(Add(bias, MatMul(DQ(Q(x)), DQ(W^T))))), x [B, T, K].
onnx::ModelProto LinearModel() {
  ModelBuilder b(13);
  b.Input("x", {kB, kT, kK}).Output("y", {kB, kT, kN});
  Weights(b, false);
  b.InitRaw("sy", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{kSy}));
  b.InitRaw("zy", onnx::TensorProto::UINT8, {}, std::string(1, char(kZy)));
  b.Node("MatMul", {"xd", "wd"}, {"mm"});
  b.Node("Add", {"bd", "mm"}, {"lin"});
  b.Node("QuantizeLinear", {"lin", "sy", "zy"}, {"yq"});
  b.Node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  return b.model();
}

// y = Gemm(DQ(Q(x)), DQ(W), DQ(bias), transB 1), x [B * T, K]: float out.
onnx::ModelProto GemmModel() {
  ModelBuilder b(13);
  b.Input("x", {kB * kT, kK}).Output("y", {kB * kT, kN});
  Weights(b, true);
  auto& g = b.Node("Gemm", {"xd", "wd", "bd"}, {"y"});
  auto* t = g.add_attribute();
  t->set_name("transB");
  t->set_type(onnx::AttributeProto::INT);
  t->set_i(1);
  return b.model();
}

std::vector<float> Input() {
  std::vector<float> x(size_t(kB * kT * kK));
  for (size_t i = 0; i < x.size(); ++i) x[i] = XAt(int64_t(i));
  return x;
}

// The real value of row r, column n before requantisation.
double Linear(const std::vector<float>& x, int64_t r, int64_t n) {
  double acc = double(BiasQ(n)) * kSx * WScale(n);
  for (int64_t k = 0; k < kK; ++k) {
    const double q =
        std::fmin(255, std::fmax(0, std::nearbyint(double(x[size_t(r * kK + k)]) / kSx) + kZx));
    acc += (q - kZx) * kSx * WAt(k, n) * WScale(n);
  }
  return acc;
}

std::string Compile(const onnx::ModelProto& m) {
  CompileSettings st;
  st.ep = "none";
  st.output_to_memory = true;
  st.config.emplace_back("ep.context_embed_mode", "1");
  const CompileResult r = CompileModel(ModelInput::FromBuffer(m.SerializeAsString(), "m.onnx"), st);
  if (!r.ok()) fail_msg("compile: %s", r.status.message.c_str());
  return r.models.at(0).model_data;
}

int Count(const onnx::ModelProto& m, const char* op) {
  int n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == op;
  return n;
}

void qdq_linear_becomes_qgemm_and_matches_the_graph(void**) {
  onnx::ModelProto m = LinearModel();
  InferShapes(m, "m.onnx");
  assert_int_equal(FuseQdqMatMuls(m), 1);
  assert_int_equal(Count(m, "QGemm"), 1);
  assert_int_equal(Count(m, "Reshape"), 2);
  assert_int_equal(Count(m, "MatMul") + Count(m, "Add"), 0);
  // Only the output's DequantizeLinear and the input's QuantizeLinear stay.
  assert_int_equal(Count(m, "DequantizeLinear"), 1);
  assert_int_equal(Count(m, "QuantizeLinear"), 1);

  const std::vector<float> x = Input();
  const std::vector<float> y = testutil::RunOne(Compile(LinearModel()), "x", {kB, kT, kK}, x, "y");
  for (int64_t r = 0; r < kB * kT; ++r)
    for (int64_t n = 0; n < kN; ++n) {
      const double want =
          (std::fmin(255, std::fmax(0, std::nearbyint(Linear(x, r, n) / kSy) + kZy)) - kZy) * kSy;
      const double got = y[size_t(r * kN + n)];
      if (std::fabs(got - want) > kSy * 1.01)
        fail_msg("y[%lld][%lld] = %g, want %g", (long long)r, (long long)n, got, want);
    }
}

void gemm_without_quantize_becomes_float_qgemm(void**) {
  onnx::ModelProto m = GemmModel();
  InferShapes(m, "m.onnx");
  assert_int_equal(FuseQdqMatMuls(m), 1);
  assert_int_equal(Count(m, "QGemm"), 1);
  assert_int_equal(Count(m, "Gemm") + Count(m, "Reshape"), 0);

  const std::vector<float> x = Input();
  const std::vector<float> y = testutil::RunOne(Compile(GemmModel()), "x", {kB * kT, kK}, x, "y");
  for (int64_t r = 0; r < kB * kT; ++r)
    for (int64_t n = 0; n < kN; ++n) {
      const double want = Linear(x, r, n), got = y[size_t(r * kN + n)];
      if (std::fabs(got - want) > 1e-5 * (1 + std::fabs(want)))
        fail_msg("y[%lld][%lld] = %g, want %g", (long long)r, (long long)n, got, want);
    }
}

void float_weights_stay(void**) {
  ModelBuilder b(13);
  b.Input("x", {kT, kK}).Output("y", {kT, kN});
  b.Init("w", {kK, kN});
  b.InitRaw("sx", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{kSx}));
  b.InitRaw("zx", onnx::TensorProto::UINT8, {}, std::string(1, char(kZx)));
  b.Node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  b.Node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  b.Node("MatMul", {"xd", "w"}, {"y"});
  InferShapes(b.model(), "m.onnx");
  assert_int_equal(FuseQdqMatMuls(b.model()), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(qdq_linear_becomes_qgemm_and_matches_the_graph),
      cmocka_unit_test(gemm_without_quantize_becomes_float_qgemm),
      cmocka_unit_test(float_weights_stay),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
