// SPDX-License-Identifier: Apache-2.0
// Spatial kernels beyond the node suite: 3-D Conv/ConvTranspose/pools
// against reference loops, MaxPool Indices, pool dtypes, LpPool, MaxUnpool,
// Resize/Upsample modes and dtypes, NonMaxSuppression, GridSample, RoiAlign,
// and hostile attributes and shapes for each.
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/elem.h"
#include "test_util.h"

namespace {

using epctx::kern::BF16ToFloat;
using epctx::kern::FloatToBF16;
using epctx::kern::FloatToHalf;
using epctx::kern::HalfToFloat;

const float* F32(TensorRef* t) { return static_cast<const float*>(t->data); }
const int64_t* I64(TensorRef* t) { return static_cast<const int64_t*>(t->data); }

TensorRef* Half(kt::Host& host, const kt::Dims& dims, const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(FloatToHalf(f));
  return host.Make(EPCTX_DTYPE_FLOAT16, dims, h.data());
}

// ---- Conv / ConvTranspose 3-D --------------------------------------------

// Direct 3-D convolution, one output element at a time.
std::vector<float> RefConv3d(const TensorRef* x, const TensorRef* w, const float* b,
                             const int64_t* s, const int64_t* d, const int64_t* p, int64_t group,
                             const kt::Dims& yd) {
  const int64_t C = x->dims[1], D = x->dims[2], H = x->dims[3], W = x->dims[4];
  const int64_t M = w->dims[0], Cg = w->dims[1], KD = w->dims[2], KH = w->dims[3], KW = w->dims[4];
  const float* X = static_cast<const float*>(x->data);
  const float* Wt = static_cast<const float*>(w->data);
  std::vector<float> y;
  for (int64_t n = 0; n < yd[0]; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / (M / group);
      for (int64_t od = 0; od < yd[2]; ++od)
        for (int64_t oh = 0; oh < yd[3]; ++oh)
          for (int64_t ow = 0; ow < yd[4]; ++ow) {
            double acc = b ? b[m] : 0;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t kd = 0; kd < KD; ++kd)
                for (int64_t kh = 0; kh < KH; ++kh)
                  for (int64_t kw = 0; kw < KW; ++kw) {
                    const int64_t id = od * s[0] - p[0] + kd * d[0];
                    const int64_t ih = oh * s[1] - p[1] + kh * d[1];
                    const int64_t iw = ow * s[2] - p[2] + kw * d[2];
                    if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    acc += X[(((n * C + g * Cg + c) * D + id) * H + ih) * W + iw] *
                           Wt[(((m * Cg + c) * KD + kd) * KH + kh) * KW + kw];
                  }
            y.push_back(static_cast<float>(acc));
          }
    }
  return y;
}

void conv_3d_matches_reference_loop(void**) {
  struct Case {
    int64_t c, m, group, k;
  };
  const Case cases[] = {{4, 6, 2, 3}, {3, 6, 3, 2}, {2, 4, 1, 1}};
  uint32_t seed = 10;
  for (const Case& cs : cases) {
    kt::Host host;
    TensorRef* x = host.Random({2, cs.c, 5, 6, 7}, ++seed);
    TensorRef* w = host.Random({cs.m, cs.c / cs.group, cs.k, cs.k, cs.k}, ++seed);
    TensorRef* b = host.Random({cs.m}, ++seed);
    const int64_t s[3] = {2, 1, 2}, d[3] = {1, 2, 1}, p[3] = {1, 0, 2};
    kt::Node node("Conv", "c3");
    node.Ints("strides", {s[0], s[1], s[2]})
        .Ints("dilations", {d[0], d[1], d[2]})
        .Ints("pads", {p[0], p[1], p[2], 1, 2, 0})
        .Int("group", cs.group);
    EXPECT_OK(host.Run(node, 11, {x, w, b}));
    kt::Dims yd = kt::ShapeVec(host.out(0));
    const int64_t span = cs.k;  // per-axis extents below
    assert_int_equal(yd[2], (5 + 1 + 1 - ((span - 1) * 1 + 1)) / 2 + 1);
    std::vector<float> want = RefConv3d(x, w, F32(b), s, d, p, cs.group, yd);
    assert_true(kt::MaxRelErr(F32(host.out(0)), want.data(), want.size()) < 1e-4f);
  }
}

