// SPDX-License-Identifier: Apache-2.0
// --input-value and the replacement of Ifs whose condition is known at
// compile time (epctx_host/known_inputs.h, run by Specialize).
#include <cstring>
#include <set>
#include <string>

#include <onnx/checker.h>

#include "epctx_host/known_inputs.h"
#include "epctx_host/specialize.h"
#include "model_builder.h"

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

onnx::GraphProto Branch(const std::string& name, const std::string& op, const std::string& in,
                        const std::string& out) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name + "_op");
  n->add_input(in);
  n->add_output(out);
  auto* o = g.add_output();
  o->set_name(out);
  auto* tt = o->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  return g;
}

void AddIf(onnx::NodeProto& n, onnx::GraphProto then_g, onnx::GraphProto else_g) {
  auto* a = n.add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = std::move(then_g);
  a = n.add_attribute();
  a->set_name("else_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = std::move(else_g);
}

std::set<std::string> OpTypes(const onnx::GraphProto& g) {
  std::set<std::string> s;
  for (const auto& n : g.node()) s.insert(n.op_type());
  return s;
}

const onnx::NodeProto* Producer(const onnx::GraphProto& g, const std::string& value) {
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (o == value) return &n;
  return nullptr;
}

// cond = (Shape(x)[1] == 4): decided once --input-shape fixes x.
onnx::ModelProto ShapeSwitchModel() {
  ModelBuilder b;
  b.Input("x", {1, -1}).Output("y", {1, 4});
  b.InitI64("one", {1}).InitI64("four", {4});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Gather", {"shape", "one"}, {"dim"});
  b.Node("Equal", {"dim", "four"}, {"is4"});
  b.Node("Squeeze", {"is4"}, {"cond"});
  AddIf(b.Node("If", {"cond"}, {"y"}, "switch"), Branch("then", "Relu", "x", "t_out"),
        Branch("else", "Sigmoid", "x", "e_out"));
  return b.model();
}

void folded_condition_replaces_if_by_taken_branch(void**) {
  onnx::ModelProto m = ShapeSwitchModel();
  SpecializeOptions o;
  o.input_shapes.push_back(ParseInputShape("x:1,4"));
  SpecializeStats st = Specialize(m, o, "m.onnx", Progress());
  assert_int_equal(st.ifs_inlined, 1);
  assert_true(OpTypes(m.graph()) == std::set<std::string>{"Relu"});
  // The branch's output is now the If's output, read from the outer x.
  const onnx::NodeProto* relu = Producer(m.graph(), "y");
  assert_non_null(relu);
  assert_string_equal(relu->input(0).c_str(), "x");
  onnx::checker::check_model(m);
}

void unknown_condition_keeps_the_if(void**) {
  onnx::ModelProto m = ShapeSwitchModel();
  SpecializeStats st = Specialize(m, SpecializeOptions(), "m.onnx", Progress());
  assert_int_equal(st.ifs_inlined, 0);
  assert_true(OpTypes(m.graph()).count("If"));
}

// cond is a graph input; the else branch outputs an outer initializer and
// defines a value whose name the outer graph also uses.
onnx::ModelProto InputSwitchModel() {
  ModelBuilder b;
  b.Input("x", {1, 4}).Input("cond", {}, onnx::TensorProto::BOOL).Output("y", {1, 4});
  b.Output("z", {1, 4});
  b.Init("bias", {1, 4});
  b.Node("Relu", {"x"}, {"tmp"}, "outer_relu");
  // else: tmp = Sigmoid(x) (outer tmp clashes); sum = tmp + tmp; outputs
  // (bias, sum).
  onnx::GraphProto else_g = Branch("else", "Sigmoid", "x", "tmp");
  auto* add = else_g.add_node();
  add->set_op_type("Add");
  add->add_input("tmp");
  add->add_input("tmp");
  add->add_output("sum");
  *else_g.add_output() = else_g.output(0);
  else_g.mutable_output(0)->set_name("bias");
  else_g.mutable_output(1)->set_name("sum");
  // then: a = Relu(x); outputs (a, a).
  onnx::GraphProto then_g = Branch("then", "Relu", "x", "a");
  *then_g.add_output() = then_g.output(0);
  AddIf(b.Node("If", {"cond"}, {"y", "z"}, "switch"), then_g, else_g);
  b.Node("Add", {"tmp", "y"}, {"unused"}, "after");
  return b.model();
}

void input_value_fixes_condition_and_renames_branch_values(void**) {
  onnx::ModelProto m = InputSwitchModel();
  SpecializeOptions o;
  o.input_values.push_back(ParseInputValue("cond:false"));
  SpecializeStats st = Specialize(m, o, "m.onnx", Progress());
  assert_int_equal(st.ifs_inlined, 1);
  const onnx::GraphProto& g = m.graph();
  // cond is no graph input any more.
  assert_int_equal(g.input_size(), 1);
  assert_string_equal(g.input(0).name().c_str(), "x");
  // y: an Identity of the outer initializer; z: the branch's Add.
  const onnx::NodeProto* y = Producer(g, "y");
  assert_non_null(y);
  assert_string_equal(y->op_type().c_str(), "Identity");
  assert_string_equal(y->input(0).c_str(), "bias");
  const onnx::NodeProto* z = Producer(g, "z");
  assert_non_null(z);
  assert_string_equal(z->op_type().c_str(), "Add");
  // The branch's tmp was renamed apart from the outer one.
  assert_string_not_equal(z->input(0).c_str(), "tmp");
  const onnx::NodeProto* outer = Producer(g, "tmp");
  assert_non_null(outer);
  assert_string_equal(outer->op_type().c_str(), "Relu");
  onnx::checker::check_model(m);
}

void input_value_shapes_and_errors(void**) {
  ModelBuilder b;
  b.Input("v", {2, 2}).Input("n", {}, onnx::TensorProto::INT64).Input("s", {-1});
  b.Output("y", {2, 2});
  b.Node("Relu", {"v"}, {"y"});
  onnx::GraphProto g = b.model().graph();
  ApplyInputValues(
      g, {ParseInputValue("v:1,2.5,-3,4e1"), ParseInputValue("n:7"), ParseInputValue("s:1,2,3")},
      "m.onnx");
  assert_int_equal(g.input_size(), 0);
  assert_int_equal(g.initializer_size(), 3);
  assert_int_equal(g.initializer(0).dims_size(), 2);
  assert_true(g.initializer(0).float_data(3) == 40.0f);
  assert_int_equal(g.initializer(1).dims_size(), 0);
  assert_int_equal(g.initializer(1).int64_data(0), 7);
  assert_int_equal(g.initializer(2).dims(0), 3);

  auto error_of = [](const char* spec) {
    ModelBuilder e;
    e.Input("v", {2, 2}).Input("n", {}, onnx::TensorProto::INT64).Output("y", {2, 2});
    onnx::GraphProto eg = e.model().graph();
    try {
      ApplyInputValues(eg, {ParseInputValue(spec)}, "m.onnx");
    } catch (const ToolError& err) {
      assert_int_equal(err.code(), EPCTX_INVALID_ARGUMENT);
      return std::string(err.what());
    }
    return std::string("no error");
  };
  assert_non_null(strstr(error_of("v:1,2,3").c_str(), "has 4 elements, the option gives 3"));
  assert_non_null(strstr(error_of("n:1.5").c_str(), "'1.5' is not a value of its element type"));
  assert_non_null(strstr(error_of("n:1,2").c_str(), "has 1 element, the option gives 2"));
  assert_non_null(strstr(error_of("w:1").c_str(), "no graph input 'w' (inputs: v, n)"));
  bool usage = false;
  try {
    ParseInputValue("v:1,,2");
  } catch (const std::invalid_argument&) {
    usage = true;
  }
  assert_true(usage);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(folded_condition_replaces_if_by_taken_branch),
      cmocka_unit_test(unknown_condition_keeps_the_if),
      cmocka_unit_test(input_value_fixes_condition_and_renames_branch_values),
      cmocka_unit_test(input_value_shapes_and_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
