// SPDX-License-Identifier: Apache-2.0
// Quantization, integer products, MatMul/Gemm dtypes, losses and the
// training optimisers: rounding and saturation, zero-point layouts, 16-bit
// float rounding, integer wrap, and the error codes and messages of bad
// attributes and shapes. The node suite covers the common float cases.
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/elem.h"
#include "test_util.h"

namespace {

using epctx::kern::FloatToBF16;
using epctx::kern::BF16ToFloat;
using epctx::kern::FloatToHalf;
using epctx::kern::HalfToFloat;

template <typename T>
TensorRef* Typed(kt::Host& h, int32_t dtype, const kt::Dims& dims, const std::vector<T>& v) {
  TensorRef* t = h.Make(dtype, dims, nullptr);
  if (v.size() != t->elements()) abort();
  if (!v.empty()) memcpy(t->data, v.data(), v.size() * sizeof(T));
  return t;
}
TensorRef* U8(kt::Host& h, const kt::Dims& d, const std::vector<uint8_t>& v) {
  return Typed(h, EPCTX_DTYPE_UINT8, d, v);
}
TensorRef* I8(kt::Host& h, const kt::Dims& d, const std::vector<int8_t>& v) {
  return Typed(h, EPCTX_DTYPE_INT8, d, v);
}
TensorRef* H16(kt::Host& h, const kt::Dims& d, const std::vector<float>& v) {
  std::vector<uint16_t> b;
  for (float f : v) b.push_back(FloatToHalf(f));
  return Typed(h, EPCTX_DTYPE_FLOAT16, d, b);
}
TensorRef* BF16(kt::Host& h, const kt::Dims& d, const std::vector<float>& v) {
  std::vector<uint16_t> b;
  for (float f : v) b.push_back(FloatToBF16(f));
  return Typed(h, EPCTX_DTYPE_BFLOAT16, d, b);
}
template <typename T>
std::vector<T> Vals(const TensorRef* t) {
  const T* p = static_cast<const T*>(t->data);
  return std::vector<T>(p, p + t->elements());
}
template <typename T>
void ExpectVals(const TensorRef* t, const std::vector<T>& want, int line) {
  std::vector<T> got = Vals<T>(t);
  if (got.size() != want.size())
    fail_msg("line %d: %zu values, want %zu", line, got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      fail_msg("line %d: element %zu is %lld, want %lld", line, i, static_cast<long long>(got[i]),
               static_cast<long long>(want[i]));
}
#define EXPECT_VALS(T, t, ...) ExpectVals<T>(t, std::vector<T>{__VA_ARGS__}, __LINE__)

// ---- QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear ------------

void quantize_rounds_half_to_even_and_saturates(void**) {
  kt::Host h;
  TensorRef* x = h.F({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f, -300.0f, NAN});
  kt::Node q("QuantizeLinear", "q");
  EXPECT_OK(h.Run(q, 13, {x, h.F({}, {1.0f}), I8(h, {}, {0})}));
  EXPECT_VALS(int8_t, h.out(0), 0, 2, 2, 0, -2, 127, -128, -128);
  // uint8 default zero point when absent; zero point shifts before saturation.
  EXPECT_OK(h.Run(q, 13, {x, h.F({}, {1.0f})}));
  assert_int_equal(h.out(0)->dtype, EPCTX_DTYPE_UINT8);
  EXPECT_VALS(uint8_t, h.out(0), 0, 2, 2, 0, 0, 255, 0, 0);
  EXPECT_OK(h.Run(q, 13, {x, h.F({1}, {0.5f}), U8(h, {1}, {10})}));
  EXPECT_VALS(uint8_t, h.out(0), 11, 13, 15, 9, 7, 255, 0, 0);
}

void quantize_per_axis_and_blocked_int16(void**) {
  kt::Host h;
  TensorRef* x = h.F({2, 4}, {1, 2, 3, 4, -1, -2, -3, -4});
  kt::Node q("QuantizeLinear", "q");
  q.Int("axis", 0);
  EXPECT_OK(h.Run(q, 13, {x, h.F({2}, {1.0f, 0.5f}), U8(h, {2}, {0, 100})}));
  EXPECT_VALS(uint8_t, h.out(0), 1, 2, 3, 4, 98, 96, 94, 92);
  // Opset 21 blocks along axis 1 (block 3: columns {0,1,2} and {3}), int16.
  kt::Node b("QuantizeLinear", "qb");
  b.Int("axis", 1).Int("block_size", 3);
  TensorRef* zp = Typed<int16_t>(h, EPCTX_DTYPE_INT16, {2, 2}, {0, 1000, -5, 0});
  EXPECT_OK(h.Run(b, 21, {x, h.F({2, 2}, {0.001f, 0.01f, 1.0f, 2.0f}), zp}));
  EXPECT_VALS(int16_t, h.out(0), 1000, 2000, 3000, 1400, -6, -7, -8, -2);
  EXPECT_FAIL(h.Run(b, 21, {x, h.F({2, 1}, {1, 1}), nullptr}), EPCTX_INVALID_ARGUMENT,
              "blocked y_scale must have the shape of x [2,4] with dimension 1 = ceil(4 / "
              "block_size 3) = 2, found [2,1]");
}

void quantize_rejects_bad_scale_layouts(void**) {
  kt::Host h;
  TensorRef* x = h.F({2, 3}, {1, 2, 3, 4, 5, 6});
  kt::Node q("QuantizeLinear", "q");
  EXPECT_FAIL(h.Run(q, 10, {x, h.F({2}, {1, 1})}), EPCTX_INVALID_ARGUMENT,
              "y_scale must be a scalar before opset 13, found shape [2]");
  EXPECT_FAIL(h.Run(q, 13, {x, h.F({2}, {1, 1})}), EPCTX_INVALID_ARGUMENT,
              "per-axis y_scale must have shape [3] (x [2,3], axis 1), found [2]");
  EXPECT_FAIL(h.Run(q, 13, {x, h.F({}, {1}), U8(h, {2}, {0, 0})}), EPCTX_INVALID_ARGUMENT,
              "y_zero_point [2] must have the shape of y_scale []");
  kt::Node ax("QuantizeLinear", "qa");
  ax.Int("axis", 2);
  EXPECT_FAIL(h.Run(ax, 13, {x, h.F({2}, {1, 1})}), EPCTX_INVALID_ARGUMENT,
              "axis 2 is out of range");
  EXPECT_FAIL(h.Run(q, 13, {x, h.F({}, {1}), h.I32({}, {0})}), EPCTX_NOT_IMPLEMENTED,
              "y_zero_point has dtype int32");
  kt::Node neg("QuantizeLinear", "qn");
  neg.Int("block_size", -1);
  EXPECT_FAIL(h.Run(neg, 21, {x, h.F({}, {1})}), EPCTX_INVALID_GRAPH, "block_size is -1");
}

void quantize_rank0_and_float16_input(void**) {
  kt::Host h;
  kt::Node q("QuantizeLinear", "q");
  EXPECT_OK(h.Run(q, 19, {H16(h, {}, {3.0f}), H16(h, {}, {2.0f}), I8(h, {}, {-1})}));
  assert_int_equal(h.out(0)->rank, 0);
  EXPECT_VALS(int8_t, h.out(0), 1);  // 1.5 rounds to 2, minus 1
  EXPECT_FAIL(h.Run(q, 13, {H16(h, {}, {3.0f}), H16(h, {}, {2.0f})}), EPCTX_NOT_IMPLEMENTED,
              "y_scale has dtype float16");
}

void dequantize_int32_and_16bit_float_outputs_round_once(void**) {
  kt::Host h;
  kt::Node d("DequantizeLinear", "d");
  EXPECT_OK(h.Run(d, 13, {h.I32({3}, {INT32_MIN, -1, INT32_MAX}), h.F({}, {0.5f})}));
  EXPECT_FLOATS(h.out(0), -1073741824.0f, -0.5f, 1073741824.0f);
  // (x - zp) * scale in float, rounded once to float16 / bfloat16.
  EXPECT_OK(h.Run(d, 19, {U8(h, {2}, {255, 0}), H16(h, {}, {0.1f}), U8(h, {}, {128})}));
  assert_int_equal(h.out(0)->dtype, EPCTX_DTYPE_FLOAT16);
  const uint16_t* o = static_cast<const uint16_t*>(h.out(0)->data);
  const float s = HalfToFloat(FloatToHalf(0.1f));
  assert_int_equal(o[0], FloatToHalf(127.0f * s));
  assert_int_equal(o[1], FloatToHalf(-128.0f * s));
  EXPECT_OK(h.Run(d, 19, {I8(h, {1}, {-3}), BF16(h, {}, {1.0f / 3.0f})}));
  const float sb = BF16ToFloat(FloatToBF16(1.0f / 3.0f));
  assert_int_equal(static_cast<const uint16_t*>(h.out(0)->data)[0], FloatToBF16(-3.0f * sb));
  kt::Node ax("DequantizeLinear", "dax");
  EXPECT_OK(
      h.Run(ax, 13, {I8(h, {2, 2}, {1, 2, 3, 4}), h.F({2}, {1.0f, 10.0f}), I8(h, {2}, {1, 0})}));
  EXPECT_FLOATS(h.out(0), 0.0f, 20.0f, 2.0f, 40.0f);
  EXPECT_FAIL(h.Run(d, 13, {I8(h, {1}, {1}), h.F({}, {1}), U8(h, {}, {0})}), EPCTX_INVALID_ARGUMENT,
              "x_zero_point has dtype uint8, expected x's int8");
}

void dynamic_quantize_matches_ort_on_constant_and_mixed_input(void**) {
  kt::Host h;
  kt::Node q("DynamicQuantizeLinear", "dq");
  q.Outputs({"y", "y_scale", "y_zero_point"});
  // All zeros: ORT's scale is 1 (the ONNX reference says 1/255).
  EXPECT_OK(h.Run(q, 11, {h.F({3}, {0, 0, 0})}));
  EXPECT_FLOATS(h.out(1), 1.0f);
  EXPECT_VALS(uint8_t, h.out(2), 0);
  EXPECT_VALS(uint8_t, h.out(0), 0, 0, 0);
  // Range widened to include 0: [-1, 2] -> scale 3/255, zp round(85) = 85.
  EXPECT_OK(h.Run(q, 11, {h.F({}, {-1.0f})}));
  EXPECT_FLOATS(h.out(1), 1.0f / 255.0f);
  EXPECT_VALS(uint8_t, h.out(2), 255);
  EXPECT_VALS(uint8_t, h.out(0), 0);
  EXPECT_OK(h.Run(q, 11, {h.F({4}, {-1.0f, 2.0f, 1.0f, 0.0f})}));
  EXPECT_FLOATS(h.out(1), 3.0f / 255.0f);
  EXPECT_VALS(uint8_t, h.out(2), 85);
  EXPECT_VALS(uint8_t, h.out(0), 0, 255, 170, 85);
}

// Rows long enough for the vector min/max lanes and the quantize row, with
// the extremes in the lanes and in the tail: the scalar formula's bytes.
void dynamic_quantize_long_rows_match_the_formula(void**) {
  for (size_t n : {16u, 1003u}) {
    kt::Host h;
    std::vector<float> x(n);
    uint32_t s = 5;
    for (float& v : x) {
      s = s * 1664525u + 1013904223u;
      v = float(s >> 8) / float(1 << 24) * 8.0f - 3.0f;  // [-3, 5)
    }
    x[n / 2] = -7.5f;
    x[n - 1] = 9.25f;
    float lo = 0.0f, hi = 0.0f;
    for (float v : x) {
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    const float scale = (hi - lo) / 255.0f;
    const float zpf = std::nearbyint(std::fmin(255.0f, std::fmax(0.0f, 0.0f - lo / scale)));
    std::vector<uint8_t> want(n);
    for (size_t i = 0; i < n; ++i)
      want[i] = uint8_t(std::fmin(255.0f, std::fmax(0.0f, std::nearbyint(x[i] / scale) + zpf)));
    kt::Node q("DynamicQuantizeLinear", "dq");
    q.Outputs({"y", "y_scale", "y_zero_point"});
    EXPECT_OK(h.Run(q, 11, {h.F({int64_t(n)}, x)}));
    ExpectVals<uint8_t>(h.out(0), want, __LINE__);
    EXPECT_FLOATS(h.out(1), scale);
    ExpectVals<uint8_t>(h.out(2), {uint8_t(zpf)}, __LINE__);
  }
}

// ---- MatMulInteger / QLinearMatMul ----------------------------------------

void matmul_integer_per_row_and_per_column_zero_points(void**) {
  kt::Host h;
  // A [2,3] uint8 with per-row zp, B [3,2] int8 with per-column zp.
  TensorRef* a = U8(h, {2, 3}, {10, 20, 30, 255, 0, 1});
  TensorRef* b = I8(h, {3, 2}, {-128, 127, 1, 2, 3, 4});
  kt::Node m("MatMulInteger", "mi");
  EXPECT_OK(h.Run(m, 10, {a, b, U8(h, {2}, {10, 1}), I8(h, {2}, {1, -1})}));
  // row0: a-zp = [0,10,20]; b-zp col0 = [-129,0,2], col1 = [128,3,5]
  // row1: a-zp = [254,-1,0]
  EXPECT_VALS(int32_t, h.out(0), 40, 130, 254 * -129, 254 * 128 - 3);
  // Batched with [..., M, 1] and [..., 1, N] zero points.
  TensorRef* a3 = U8(h, {2, 1, 2}, {1, 2, 3, 4});
  TensorRef* b3 = U8(h, {2, 2, 1}, {1, 1, 2, 2});
  EXPECT_OK(h.Run(m, 10, {a3, b3, U8(h, {2, 1, 1}, {1, 3}), U8(h, {2, 1, 1}, {0, 1})}));
  EXPECT_SHAPE(h.out(0), 2, 1, 1);
  EXPECT_VALS(int32_t, h.out(0), 1, 1);
  EXPECT_FAIL(h.Run(m, 10, {a, b, U8(h, {3}, {0, 0, 0})}), EPCTX_INVALID_ARGUMENT,
              "a_zero_point [3] must be a scalar, [2] or A's shape with dimension 1 of 1");
  EXPECT_FAIL(h.Run(m, 10, {a, b, I8(h, {}, {0})}), EPCTX_INVALID_ARGUMENT,
              "a_zero_point has dtype int8, expected A's uint8");
  EXPECT_FAIL(h.Run(m, 10, {h.I32({1}, {1}), b}), EPCTX_NOT_IMPLEMENTED, "A has dtype int32");
}

void matmul_integer_accumulator_wraps_like_int32(void**) {
  kt::Host h;
  // 70000 products of 255 * 127 overflow int32: the result wraps mod 2^32.
  const int64_t K = 70000;
  TensorRef* a = U8(h, {1, K}, std::vector<uint8_t>(K, 255));
  TensorRef* b = I8(h, {K, 1}, std::vector<int8_t>(K, 127));
  kt::Node m("MatMulInteger", "mi");
  EXPECT_OK(h.Run(m, 10, {a, b}));
  const uint32_t want = static_cast<uint32_t>(K) * 255u * 127u;
  assert_int_equal(Vals<int32_t>(h.out(0))[0], static_cast<int32_t>(want));
}

void qlinear_matmul_requantizes_per_column_and_saturates(void**) {
  kt::Host h;
  TensorRef* a = U8(h, {1, 2}, {12, 14});  // a - 10 = [2, 4]
  TensorRef* b = I8(h, {2, 2}, {1, 100, 2, 100});
  kt::Node m("QLinearMatMul", "qm");
  // acc = [2*1+4*2, 2*100+4*100] = [10, 600]; multipliers 0.5*[1, 0.25]/1.
  EXPECT_OK(h.Run(m, 10,
                  {a, h.F({}, {0.5f}), U8(h, {}, {10}), b, h.F({2}, {1.0f, 0.25f}), I8(h, {}, {0}),
                   h.F({}, {1.0f}), I8(h, {}, {-3})}));
  EXPECT_VALS(int8_t, h.out(0), 2, 72);  // 5 - 3; 75 - 3
  EXPECT_OK(h.Run(m, 10,
                  {a, h.F({}, {2.0f}), U8(h, {}, {10}), b, h.F({}, {1.0f}), I8(h, {}, {0}),
                   h.F({}, {1.0f}), U8(h, {}, {0})}));
  EXPECT_VALS(uint8_t, h.out(0), 20, 255);
  EXPECT_FAIL(h.Run(m, 10,
                    {a, h.F({2}, {1, 1}), U8(h, {}, {10}), b, h.F({}, {1}), I8(h, {}, {0}),
                     h.F({}, {1}), U8(h, {}, {0})}),
              EPCTX_INVALID_ARGUMENT, "a_scale must be a scalar, found shape [2]");
}

// ---- ConvInteger / QLinearConv --------------------------------------------

// Direct convolution with explicit pads; padding holds the zero point.
std::vector<int32_t> RefIntConv(const std::vector<int>& x, int N, int C, int H, int W,
                                const std::vector<int>& w, int M, int KH, int KW, int pad,
                                int stride, int xzp, const std::vector<int>& wzp, int& OH,
                                int& OW) {
  OH = (H + 2 * pad - KH) / stride + 1;
  OW = (W + 2 * pad - KW) / stride + 1;
  std::vector<int32_t> y;
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m)
      for (int i = 0; i < OH; ++i)
        for (int j = 0; j < OW; ++j) {
          int32_t s = 0;
          for (int c = 0; c < C; ++c)
            for (int a = 0; a < KH; ++a)
              for (int e = 0; e < KW; ++e) {
                const int ih = i * stride - pad + a, iw = j * stride - pad + e;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += (x[((n * C + c) * H + ih) * W + iw] - xzp) *
                     (w[((m * C + c) * KH + a) * KW + e] - wzp[m]);
              }
          y.push_back(s);
        }
  return y;
}

void conv_integer_matches_reference_with_padding_and_channel_zero_points(void**) {
  kt::Host h;
  const int N = 2, C = 3, H = 5, W = 6, M = 4, K = 3;
  std::vector<uint8_t> xv;
  std::vector<int8_t> wv;
  std::vector<int> xi, wi;
  for (int i = 0; i < N * C * H * W; ++i) {
    xv.push_back(static_cast<uint8_t>((i * 37) % 256));
    xi.push_back(xv.back());
  }
  for (int i = 0; i < M * C * K * K; ++i) {
    wv.push_back(static_cast<int8_t>((i * 53) % 256 - 128));
    wi.push_back(wv.back());
  }
  const std::vector<int> wzp = {0, -3, 7, 127};
  int OH, OW;
  const std::vector<int32_t> ref = RefIntConv(xi, N, C, H, W, wi, M, K, K, 1, 2, 100, wzp, OH, OW);
  kt::Node c("ConvInteger", "ci");
  c.Ints("pads", {1, 1, 1, 1}).Ints("strides", {2, 2});
  EXPECT_OK(h.Run(c, 10,
                  {U8(h, {N, C, H, W}, xv), I8(h, {M, C, K, K}, wv), U8(h, {}, {100}),
                   I8(h, {M}, {0, -3, 7, 127})}));
  EXPECT_SHAPE(h.out(0), N, M, OH, OW);
  ExpectVals<int32_t>(h.out(0), ref, __LINE__);
  EXPECT_FAIL(h.Run(c, 10,
                    {U8(h, {N, C, H, W}, xv), I8(h, {M, C, K, K}, wv), U8(h, {}, {1}),
                     I8(h, {3}, {0, 0, 0})}),
              EPCTX_INVALID_ARGUMENT, "w_zero_point must be a scalar or [4], found [3]");
  EXPECT_FAIL(
      h.Run(c, 10, {U8(h, {1, 2, 3, 3}, std::vector<uint8_t>(18)), I8(h, {M, C, K, K}, wv)}),
      EPCTX_INVALID_ARGUMENT, "x has 2 channels but w [4,3,3,3] with group 1 expects 3");
}

void qlinear_conv_adds_bias_and_requantizes_per_channel(void**) {
  kt::Host h;
  // 1x1 kernel, 2 output channels: y = requant((x - 2) * (w - wzp) + B).
  TensorRef* x = U8(h, {1, 1, 1, 3}, {2, 3, 12});
  TensorRef* w = I8(h, {2, 1, 1, 1}, {5, -2});
  kt::Node c("QLinearConv", "qc");
  EXPECT_OK(h.Run(c, 10,
                  {x, h.F({}, {0.5f}), U8(h, {}, {2}), w, h.F({2}, {1.0f, 2.0f}),
                   I8(h, {2}, {1, 0}), h.F({}, {1.0f}), I8(h, {}, {1}), h.I32({2}, {1, -1})}));
  // ch0: acc = [0,4,40] + 1, * 0.5 -> [0.5, 2.5, 20.5] -> [0, 2, 20] + 1
  // ch1: acc = [0,-2,-20] - 1, * 1.0 -> [-1, -3, -21] + 1
  EXPECT_VALS(int8_t, h.out(0), 1, 3, 21, 0, -2, -20);
  EXPECT_FAIL(h.Run(c, 10,
                    {x, h.F({}, {0.5f}), U8(h, {}, {2}), w, h.F({2}, {1.0f, 2.0f}),
                     I8(h, {2}, {1, 0}), h.F({}, {1.0f}), I8(h, {}, {1}), h.I32({3}, {1, -1, 0})}),
              EPCTX_INVALID_ARGUMENT, "bias B must have shape [2], found [3]");
}

// The prepared path (int8 panels: uk::QConvRun) gives the tap loops' bytes:
// int8 x, uint8 w with one zero point, groups of 6 output channels, 5x3
// kernel, stride 2 and uneven pads, bias, per-channel w_scale, uint8 y.
void qlinear_conv_prepared_panels_equal_the_tap_loops(void**) {
  kt::Host h;
  const int N = 2, C = 8, H = 9, W = 11, M = 12, G = 2, KH = 5, KW = 3;
  std::vector<int8_t> xv;
  std::vector<uint8_t> wv;
  for (int i = 0; i < N * C * H * W; ++i) xv.push_back(static_cast<int8_t>((i * 37) % 256 - 128));
  for (int i = 0; i < M * (C / G) * KH * KW; ++i)
    wv.push_back(static_cast<uint8_t>((i * 53) % 256));
  std::vector<float> ws;
  std::vector<int32_t> bias;
  for (int m = 0; m < M; ++m) {
    ws.push_back(0.01f + 0.002f * float(m));
    bias.push_back(m * 97 - 500);
  }
  kt::Node c("QLinearConv", "qc");
  c.Ints("pads", {2, 0, 1, 2}).Ints("strides", {2, 2}).Int("group", G);
  TensorRef* w = U8(h, {M, C / G, KH, KW}, wv);
  const std::vector<TensorRef*> in = {
      I8(h, {N, C, H, W}, xv), h.F({}, {0.02f}), I8(h, {}, {-5}), w, h.F({M}, ws), U8(h, {}, {131}),
      h.F({}, {0.07f}),        U8(h, {}, {120}), h.I32({M}, bias)};
  EXPECT_OK(h.Run(c, 10, in));
  const std::vector<uint8_t> loops = Vals<uint8_t>(h.out(0));
  std::vector<TensorRef*> constants(in.size(), nullptr);
  constants[3] = w;
  EXPECT_OK(h.Prepare(c, 10, constants));
  assert_non_null(h.prepared());
  EXPECT_OK(h.Run(c, 10, in));
  const std::vector<uint8_t> panels = Vals<uint8_t>(h.out(0));
  assert_int_equal(panels.size(), loops.size());
  for (size_t i = 0; i < loops.size(); ++i)
    if (panels[i] != loops[i]) fail_msg("y[%zu]: panels %d, tap loops %d", i, panels[i], loops[i]);
  h.ClearPrepared();
}

// The depthwise path (uk::QDepthwiseRun) gives the tap loops' bytes: 6
// channels, 3x3 stride 2, pads 1, uint8 weights with zero point 128.
void qlinear_conv_prepared_depthwise_equals_the_tap_loops(void**) {
  kt::Host h;
  const int N = 1, C = 6, H = 13, W = 21;
  std::vector<uint8_t> xv, wv;
  for (int i = 0; i < N * C * H * W; ++i) xv.push_back(static_cast<uint8_t>((i * 29) % 256));
  for (int i = 0; i < C * 9; ++i) wv.push_back(static_cast<uint8_t>((i * 71) % 256));
  std::vector<int32_t> bias;
  for (int c = 0; c < C; ++c) bias.push_back(c * 300 - 800);
  kt::Node c("QLinearConv", "qc");
  c.Ints("pads", {1, 1, 1, 1}).Ints("strides", {2, 2}).Int("group", C);
  TensorRef* w = U8(h, {C, 1, 3, 3}, wv);
  const std::vector<TensorRef*> in = {
      U8(h, {N, C, H, W}, xv), h.F({}, {0.03f}), U8(h, {}, {90}),  w,
      h.F({}, {0.02f}),        U8(h, {}, {128}), h.F({}, {0.05f}), U8(h, {}, {100}),
      h.I32({C}, bias)};
  EXPECT_OK(h.Run(c, 10, in));
  const std::vector<uint8_t> loops = Vals<uint8_t>(h.out(0));
  std::vector<TensorRef*> constants(in.size(), nullptr);
  constants[3] = w;
  EXPECT_OK(h.Prepare(c, 10, constants));
  EXPECT_OK(h.Run(c, 10, in));
  const std::vector<uint8_t> lanes = Vals<uint8_t>(h.out(0));
  assert_int_equal(lanes.size(), loops.size());
  for (size_t i = 0; i < loops.size(); ++i)
    if (lanes[i] != loops[i]) fail_msg("y[%zu]: depthwise %d, tap loops %d", i, lanes[i], loops[i]);
  h.ClearPrepared();
}

// ---- MatMul / Gemm dtypes -------------------------------------------------

void matmul_typed_paths_wrap_integers_and_round_halves_once(void**) {
  kt::Host h;
  kt::Node m("MatMul", "mm");
  TensorRef* a = Typed<int64_t>(h, EPCTX_DTYPE_INT64, {1, 2}, {INT64_MAX, 2});
  TensorRef* b = Typed<int64_t>(h, EPCTX_DTYPE_INT64, {2, 1}, {2, 3});
  EXPECT_OK(h.Run(m, 13, {a, b}));
  EXPECT_VALS(int64_t, h.out(0), 4);  // 2*MAX wraps to -2, + 6
  // double accumulates in double: 1 + 1e-10 - 1 survives (float gives 0).
  TensorRef* d = Typed<double>(h, EPCTX_DTYPE_DOUBLE, {3}, {1.0, 1e-10, -1.0});
  TensorRef* e = Typed<double>(h, EPCTX_DTYPE_DOUBLE, {3}, {1.0, 1.0, 1.0});
  EXPECT_OK(h.Run(m, 13, {d, e}));
  assert_int_equal(h.out(0)->rank, 0);
  assert_true(std::fabs(Vals<double>(h.out(0))[0] - 1e-10) < 1e-15);
  // float16: 2048 + 1 + 1 is exact when accumulated in float and rounded
  // once; rounding after each step would lose both ones.
  EXPECT_OK(h.Run(m, 13, {H16(h, {1, 3}, {2048, 1, 1}), H16(h, {3}, {1, 1, 1})}));
  assert_int_equal(static_cast<const uint16_t*>(h.out(0)->data)[0], FloatToHalf(2050.0f));
  EXPECT_OK(h.Run(m, 13,
                  {Typed<uint32_t>(h, EPCTX_DTYPE_UINT32, {2, 1, 1}, {3, 4}),
                   Typed<uint32_t>(h, EPCTX_DTYPE_UINT32, {1, 2}, {5, 0xffffffffu})}));
  EXPECT_SHAPE(h.out(0), 2, 1, 2);
  EXPECT_VALS(uint32_t, h.out(0), 15, 0xfffffffdu, 20, 0xfffffffcu);
  EXPECT_FAIL(h.Run(m, 13, {h.F({2}, {1, 1}), d}), EPCTX_INVALID_ARGUMENT,
              "B has dtype double, expected A's float");
}

void gemm_typed_paths_apply_alpha_beta_and_reject_fractional_integer_alpha(void**) {
  kt::Host h;
  kt::Node g("Gemm", "g");
  g.Int("transA", 1).Int("transB", 1).Float("alpha", 2.0f).Float("beta", -1.0f);
  // op(A) = A^T = [[1,3],[2,4]], op(B) = B^T = [[1,0],[0,1]]
  TensorRef* a = h.I32({2, 2}, {1, 2, 3, 4});
  TensorRef* b = h.I32({2, 2}, {1, 0, 0, 1});
  EXPECT_OK(h.Run(g, 13, {a, b, h.I32({2}, {1, 10})}));
  EXPECT_VALS(int32_t, h.out(0), 1, -4, 3, -2);
  EXPECT_OK(h.Run(g, 13,
                  {Typed<double>(h, EPCTX_DTYPE_DOUBLE, {2, 2}, {1, 2, 3, 4}),
                   Typed<double>(h, EPCTX_DTYPE_DOUBLE, {2, 2}, {1, 0, 0, 1}),
                   Typed<double>(h, EPCTX_DTYPE_DOUBLE, {}, {0.5})}));
  EXPECT_VALS(double, h.out(0), 1.5, 5.5, 3.5, 7.5);
  EXPECT_OK(h.Run(g, 13, {BF16(h, {2, 2}, {1, 2, 3, 4}), BF16(h, {2, 2}, {1, 0, 0, 1})}));
  EXPECT_VALS(uint16_t, h.out(0), FloatToBF16(2), FloatToBF16(6), FloatToBF16(4), FloatToBF16(8));
  kt::Node f("Gemm", "gf");
  f.Float("alpha", 0.5f);
  EXPECT_FAIL(h.Run(f, 13, {a, b}), EPCTX_NOT_IMPLEMENTED,
              "alpha 0.500000 is not a whole number for int32 inputs");
  EXPECT_FAIL(h.Run(f, 13, {h.I32({2, 2}, {1, 2, 3, 4}), h.F({2, 2}, {1, 2, 3, 4})}),
              EPCTX_INVALID_ARGUMENT, "B has dtype float, expected A's int32");
}

// ---- losses ---------------------------------------------------------------

void nll_loss_reductions_weights_and_ignore_index(void**) {
  kt::Host h;
  TensorRef* x = h.F({2, 3}, {-1, -2, -3, -4, -5, -6});
  TensorRef* w = h.F({3}, {1, 2, 4});
  kt::Node none("NegativeLogLikelihoodLoss", "nll");
  none.Str("reduction", "none").Int("ignore_index", 1);
  EXPECT_OK(h.Run(none, 13, {x, h.I64({2}, {2, 1}), w}));
  EXPECT_SHAPE(h.out(0), 2);
  EXPECT_FLOATS(h.out(0), 12.0f, 0.0f);
  kt::Node mean("NegativeLogLikelihoodLoss", "nllm");
  EXPECT_OK(h.Run(mean, 13, {x, h.I32({2}, {2, 1}), w}));
  assert_int_equal(h.out(0)->rank, 0);
  EXPECT_FLOATS(h.out(0), (12.0f + 10.0f) / 6.0f);
  // Every label ignored: ORT returns the (zero) sum, not NaN.
  kt::Node all("NegativeLogLikelihoodLoss", "nlla");
  all.Int("ignore_index", -7);
  EXPECT_OK(h.Run(all, 13, {x, h.I64({2}, {-7, -7})}));
  EXPECT_FLOATS(h.out(0), 0.0f);
  EXPECT_FAIL(h.Run(mean, 13, {x, h.I64({2}, {3, 0})}), EPCTX_INVALID_ARGUMENT,
              "label 3 at position 0 is outside [0, 3) and is not ignore_index");
  EXPECT_FAIL(h.Run(mean, 13, {x, h.I64({3}, {0, 0, 0})}), EPCTX_INVALID_ARGUMENT,
              "input [2,3] must be [N, C, d1..dk] (rank >= 2) and target [N, d1..dk], found [3]");
  kt::Node bad("NegativeLogLikelihoodLoss", "nllb");
  bad.Str("reduction", "max");
  EXPECT_FAIL(h.Run(bad, 13, {x, h.I64({2}, {0, 0})}), EPCTX_INVALID_GRAPH,
              "reduction is 'max', expected none, sum or mean");
  EXPECT_FAIL(h.Run(mean, 13, {x, h.I64({2}, {0, 0}), h.F({2}, {1, 1})}), EPCTX_INVALID_ARGUMENT,
              "weight must have shape [3], found [2]");
}

void sce_loss_nd_log_prob_and_bfloat16(void**) {
  kt::Host h;
  // [N=1, C=2, D=2]: log-softmax over C for each d.
  TensorRef* x = h.F({1, 2, 2}, {0.0f, 1.0f, 0.0f, 3.0f});
  kt::Node s("SoftmaxCrossEntropyLoss", "sce");
  s.Str("reduction", "sum").Outputs({"loss", "log_prob"});
  EXPECT_OK(h.Run(s, 13, {x, h.I64({1, 2}, {0, 1})}));
  const float l0 = -logf(0.5f), l1 = logf(1.0f + expf(-2.0f));
  EXPECT_FLOATS(h.out(1), -l0, -(2.0f + l1), -l0, -l1);
  EXPECT_FLOATS(h.out(0), l0 + l1);
  // bfloat16 scores: log-softmax and loss in float, rounded once.
  kt::Node b("SoftmaxCrossEntropyLoss", "sceb");
  b.Str("reduction", "none");
  EXPECT_OK(h.Run(b, 13, {BF16(h, {1, 2, 2}, {0.0f, 1.0f, 0.0f, 3.0f}), h.I64({1, 2}, {0, 1})}));
  assert_int_equal(h.out(0)->dtype, EPCTX_DTYPE_BFLOAT16);
  EXPECT_VALS(uint16_t, h.out(0), FloatToBF16(l0), FloatToBF16(l1));
  EXPECT_FAIL(h.Run(b, 13, {x, h.I64({1, 2}, {0, 1}), h.F({3}, {1, 1, 1})}), EPCTX_INVALID_ARGUMENT,
              "weights must have shape [2], found [3]");
}

// ---- training optimisers --------------------------------------------------

kt::Node& Training(kt::Node& n) {
  const_cast<epctx::onnx::NodeView&>(n.view()).domain.data = "ai.onnx.preview.training";
  const_cast<epctx::onnx::NodeView&>(n.view()).domain.size = 24;
  return n;
}

void adam_applies_bias_correction_after_first_step(void**) {
  kt::Host h;
  kt::Node n("Adam", "adam");
  n.Float("alpha", 0.5f).Float("beta", 0.5f).Float("epsilon", 0.0f);
  n.Outputs({"X_new", "V_new", "H_new"});
  Training(n);
  // t = 2: r' = r * sqrt(1 - 0.25) / (1 - 0.25); g = 2: v = 1, h = 2.
  EXPECT_OK(h.Run(n, 1,
                  {h.F({}, {1.0f}), h.I64({}, {2}), h.F({1}, {10.0f}), h.F({1}, {2.0f}),
                   h.F({1}, {0.0f}), h.F({1}, {0.0f})}));
  EXPECT_FLOATS(h.out(1), 1.0f);
  EXPECT_FLOATS(h.out(2), 2.0f);
  const double r = std::sqrt(0.75) / 0.75;
  EXPECT_FLOATS(h.out(0), static_cast<float>(10.0 - r * (1.0 / std::sqrt(2.0))));
  EXPECT_FAIL(h.Run(n, 1,
                    {h.F({}, {1.0f}), h.I64({}, {2}), h.F({1}, {10.0f}), h.F({2}, {2, 2}),
                     h.F({1}, {0.0f}), h.F({1}, {0.0f})}),
              EPCTX_INVALID_ARGUMENT, "input 3 is float [2], expected float [1] like X1");
}

void momentum_requires_attributes_and_checks_block_structure(void**) {
  kt::Host h;
  kt::Node n("Momentum", "mom");
  n.Float("alpha", 0.9f).Float("beta", 0.1f).Float("norm_coefficient", 0.0f);
  n.Outputs({"X_new", "V_new"});
  Training(n);
  TensorRef* r = h.F({}, {1.0f});
  TensorRef* t = h.I64({}, {0});
  TensorRef* x = h.F({1}, {1.0f});
  EXPECT_FAIL(h.Run(n, 1, {r, t, x, x, x}), EPCTX_INVALID_GRAPH,
              "required attribute 'mode' is missing");
  n.Str("mode", "nesterov");
  EXPECT_FAIL(h.Run(n, 1, {r, t, x, x}), EPCTX_INVALID_GRAPH,
              "expected R, T and 3 blocks of equally many tensors, found 4 inputs");
  // First step (T = 0): beta is replaced by 1. v = 0.9*1 + 1*2 = 2.9,
  // x = 1 - (2 + 0.9 * 2.9).
  EXPECT_OK(h.Run(n, 1, {r, t, x, h.F({1}, {2.0f}), h.F({1}, {1.0f})}));
  EXPECT_FLOATS(h.out(1), 2.9f);
  EXPECT_FLOATS(h.out(0), 1.0f - (2.0f + 0.9f * 2.9f));
  kt::Node a("Adagrad", "ada");
  a.Outputs({"X_new", "H_new"});
  Training(a);
  EXPECT_FAIL(h.Run(a, 1, {h.I64({}, {1}), t, x, x, x}), EPCTX_NOT_IMPLEMENTED,
              "R has dtype int64");
}

const CMUnitTest kTests[] = {
    cmocka_unit_test(quantize_rounds_half_to_even_and_saturates),
    cmocka_unit_test(quantize_per_axis_and_blocked_int16),
    cmocka_unit_test(quantize_rejects_bad_scale_layouts),
    cmocka_unit_test(quantize_rank0_and_float16_input),
    cmocka_unit_test(dequantize_int32_and_16bit_float_outputs_round_once),
    cmocka_unit_test(dynamic_quantize_matches_ort_on_constant_and_mixed_input),
    cmocka_unit_test(dynamic_quantize_long_rows_match_the_formula),
    cmocka_unit_test(matmul_integer_per_row_and_per_column_zero_points),
    cmocka_unit_test(matmul_integer_accumulator_wraps_like_int32),
    cmocka_unit_test(qlinear_matmul_requantizes_per_column_and_saturates),
    cmocka_unit_test(conv_integer_matches_reference_with_padding_and_channel_zero_points),
    cmocka_unit_test(qlinear_conv_adds_bias_and_requantizes_per_channel),
    cmocka_unit_test(qlinear_conv_prepared_panels_equal_the_tap_loops),
    cmocka_unit_test(qlinear_conv_prepared_depthwise_equals_the_tap_loops),
    cmocka_unit_test(matmul_typed_paths_wrap_integers_and_round_halves_once),
    cmocka_unit_test(gemm_typed_paths_apply_alpha_beta_and_reject_fractional_integer_alpha),
    cmocka_unit_test(nll_loss_reductions_weights_and_ignore_index),
    cmocka_unit_test(sce_loss_nd_log_prob_and_bfloat16),
    cmocka_unit_test(adam_applies_bias_correction_after_first_step),
    cmocka_unit_test(momentum_requires_attributes_and_checks_block_structure),
};

}  // namespace

int main() { return cmocka_run_group_tests_name("quant", kTests, nullptr, nullptr); }
