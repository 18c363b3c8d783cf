// SPDX-License-Identifier: Apache-2.0
// Shape ops (views), data movement, Cast, Constant, and the registry.
#include <cmath>
#include <cstring>

#include "kernels/kernel_util.h"
#include "test_util.h"

namespace {

void registry_finds_kernels_by_domain_and_opset(void**) {
  epctx::StrView empty, onnx_dom{"ai.onnx", 7}, ms{"com.microsoft", 13};
  epctx::StrView conv{"Conv", 4}, reduce{"ReduceMean", 10}, resize{"Resize", 6}, nope{"Nope", 4};
  assert_non_null(epctx::FindKernel(empty, conv, 11));
  assert_true(epctx::FindKernel(onnx_dom, conv, 17) == epctx::FindKernel(empty, conv, 17));
  assert_null(epctx::FindKernel(ms, conv, 11));
  assert_null(epctx::FindKernel(empty, nope, 11));
  assert_non_null(epctx::FindKernel(empty, reduce, 17));
  assert_non_null(epctx::FindKernel(empty, reduce, 18));  // axes from input 1
  assert_null(epctx::FindKernel(empty, reduce, 22));      // past kLatest
  assert_null(epctx::FindKernel(empty, resize, 9));
  assert_non_null(epctx::FindKernel(empty, resize, 10));
}

void attribute_of_the_wrong_type_fails_the_node(void**) {
  kt::Host host;
  TensorRef* x = host.Random({2, 3}, 2);
  kt::Node node("Concat", "cat");
  node.Float("axis", 1.0f);
  EXPECT_FAIL(host.Run(node, 13, {x, x}), EPCTX_INVALID_GRAPH,
              "Concat node 'cat': attribute 'axis' must be INT, found FLOAT");
  kt::Node ok("Concat", "cat_ok");
  ok.Int("axis", 1);
  EXPECT_OK(host.Run(ok, 13, {x, x}));
  EXPECT_SHAPE(host.out(0), 2, 6);
}

void reshape_outputs_a_view_with_zero_and_minus_one(void**) {
  kt::Host host;
  TensorRef* x = host.Random({2, 3, 4}, 1);
  kt::Node node("Reshape", "rs");
  EXPECT_OK(host.Run(node, 14, {x, host.I64({3}, {0, -1, 2})}));
  EXPECT_SHAPE(host.out(0), 2, 6, 2);
  assert_true(host.viewed(0));
  assert_ptr_equal(host.out(0)->data, x->data);
  kt::Node az("Reshape", "rs_az");
  az.Int("allowzero", 1);
  EXPECT_OK(host.Run(az, 14, {host.Make(EPCTX_DTYPE_FLOAT, {0, 3}), host.I64({2}, {3, 0})}));
  EXPECT_SHAPE(host.out(0), 3, 0);
  kt::Node bad("Reshape", "rs_bad");
  EXPECT_FAIL(host.Run(bad, 14, {x, host.I64({2}, {5, -1})}), EPCTX_INVALID_ARGUMENT,
              "Reshape node 'rs_bad': cannot infer");
  kt::Node two("Reshape", "rs_two");
  EXPECT_FAIL(host.Run(two, 14, {x, host.I64({2}, {-1, -1})}), EPCTX_INVALID_ARGUMENT,
              "more than one -1");
}

void flatten_squeeze_unsqueeze_identity_are_views(void**) {
  kt::Host host;
  TensorRef* x = host.Random({2, 1, 3, 1}, 2);
  kt::Node fl("Flatten", "fl");
  fl.Int("axis", -2);
  EXPECT_OK(host.Run(fl, 13, {x}));
  EXPECT_SHAPE(host.out(0), 2, 3);
  assert_ptr_equal(host.out(0)->data, x->data);
  kt::Node sq("Squeeze", "sq");
  EXPECT_OK(host.Run(sq, 13, {x}));
  EXPECT_SHAPE(host.out(0), 2, 3);
  kt::Node sq11("Squeeze", "sq11");
  sq11.Ints("axes", {-1});
  EXPECT_OK(host.Run(sq11, 11, {x}));
  EXPECT_SHAPE(host.out(0), 2, 1, 3);
  kt::Node sq13("Squeeze", "sq13");
  EXPECT_OK(host.Run(sq13, 13, {x, host.I64({1}, {1})}));
  EXPECT_SHAPE(host.out(0), 2, 3, 1);
  kt::Node sqbad("Squeeze", "sq_bad");
  EXPECT_FAIL(host.Run(sqbad, 13, {x, host.I64({1}, {0})}), EPCTX_INVALID_ARGUMENT,
              "expected size 1, found 2");
  kt::Node un11("Unsqueeze", "un11");
  un11.Ints("axes", {0, -1});
  EXPECT_OK(host.Run(un11, 11, {host.Random({3, 4}, 1)}));
  EXPECT_SHAPE(host.out(0), 1, 3, 4, 1);
  kt::Node un13("Unsqueeze", "un13");
  EXPECT_OK(host.Run(un13, 13, {host.Random({3, 4}, 1), host.I64({1}, {1})}));
  EXPECT_SHAPE(host.out(0), 3, 1, 4);
  assert_true(host.viewed(0));
  kt::Node id("Identity", "id");
  EXPECT_OK(host.Run(id, 14, {x}));
  assert_ptr_equal(host.out(0)->data, x->data);
}

// Issue 14 finding 1: a rank-0 walk used to start its outer index at
// rank - 1 == UINT32_MAX and write far outside the stack.
void rank0_tensors_transpose_slice_and_reduce_without_crashing(void**) {
  kt::Host host;
  kt::Node t("Transpose", "t0");
  EXPECT_OK(host.Run(t, 13, {host.F({}, {7.5f})}));
  assert_int_equal(host.out(0)->rank, 0);
  EXPECT_FLOATS(host.out(0), 7.5f);
  kt::Node tp("Transpose", "t0p");
  tp.Ints("perm", {});
  EXPECT_OK(host.Run(tp, 13, {host.I64({}, {-3})}));
  assert_int_equal(static_cast<int64_t*>(host.out(0)->data)[0], -3);
  kt::Node sl("Slice", "s0");
  EXPECT_FAIL(host.Run(sl, 13, {host.F({}, {1.0f}), host.I64({1}, {0}), host.I64({1}, {1})}),
              EPCTX_INVALID_ARGUMENT, "");
  kt::Node sle("Slice", "s0e");
  EXPECT_OK(host.Run(sle, 13, {host.F({}, {2.0f}), host.I64({0}, {}), host.I64({0}, {})}));
  assert_int_equal(host.out(0)->rank, 0);
  EXPECT_FLOATS(host.out(0), 2.0f);
  kt::Node rs("ReduceSum", "r0");
  EXPECT_OK(host.Run(rs, 13, {host.F({}, {4.0f})}));
  assert_int_equal(host.out(0)->rank, 0);
  EXPECT_FLOATS(host.out(0), 4.0f);
  kt::Node rm("ReduceMax", "r0m");
  EXPECT_OK(host.Run(rm, 13, {host.I64({}, {9})}));
  assert_int_equal(static_cast<int64_t*>(host.out(0)->data)[0], 9);
}

void transpose_permutes_any_element_size(void**) {
  kt::Host host;
  kt::Node def("Transpose", "t");
  EXPECT_OK(host.Run(def, 13, {host.F({2, 3}, {1, 2, 3, 4, 5, 6})}));
  EXPECT_SHAPE(host.out(0), 3, 2);
  EXPECT_FLOATS(host.out(0), 1, 4, 2, 5, 3, 6);
  std::vector<int64_t> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  kt::Node p("Transpose", "tp");
  p.Ints("perm", {1, 2, 0});
  EXPECT_OK(host.Run(p, 13, {host.I64({2, 3, 4}, v)}));
  EXPECT_SHAPE(host.out(0), 3, 4, 2);
  const int64_t* o = static_cast<int64_t*>(host.out(0)->data);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 2; ++c) assert_int_equal(o[(a * 4 + b) * 2 + c], c * 12 + a * 4 + b);
  kt::Node bad("Transpose", "tbad");
  bad.Ints("perm", {0, 0, 1});
  EXPECT_FAIL(host.Run(bad, 13, {host.I64({2, 3, 4}, v)}), EPCTX_INVALID_ARGUMENT,
              "not a permutation");
}