void conv_transpose_3d_matches_scatter_reference(void**) {
  kt::Host host;
  TensorRef* x = host.Random({1, 2, 2, 3, 2}, 3);
  TensorRef* w = host.Random({2, 3, 2, 2, 3}, 4);
  kt::Node node("ConvTranspose", "ct3");
  node.Ints("strides", {2, 1, 2}).Ints("pads", {1, 0, 0, 0, 1, 1});
  EXPECT_OK(host.Run(node, 11, {x, w}));
  // full extents: (2-1)*2+2=4, (3-1)+2=4, (2-1)*2+3=5; minus pads.
  EXPECT_SHAPE(host.out(0), 1, 3, 3, 3, 4);
  std::vector<float> full(3 * 4 * 4 * 5, 0.0f);
  const float* X = F32(x);
  const float* W = F32(w);
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 2; ++k)
          for (int m = 0; m < 3; ++m)
            for (int a = 0; a < 2; ++a)
              for (int bb = 0; bb < 2; ++bb)
                for (int e = 0; e < 3; ++e)
                  full[((m * 4 + i * 2 + a) * 4 + j + bb) * 5 + k * 2 + e] +=
                      X[((c * 2 + i) * 3 + j) * 2 + k] *
                      W[(((c * 3 + m) * 2 + a) * 2 + bb) * 3 + e];
  const float* Y = F32(host.out(0));
  for (int m = 0; m < 3; ++m)
    for (int a = 0; a < 3; ++a)
      for (int bb = 0; bb < 3; ++bb)
        for (int e = 0; e < 4; ++e)
          assert_true(std::fabs(Y[((m * 3 + a) * 3 + bb) * 4 + e] -
                                full[((m * 4 + a + 1) * 4 + bb) * 5 + e]) < 1e-5f);
}

void conv_transpose_output_shape_and_same_pads(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 3}, {1, 2, 3});
  TensorRef* w = host.F({1, 1, 3}, {1, 1, 1});
  TensorRef* b = host.F({1}, {0.5f});
  // Full extent (3-1)*2+3 = 7: [1,1,3,2,5,3,3]; output_shape 9 keeps the tail
  // at the bias.
  kt::Node big("ConvTranspose", "big");
  big.Ints("strides", {2}).Ints("output_shape", {9});
  EXPECT_OK(host.Run(big, 11, {x, w, b}));
  EXPECT_FLOATS(host.out(0), 1.5f, 1.5f, 3.5f, 2.5f, 5.5f, 3.5f, 3.5f, 0.5f, 0.5f);
  // SAME_UPPER: output 6, the odd pad (1) at the end.
  kt::Node upper("ConvTranspose", "up");
  upper.Ints("strides", {2}).Str("auto_pad", "SAME_UPPER");
  EXPECT_OK(host.Run(upper, 11, {x, w}));
  EXPECT_FLOATS(host.out(0), 1, 1, 3, 2, 5, 3);
  kt::Node lower("ConvTranspose", "lo");
  lower.Ints("strides", {2}).Str("auto_pad", "SAME_LOWER");
  EXPECT_OK(host.Run(lower, 11, {x, w}));
  EXPECT_FLOATS(host.out(0), 1, 3, 2, 5, 3, 3);
  kt::Node bad("ConvTranspose", "bad");
  bad.Ints("output_shape", {1, 2});
  EXPECT_FAIL(host.Run(bad, 11, {x, w}), EPCTX_INVALID_GRAPH, "output_shape has 2 values");
}

void window_rejects_4d_and_huge_values(void**) {
  kt::Host host;
  kt::Node node("Conv", "c4");
  EXPECT_FAIL(
      host.Run(node, 11, {host.Random({1, 1, 2, 2, 2, 2}, 1), host.Random({1, 1, 1, 1, 1, 1}, 2)}),
      EPCTX_NOT_IMPLEMENTED, "4-D convolution");
  kt::Node pads("MaxPool", "mp");
  pads.Ints("kernel_shape", {1, 1, 1}).Ints("pads", {0, 0, int64_t{1} << 40, 0, 0, 0});
  EXPECT_FAIL(host.Run(pads, 12, {host.Random({1, 1, 2, 2, 2}, 3)}), EPCTX_INVALID_GRAPH,
              "attribute pads[2]");
  // An empty batch allows any spatial sizes; their product must still fit.
  const int64_t big = int64_t{1} << 30;
  kt::Node empty("MaxPool", "empty");
  empty.Ints("kernel_shape", {1, 1, 1});
  EXPECT_FAIL(host.Run(empty, 12, {host.Make(EPCTX_DTYPE_FLOAT, {0, 1, big, big, big})}),
              EPCTX_INVALID_ARGUMENT, "spatial input sizes");
  kt::Node ks("AveragePool", "ap");
  ks.Ints("kernel_shape", {2, 2});
  EXPECT_FAIL(host.Run(ks, 11, {host.Random({1, 1, 2, 2, 2}, 3)}), EPCTX_INVALID_GRAPH,
              "kernel_shape has 2 values, expected 3");
}

