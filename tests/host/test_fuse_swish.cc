// SPDX-License-Identifier: Apache-2.0
// x * Sigmoid(x) into com.microsoft QuickGelu (alpha 1) and x *
// HardSigmoid(x) into HardSwish (epctx_host/fuse_swish.h): the pairs it
// takes become one node that computes what the two computed; the forms it
// must not take are left alone.
#include <cmath>
#include <string>
#include <vector>

#include "epctx_host/fuse_swish.h"
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

constexpr int64_t kN = 40;

float XAt(size_t i) { return -7.0f + 0.37f * float(i); }

// y = x * gate(x) (gate "Sigmoid" or "HardSigmoid" with torch's hardswish
// parameters), the Mul's operands in either order.
onnx::ModelProto Model(const char* gate, int opset, bool swapped) {
  ModelBuilder b(opset);
  b.Input("x", {1, kN}).Output("y", {1, kN});
  auto& g = b.Node(gate, {"x"}, {"s"}, "gate");
  if (std::string(gate) == "HardSigmoid") {
    auto* a = g.add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(1.0f / 6.0f);
  }
  if (swapped) b.Node("Mul", {"s", "x"}, {"y"}, "mul");
  else b.Node("Mul", {"x", "s"}, {"y"}, "mul");
  return b.model();
}

std::vector<float> CompileAndRun(const onnx::ModelProto& m) {
  std::vector<float> x(kN);
  for (size_t i = 0; i < x.size(); ++i) x[i] = XAt(i);
  return testutil::RunOne(testutil::CompileToMemory(m, "none"), "x", {1, kN}, x, "y");
}

void pairs_become_one_node_with_the_pairs_result(void**) {
  struct {
    const char* gate;
    int opset;
    const char* op;
  } cases[] = {{"Sigmoid", 13, "QuickGelu"},
               {"HardSigmoid", 14, "HardSwish"},
               {"HardSigmoid", 13, "HardSwish"}};
  for (const auto& c : cases)
    for (bool swapped : {false, true}) {
      onnx::ModelProto m = Model(c.gate, c.opset, swapped);
      assert_int_equal(FuseSwish(m), 1);
      assert_int_equal(m.graph().node_size(), 1);
      const onnx::NodeProto& n = m.graph().node(0);
      assert_string_equal(n.op_type().c_str(), c.op);
      // HardSwish needs opset 14: a 13 model is raised.
      for (const auto& o : m.opset_import())
        if (o.domain().empty())
          assert_int_equal(o.version(), c.opset == 13 && c.op[0] == 'H' ? 14 : c.opset);
      assert_int_equal(n.input_size(), 1);
      assert_string_equal(n.input(0).c_str(), "x");
      assert_string_equal(n.output(0).c_str(), "y");
      const std::vector<float> y = CompileAndRun(Model(c.gate, c.opset, swapped));
      for (size_t i = 0; i < y.size(); ++i) {
        const double v = XAt(i);
        const double g = c.op[0] == 'Q' ? 1.0 / (1.0 + std::exp(-v))
                                        : std::fmin(1.0, std::fmax(0.0, v / 6.0 + 0.5));
        if (std::fabs(y[i] - v * g) > 1e-5 * std::fmax(1.0, std::fabs(v * g)))
          fail_msg("%s element %zu: %g, want %g", c.op, i, double(y[i]), v * g);
      }
    }
}

void other_forms_are_left_alone(void**) {
  {  // the gate's output is read by another node too
    onnx::ModelProto m = Model("Sigmoid", 13, false);
    auto* o = m.mutable_graph()->add_output();
    *o = m.graph().output(0);
    o->set_name("s2");
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type("Relu");
    n->add_input("s");
    n->add_output("s2");
    assert_int_equal(FuseSwish(m), 0);
  }
  {  // the Mul's other operand is not the gate's input (squeeze-excitation)
    onnx::ModelProto m = Model("Sigmoid", 13, false);
    m.mutable_graph()->mutable_node(1)->set_input(0, "z");
    assert_int_equal(FuseSwish(m), 0);
  }
  {  // HardSigmoid before opset 13 (raising it would change other ops), or
     // with other parameters
    onnx::ModelProto m = Model("HardSigmoid", 12, false);
    assert_int_equal(FuseSwish(m), 0);
    m = Model("HardSigmoid", 14, false);
    m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_f(0.2f);
    assert_int_equal(FuseSwish(m), 0);
  }
  {  // the gate's output is a graph output
    onnx::ModelProto m = Model("Sigmoid", 13, false);
    *m.mutable_graph()->add_output() = m.graph().output(0);
    m.mutable_graph()->mutable_output(1)->set_name("s");
    assert_int_equal(FuseSwish(m), 0);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pairs_become_one_node_with_the_pairs_result),
      cmocka_unit_test(other_forms_are_left_alone),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