void concat_joins_along_negative_axis(void**) {
  kt::Host host;
  kt::Node node("Concat", "cat");
  node.Int("axis", -1);
  EXPECT_OK(host.Run(node, 13, {host.I64({2, 1}, {1, 2}), host.I64({2, 2}, {3, 4, 5, 6})}));
  EXPECT_SHAPE(host.out(0), 2, 3);
  const int64_t* o = static_cast<int64_t*>(host.out(0)->data);
  const int64_t want[] = {1, 3, 4, 2, 5, 6};
  for (int i = 0; i < 6; ++i) assert_int_equal(o[i], want[i]);
  kt::Node bad("Concat", "cat_bad");
  bad.Int("axis", 0);
  EXPECT_FAIL(host.Run(bad, 13, {host.F({2, 1}, {1, 2}), host.F({2, 2}, {3, 4, 5, 6})}),
              EPCTX_INVALID_ARGUMENT, "Concat node 'cat_bad': input 1 has shape [2,2]");
  kt::Node ax("Concat", "cat_axis");
  ax.Int("axis", 2);
  EXPECT_FAIL(host.Run(ax, 13, {host.F({2, 1}, {1, 2})}), EPCTX_INVALID_ARGUMENT,
              "axis 2 is out of range");
}

void slice_handles_attributes_inputs_negative_steps_and_clamping(void**) {
  kt::Host host;
  std::vector<float> v(20);
  for (int i = 0; i < 20; ++i) v[i] = static_cast<float>(i);
  TensorRef* x = host.F({4, 5}, v);
  kt::Node old("Slice", "s9");
  old.Ints("starts", {1, -3}).Ints("ends", {1000, -1}).Ints("axes", {0, 1});
  EXPECT_OK(host.Run(old, 9, {x}));
  EXPECT_SHAPE(host.out(0), 3, 2);
  EXPECT_FLOATS(host.out(0), 7, 8, 12, 13, 17, 18);
  kt::Node neg("Slice", "s13");
  EXPECT_OK(host.Run(neg, 13,
                     {x, host.I64({2}, {-1, 10}), host.I64({2}, {INT64_MIN, 0}),
                      host.I64({2}, {0, 1}), host.I64({2}, {-2, -2})}));
  EXPECT_SHAPE(host.out(0), 2, 2);
  EXPECT_FLOATS(host.out(0), 19, 17, 9, 7);
  kt::Node empty("Slice", "s_empty");
  EXPECT_OK(host.Run(empty, 13, {x, host.I32({1}, {3}), host.I32({1}, {1})}));
  EXPECT_SHAPE(host.out(0), 0, 5);
  kt::Node zero("Slice", "s_zero");
  EXPECT_FAIL(
      host.Run(zero, 13,
               {x, host.I64({1}, {0}), host.I64({1}, {2}), host.I64({1}, {0}), host.I64({1}, {0})}),
      EPCTX_INVALID_ARGUMENT, "steps[0] is 0");
}