// ---- Pools ------------------------------------------------------------------

void max_pool_indices_follow_storage_order(void**) {
  kt::Host host;
  // 2 planes of 3x3; 2x2 windows, stride 1.
  std::vector<float> v(18);
  for (int i = 0; i < 18; ++i) v[i] = static_cast<float>((i * 7) % 11);
  TensorRef* x = host.F({1, 2, 3, 3}, v);
  kt::Node row("MaxPool", "row");
  row.Ints("kernel_shape", {2, 2}).Outputs({"Y", "I"});
  EXPECT_OK(host.Run(row, 12, {x}));
  EXPECT_SHAPE(host.out(1), 1, 2, 2, 2);
  const int64_t* I = I64(host.out(1));
  const float* Y = F32(host.out(0));
  for (int i = 0; i < 8; ++i) assert_true(v[I[i]] == Y[i]);
  // plane 0 = 0 7 3 / 10 6 2 / 9 5 1: windows' maxima 10@3, 7@1, 10@3, 6@4.
  assert_int_equal(I[0], 3);
  assert_int_equal(I[1], 1);
  assert_int_equal(I[3], 4);
  assert_true(I[4] >= 9);
  kt::Node col("MaxPool", "col");
  col.Ints("kernel_shape", {2, 2}).Int("storage_order", 1).Outputs({"Y", "I"});
  EXPECT_OK(host.Run(col, 12, {x}));
  const int64_t* J = I64(host.out(1));
  // (h, w) = (1, 0) -> 1 column-major; (0, 1) -> 3; (1, 1) -> 4.
  assert_int_equal(J[0], 1);
  assert_int_equal(J[1], 3);
  assert_int_equal(J[3], 4);
  // 3-D, row-major: the maximum's flat offset inside the volume.
  std::vector<float> v3(8, 0.0f);
  v3[6] = 5.0f;  // (d, h, w) = (1, 1, 0)
  kt::Node vol("MaxPool", "vol");
  vol.Ints("kernel_shape", {2, 2, 2}).Outputs({"Y", "I"});
  EXPECT_OK(host.Run(vol, 12, {host.F({1, 1, 2, 2, 2}, v3)}));
  assert_int_equal(I64(host.out(1))[0], 6);
  kt::Node volc("MaxPool", "volc");
  volc.Ints("kernel_shape", {2, 2, 2}).Int("storage_order", 1).Outputs({"Y", "I"});
  EXPECT_OK(host.Run(volc, 12, {host.F({1, 1, 2, 2, 2}, v3)}));
  assert_int_equal(I64(host.out(1))[0], 1 + 1 * 2);  // d + h*D + w*D*H
}

void max_pool_integer_and_half_dtypes(void**) {
  kt::Host host;
  const uint8_t u[4] = {200, 3, 255, 7};
  kt::Node node("MaxPool", "u8");
  node.Ints("kernel_shape", {2});
  EXPECT_OK(host.Run(node, 12, {host.Make(EPCTX_DTYPE_UINT8, {1, 1, 4}, u)}));
  const uint8_t* yu = static_cast<const uint8_t*>(host.out(0)->data);
  assert_int_equal(yu[0], 200);
  assert_int_equal(yu[1], 255);
  assert_int_equal(yu[2], 255);
  const int8_t s[3] = {-128, -128, -5};
  EXPECT_OK(host.Run(node, 12, {host.Make(EPCTX_DTYPE_INT8, {1, 1, 3}, s)}));
  const int8_t* ys = static_cast<const int8_t*>(host.out(0)->data);
  assert_int_equal(ys[0], -128);
  assert_int_equal(ys[1], -5);
  // float16 average rounds once: (1 + 2^-10) averaged with 1 is 1 + 2^-11,
  // a tie that rounds to even (1.0).
  kt::Node avg("AveragePool", "h");
  avg.Ints("kernel_shape", {2});
  EXPECT_OK(host.Run(avg, 11, {Half(host, {1, 1, 2}, {1.0f + 1.0f / 1024, 1.0f})}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_FLOAT16);
  assert_true(HalfToFloat(static_cast<const uint16_t*>(host.out(0)->data)[0]) == 1.0f);
  kt::Node bad("AveragePool", "i8");
  bad.Ints("kernel_shape", {2});
  EXPECT_FAIL(host.Run(bad, 11, {host.Make(EPCTX_DTYPE_INT8, {1, 1, 3}, s)}), EPCTX_NOT_IMPLEMENTED,
              "int8");
}

void average_pool_3d_counts_padding_when_asked(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  kt::Node ex("AveragePool", "ex");
  ex.Ints("kernel_shape", {2, 2, 2}).Ints("pads", {1, 0, 0, 0, 0, 0});
  EXPECT_OK(host.Run(ex, 11, {x}));
  EXPECT_SHAPE(host.out(0), 1, 1, 2, 1, 1);
  EXPECT_FLOATS(host.out(0), 2.5f, 4.5f);  // first window holds only the d=0 slab
  kt::Node in("AveragePool", "in");
  in.Ints("kernel_shape", {2, 2, 2}).Ints("pads", {1, 0, 0, 0, 0, 0}).Int("count_include_pad", 1);
  EXPECT_OK(host.Run(in, 11, {x}));
  EXPECT_FLOATS(host.out(0), 10.0f / 8, 4.5f);
}

void lp_pools_compute_p_norms(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 4}, {3, -4, 1, 2});
  kt::Node l2("LpPool", "l2");
  l2.Ints("kernel_shape", {2}).Ints("strides", {2});
  EXPECT_OK(host.Run(l2, 11, {x}));
  EXPECT_FLOATS(host.out(0), 5.0f, std::sqrt(5.0f));
  kt::Node l1("LpPool", "l1");
  l1.Ints("kernel_shape", {3}).Int("p", 1);
  EXPECT_OK(host.Run(l1, 11, {x}));
  EXPECT_FLOATS(host.out(0), 8.0f, 7.0f);
  kt::Node g("GlobalLpPool", "g");
  EXPECT_OK(host.Run(g, 2, {x}));
  EXPECT_SHAPE(host.out(0), 1, 1, 1);
  EXPECT_FLOATS(host.out(0), std::sqrt(30.0f));
  kt::Node bad("LpPool", "p0");
  bad.Ints("kernel_shape", {2}).Int("p", 0);
  EXPECT_FAIL(host.Run(bad, 11, {x}), EPCTX_INVALID_GRAPH, "p is 0");
}

