// SPDX-License-Identifier: Apache-2.0
// The reduce family beyond the node suite: opset-18 axes inputs, empty-set
// identities, wrapping integer reductions, rank 0, float16/bfloat16
// rounding, ties in ArgMax/TopK/Hardmax, normalisation outputs, and the
// codes and messages for hostile attributes and shapes.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/elem.h"
#include "test_util.h"

namespace {

using epctx::kern::FloatToBF16;
using epctx::kern::BF16ToFloat;
using epctx::kern::FloatToHalf;
using epctx::kern::HalfToFloat;

template <typename T>
const T* Data(const TensorRef* t) {
  return static_cast<const T*>(t->data);
}

TensorRef* Half(kt::Host& host, const kt::Dims& dims, const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(FloatToHalf(f));
  return host.Make(EPCTX_DTYPE_FLOAT16, dims, h.data());
}

TensorRef* BF16(kt::Host& host, const kt::Dims& dims, const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(FloatToBF16(f));
  return host.Make(EPCTX_DTYPE_BFLOAT16, dims, h.data());
}

// ---- Reduce* ------------------------------------------------------------------

void opset18_reductions_read_axes_from_input_and_honour_noop(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 3}, {1, -2, 3, -4, 5, -6});
  kt::Node l1("ReduceL1", "l1");
  EXPECT_OK(host.Run(l1, 18, {x, host.I64({1}, {1})}));
  EXPECT_SHAPE(host.out(0), 2, 1);
  EXPECT_FLOATS(host.out(0), 6, 15);
  kt::Node all("ReduceMean", "mean_all");
  all.Int("keepdims", 0);
  EXPECT_OK(host.Run(all, 18, {x, host.I64({0}, {})}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), -0.5f);
  kt::Node noop("ReduceMax", "noop");
  noop.Int("noop_with_empty_axes", 1);
  EXPECT_OK(host.Run(noop, 18, {x}));
  assert_true(host.viewed(0));
  EXPECT_SHAPE(host.out(0), 2, 3);
  // Below 18 the axes attribute rules and input 1 is not read.
  kt::Node old("ReduceSumSquare", "ssq");
  old.Ints("axes", {0});
  EXPECT_OK(host.Run(old, 13, {x}));
  EXPECT_FLOATS(host.out(0), 17, 29, 45);
}

void reduce_all_kinds_match_their_definitions(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 2}, {1, 2, 3, 4});
  struct Case {
    const char* op;
    float a, b;  // per row
  } cases[] = {
      {"ReduceProd", 2, 12},
      {"ReduceL2", std::sqrt(5.0f), 5},
      {"ReduceLogSum", std::log(3.0f), std::log(7.0f)},
      {"ReduceLogSumExp", std::log(std::exp(1.0f) + std::exp(2.0f)),
       std::log(std::exp(3.0f) + std::exp(4.0f))},
      {"ReduceSumSquare", 5, 25},
  };
  for (const Case& c : cases) {
    kt::Node n(c.op, "k");
    n.Ints("axes", {1}).Int("keepdims", 0);
    EXPECT_OK(host.Run(n, 13, {x}));
    EXPECT_FLOATS(host.out(0), c.a, c.b);
  }
  // LogSumExp stays finite where exp overflows.
  kt::Node lse("ReduceLogSumExp", "lse");
  EXPECT_OK(host.Run(lse, 13, {host.F({2}, {1000, 1000})}));
  EXPECT_FLOATS(host.out(0), 1000 + std::log(2.0f));
}

