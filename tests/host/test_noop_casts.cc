// SPDX-License-Identifier: Apache-2.0
// Casts to their input's own type (epctx_host/noop_casts.h): torch's
// QuantizeLinear -> Cast(to uint8) -> DequantizeLinear compiles to one vnpu
// partition that computes what the graph with the Cast computes; a Cast
// onto a graph output keeps the output's name; Casts that change the type,
// or whose input type is unknown, stay.
#include <cmath>
#include <string>
#include <vector>

#include "epctx_host/compile_api.h"
#include "epctx_host/noop_casts.h"
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

constexpr int64_t kN = 16;
constexpr float kScale = 0.05f;
constexpr int kZeroPoint = 100;

float XAt(size_t i) { return -4.0f + 0.53f * float(i); }

void Uint8Init(ModelBuilder& b, const std::string& name, int value) {
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::UINT8);
  t->add_int32_data(value);
}

void SetTo(onnx::NodeProto& n, int to) {
  auto* a = n.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(to);
}

// y = Relu(DequantizeLinear(Cast(QuantizeLinear(x), to))), as torch exports
// a quantized tensor; with `zero_point` false QuantizeLinear has none
// (uint8 by default).
onnx::ModelProto QdqModel(int to = onnx::TensorProto::UINT8, bool zero_point = true) {
  ModelBuilder b(13);
  b.Input("x", {1, kN}).Output("y", {1, kN}).Init("s", {}, kScale);
  Uint8Init(b, "z", zero_point ? kZeroPoint : 0);
  if (zero_point) b.Node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quant");
  else b.Node("QuantizeLinear", {"x", "s"}, {"q"}, "quant");
  SetTo(b.Node("Cast", {"q"}, {"c"}, "cast"), to);
  b.Node("DequantizeLinear", {"c", "s", "z"}, {"d"}, "dequant");
  b.Node("Relu", {"d"}, {"y"}, "relu");
  return b.model();
}

CompileResult Compile(const onnx::ModelProto& m, const std::string& ep) {
  CompileSettings st;
  st.ep = ep;
  st.output_to_memory = true;
  st.config.emplace_back("ep.context_embed_mode", "1");
  CompileResult r = CompileModel(ModelInput::FromBuffer(m.SerializeAsString(), "m.onnx"), st);
  if (!r.ok()) fail_msg("compile --ep %s: %s", ep.c_str(), r.status.message.c_str());
  return r;
}

void qdq_cast_is_dropped_and_the_graph_is_one_partition(void**) {
  for (bool zero_point : {true, false}) {
    onnx::ModelProto m = QdqModel(onnx::TensorProto::UINT8, zero_point);
    assert_int_equal(DropNoopCasts(m), 1);
    assert_int_equal(m.graph().node_size(), 3);
    assert_string_equal(m.graph().node(1).op_type().c_str(), "DequantizeLinear");
    assert_string_equal(m.graph().node(1).input(0).c_str(), "q");

    const CompileResult r = Compile(QdqModel(onnx::TensorProto::UINT8, zero_point), "vnpu");
    const ModelReport& rep = r.models.at(0);
    assert_int_equal(rep.cpu_nodes.size(), 0);
    assert_int_equal(rep.partitions, 1);
    const std::vector<float> x = [] {
      std::vector<float> v(kN);
      for (size_t i = 0; i < v.size(); ++i) v[i] = XAt(i);
      return v;
    }();
    const std::vector<float> y = testutil::RunOne(rep.model_data, "x", {1, kN}, x, "y");
    const int zp = zero_point ? kZeroPoint : 0;
    for (size_t i = 0; i < y.size(); ++i) {
      const float q = std::fmin(255.0f, std::fmax(0.0f, std::nearbyint(x[i] / kScale) + float(zp)));
      const float want = std::fmax(0.0f, (q - float(zp)) * kScale);
      if (y[i] != want) fail_msg("element %zu: %g, want %g", i, double(y[i]), double(want));
    }
  }
}

void cast_onto_a_graph_output_keeps_its_name(void**) {
  ModelBuilder b(13);
  b.Input("x", {1, kN}).Output("y", {1, kN}, onnx::TensorProto::UINT8).Init("s", {}, kScale);
  Uint8Init(b, "z", kZeroPoint);
  b.Node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quant");
  SetTo(b.Node("Cast", {"q"}, {"y"}, "cast"), onnx::TensorProto::UINT8);
  onnx::ModelProto m = b.model();
  assert_int_equal(DropNoopCasts(m), 1);
  assert_int_equal(m.graph().node_size(), 1);
  assert_string_equal(m.graph().node(0).output(0).c_str(), "y");
  assert_string_equal(m.graph().output(0).name().c_str(), "y");
}

void casts_that_change_the_type_or_cannot_be_told_stay(void**) {
  {  // uint8 -> int8 changes the values
    onnx::ModelProto m = QdqModel(onnx::TensorProto::INT8);
    assert_int_equal(DropNoopCasts(m), 0);
    assert_int_equal(m.graph().node_size(), 4);
  }
  {  // a graph input straight to a graph output: no producer to rename
    ModelBuilder b(13);
    b.Input("x", {1, kN}).Output("y", {1, kN});
    SetTo(b.Node("Cast", {"x"}, {"y"}, "cast"), onnx::TensorProto::FLOAT);
    onnx::ModelProto m = b.model();
    assert_int_equal(DropNoopCasts(m), 0);
  }
  {  // the input's type is unknown (an op without inferred types)
    ModelBuilder b(13);
    b.Input("x", {1, kN}).Output("y", {1, kN});
    b.Node("Relu", {"x"}, {"r"}, "relu");
    SetTo(b.Node("Cast", {"r"}, {"c"}, "cast"), onnx::TensorProto::FLOAT);
    b.Node("Relu", {"c"}, {"y"}, "relu2");
    onnx::ModelProto m = b.model();
    assert_int_equal(DropNoopCasts(m), 0);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(qdq_cast_is_dropped_and_the_graph_is_one_partition),
      cmocka_unit_test(cast_onto_a_graph_output_keeps_its_name),
      cmocka_unit_test(casts_that_change_the_type_or_cannot_be_told_stay),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