void max_unpool_scatters_and_checks_offsets(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 2}, {7, 9});
  kt::Node node("MaxUnpool", "mu");
  node.Ints("kernel_shape", {2}).Ints("strides", {2});
  EXPECT_OK(host.Run(node, 11, {x, host.I64({1, 1, 2}, {1, 2})}));
  EXPECT_SHAPE(host.out(0), 1, 1, 4);
  EXPECT_FLOATS(host.out(0), 0, 7, 9, 0);
  EXPECT_OK(host.Run(node, 11, {x, host.I64({1, 1, 2}, {0, 5}), host.I64({3}, {1, 1, 6})}));
  EXPECT_FLOATS(host.out(0), 7, 0, 0, 0, 0, 9);
  EXPECT_FAIL(host.Run(node, 11, {x, host.I64({1, 1, 2}, {0, 4})}), EPCTX_INVALID_ARGUMENT,
              "I[1] is 4");
  EXPECT_FAIL(host.Run(node, 11, {x, host.I64({1, 1, 2}, {0, 1}), host.I64({3}, {1, 1, 3})}),
              EPCTX_INVALID_ARGUMENT, "fewer elements");
}

// ---- Resize / Upsample ------------------------------------------------------

void resize_cubic_keeps_constants_and_weights_keys(void**) {
  kt::Host host;
  kt::Node node("Resize", "cub");
  node.Str("mode", "cubic").Str("coordinate_transformation_mode", "asymmetric");
  TensorRef* x = host.F({4}, {0, 1, 0, 0});
  EXPECT_OK(host.Run(node, 13, {x, nullptr, host.F({1}, {2})}));
  // Output 1 samples x=0.5: taps -1..2 clamped = [0, 0, 1, 0] with Keys
  // a=-0.75 weights at s=0.5: c2 = 0.59375.
  const float* Y = F32(host.out(0));
  assert_true(std::fabs(Y[1] - 0.59375f) < 1e-6f);
  assert_true(std::fabs(Y[2] - 1.0f) < 1e-6f);
  kt::Node ex("Resize", "ex");
  ex.Str("mode", "cubic").Int("exclude_outside", 1);
  EXPECT_OK(host.Run(ex, 13, {host.F({1, 3}, {2, 2, 2}), nullptr, host.F({2}, {1, 2.5f})}));
  for (float v : kt::ToVec(host.out(0))) assert_true(std::fabs(v - 2.0f) < 1e-6f);
  kt::Node bad("Resize", "bad");
  bad.Str("mode", "linear").Int("exclude_outside", 1);
  EXPECT_FAIL(host.Run(bad, 13, {x, nullptr, host.F({1}, {2})}), EPCTX_INVALID_GRAPH,
              "exclude_outside");
}