void reduction_over_empty_axis_yields_the_identity(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 0}, {});
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* op;
    float want;
  } cases[] = {{"ReduceSum", 0},       {"ReduceProd", 1},      {"ReduceMax", -inf},
               {"ReduceMin", inf},     {"ReduceL1", 0},        {"ReduceL2", 0},
               {"ReduceSumSquare", 0}, {"ReduceLogSum", -inf}, {"ReduceLogSumExp", -inf}};
  for (const Case& c : cases) {
    kt::Node n(c.op, "e");
    n.Ints("axes", {1});
    EXPECT_OK(host.Run(n, 11, {x}));
    EXPECT_SHAPE(host.out(0), 2, 1);
    const float* y = Data<float>(host.out(0));
    assert_true(y[0] == c.want && y[1] == c.want);
  }
  kt::Node mean("ReduceMean", "m");
  mean.Ints("axes", {1});
  EXPECT_OK(host.Run(mean, 13, {x}));
  assert_true(std::isnan(Data<float>(host.out(0))[0]));
  kt::Node imax("ReduceMax", "im");
  imax.Ints("axes", {1});
  EXPECT_OK(host.Run(imax, 13, {host.Make(EPCTX_DTYPE_INT32, {2, 0})}));
  assert_int_equal(Data<int32_t>(host.out(0))[0], std::numeric_limits<int32_t>::min());
}

void integer_reductions_wrap_instead_of_overflowing(void**) {
  kt::Host host;
  TensorRef* x = host.I32({3}, {std::numeric_limits<int32_t>::max(), 1, 1});
  kt::Node sum("ReduceSum", "s");
  EXPECT_OK(host.Run(sum, 13, {x}));
  assert_int_equal(Data<int32_t>(host.out(0))[0], std::numeric_limits<int32_t>::min() + 1);
  kt::Node prod("ReduceProd", "p");
  const int64_t big = int64_t(1) << 62;
  EXPECT_OK(host.Run(prod, 13, {host.I64({2}, {big, 4})}));
  assert_true(Data<int64_t>(host.out(0))[0] == 0);  // 2^64 wraps to 0
  kt::Node l1("ReduceL1", "l1");
  EXPECT_OK(host.Run(l1, 13, {host.I32({2}, {std::numeric_limits<int32_t>::min(), -1})}));
  assert_int_equal(Data<int32_t>(host.out(0))[0], std::numeric_limits<int32_t>::min() + 1);
  kt::Node mean("ReduceMean", "m");
  EXPECT_OK(host.Run(mean, 13, {host.I32({3}, {-7, 0, 0})}));
  assert_int_equal(Data<int32_t>(host.out(0))[0], -2);  // truncated, as ORT
  // The mean's sum does not wrap: ORT sums integers in double.
  EXPECT_OK(host.Run(
      mean, 13,
      {host.I32({2}, {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max()})}));
  assert_int_equal(Data<int32_t>(host.out(0))[0], std::numeric_limits<int32_t>::max());
  int8_t i8[3] = {-128, 127, 5};
  kt::Node mx("ReduceMax", "mx");
  EXPECT_OK(host.Run(mx, 13, {host.Make(EPCTX_DTYPE_INT8, {3}, i8)}));
  assert_int_equal(Data<int8_t>(host.out(0))[0], 127);
}

