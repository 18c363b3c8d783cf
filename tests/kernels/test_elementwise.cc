// SPDX-License-Identifier: Apache-2.0
// Binary/variadic/unary elementwise ops, Clip, BatchNormalization, Reduce*.
#include <cmath>

#include "test_util.h"

namespace {

void add_broadcasts_numpy_style(void**) {
  kt::Host host;
  TensorRef* a = host.F({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  TensorRef* b = host.F({2, 1}, {10, 20});
  kt::Node node("Add", "add0");
  EXPECT_OK(host.Run(node, 14, {a, b}));
  EXPECT_SHAPE(host.out(0), 2, 2, 3);
  EXPECT_FLOATS(host.out(0), 11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26);
  // Per-channel bias over H*W (the merged-axes path).
  TensorRef* x = host.Random({2, 3, 4, 5}, 3);
  TensorRef* c = host.F({3, 1, 1}, {1, 2, 3});
  kt::Node bias("Sub", "sub0");
  EXPECT_OK(host.Run(bias, 14, {x, c}));
  const float* X = static_cast<float*>(x->data);
  const float* Y = static_cast<float*>(host.out(0)->data);
  for (int i = 0; i < 120; ++i) assert_true(std::fabs(Y[i] - (X[i] - (1 + (i / 20) % 3))) < 1e-6);
  // Scalar on the left.
  kt::Node div("Div", "div0");
  EXPECT_OK(host.Run(div, 14, {host.F({}, {6}), host.F({3}, {1, 2, 3})}));
  EXPECT_FLOATS(host.out(0), 6, 3, 2);
}

void integer_arithmetic_wraps_and_rejects_zero_division(void**) {
  kt::Host host;
  kt::Node mul("Mul", "mul_i64");
  EXPECT_OK(host.Run(mul, 14, {host.I64({3}, {2, -3, INT64_MAX}), host.I64({1}, {2})}));
  const int64_t* m = static_cast<int64_t*>(host.out(0)->data);
  assert_int_equal(m[0], 4);
  assert_int_equal(m[1], -6);
  assert_int_equal(m[2], -2);
  kt::Node div("Div", "div_i32");
  EXPECT_OK(host.Run(div, 14, {host.I32({3}, {7, -7, INT32_MIN}), host.I32({3}, {2, 2, -1})}));
  const int32_t* d = static_cast<int32_t*>(host.out(0)->data);
  assert_int_equal(d[0], 3);
  assert_int_equal(d[1], -3);
  assert_int_equal(d[2], INT32_MIN);
  kt::Node zero("Div", "div_zero");
  EXPECT_FAIL(host.Run(zero, 14, {host.I64({2}, {1, 2}), host.I64({2}, {1, 0})}),
              EPCTX_INVALID_ARGUMENT, "Div node 'div_zero': integer division by zero");
  kt::Node mixed("Add", "mixed");
  EXPECT_FAIL(host.Run(mixed, 14, {host.I64({1}, {1}), host.F({1}, {1})}), EPCTX_INVALID_ARGUMENT,
              "expected one type");
  kt::Node shapes("Add", "shapes");
  EXPECT_FAIL(host.Run(shapes, 14, {host.F({2, 3}, {1, 2, 3, 4, 5, 6}), host.F({2}, {1, 2})}),
              EPCTX_INVALID_ARGUMENT, "do not broadcast");
  kt::Node b8("Add", "b8");
  EXPECT_FAIL(
      host.Run(b8, 14, {host.Make(EPCTX_DTYPE_BOOL, {2}), host.Make(EPCTX_DTYPE_BOOL, {2})}),
      EPCTX_NOT_IMPLEMENTED, "bool");
}

void pow_max_min_compute_elementwise(void**) {
  kt::Host host;
  kt::Node pw("Pow", "pow");
  EXPECT_OK(host.Run(pw, 15, {host.F({3}, {1, 2, 3}), host.F({}, {2})}));
  EXPECT_FLOATS(host.out(0), 1, 4, 9);
  kt::Node pw2("Pow", "pow_i");
  EXPECT_OK(host.Run(pw2, 15, {host.F({2}, {4, 9}), host.I64({2}, {3, 0})}));
  EXPECT_FLOATS(host.out(0), 64, 1);
  kt::Node pw3("Pow", "pow_b");
  EXPECT_OK(host.Run(pw3, 15, {host.F({2, 1}, {2, 3}), host.F({2}, {0.5f, 3})}));
  EXPECT_SHAPE(host.out(0), 2, 2);
  EXPECT_FLOATS(host.out(0), std::sqrt(2.0f), 8, std::sqrt(3.0f), 27);
  kt::Node mx("Max", "max3");
  EXPECT_OK(host.Run(mx, 13, {host.F({3}, {1, 5, 2}), host.F({2, 1}, {3, 0}), host.F({}, {1.5f})}));
  EXPECT_SHAPE(host.out(0), 2, 3);
  EXPECT_FLOATS(host.out(0), 3, 5, 3, 1.5f, 5, 2);
  kt::Node mn("Min", "min1");
  EXPECT_OK(host.Run(mn, 13, {host.I64({2}, {4, -4})}));
  const int64_t* v = static_cast<int64_t*>(host.out(0)->data);
  assert_int_equal(v[0], 4);
  assert_int_equal(v[1], -4);
}

void unary_ops_compute_values(void**) {
  kt::Host host;
  TensorRef* x = host.F({4}, {-2, -0.5f, 0, 3});
  struct U {
    const char* op;
    std::vector<float> want;
  };
  const U cases[] = {
      {"Relu", {0, 0, 0, 3}},
      {"LeakyRelu", {-0.02f, -0.005f, 0, 3}},
      {"Sigmoid",
       {1 / (1 + std::exp(2.0f)), 1 / (1 + std::exp(0.5f)), 0.5f, 1 / (1 + std::exp(-3.0f))}},
      {"HardSigmoid", {0.1f, 0.4f, 0.5f, 1.0f}},
      {"Tanh", {std::tanh(-2.0f), std::tanh(-0.5f), 0, std::tanh(3.0f)}},
      {"Exp", {std::exp(-2.0f), std::exp(-0.5f), 1, std::exp(3.0f)}},
      {"Abs", {2, 0.5f, 0, 3}},
      {"Neg", {2, 0.5f, 0, -3}},
  };
  for (const U& u : cases) {
    kt::Node node(u.op, "u");
    EXPECT_OK(host.Run(node, 13, {x}));
    std::vector<float> got = kt::ToVec(host.out(0));
    for (size_t i = 0; i < 4; ++i)
      if (std::fabs(got[i] - u.want[i]) > 1e-6f) fail_msg("%s[%zu] = %g", u.op, i, (double)got[i]);
  }
  TensorRef* p = host.F({2}, {4, 1});
  kt::Node sq("Sqrt", "s");
  EXPECT_OK(host.Run(sq, 13, {p}));
  EXPECT_FLOATS(host.out(0), 2, 1);
  kt::Node lg("Log", "l");
  EXPECT_OK(host.Run(lg, 13, {p}));
  EXPECT_FLOATS(host.out(0), std::log(4.0f), 0);
  kt::Node ab("Abs", "abs_i32");
  EXPECT_OK(host.Run(ab, 13, {host.I32({2}, {-5, 7})}));
  assert_int_equal(static_cast<int32_t*>(host.out(0)->data)[0], 5);
  kt::Node bad("Relu", "relu_u8");
  EXPECT_FAIL(host.Run(bad, 14, {host.Make(EPCTX_DTYPE_UINT8, {2})}), EPCTX_NOT_IMPLEMENTED,
              "Relu node 'relu_u8': X has dtype uint8");
}

void clip_reads_attributes_before_11_and_inputs_after(void**) {
  kt::Host host;
  TensorRef* x = host.F({4}, {-3, -1, 1, 3});
  kt::Node old("Clip", "clip6");
  old.Float("min", -2).Float("max", 2);
  EXPECT_OK(host.Run(old, 6, {x}));
  EXPECT_FLOATS(host.out(0), -2, -1, 1, 2);
  kt::Node nw("Clip", "clip11");
  EXPECT_OK(host.Run(nw, 11, {x, host.F({}, {0}), nullptr}));
  EXPECT_FLOATS(host.out(0), 0, 0, 1, 3);
  kt::Node both("Clip", "clip13");
  EXPECT_OK(host.Run(both, 13, {x, nullptr, host.F({}, {0.5f})}));
  EXPECT_FLOATS(host.out(0), -3, -1, 0.5f, 0.5f);
  kt::Node bad("Clip", "clip_bad");
  EXPECT_FAIL(host.Run(bad, 13, {x, host.F({2}, {0, 1})}), EPCTX_INVALID_ARGUMENT,
              "min must be a scalar");
}

void batch_norm_normalizes_per_channel(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 2, 1, 2}, {1, 3, 10, 20});
  kt::Node node("BatchNormalization", "bn");
  node.Float("epsilon", 0.0f);
  EXPECT_OK(host.Run(
      node, 15,
      {x, host.F({2}, {1, 2}), host.F({2}, {0, 1}), host.F({2}, {2, 10}), host.F({2}, {1, 4})}));
  EXPECT_FLOATS(host.out(0), -1, 1, 1, 11);
  kt::Node bad("BatchNormalization", "bn_bad");
  EXPECT_FAIL(host.Run(bad, 15,
                       {x, host.F({3}, {1, 1, 1}), host.F({2}, {0, 1}), host.F({2}, {2, 10}),
                        host.F({2}, {1, 4})}),
              EPCTX_INVALID_ARGUMENT, "scale must have shape [2]");
}

void reductions_honour_axes_and_keepdims(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 3}, {1, 2, 3, 4, 5, 6});
  kt::Node mean("ReduceMean", "rm");
  mean.Ints("axes", {1});
  EXPECT_OK(host.Run(mean, 13, {x}));
  EXPECT_SHAPE(host.out(0), 2, 1);
  EXPECT_FLOATS(host.out(0), 2, 5);
  kt::Node mx("ReduceMax", "rmax");
  mx.Ints("axes", {0}).Int("keepdims", 0);
  EXPECT_OK(host.Run(mx, 13, {x}));
  EXPECT_SHAPE(host.out(0), 3);
  EXPECT_FLOATS(host.out(0), 4, 5, 6);
  kt::Node all("ReduceMean", "rall");
  all.Int("keepdims", 0);
  EXPECT_OK(host.Run(all, 13, {x}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 3.5f);
  kt::Node sum13("ReduceSum", "rs13");
  EXPECT_OK(host.Run(sum13, 13, {x, host.I64({1}, {-1})}));
  EXPECT_SHAPE(host.out(0), 2, 1);
  EXPECT_FLOATS(host.out(0), 6, 15);
  kt::Node sum11("ReduceSum", "rs11");
  sum11.Ints("axes", {0});
  EXPECT_OK(host.Run(sum11, 11, {x}));
  EXPECT_FLOATS(host.out(0), 5, 7, 9);
  kt::Node noop("ReduceSum", "noop");
  noop.Int("noop_with_empty_axes", 1);
  EXPECT_OK(host.Run(noop, 13, {x}));
  assert_true(host.viewed(0));
  TensorRef* x3 = host.Random({2, 3, 4}, 9);
  kt::Node mid("ReduceMax", "rmid");
  mid.Ints("axes", {0, 2});
  EXPECT_OK(host.Run(mid, 13, {x3}));
  EXPECT_SHAPE(host.out(0), 1, 3, 1);
  const float* X = static_cast<float*>(x3->data);
  for (int c = 0; c < 3; ++c) {
    float m = -1e30f;
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 4; ++k) m = std::max(m, X[b * 12 + c * 4 + k]);
    assert_true(static_cast<float*>(host.out(0)->data)[c] == m);
  }
  kt::Node bad("ReduceMean", "rbad");
  bad.Ints("axes", {2});
  EXPECT_FAIL(host.Run(bad, 13, {x}), EPCTX_INVALID_ARGUMENT,
              "ReduceMean node 'rbad': axes value 2 is out of range");
}

const CMUnitTest kTests[] = {
    cmocka_unit_test(add_broadcasts_numpy_style),
    cmocka_unit_test(integer_arithmetic_wraps_and_rejects_zero_division),
    cmocka_unit_test(pow_max_min_compute_elementwise),
    cmocka_unit_test(unary_ops_compute_values),
    cmocka_unit_test(clip_reads_attributes_before_11_and_inputs_after),
    cmocka_unit_test(batch_norm_normalizes_per_channel),
    cmocka_unit_test(reductions_honour_axes_and_keepdims),
};

}  // namespace

TestGroup ElementwiseTests() { return {"elementwise", kTests, sizeof(kTests) / sizeof(kTests[0])}; }