void resize_tf_crop_and_resize_extrapolates(void**) {
  kt::Host host;
  kt::Node node("Resize", "crop");
  node.Str("mode", "linear")
      .Str("coordinate_transformation_mode", "tf_crop_and_resize")
      .Float("extrapolation_value", -1.0f);
  TensorRef* x = host.F({3}, {10, 20, 30});
  // roi [0.5, 1.5] over 5 outputs -> coordinates 1, 1.5, 2, 2.5, 3; past 2
  // is outside. (With as many outputs as inputs the scale is 1 and, as in
  // ORT, the input is copied unchanged.)
  EXPECT_OK(host.Run(node, 13, {x, host.F({2}, {0.5f, 1.5f}), nullptr, host.I64({1}, {5})}));
  EXPECT_FLOATS(host.out(0), 20, 25, 30, -1, -1);
  EXPECT_FAIL(host.Run(node, 13, {x, host.F({3}, {0, 1, 2}), nullptr, host.I64({1}, {3})}),
              EPCTX_INVALID_ARGUMENT, "roi has 3 values, expected 2");
}

void resize_opset18_axes_and_aspect_policy(void**) {
  kt::Host host;
  TensorRef* x = host.Random({1, 2, 4, 6}, 9);
  kt::Node axes("Resize", "axes");
  axes.Ints("axes", {-1, 2});
  EXPECT_OK(host.Run(axes, 18, {x, nullptr, host.F({2}, {0.5f, 0.5f})}));
  EXPECT_SHAPE(host.out(0), 1, 2, 2, 3);
  kt::Node pol("Resize", "pol");
  pol.Ints("axes", {2, 3}).Str("keep_aspect_ratio_policy", "not_larger");
  EXPECT_OK(host.Run(pol, 18, {x, nullptr, nullptr, host.I64({2}, {2, 2})}));
  EXPECT_SHAPE(host.out(0), 1, 2, 1, 2);  // scale min(2/4, 2/6) = 1/3
  kt::Node dup("Resize", "dup");
  dup.Ints("axes", {3, -1});
  EXPECT_FAIL(host.Run(dup, 18, {x, nullptr, host.F({2}, {1, 1})}), EPCTX_INVALID_GRAPH,
              "axes lists axis 3 twice");
  kt::Node p("Resize", "p");
  p.Str("keep_aspect_ratio_policy", "squash");
  EXPECT_FAIL(host.Run(p, 18, {x, nullptr, host.F({4}, {1, 1, 1, 1})}), EPCTX_INVALID_GRAPH,
              "keep_aspect_ratio_policy 'squash'");
}

void resize_rejects_hostile_scales_and_rank0(void**) {
  kt::Host host;
  kt::Node node("Resize", "h");
  TensorRef* x = host.F({2}, {1, 2});
  EXPECT_FAIL(host.Run(node, 13, {x, nullptr, host.F({1}, {NAN})}), EPCTX_INVALID_ARGUMENT,
              "scales[0]");
  EXPECT_FAIL(host.Run(node, 13, {x, nullptr, host.F({1}, {1e10f})}), EPCTX_INVALID_ARGUMENT,
              "expected a value in (0, 1e9]");
  EXPECT_FAIL(
      host.Run(node, 13, {host.F({1, 1, 1}, {1}), nullptr, host.F({3}, {1e9f, 1e9f, 1e9f})}),
      EPCTX_INVALID_ARGUMENT, "output Y");
  EXPECT_FAIL(host.Run(node, 13, {x, nullptr, nullptr, host.I64({1}, {-1})}),
              EPCTX_INVALID_ARGUMENT, "sizes[0] is -1");
  EXPECT_FAIL(host.Run(node, 13, {host.F({}, {1}), nullptr, host.F({1}, {2})}),
              EPCTX_INVALID_ARGUMENT, "rank >= 1");
}