void rank0_reductions_apply_the_op_to_the_scalar(void**) {
  kt::Host host;
  TensorRef* s = host.F({}, {-3});
  kt::Node l2("ReduceL2", "l2");
  EXPECT_OK(host.Run(l2, 13, {s}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 3);
  kt::Node ssq("ReduceSumSquare", "ssq");
  EXPECT_OK(host.Run(ssq, 18, {s}));
  EXPECT_FLOATS(host.out(0), 9);
  kt::Node cs("CumSum", "cs");
  EXPECT_OK(host.Run(cs, 14, {s, host.I64({}, {0})}));
  EXPECT_FLOATS(host.out(0), -3);
  kt::Node am("ArgMax", "am");
  EXPECT_FAIL(host.Run(am, 13, {s}), EPCTX_INVALID_ARGUMENT, "axis 0 is out of range");
}

void float16_and_bfloat16_reductions_round_once(void**) {
  kt::Host host;
  // Rounding each partial sum to half would stay at 2048 (ulp 2 there).
  kt::Node sum("ReduceSum", "h");
  EXPECT_OK(host.Run(sum, 13, {Half(host, {3}, {2048, 1, 1})}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_FLOAT16);
  assert_true(HalfToFloat(Data<uint16_t>(host.out(0))[0]) == 2050.0f);
  kt::Node bsum("ReduceSum", "b");
  EXPECT_OK(host.Run(bsum, 13, {BF16(host, {3}, {256, 1, 1})}));
  assert_true(BF16ToFloat(Data<uint16_t>(host.out(0))[0]) == 258.0f);
  kt::Node mean("ReduceMean", "hm");
  EXPECT_OK(host.Run(mean, 18, {Half(host, {2}, {1, 2})}));
  assert_true(HalfToFloat(Data<uint16_t>(host.out(0))[0]) == 1.5f);
}

void reduce_rejects_bad_axes_and_types(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 3}, {1, 2, 3, 4, 5, 6});
  kt::Node twice("ReduceL2", "twice");
  twice.Ints("axes", {1, -1});
  EXPECT_FAIL(host.Run(twice, 13, {x}), EPCTX_INVALID_ARGUMENT,
              "ReduceL2 node 'twice': axis 1 is listed twice");
  kt::Node range("ReduceProd", "range");
  EXPECT_FAIL(host.Run(range, 18, {x, host.I64({1}, {-3})}), EPCTX_INVALID_ARGUMENT,
              "axes value -3 is out of range: expected [-2, 1]");
  kt::Node fl("ReduceSum", "floataxes");
  EXPECT_FAIL(host.Run(fl, 13, {x, host.F({1}, {0})}), EPCTX_INVALID_ARGUMENT,
              "axes must be int64 or int32");
  int8_t i8[2] = {1, 2};
  kt::Node i8sum("ReduceSum", "i8");
  EXPECT_FAIL(host.Run(i8sum, 13, {host.Make(EPCTX_DTYPE_INT8, {2}, i8)}), EPCTX_NOT_IMPLEMENTED,
              "data has dtype int8");
}

// ---- ArgMax / ArgMin -------------------------------------------------------------

void argmax_argmin_break_ties_by_select_last_index(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 3}, {1, 3, 3, 0, 0, -1});
  kt::Node first("ArgMax", "first");
  first.Int("axis", 1);
  EXPECT_OK(host.Run(first, 13, {x}));
  EXPECT_SHAPE(host.out(0), 2, 1);
  assert_true(Data<int64_t>(host.out(0))[0] == 1 && Data<int64_t>(host.out(0))[1] == 0);
  kt::Node last("ArgMax", "last");
  last.Int("axis", 1).Int("select_last_index", 1).Int("keepdims", 0);
  EXPECT_OK(host.Run(last, 13, {x}));
  EXPECT_SHAPE(host.out(0), 2);
  assert_true(Data<int64_t>(host.out(0))[0] == 2 && Data<int64_t>(host.out(0))[1] == 1);
  // select_last_index does not exist before opset 12.
  EXPECT_OK(host.Run(last, 11, {x}));
  assert_true(Data<int64_t>(host.out(0))[0] == 1);
  uint8_t u8[4] = {200, 7, 7, 255};
  kt::Node mn("ArgMin", "u8");
  mn.Int("select_last_index", 1);
  EXPECT_OK(host.Run(mn, 13, {host.Make(EPCTX_DTYPE_UINT8, {4}, u8)}));
  assert_true(Data<int64_t>(host.out(0))[0] == 2);
  kt::Node empty("ArgMin", "empty");
  empty.Int("axis", 1);
  EXPECT_FAIL(host.Run(empty, 13, {host.F({2, 0}, {})}), EPCTX_INVALID_ARGUMENT,
              "empty axis 1 of data [2,0]");
}

// ---- TopK ----------------------------------------------------------------------