void gather_supports_negative_indices_and_checks_bounds(void**) {
  kt::Host host;
  TensorRef* x = host.F({3, 2}, {1, 2, 3, 4, 5, 6});
  kt::Node g0("Gather", "g0");
  EXPECT_OK(host.Run(g0, 13, {x, host.I64({2, 2}, {0, -1, 1, 2})}));
  EXPECT_SHAPE(host.out(0), 2, 2, 2);
  EXPECT_FLOATS(host.out(0), 1, 2, 5, 6, 3, 4, 5, 6);
  kt::Node g1("Gather", "g1");
  g1.Int("axis", 1);
  EXPECT_OK(host.Run(g1, 13, {x, host.I32({}, {-1})}));
  EXPECT_SHAPE(host.out(0), 3);
  EXPECT_FLOATS(host.out(0), 2, 4, 6);
  kt::Node oob("Gather", "g_oob");
  EXPECT_FAIL(host.Run(oob, 13, {x, host.I64({2}, {0, 3})}), EPCTX_INVALID_ARGUMENT,
              "Gather node 'g_oob': indices[1] = 3 is out of range");
  kt::Node neg("Gather", "g_neg");
  EXPECT_FAIL(host.Run(neg, 13, {x, host.I64({1}, {-4})}), EPCTX_INVALID_ARGUMENT, "out of range");
}

void shape_honours_start_end_from_opset_15(void**) {
  kt::Host host;
  TensorRef* x = host.Make(EPCTX_DTYPE_FLOAT, {2, 3, 4, 5});
  kt::Node s("Shape", "shape");
  s.Int("start", 1).Int("end", -1);
  EXPECT_OK(host.Run(s, 15, {x}));
  EXPECT_SHAPE(host.out(0), 2);
  const int64_t* o = static_cast<int64_t*>(host.out(0)->data);
  assert_int_equal(o[0], 3);
  assert_int_equal(o[1], 4);
  EXPECT_OK(host.Run(s, 13, {x}));  // attributes ignored before 15
  EXPECT_SHAPE(host.out(0), 4);
}