void resize_half_bfloat16_and_uint8(void**) {
  kt::Host host;
  kt::Node lin("Resize", "lin");
  lin.Str("mode", "linear").Str("coordinate_transformation_mode", "align_corners");
  // float16: midpoint of 1 and 1+2^-10 is a tie, rounds to even (1.0).
  EXPECT_OK(host.Run(
      lin, 13,
      {Half(host, {2}, {1.0f, 1.0f + 1.0f / 1024}), nullptr, nullptr, host.I64({1}, {3})}));
  const uint16_t* h = static_cast<const uint16_t*>(host.out(0)->data);
  assert_true(HalfToFloat(h[1]) == 1.0f);
  assert_true(HalfToFloat(h[2]) == 1.0f + 1.0f / 1024);
  std::vector<uint16_t> b = {FloatToBF16(1.0f), FloatToBF16(3.0f)};
  EXPECT_OK(host.Run(
      lin, 13,
      {host.Make(EPCTX_DTYPE_BFLOAT16, {2}, b.data()), nullptr, nullptr, host.I64({1}, {3})}));
  assert_true(BF16ToFloat(static_cast<const uint16_t*>(host.out(0)->data)[1]) == 2.0f);
  // uint8 truncates the interpolated value: (0 + 255) / 2 = 127.5 -> 127.
  const uint8_t u[2] = {0, 255};
  EXPECT_OK(host.Run(lin, 13,
                     {host.Make(EPCTX_DTYPE_UINT8, {2}, u), nullptr, nullptr, host.I64({1}, {3})}));
  assert_int_equal(static_cast<const uint8_t*>(host.out(0)->data)[1], 127);
  kt::Node cub("Resize", "cub");
  cub.Str("mode", "cubic");
  const int16_t s[2] = {0, 1};
  EXPECT_FAIL(
      host.Run(cub, 13,
               {host.Make(EPCTX_DTYPE_INT16, {2}, s), nullptr, nullptr, host.I64({1}, {3})}),
      EPCTX_NOT_IMPLEMENTED, "int16");
}

// align_corners with scales divides by in * scale - 1, as the ONNX reference
// (test_resize_downsample_scales_linear_align_corners): [1 2 3 4] by 0.6 is
// 2 outputs (floor 2.4), the second at x = 3 / 1.4 = 2.142857 -> 3.142857.
// Given as sizes, the same 2 outputs divide by 2 - 1 and land on 4.
void resize_align_corners_uses_scale_length_for_scales(void**) {
  kt::Host host;
  kt::Node lin("Resize", "lin");
  lin.Str("mode", "linear").Str("coordinate_transformation_mode", "align_corners");
  EXPECT_OK(host.Run(lin, 13, {host.F({1, 4}, {1, 2, 3, 4}), nullptr, host.F({2}, {1.0f, 0.6f})}));
  const float* y = static_cast<const float*>(host.out(0)->data);
  assert_int_equal(host.out(0)->dims[1], 2);
  assert_true(y[0] == 1.0f);
  assert_true(std::fabs(y[1] - (1.0f + 3.0f / 1.4f)) < 1e-6f);
  EXPECT_OK(
      host.Run(lin, 13, {host.F({1, 4}, {1, 2, 3, 4}), nullptr, nullptr, host.I64({2}, {1, 2})}));
  y = static_cast<const float*>(host.out(0)->data);
  assert_true(y[0] == 1.0f && y[1] == 4.0f);
}

// An axis of more than 2^20 tap cells has no index table: its taps are
// computed as the walk reaches each coordinate (a Resize to 2 GiB along one
// axis took a 4 GB table). Same values as the table: linear align_corners
// is exact, nearest splits the axis into equal thirds, rows stay apart.
void resize_long_axis_computes_taps_without_a_table(void**) {
  kt::Host host;
  const int64_t n = 1000001;  // linear: 2 taps each, 2,000,002 cells
  kt::Node lin("Resize", "lin");
  lin.Str("mode", "linear").Str("coordinate_transformation_mode", "align_corners");
  EXPECT_OK(host.Run(
      lin, 13, {host.F({2, 3}, {0, 1, 2, 10, 11, 12}), nullptr, nullptr, host.I64({2}, {2, n})}));
  const float* y = static_cast<const float*>(host.out(0)->data);
  for (int64_t o = 0; o < n; o += 997) {
    const float want = static_cast<float>(o) * 2.0f / static_cast<float>(n - 1);
    if (std::fabs(y[o] - want) > 1e-4f || std::fabs(y[n + o] - (want + 10.0f)) > 1e-4f)
      fail_msg("y[%lld] = %g, %g; expected %g, %g", (long long)o, y[o], y[n + o], want,
               want + 10.0f);
  }
  assert_true(y[n - 1] == 2.0f);
  kt::Node near("Resize", "near");
  const int64_t m = 3000000;  // nearest: 1 tap each
  EXPECT_OK(
      host.Run(near, 13, {host.F({1, 3}, {0, 1, 2}), nullptr, nullptr, host.I64({2}, {1, m})}));
  y = static_cast<const float*>(host.out(0)->data);
  int64_t count[3] = {0, 0, 0};
  for (int64_t o = 0; o < m; ++o) {
    if (o && y[o] < y[o - 1]) fail_msg("y[%lld] = %g after %g", (long long)o, y[o], y[o - 1]);
    count[static_cast<int>(y[o])]++;
  }
  for (int v = 0; v < 3; ++v) assert_true(count[v] >= m / 3 - 2 && count[v] <= m / 3 + 2);
}