void topk_ranks_ties_by_lower_index(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 6}, {5, 1, 5, 9, 1, 5});
  kt::Node big("TopK", "big");
  big.Outputs({"V", "I"});
  EXPECT_OK(host.Run(big, 11, {x, host.I64({1}, {4})}));
  EXPECT_SHAPE(host.out(0), 1, 4);
  EXPECT_FLOATS(host.out(0), 9, 5, 5, 5);
  const int64_t* i = Data<int64_t>(host.out(1));
  assert_true(i[0] == 3 && i[1] == 0 && i[2] == 2 && i[3] == 5);
  kt::Node small("TopK", "small");
  small.Outputs({"V", "I"}).Int("largest", 0).Int("axis", 1);
  EXPECT_OK(host.Run(small, 11, {x, host.I64({1}, {3})}));
  EXPECT_FLOATS(host.out(0), 1, 1, 5);
  i = Data<int64_t>(host.out(1));
  assert_true(i[0] == 1 && i[1] == 4 && i[2] == 0);
  // Opset 1: k is an attribute.
  kt::Node v1("TopK", "v1");
  v1.Outputs({"V", "I"}).Int("k", 1);
  EXPECT_OK(host.Run(v1, 1, {x}));
  EXPECT_FLOATS(host.out(0), 9);
  kt::Node zero("TopK", "zero");
  zero.Outputs({"V", "I"});
  EXPECT_OK(host.Run(zero, 11, {x, host.I64({1}, {0})}));
  EXPECT_SHAPE(host.out(1), 1, 0);
}

void topk_rejects_k_out_of_range(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 3}, {1, 2, 3, 4, 5, 6});
  kt::Node n("TopK", "tk");
  n.Outputs({"V", "I"});
  EXPECT_FAIL(host.Run(n, 11, {x, host.I64({1}, {4})}), EPCTX_INVALID_ARGUMENT,
              "TopK node 'tk': K 4 is out of range: expected [0, 3]");
  EXPECT_FAIL(host.Run(n, 11, {x, host.I64({1}, {-1})}), EPCTX_INVALID_ARGUMENT,
              "K -1 is out of range");
  EXPECT_FAIL(host.Run(n, 11, {x, host.I64({2}, {1, 1})}), EPCTX_INVALID_ARGUMENT,
              "K has 2 elements, expected at most 1");
  kt::Node v1("TopK", "v1");
  v1.Outputs({"V", "I"});
  EXPECT_FAIL(host.Run(v1, 9, {x}), EPCTX_INVALID_GRAPH, "attribute k must be present");
}

// ---- CumSum --------------------------------------------------------------------

void cumsum_exclusive_reverse_and_wrapping(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 3}, {1, 2, 3, 4, 5, 6});
  kt::Node n("CumSum", "cs");
  n.Int("exclusive", 1).Int("reverse", 1);
  EXPECT_OK(host.Run(n, 14, {x, host.I32({}, {-1})}));
  EXPECT_FLOATS(host.out(0), 5, 3, 0, 11, 6, 0);
  kt::Node ax0("CumSum", "ax0");
  EXPECT_OK(host.Run(ax0, 14, {x, host.I64({1}, {0})}));
  EXPECT_FLOATS(host.out(0), 1, 2, 3, 5, 7, 9);
  kt::Node wrap("CumSum", "wrap");
  EXPECT_OK(host.Run(wrap, 14,
                     {host.I32({2}, {std::numeric_limits<int32_t>::max(), 1}), host.I64({}, {0})}));
  assert_int_equal(Data<int32_t>(host.out(0))[1], std::numeric_limits<int32_t>::min());
  EXPECT_FAIL(host.Run(n, 14, {x, host.I64({2}, {0, 1})}), EPCTX_INVALID_ARGUMENT,
              "axis has 2 elements");
  EXPECT_FAIL(host.Run(n, 14, {x, host.I64({}, {2})}), EPCTX_INVALID_ARGUMENT,
              "axis 2 is out of range");
}

// ---- Softmax family ------------------------------------------------------------

