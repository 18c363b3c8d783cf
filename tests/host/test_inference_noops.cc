// SPDX-License-Identifier: Apache-2.0
// Inference no-ops (epctx_host/inference_noops.h): a Dropout without
// training and a Pad of zeros leave the graph, whose vnpu package then
// computes what the CPU computes with them in one partition; a Dropout onto
// a graph output keeps the name; a Dropout whose mask is read, one in
// training mode, and a Pad that pads stay.
#include <string>
#include <vector>

#include "epctx_host/compile_api.h"
#include "epctx_host/inference_noops.h"
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

void BoolInit(ModelBuilder& b, const std::string& name, bool v) {
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(v ? 1 : 0);
}

// y = Relu(Pad(Dropout(Relu(x)), pads)) * 2, as a window block writes it.
onnx::ModelProto BlockModel(const std::vector<int64_t>& pads, const char* training = nullptr) {
  ModelBuilder b;
  b.Input("x", {1, 2, 3}).Init("two", {}, 2.0f);
  int64_t last = 3 + pads[2] + pads[5];
  b.Output("y", {1 + pads[0] + pads[3], 2 + pads[1] + pads[4], last});
  b.Node("Relu", {"x"}, {"r"});
  if (training) b.Node("Dropout", {"r", "", training}, {"d"});
  else b.Node("Dropout", {"r"}, {"d", "mask"});
  b.InitI64("pads", pads);
  b.Node("Pad", {"d", "pads"}, {"p"});
  b.Node("Relu", {"p"}, {"q"});
  b.Node("Mul", {"q", "two"}, {"y"});
  return b.model();
}

void dropout_and_zero_pad_leave_the_graph(void**) {
  onnx::ModelProto m = BlockModel({0, 0, 0, 0, 0, 0});
  Specialize(m, SpecializeOptions(), "m.onnx", Progress());
  assert_int_equal(DropInferenceNoops(m), 2);
  assert_int_equal(m.graph().node_size(), 3);
  assert_string_equal(m.graph().node(1).op_type().c_str(), "Relu");
  assert_string_equal(m.graph().node(1).input(0).c_str(), "r");

  // Compiled: the same values on vnpu (one partition) as on the CPU.
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  const std::string npu = testutil::CompileToMemory(BlockModel({0, 0, 0, 0, 0, 0}), "vnpu");
  const std::vector<float> y = testutil::RunOne(npu, "x", {1, 2, 3}, x, "y");
  assert_int_equal(y.size(), 6);
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] != (x[i] > 0 ? 2 * x[i] : 0.0f)) fail_msg("element %zu: %g", i, double(y[i]));
}

void dropout_onto_a_graph_output_keeps_its_name(void**) {
  ModelBuilder b;
  b.Input("x", {4}).Output("y", {4});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Dropout", {"r"}, {"y"});
  onnx::ModelProto m = b.model();
  assert_int_equal(DropInferenceNoops(m), 1);
  assert_int_equal(m.graph().node_size(), 1);
  assert_string_equal(m.graph().node(0).output(0).c_str(), "y");
}

void dropout_that_trains_or_whose_mask_is_read_and_real_pads_stay(void**) {
  {  // training_mode constant true
    ModelBuilder b;
    b.Input("x", {4}).Output("y", {4});
    BoolInit(b, "train", true);
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Dropout", {"r", "", "train"}, {"d"});
    b.Node("Relu", {"d"}, {"y"});
    onnx::ModelProto m = b.model();
    assert_int_equal(DropInferenceNoops(m), 0);
  }
  {  // training with ratio 0: an identity (torch's p = 0 export)
    ModelBuilder b;
    b.Input("x", {4}).Output("y", {4}).Init("ratio", {}, 0.0f);
    BoolInit(b, "train", true);
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Dropout", {"r", "ratio", "train"}, {"d"});
    b.Node("Relu", {"d"}, {"y"});
    onnx::ModelProto m = b.model();
    assert_int_equal(DropInferenceNoops(m), 1);
  }
  {  // training_mode constant false: an identity
    ModelBuilder b;
    b.Input("x", {4}).Output("y", {4});
    BoolInit(b, "train", false);
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Dropout", {"r", "", "train"}, {"d"});
    b.Node("Relu", {"d"}, {"y"});
    onnx::ModelProto m = b.model();
    assert_int_equal(DropInferenceNoops(m), 1);
  }
  {  // the mask is read
    ModelBuilder b;
    b.Input("x", {4}).Output("y", {4}).Output("m", {4}, onnx::TensorProto::BOOL);
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Dropout", {"r"}, {"d", "m"});
    b.Node("Relu", {"d"}, {"y"});
    onnx::ModelProto m = b.model();
    assert_int_equal(DropInferenceNoops(m), 0);
  }
  {  // a Pad that pads (the Dropout still goes)
    onnx::ModelProto m = BlockModel({0, 0, 1, 0, 0, 2});
    Specialize(m, SpecializeOptions(), "m.onnx", Progress());
    assert_int_equal(DropInferenceNoops(m), 1);
    bool pad = false;
    for (const auto& n : m.graph().node()) pad |= n.op_type() == "Pad";
    assert_true(pad);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dropout_and_zero_pad_leave_the_graph),
      cmocka_unit_test(dropout_onto_a_graph_output_keeps_its_name),
      cmocka_unit_test(dropout_that_trains_or_whose_mask_is_read_and_real_pads_stay),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