void upsample_reads_scales_by_opset(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 2}, {1, 2});
  kt::Node v7("Upsample", "u7");
  v7.Floats("scales", {1, 2});
  EXPECT_OK(host.Run(v7, 7, {x}));
  EXPECT_FLOATS(host.out(0), 1, 1, 2, 2);
  kt::Node v9("Upsample", "u9");
  v9.Str("mode", "linear");
  EXPECT_OK(host.Run(v9, 9, {x, host.F({2}, {1, 2})}));
  EXPECT_FLOATS(host.out(0), 1, 1.5f, 2, 2);
  EXPECT_FAIL(host.Run(v9, 9, {x, host.F({2}, {1, 0.5f})}), EPCTX_INVALID_ARGUMENT,
              "expected >= 1");
  kt::Node none("Upsample", "none");
  EXPECT_FAIL(host.Run(none, 8, {x}), EPCTX_INVALID_GRAPH, "scales is missing");
}

// ---- NonMaxSuppression ------------------------------------------------------

void nms_orders_by_score_and_limits(void**) {
  kt::Host host;
  // Box 0 and 1 overlap (IoU 0.81), box 2 apart; scores 0.9, 0.95, 0.5.
  TensorRef* boxes = host.F({1, 3, 4}, {0, 0, 1, 1, 0, 0, 0.9f, 0.9f, 5, 5, 6, 6});
  TensorRef* scores = host.F({1, 1, 3}, {0.9f, 0.95f, 0.5f});
  kt::Node node("NonMaxSuppression", "nms");
  EXPECT_OK(host.Run(node, 11, {boxes, scores, host.I64({1}, {10}), host.F({1}, {0.5f})}));
  EXPECT_SHAPE(host.out(0), 2, 3);
  const int64_t* y = I64(host.out(0));
  assert_int_equal(y[2], 1);
  assert_int_equal(y[5], 2);
  // score_threshold is strict; limit 1 keeps the best only.
  EXPECT_OK(host.Run(
      node, 11, {boxes, scores, host.I64({1}, {1}), host.F({1}, {0.5f}), host.F({1}, {0.95f})}));
  EXPECT_SHAPE(host.out(0), 0, 3);
  // Absent max_output_boxes_per_class selects nothing.
  EXPECT_OK(host.Run(node, 11, {boxes, scores}));
  EXPECT_SHAPE(host.out(0), 0, 3);
  EXPECT_FAIL(host.Run(node, 11, {boxes, scores, host.I64({1}, {1}), host.F({1}, {1.5f})}),
              EPCTX_INVALID_ARGUMENT, "iou_threshold is 1.5");
  EXPECT_FAIL(host.Run(node, 11, {boxes, host.F({1, 1, 2}, {1, 2})}), EPCTX_INVALID_ARGUMENT,
              "scores must have shape [1, classes, 3]");
  kt::Node cpb("NonMaxSuppression", "cpb");
  cpb.Int("center_point_box", 2);
  EXPECT_FAIL(host.Run(cpb, 11, {boxes, scores}), EPCTX_INVALID_GRAPH, "center_point_box is 2");
}

// ---- GridSample -------------------------------------------------------------

void grid_sample_nearest_rounds_half_to_even_and_pads(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 1, 4}, {10, 20, 30, 40});
  // align_corners: x = (n + 1) / 2 * 3; n = -2/3 -> 0.5 -> 0; n = 0 -> 1.5 -> 2.
  kt::Node node("GridSample", "gs");
  node.Str("mode", "nearest").Int("align_corners", 1);
  EXPECT_OK(host.Run(node, 16, {x, host.F({1, 1, 2, 2}, {-2.0f / 3, 0, 0, 0})}));
  EXPECT_FLOATS(host.out(0), 10, 30);
  // Far outside: zeros gives 0, border the edge, reflection folds back.
  TensorRef* far = host.F({1, 1, 1, 2}, {3.0f, 0});
  kt::Node z("GridSample", "z");
  EXPECT_OK(host.Run(z, 16, {x, far}));
  EXPECT_FLOATS(host.out(0), 0);
  kt::Node b("GridSample", "b");
  b.Str("padding_mode", "border");
  EXPECT_OK(host.Run(b, 16, {x, far}));
  EXPECT_FLOATS(host.out(0), 40);
  kt::Node r("GridSample", "r");
  r.Str("padding_mode", "reflection").Str("mode", "nearest");
  // n = 3 -> x = 7.5, reflected about [-0.5, 3.5] -> -0.5 -> rounds to 0 (even).
  EXPECT_OK(host.Run(r, 16, {x, far}));
  EXPECT_FLOATS(host.out(0), 10);
  EXPECT_OK(host.Run(b, 16, {x, host.F({1, 1, 1, 2}, {NAN, 1e30f})}));
  kt::Node bad("GridSample", "bad");
  bad.Str("mode", "linear");
  EXPECT_FAIL(host.Run(bad, 16, {x, far}), EPCTX_INVALID_GRAPH, "expected bilinear");
  EXPECT_FAIL(host.Run(z, 16, {x, host.F({1, 1, 1, 3}, {0, 0, 0})}), EPCTX_INVALID_ARGUMENT,
              "grid must have shape");
}