void cast_converts_saturates_and_rounds_half(void**) {
  kt::Host host;
  TensorRef* x = host.F({5}, {1.7f, -2.5f, 300.0f, NAN, 0.0f});
  kt::Node to_i8("Cast", "c8");
  to_i8.Int("to", EPCTX_DTYPE_INT8);
  EXPECT_OK(host.Run(to_i8, 13, {x}));
  const int8_t* i8 = static_cast<int8_t*>(host.out(0)->data);
  assert_int_equal(i8[0], 1);
  assert_int_equal(i8[1], -2);
  assert_int_equal(i8[2], 127);
  assert_int_equal(i8[3], 0);
  kt::Node to_b("Cast", "cb");
  to_b.Int("to", EPCTX_DTYPE_BOOL);
  EXPECT_OK(host.Run(to_b, 13, {x}));
  const uint8_t* b = static_cast<uint8_t*>(host.out(0)->data);
  assert_int_equal(b[0], 1);
  assert_int_equal(b[4], 0);
  kt::Node to_h("Cast", "ch");
  to_h.Int("to", EPCTX_DTYPE_FLOAT16);
  TensorRef* hx = host.F({4}, {1.0f, -0.333251953125f, 65504.0f, 1e-7f});
  EXPECT_OK(host.Run(to_h, 13, {hx}));
  const uint16_t* h = static_cast<uint16_t*>(host.out(0)->data);
  assert_int_equal(h[0], 0x3c00);
  assert_int_equal(h[2], 0x7bff);
  kt::Node back("Cast", "cf");
  back.Int("to", EPCTX_DTYPE_FLOAT);
  EXPECT_OK(host.Run(back, 13, {host.out(0)}));
  std::vector<float> r = kt::ToVec(host.out(0));
  assert_true(r[0] == 1.0f && r[1] == -0.333251953125f && r[2] == 65504.0f);
  assert_true(std::fabs(r[3] - 1e-7f) < 3e-8f);  // subnormal spacing 6e-8
  kt::Node i64("Cast", "c64");
  i64.Int("to", EPCTX_DTYPE_INT32);
  EXPECT_OK(host.Run(i64, 13, {host.I64({2}, {-5, 70000})}));
  assert_int_equal(static_cast<int32_t*>(host.out(0)->data)[1], 70000);
  kt::Node str("Cast", "cs");
  str.Int("to", EPCTX_DTYPE_STRING);
  EXPECT_FAIL(host.Run(str, 13, {x}), EPCTX_NOT_IMPLEMENTED, "Cast node 'cs': cast to string");
}

void constant_outputs_views_of_attributes(void**) {
  kt::Host host;
  static const float data[3] = {1, 2, 3};
  epctx::onnx::TensorView t;
  t.dtype = EPCTX_DTYPE_FLOAT;
  t.rank = 1;
  t.dims[0] = 3;
  t.storage = epctx::onnx::Storage::kRaw;
  t.data = data;
  t.bytes = sizeof(data);
  kt::Node c("Constant", "k");
  c.Tensor("value", &t);
  EXPECT_OK(host.Run(c, 13, {}));
  assert_ptr_equal(host.out(0)->data, data);
  EXPECT_FLOATS(host.out(0), 1, 2, 3);
  kt::Node ci("Constant", "ki");
  ci.Ints("value_ints", {4, 5});
  EXPECT_OK(host.Run(ci, 13, {}));
  EXPECT_SHAPE(host.out(0), 2);
  assert_int_equal(static_cast<int64_t*>(host.out(0)->data)[1], 5);
  kt::Node cf("Constant", "kf");
  cf.Float("value_float", 2.5f);
  EXPECT_OK(host.Run(cf, 13, {}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 2.5f);
  t.bytes = 4;  // truncated data
  EXPECT_FAIL(host.Run(c, 13, {}), EPCTX_INVALID_GRAPH, "Constant node 'k'");
  kt::Node none("Constant", "knone");
  EXPECT_FAIL(host.Run(none, 13, {}), EPCTX_INVALID_GRAPH, "no value attribute");
}

void half_conversion_round_trips_all_finite_values(void**) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;  // inf/nan
    float f = epctx::kern::HalfToFloat(static_cast<uint16_t>(h));
    assert_int_equal(epctx::kern::FloatToHalf(f), h);
  }
}

const CMUnitTest kTests[] = {
    cmocka_unit_test(registry_finds_kernels_by_domain_and_opset),
    cmocka_unit_test(attribute_of_the_wrong_type_fails_the_node),
    cmocka_unit_test(reshape_outputs_a_view_with_zero_and_minus_one),
    cmocka_unit_test(flatten_squeeze_unsqueeze_identity_are_views),
    cmocka_unit_test(rank0_tensors_transpose_slice_and_reduce_without_crashing),
    cmocka_unit_test(transpose_permutes_any_element_size),
    cmocka_unit_test(concat_joins_along_negative_axis),
    cmocka_unit_test(slice_handles_attributes_inputs_negative_steps_and_clamping),
    cmocka_unit_test(gather_supports_negative_indices_and_checks_bounds),
    cmocka_unit_test(shape_honours_start_end_from_opset_15),
    cmocka_unit_test(cast_converts_saturates_and_rounds_half),
    cmocka_unit_test(constant_outputs_views_of_attributes),
    cmocka_unit_test(half_conversion_round_trips_all_finite_values),
};

}  // namespace

TestGroup DataTests() { return {"data", kTests, sizeof(kTests) / sizeof(kTests[0])}; }