void hardmax_marks_the_first_maximum_per_opset_semantics(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 2}, {3, 3, 1, 4});
  kt::Node n("Hardmax", "hm");
  EXPECT_OK(host.Run(n, 13, {x}));
  EXPECT_FLOATS(host.out(0), 1, 0, 0, 1);
  // Opset 11, axis 0: one group of all four elements.
  kt::Node old("Hardmax", "hm11");
  old.Int("axis", 0);
  EXPECT_OK(host.Run(old, 11, {x}));
  EXPECT_FLOATS(host.out(0), 0, 0, 0, 1);
}

void softmax_runs_in_float16_and_double(void**) {
  kt::Host host;
  kt::Node n("Softmax", "sm");
  EXPECT_OK(host.Run(n, 13, {Half(host, {2}, {0, 0})}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_FLOAT16);
  assert_true(HalfToFloat(Data<uint16_t>(host.out(0))[1]) == 0.5f);
  double d[3] = {0, std::log(2.0), std::log(5.0)};
  kt::Node lsm("LogSoftmax", "lsm");
  EXPECT_OK(host.Run(lsm, 13, {host.Make(EPCTX_DTYPE_DOUBLE, {3}, d)}));
  assert_true(std::fabs(Data<double>(host.out(0))[2] - std::log(5.0 / 8.0)) < 1e-12);
  int32_t i[2] = {1, 2};
  EXPECT_FAIL(host.Run(n, 13, {host.Make(EPCTX_DTYPE_INT32, {2}, i)}), EPCTX_NOT_IMPLEMENTED,
              "input has dtype int32");
}

// ---- Normalisations --------------------------------------------------------------

void layer_norm_writes_mean_and_inv_std_dev(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 2}, {1, 3, 2, 4});
  kt::Node n("LayerNormalization", "ln");
  n.Outputs({"Y", "Mean", "InvStdDev"}).Float("epsilon", 0.0f);
  EXPECT_OK(host.Run(n, 17, {x, host.F({2}, {1, 2}), host.F({2}, {0, 1})}));
  EXPECT_FLOATS(host.out(0), -1, 3, -1, 3);
  EXPECT_SHAPE(host.out(1), 2, 1);
  EXPECT_FLOATS(host.out(1), 2, 3);
  EXPECT_SHAPE(host.out(2), 2, 1);
  EXPECT_FLOATS(host.out(2), 1, 1);
  // Scale broadcasts over the normalised axes only when its shape allows.
  kt::Node bad("LayerNormalization", "ln_bad");
  EXPECT_FAIL(host.Run(bad, 17, {x, host.F({3}, {1, 1, 1})}), EPCTX_INVALID_ARGUMENT,
              "Scale shape [3] does not broadcast to X shape [2,2]");
  kt::Node stash("LayerNormalization", "ln_stash");
  stash.Int("stash_type", 7);
  EXPECT_FAIL(host.Run(stash, 17, {x, host.F({2}, {1, 1})}), EPCTX_INVALID_GRAPH,
              "stash_type 7 is not a float type");
}

void batch_norm_training_mode_updates_running_stats(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 1, 1, 1}, {1, 3});
  kt::Node n("BatchNormalization", "bn");
  n.Outputs({"Y", "running_mean", "running_var"})
      .Int("training_mode", 1)
      .Float("epsilon", 0.0f)
      .Float("momentum", 0.5f);
  EXPECT_OK(
      host.Run(n, 15, {x, host.F({1}, {1}), host.F({1}, {0}), host.F({1}, {0}), host.F({1}, {3})}));
  EXPECT_FLOATS(host.out(0), -1, 1);  // batch mean 2, batch variance 1
  EXPECT_FLOATS(host.out(1), 1);      // 0 * 0.5 + 2 * 0.5
  EXPECT_FLOATS(host.out(2), 2);      // 3 * 0.5 + 1 * 0.5
  kt::Node off("BatchNormalization", "bn_off");
  off.Outputs({"Y", "running_mean", "running_var"});
  EXPECT_FAIL(host.Run(off, 15,
                       {x, host.F({1}, {1}), host.F({1}, {0}), host.F({1}, {0}), host.F({1}, {3})}),
              EPCTX_INVALID_GRAPH, "needs training_mode=1");
  EXPECT_FAIL(
      host.Run(off, 9, {x, host.F({1}, {1}), host.F({1}, {0}), host.F({1}, {0}), host.F({1}, {3})}),
      EPCTX_NOT_IMPLEMENTED, "opset 9 (before 14)");
}

