// SPDX-License-Identifier: Apache-2.0
// Decomposed LayerNorm and exact GELU into LayerNormalization (the model
// raised to opset 17) and com.microsoft Gelu (epctx_host/fuse_norm_gelu.h): the nine and five nodes
// become one each, computing what they computed (within float rounding); forms the pass must not
// take are left alone.
#include <cmath>
#include <string>
#include <vector>

#include "epctx_host/fuse_norm_gelu.h"
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

constexpr int64_t kRows = 3, kD = 10;

float XAt(size_t i) { return 2.0f + std::sin(float(i) * 0.7f) * 3.0f; }
float GAt(size_t i) { return 0.5f + 0.1f * float(i); }
float BAt(size_t i) { return -0.3f + 0.05f * float(i); }

// x [3, 10] -> LayerNorm (decomposed, scale and bias) -> GELU (decomposed).
onnx::ModelProto Model() {
  ModelBuilder b(13);
  b.Input("x", {kRows, kD}).Output("y", {kRows, kD});
  std::vector<float> g(kD), bb(kD);
  for (size_t i = 0; i < size_t(kD); ++i) g[i] = GAt(i), bb[i] = BAt(i);
  b.InitRaw("g", onnx::TensorProto::FLOAT, {kD}, testutil::RawBytes(g));
  b.InitRaw("b", onnx::TensorProto::FLOAT, {kD}, testutil::RawBytes(bb));
  b.InitRaw("two", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{2.0f}));
  b.InitRaw("eps", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{1e-5f}));
  b.InitRaw("rt2", onnx::TensorProto::FLOAT, {},
            testutil::RawBytes(std::vector<float>{1.4142135f}));
  b.InitRaw("one", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{1.0f}));
  b.InitRaw("half", onnx::TensorProto::FLOAT, {}, testutil::RawBytes(std::vector<float>{0.5f}));
  auto& r1 = b.Node("ReduceMean", {"x"}, {"mu"}, "mean");
  auto* a = r1.add_attribute();
  a->set_name("axes");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(-1);
  b.Node("Sub", {"x", "mu"}, {"d"}, "sub");
  b.Node("Pow", {"d", "two"}, {"d2"}, "pow");
  auto& r2 = b.Node("ReduceMean", {"d2"}, {"var"}, "var");
  *r2.add_attribute() = *a;
  b.Node("Add", {"var", "eps"}, {"ve"}, "add_eps");
  b.Node("Sqrt", {"ve"}, {"sd"}, "sqrt");
  b.Node("Div", {"d", "sd"}, {"n"}, "div");
  b.Node("Mul", {"n", "g"}, {"s"}, "scale");
  b.Node("Add", {"s", "b"}, {"ln"}, "bias");
  b.Node("Div", {"ln", "rt2"}, {"u"}, "gelu_div");
  b.Node("Erf", {"u"}, {"e"}, "erf");
  b.Node("Add", {"e", "one"}, {"p"}, "add_one");
  b.Node("Mul", {"ln", "p"}, {"q"}, "mul_x");
  b.Node("Mul", {"q", "half"}, {"y"}, "mul_half");
  return b.model();
}

std::vector<float> Run(const onnx::ModelProto& m) {
  std::vector<float> x(size_t(kRows * kD));
  for (size_t i = 0; i < x.size(); ++i) x[i] = XAt(i);
  return testutil::RunOne(testutil::CompileToMemory(m, "none"), "x", {kRows, kD}, x, "y");
}

void layer_norm_and_gelu_become_two_contrib_nodes(void**) {
  onnx::ModelProto m = Model();
  assert_int_equal(FuseNormGelu(m), 2);
  assert_int_equal(m.graph().node_size(), 2);
  assert_string_equal(m.graph().node(0).op_type().c_str(), "LayerNormalization");
  assert_string_equal(m.graph().node(0).domain().c_str(), "");
  for (const auto& o : m.opset_import())
    if (o.domain().empty()) assert_int_equal(o.version(), 17);
  assert_string_equal(m.graph().node(0).input(0).c_str(), "x");
  assert_string_equal(m.graph().node(1).op_type().c_str(), "Gelu");
  assert_string_equal(m.graph().node(1).input(0).c_str(), "ln");
  assert_string_equal(m.graph().node(1).output(0).c_str(), "y");
  // The compiled model (--ep none fuses) against the formulas in double.
  const std::vector<float> y = Run(Model());
  for (int64_t r = 0; r < kRows; ++r) {
    double mu = 0, var = 0;
    for (int64_t i = 0; i < kD; ++i) mu += XAt(size_t(r * kD + i));
    mu /= double(kD);
    for (int64_t i = 0; i < kD; ++i) var += std::pow(XAt(size_t(r * kD + i)) - mu, 2);
    var /= double(kD);
    for (int64_t i = 0; i < kD; ++i) {
      const double ln =
          (XAt(size_t(r * kD + i)) - mu) / std::sqrt(var + 1e-5) * GAt(size_t(i)) + BAt(size_t(i));
      const double want = ln * (std::erf(ln / std::sqrt(2.0)) + 1) * 0.5;
      const double got = y[size_t(r * kD + i)];
      if (std::fabs(got - want) > 1e-5 * std::fmax(1.0, std::fabs(want)))
        fail_msg("element %lld: %g, want %g", (long long)(r * kD + i), got, want);
    }
  }
}

void other_forms_are_left_alone(void**) {
  {  // the centred value is read by a third node
    onnx::ModelProto m = Model();
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type("Relu");
    n->add_input("d");
    n->add_output("d3");
    *m.mutable_graph()->add_output() = m.graph().output(0);
    m.mutable_graph()->mutable_output(1)->set_name("d3");
    assert_int_equal(FuseNormGelu(m), 1);  // the GELU only
  }
  {  // not the exact GELU's constant (1.5 in place of sqrt(2))
    onnx::ModelProto m = Model();
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      if (t.name() == "rt2") {
        const float v = 1.5f;
        t.set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
      }
    assert_int_equal(FuseNormGelu(m), 1);  // the LayerNorm only
  }
  {  // a LayerNorm over the first axis
    onnx::ModelProto m = Model();
    for (int k : {0, 3}) m.mutable_graph()->mutable_node(k)->mutable_attribute(0)->set_ints(0, 0);
    assert_int_equal(FuseNormGelu(m), 1);  // the GELU only
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(layer_norm_and_gelu_become_two_contrib_nodes),
      cmocka_unit_test(other_forms_are_left_alone),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
