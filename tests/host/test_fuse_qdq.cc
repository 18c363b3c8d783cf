// SPDX-License-Identifier: Apache-2.0
// QDQ convolutions fused for the CPU (epctx_host/fuse_qdq.h): torch's
// DequantizeLinear(x) -> Conv(DequantizeLinear(int8 W, per channel),
// DequantizeLinear(int32 bias)) -> Relu -> QuantizeLinear becomes one
// QLinearConv that computes the graph's values (within one output step of
// a double-precision reference); a Relu whose QuantizeLinear's zero point is
// not the type's minimum keeps the graph as it is.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "epctx_host/compile_api.h"
#include "epctx_host/fuse_qdq.h"
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

constexpr int64_t kC = 4, kH = 6, kW = 7, kM = 8;
constexpr float kSx = 0.02f, kSy = 0.04f;
constexpr int kZx = 128;

int8_t WAt(int64_t i) { return int8_t((i * 37) % 201 - 100); }
float WScale(int64_t m) { return 0.003f + 0.0005f * float(m); }
float BiasAt(int64_t m) { return 0.05f * float(m) - 0.2f; }
float XAt(int64_t i) { return std::sin(0.41f * float(i)) * 2.0f; }

// y = DQ(Q(Relu(Conv3x3(DQ(Q(x)), DQ(W), DQ(bias))))), pads 1, output
// zero point zy.
onnx::ModelProto ConvModel(int zy) {
  ModelBuilder b(13);
  b.Input("x", {1, kC, kH, kW}).Output("y", {1, kM, kH, kW});
  std::vector<int8_t> w(size_t(kM * kC * 9));
  for (size_t i = 0; i < w.size(); ++i) w[i] = WAt(int64_t(i));
  std::vector<float> ws(kM), bs(kM);
  std::vector<int32_t> bq(kM);
  for (int64_t m = 0; m < kM; ++m) {
    ws[size_t(m)] = WScale(m);
    bs[size_t(m)] = kSx * WScale(m);
    bq[size_t(m)] = int32_t(std::nearbyint(BiasAt(m) / bs[size_t(m)]));
  }
  b.InitRaw("w_q", onnx::TensorProto::INT8, {kM, kC, 3, 3}, testutil::RawBytes(w));
  b.InitRaw("w_s", onnx::TensorProto::FLOAT, {kM}, testutil::RawBytes(ws));
  b.InitRaw("w_z", onnx::TensorProto::INT8, {kM}, std::string(size_t(kM), '\0'));
  b.InitRaw("b_q", onnx::TensorProto::INT32, {kM}, testutil::RawBytes(bq));
  b.InitRaw("b_s", onnx::TensorProto::FLOAT, {kM}, testutil::RawBytes(bs));
  b.InitRaw("b_z", onnx::TensorProto::INT32, {kM}, std::string(size_t(kM) * 4, '\0'));
  b.InitRaw("sx", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{kSx}));
  b.InitRaw("zx", onnx::TensorProto::UINT8, {}, std::string(1, char(kZx)));
  b.InitRaw("sy", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{kSy}));
  b.InitRaw("zy", onnx::TensorProto::UINT8, {}, std::string(1, char(zy)));
  b.Node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  b.Node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  auto& wd = b.Node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"wd"});
  auto* axis = wd.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  auto& bd = b.Node("DequantizeLinear", {"b_q", "b_s", "b_z"}, {"bd"});
  *bd.add_attribute() = *axis;
  auto& conv = b.Node("Conv", {"xd", "wd", "bd"}, {"c"});
  testutil::SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  testutil::SetIntsAttr(conv, "kernel_shape", {3, 3});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("QuantizeLinear", {"r", "sy", "zy"}, {"yq"});
  b.Node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  return b.model();
}

void qdq_conv_becomes_qlinear_conv_and_matches_the_graph(void**) {
  onnx::ModelProto m = ConvModel(0);
  assert_int_equal(FuseQdqConvs(m), 1);
  int qlinear = 0, conv = 0;
  for (const auto& n : m.graph().node()) {
    qlinear += n.op_type() == "QLinearConv";
    conv += n.op_type() == "Conv" || n.op_type() == "Relu";
  }
  assert_int_equal(qlinear, 1);
  assert_int_equal(conv, 0);

  CompileSettings st;
  st.ep = "none";
  st.output_to_memory = true;
  st.config.emplace_back("ep.context_embed_mode", "1");
  const CompileResult r =
      CompileModel(ModelInput::FromBuffer(ConvModel(0).SerializeAsString(), "m.onnx"), st);
  if (!r.ok()) fail_msg("compile: %s", r.status.message.c_str());
  std::vector<float> x(size_t(kC * kH * kW));
  for (size_t i = 0; i < x.size(); ++i) x[i] = XAt(int64_t(i));
  const std::vector<float> y =
      testutil::RunOne(r.models.at(0).model_data, "x", {1, kC, kH, kW}, x, "y");
  for (int64_t mo = 0; mo < kM; ++mo)
    for (int64_t i = 0; i < kH; ++i)
      for (int64_t j = 0; j < kW; ++j) {
        double acc = BiasAt(mo);
        for (int64_t c = 0; c < kC; ++c)
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t e = 0; e < 3; ++e) {
              const int64_t ih = i - 1 + a, iw = j - 1 + e;
              if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
              const double q = std::fmin(
                  255,
                  std::fmax(0, std::nearbyint(x[size_t((c * kH + ih) * kW + iw)] / kSx) + kZx));
              acc += (q - kZx) * kSx * WAt(((mo * kC + c) * 3 + a) * 3 + e) * WScale(mo);
            }
        const double want = std::fmin(255, std::fmax(0, std::nearbyint(acc / kSy))) * kSy;
        const double got = y[size_t((mo * kH + i) * kW + j)];
        if (std::fabs(got - want) > kSy * 1.01)
          fail_msg("y[%lld][%lld][%lld] = %g, want %g", (long long)mo, (long long)i, (long long)j,
                   got, want);
      }
}

void a_relu_the_clamp_does_not_cover_stays(void**) {
  onnx::ModelProto m = ConvModel(10);
  assert_int_equal(FuseQdqConvs(m), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(qdq_conv_becomes_qlinear_conv_and_matches_the_graph),
      cmocka_unit_test(a_relu_the_clamp_does_not_cover_stays),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