void instance_norm_lrn_and_mvn_normalise_their_groups(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 2, 2}, {1, 3, 4, 6});
  kt::Node in("InstanceNormalization", "in");
  in.Float("epsilon", 0.0f);
  EXPECT_OK(host.Run(in, 6, {x, host.F({2}, {2, 1}), host.F({2}, {0, 7})}));
  EXPECT_FLOATS(host.out(0), -2, 2, 6, 8);
  EXPECT_FAIL(
      host.Run(in, 6, {host.F({2, 2}, {1, 2, 3, 4}), host.F({2}, {1, 1}), host.F({2}, {0, 0})}),
      EPCTX_INVALID_ARGUMENT, "X must have rank >= 3");
  kt::Node lrn("LRN", "lrn");
  lrn.Int("size", 3).Float("alpha", 3.0f).Float("beta", 1.0f).Float("bias", 1.0f);
  // Channel 0 sees channels 0..1: 1 + 3/3 * (1 + 25) = 27.
  EXPECT_OK(host.Run(lrn, 13, {host.F({1, 2, 1}, {1, 5})}));
  EXPECT_FLOATS(host.out(0), 1.0f / 27, 5.0f / 27);
  kt::Node nosize("LRN", "nosize");
  EXPECT_FAIL(host.Run(nosize, 13, {x}), EPCTX_INVALID_GRAPH,
              "attribute size must be a positive integer, found 0");
  kt::Node mvn("MeanVarianceNormalization", "mvn");
  mvn.Ints("axes", {2});
  EXPECT_OK(host.Run(mvn, 13, {x}));
  EXPECT_FLOATS(host.out(0), -1, 1, -1, 1);
  kt::Node dflt("MeanVarianceNormalization", "mvn_default");
  EXPECT_FAIL(host.Run(dflt, 13, {x}), EPCTX_INVALID_ARGUMENT, "axes value 3 is out of range");
}

const CMUnitTest kTests[] = {
    cmocka_unit_test(opset18_reductions_read_axes_from_input_and_honour_noop),
    cmocka_unit_test(reduce_all_kinds_match_their_definitions),
    cmocka_unit_test(reduction_over_empty_axis_yields_the_identity),
    cmocka_unit_test(integer_reductions_wrap_instead_of_overflowing),
    cmocka_unit_test(rank0_reductions_apply_the_op_to_the_scalar),
    cmocka_unit_test(float16_and_bfloat16_reductions_round_once),
    cmocka_unit_test(reduce_rejects_bad_axes_and_types),
    cmocka_unit_test(argmax_argmin_break_ties_by_select_last_index),
    cmocka_unit_test(topk_ranks_ties_by_lower_index),
    cmocka_unit_test(topk_rejects_k_out_of_range),
    cmocka_unit_test(cumsum_exclusive_reverse_and_wrapping),
    cmocka_unit_test(hardmax_marks_the_first_maximum_per_opset_semantics),
    cmocka_unit_test(softmax_runs_in_float16_and_double),
    cmocka_unit_test(layer_norm_writes_mean_and_inv_std_dev),
    cmocka_unit_test(batch_norm_training_mode_updates_running_stats),
    cmocka_unit_test(instance_norm_lrn_and_mvn_normalise_their_groups),
};

}  // namespace

int main() { return cmocka_run_group_tests_name("reduce", kTests, nullptr, nullptr); }
