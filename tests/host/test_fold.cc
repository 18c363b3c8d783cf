// SPDX-License-Identifier: Apache-2.0
// Constant folding in the specialise stage (epctx_host/fold.h): shape
// computations that ONNX data propagation cannot see through fold away in
// one round, so the values they reshape get static shapes; the size limits
// keep a shape vector from becoming megabytes in the model.
#include <cstring>
#include <string>
#include <vector>

#include "epctx_host/fold.h"
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
using testutil::SetIntsAttr;

namespace {

std::vector<std::string> OpTypes(const onnx::ModelProto& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  return ops;
}

bool Has(const std::vector<std::string>& ops, const char* op) {
  for (const auto& o : ops)
    if (o == op) return true;
  return false;
}

void ScalarI64(ModelBuilder& b, const std::string& name, int64_t v) {
  b.InitI64(name, {v});
  b.model().mutable_graph()->mutable_initializer()->rbegin()->clear_dims();
}

// A window partition as torchvision's swin writes it: the window count is
// H / 7 through Div, the sequence index through Range, and the second
// Reshape's shape comes from a Shape of the first one's output.
onnx::ModelProto WindowModel() {
  ModelBuilder b;
  b.Input("x", {1, 14, 14, 8}).Output("y", {4, 49, 8});
  b.InitI64("i1", {1});
  b.InitI64("seven", {7});
  b.InitI64("minus1", {-1});
  ScalarI64(b, "zero", 0);
  ScalarI64(b, "one", 1);
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Gather", {"s", "i1"}, {"h"});   // [14]
  b.Node("Div", {"h", "seven"}, {"nw"});  // [2]: not data-propagated
  b.Node("Concat", {"nw", "seven", "nw", "seven", "minus1"}, {"shape1"})
      .add_attribute()
      ->CopyFrom([] {
        onnx::AttributeProto a;
        a.set_name("axis");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(0);
        return a;
      }());
  b.Node("Reshape", {"x", "shape1"}, {"w"});  // [2,7,2,7,8]
  SetIntsAttr(b.Node("Transpose", {"w"}, {"t"}), "perm", {0, 2, 1, 3, 4});
  b.Node("Shape", {"t"}, {"ts"});
  b.Node("ReduceProd", {"ts"}, {"n"});  // [1568]
  b.Node("Squeeze", {"n"}, {"ns"});
  b.Node("Range", {"zero", "ns", "one"}, {"idx"});  // 0..1567
  b.Node("Shape", {"idx"}, {"len"});
  b.InitI64("tail", {49, 8});
  b.Node("Div", {"len", "tail"}, {"q"});  // [32, 196]: only [0] matters
  b.InitI64("first", {0});
  b.Node("Gather", {"q", "first"}, {"nwin"});  // [32]
  b.InitI64("eight", {8});
  b.Node("Div", {"nwin", "eight"}, {"windows"});  // [4]
  b.Node("Concat", {"windows", "tail"}, {"shape2"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  b.Node("Reshape", {"t", "shape2"}, {"y"});
  return b.model();
}

void shape_chains_fold_and_reshapes_become_static(void**) {
  onnx::ModelProto m = WindowModel();
  SpecializeStats s = Specialize(m, SpecializeOptions(), "w.onnx", Progress());
  const std::vector<std::string> ops = OpTypes(m);
  assert_int_equal(ops.size(), 3);  // Reshape, Transpose, Reshape
  assert_false(Has(ops, "Shape"));
  assert_false(Has(ops, "Range"));
  assert_true(s.fold_rounds <= 2);
  const GraphInfo info = BuildGraphInfo(m);
  for (const char* v : {"w", "t", "y"}) {
    const ValueType* t = info.type(v);
    assert_non_null(t);
    assert_true(t->fully_static());
  }
  const ValueType* y = info.type("y");
  assert_int_equal(y->dims.size(), 3);
  assert_int_equal(y->dims[0], 4);
  assert_int_equal(y->dims[1], 49);
  // Only the two shape vectors stay, the intermediates are dropped.
  assert_int_equal(m.graph().initializer_size(), 2);
}

// ConstantOfShape [1024, 1024] -> 4 MiB out of 16 bytes of shape.
onnx::ModelProto BigFillModel(int64_t side) {
  ModelBuilder b;
  b.Input("x", {side, side}).Output("y", {side, side}).Output("n", {2}, onnx::TensorProto::INT64);
  b.InitI64("dims", {side, side});
  b.Node("ConstantOfShape", {"dims"}, {"zeros"});
  b.Node("Add", {"x", "zeros"}, {"y"});
  b.Node("Shape", {"zeros"}, {"s"});
  b.Node("Identity", {"s"}, {"n"});
  return b.model();
}

void large_fill_stays_a_node_but_its_shape_folds(void**) {
  onnx::ModelProto m = BigFillModel(1024);
  SpecializeStats s = Specialize(m, SpecializeOptions(), "f.onnx", Progress());
  const std::vector<std::string> ops = OpTypes(m);
  assert_true(Has(ops, "ConstantOfShape"));
  assert_false(Has(ops, "Shape"));
  assert_int_equal(s.fold_skipped, 1);
  size_t bytes = 0;
  for (const auto& t : m.graph().initializer()) bytes += t.ByteSizeLong();
  assert_true(bytes < 4096);

  // The same fill at 64 x 64 (16 KiB) is under the free limit: folded.
  m = BigFillModel(64);
  Specialize(m, SpecializeOptions(), "f.onnx", Progress());
  assert_false(Has(OpTypes(m), "ConstantOfShape"));
}

void weight_transpose_folds_above_the_free_limit(void**) {
  // 768 x 512 floats = 1.5 MiB in, 1.5 MiB out: growth 1.
  ModelBuilder b;
  b.Input("x", {1, 768}).Output("y", {1, 768});
  b.Init("w", {768, 512}, 0.0f);
  SetIntsAttr(b.Node("Transpose", {"w"}, {"wt"}), "perm", {1, 0});
  b.Node("MatMul", {"x", "wt"}, {"y"});
  onnx::ModelProto m = b.model();
  FoldLimits tight;
  tight.max_output_bytes = 1u << 20;  // below 1.5 MiB: kept
  SpecializeOptions o;
  o.fold_limits = tight;
  onnx::ModelProto kept = m;
  SpecializeStats s = Specialize(kept, o, "t.onnx", Progress());
  assert_true(Has(OpTypes(kept), "Transpose"));
  assert_int_equal(s.fold_skipped, 1);
  Specialize(m, SpecializeOptions(), "t.onnx", Progress());
  assert_false(Has(OpTypes(m), "Transpose"));
  // The source weight is dropped: only the transposed one is stored.
  assert_int_equal(m.graph().initializer_size(), 1);
  assert_int_equal(m.graph().initializer(0).dims(0), 512);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shape_chains_fold_and_reshapes_become_static),
      cmocka_unit_test(large_fill_stays_a_node_but_its_shape_folds),
      cmocka_unit_test(weight_transpose_folds_above_the_free_limit),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