void grid_sample_3d_linear_from_opset20(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  TensorRef* grid = host.F({1, 1, 1, 1, 3}, {0, 0, 0});  // the centre
  kt::Node node("GridSample", "g3");
  node.Int("align_corners", 1);
  EXPECT_OK(host.Run(node, 20, {x, grid}));
  EXPECT_FLOATS(host.out(0), 3.5f);
  EXPECT_FAIL(host.Run(node, 16, {x, grid}), EPCTX_INVALID_ARGUMENT, "rank 4");
  kt::Node cub("GridSample", "c3");
  cub.Str("mode", "cubic");
  EXPECT_FAIL(host.Run(cub, 20, {x, grid}), EPCTX_NOT_IMPLEMENTED, "cubic");
}

// ---- RoiAlign ---------------------------------------------------------------

void roi_align_avg_max_and_bad_rois(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 2, 2}, {1, 2, 3, 4});
  TensorRef* rois = host.F({1, 4}, {0, 0, 2, 2});
  kt::Node avg("RoiAlign", "avg");
  avg.Int("sampling_ratio", 1);
  // half_pixel: the ROI is [-0.5, 1.5]; one sample at its centre (0.5, 0.5).
  EXPECT_OK(host.Run(avg, 16, {x, rois, host.I64({1}, {0})}));
  EXPECT_FLOATS(host.out(0), 2.5f);
  kt::Node mx("RoiAlign", "mx");
  mx.Str("mode", "max").Int("sampling_ratio", 1);
  EXPECT_OK(host.Run(mx, 16, {x, rois, host.I64({1}, {0})}));
  EXPECT_FLOATS(host.out(0), 1.0f);  // largest weighted corner: 0.25 * 4
  EXPECT_FAIL(host.Run(avg, 16, {x, rois, host.I64({1}, {1})}), EPCTX_INVALID_ARGUMENT,
              "batch_indices[0] is 1");
  kt::Node huge("RoiAlign", "huge");
  EXPECT_FAIL(host.Run(huge, 16, {x, host.F({1, 4}, {0, 0, 1e30f, 1e30f}), host.I64({1}, {0})}),
              EPCTX_INVALID_ARGUMENT, "more than the input");
  kt::Node ct("RoiAlign", "ct");
  ct.Str("coordinate_transformation_mode", "corner");
  EXPECT_FAIL(host.Run(ct, 16, {x, rois, host.I64({1}, {0})}), EPCTX_INVALID_GRAPH,
              "coordinate_transformation_mode is 'corner'");
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(conv_3d_matches_reference_loop),
      cmocka_unit_test(conv_transpose_3d_matches_scatter_reference),
      cmocka_unit_test(conv_transpose_output_shape_and_same_pads),
      cmocka_unit_test(window_rejects_4d_and_huge_values),
      cmocka_unit_test(max_pool_indices_follow_storage_order),
      cmocka_unit_test(max_pool_integer_and_half_dtypes),
      cmocka_unit_test(average_pool_3d_counts_padding_when_asked),
      cmocka_unit_test(lp_pools_compute_p_norms),
      cmocka_unit_test(max_unpool_scatters_and_checks_offsets),
      cmocka_unit_test(resize_cubic_keeps_constants_and_weights_keys),
      cmocka_unit_test(resize_tf_crop_and_resize_extrapolates),
      cmocka_unit_test(resize_opset18_axes_and_aspect_policy),
      cmocka_unit_test(resize_rejects_hostile_scales_and_rank0),
      cmocka_unit_test(resize_half_bfloat16_and_uint8),
      cmocka_unit_test(resize_long_axis_computes_taps_without_a_table),
      cmocka_unit_test(resize_align_corners_uses_scale_length_for_scales),
      cmocka_unit_test(upsample_reads_scales_by_opset),
      cmocka_unit_test(nms_orders_by_score_and_limits),
      cmocka_unit_test(grid_sample_nearest_rounds_half_to_even_and_pads),
      cmocka_unit_test(grid_sample_3d_linear_from_opset20),
      cmocka_unit_test(roi_align_avg_max_and_bad_rois),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
