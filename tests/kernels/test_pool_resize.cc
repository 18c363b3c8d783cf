// SPDX-License-Identifier: Apache-2.0
// Pools and Resize against reference loops, Softmax against a reference.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

const float* F32(const TensorRef* t) { return static_cast<const float*>(t->data); }

struct PoolCase {
  int64_t h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int ceil_mode, include_pad;
};

int64_t PoolOut(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, bool ceil) {
  const double v = static_cast<double>(in + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
  int64_t out = static_cast<int64_t>(ceil ? std::ceil(v) : std::floor(v));
  if (ceil && (out - 1) * s >= in + p0) --out;
  return out;
}

void RunPool(const PoolCase& k, bool is_max, uint32_t seed) {
  kt::Host host;
  TensorRef* x = host.Random({2, 3, k.h, k.w}, seed);
  kt::Node node(is_max ? "MaxPool" : "AveragePool", "pool");
  node.Ints("kernel_shape", {k.kh, k.kw})
      .Ints("strides", {k.sh, k.sw})
      .Ints("pads", {k.pt, k.pl, k.pb, k.pr})
      .Int("ceil_mode", k.ceil_mode);
  if (is_max) node.Ints("dilations", {k.dh, k.dw});
  else node.Int("count_include_pad", k.include_pad);
  EXPECT_OK(host.Run(node, 12, {x}));
  const int64_t dh = is_max ? k.dh : 1, dw = is_max ? k.dw : 1;
  const int64_t oh = PoolOut(k.h, k.kh, k.sh, dh, k.pt, k.pb, k.ceil_mode);
  const int64_t ow = PoolOut(k.w, k.kw, k.sw, dw, k.pl, k.pr, k.ceil_mode);
  EXPECT_SHAPE(host.out(0), 2, 3, oh, ow);
  const float* X = static_cast<float*>(x->data);
  const float* Y = static_cast<float*>(host.out(0)->data);
  for (int64_t p = 0; p < 6; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double acc = is_max ? -1e30 : 0.0;
        int64_t valid = 0, padded = 0;
        for (int64_t a = 0; a < k.kh; ++a)
          for (int64_t e = 0; e < k.kw; ++e) {
            const int64_t y0 = i * k.sh - k.pt + a * dh, x0 = j * k.sw - k.pl + e * dw;
            if (y0 >= -k.pt && y0 < k.h + k.pb && x0 >= -k.pl && x0 < k.w + k.pr) ++padded;
            if (y0 < 0 || y0 >= k.h || x0 < 0 || x0 >= k.w) continue;
            const float v = X[(p * k.h + y0) * k.w + x0];
            ++valid;
            if (is_max) acc = std::max<double>(acc, v);
            else acc += v;
          }
        if (!is_max) acc /= (k.include_pad ? padded : valid);
        const float got = Y[(p * oh + i) * ow + j];
        if (is_max ? got != static_cast<float>(acc) : std::fabs(got - acc) > 1e-5)
          fail_msg("%s (%lld,%lld,%lld): want %g got %g", is_max ? "max" : "avg", (long long)p,
                   (long long)i, (long long)j, acc, (double)got);
      }
}

// The wide cases run the vector rows (2-D float, dilation 1) over the
// interior and the tap loop over the border columns and rows: 3x3 and 2x2
// windows at stride 2 with ceil_mode (a last window reaching past the
// input) and pads, stride 1 and 3, rows of every vector tail.
void max_pool_matches_reference_with_ceil_mode_and_dilation(void**) {
  const PoolCase cases[] = {
      {8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0},   {7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0},
      {10, 11, 3, 2, 3, 2, 2, 1, 0, 1, 2, 0, 1, 0}, {5, 5, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0},
      {23, 57, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}, {22, 70, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0},
      {21, 75, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0}, {16, 64, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0},
      {9, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},  {12, 50, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0},
  };
  uint32_t s = 10;
  for (const PoolCase& c : cases) RunPool(c, true, ++s);
}

void average_pool_counts_padding_as_configured(void**) {
  const PoolCase cases[] = {
      {7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0},   {7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1},
      {6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},   {5, 8, 2, 3, 2, 3, 1, 1, 0, 0, 1, 2, 1, 1},
      {23, 57, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}, {23, 57, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1},
      {21, 75, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1}, {9, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
  };
  uint32_t s = 40;
  for (const PoolCase& c : cases) RunPool(c, false, ++s);
}

// Vector rows and the tap loop (which MaxPool with Indices takes) give the
// same bits: the first NaN of a window in tap order (NaNs of distinct
// payloads, in the interior and on the border), the first of equal maxima
// of both signs of zero. An AveragePool window with a NaN is NaN.
void max_pool_rows_match_the_tap_loop_bit_for_bit(void**) {
  const int64_t H = 13, W = 61;
  std::vector<float> v(static_cast<size_t>(2 * H * W));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = i % 5 == 0 ? 0.0f : i % 5 == 1 ? -0.0f : -1.0f - static_cast<float>(i % 7);
    if (i % 37 == 3) {
      const uint32_t bits = 0x7fc00000u | static_cast<uint32_t>(i);
      std::memcpy(&v[i], &bits, sizeof bits);
    }
  }
  const int64_t geo[][5] = {{3, 3, 2, 2, 1}, {2, 2, 2, 2, 0}, {3, 3, 1, 1, 1}, {2, 3, 1, 2, 0}};
  for (const auto& g : geo) {
    kt::Host host;
    TensorRef* x = host.F({1, 2, H, W}, v);
    kt::Node rows("MaxPool", "rows");
    rows.Ints("kernel_shape", {g[0], g[1]})
        .Ints("strides", {g[2], g[3]})
        .Ints("pads", {g[4], g[4], g[4], g[4]})
        .Int("ceil_mode", 1);
    EXPECT_OK(host.Run(rows, 12, {x}));
    const TensorRef* y = host.out(0);
    const int64_t n = y->dims[0] * y->dims[1] * y->dims[2] * y->dims[3];
    const std::vector<float> got(F32(y), F32(y) + n);
    kt::Node taps("MaxPool", "taps");
    taps.Ints("kernel_shape", {g[0], g[1]})
        .Ints("strides", {g[2], g[3]})
        .Ints("pads", {g[4], g[4], g[4], g[4]})
        .Int("ceil_mode", 1)
        .Outputs({"Y", "I"});
    EXPECT_OK(host.Run(taps, 12, {x}));
    assert_memory_equal(got.data(), F32(host.out(0)), static_cast<size_t>(n) * sizeof(float));
    int64_t nans = 0;
    for (float f : got) nans += std::isnan(f) ? 1 : 0;
    assert_true(nans > 0 && nans < n);
    kt::Node avg("AveragePool", "avg");
    avg.Ints("kernel_shape", {g[0], g[1]})
        .Ints("strides", {g[2], g[3]})
        .Ints("pads", {g[4], g[4], g[4], g[4]})
        .Int("ceil_mode", 1);
    EXPECT_OK(host.Run(avg, 12, {x}));
    for (int64_t i = 0; i < n; ++i)
      assert_int_equal(std::isnan(F32(host.out(0))[i]), std::isnan(got[static_cast<size_t>(i)]));
  }
}

// int8 and uint8 MaxPool: the byte rows (uk::QMaxPoolRow, taken without
// Indices) and the tap loop (with Indices) give the same bytes, on bytes
// either side of 0x80 and maps wide enough for whole vectors and edges.
void byte_max_pool_rows_match_the_tap_loop(void**) {
  const int64_t H = 13, W = 61;
  std::vector<uint8_t> v(static_cast<size_t>(2 * H * W));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i * 97 + i / 11 * 29) & 0xff);
  const int64_t geo[][5] = {{3, 3, 2, 2, 1}, {2, 2, 2, 2, 0}, {3, 3, 1, 1, 1}, {2, 3, 1, 3, 0}};
  for (int32_t dtype : {EPCTX_DTYPE_UINT8, EPCTX_DTYPE_INT8})
    for (const auto& g : geo) {
      kt::Host host;
      TensorRef* x = host.Make(dtype, {1, 2, H, W}, v.data());
      kt::Node rows("MaxPool", "rows");
      rows.Ints("kernel_shape", {g[0], g[1]})
          .Ints("strides", {g[2], g[3]})
          .Ints("pads", {g[4], g[4], g[4], g[4]});
      EXPECT_OK(host.Run(rows, 12, {x}));
      const TensorRef* y = host.out(0);
      const int64_t n = y->dims[0] * y->dims[1] * y->dims[2] * y->dims[3];
      const uint8_t* yb = static_cast<const uint8_t*>(y->data);
      const std::vector<uint8_t> got(yb, yb + n);
      kt::Node taps("MaxPool", "taps");
      taps.Ints("kernel_shape", {g[0], g[1]})
          .Ints("strides", {g[2], g[3]})
          .Ints("pads", {g[4], g[4], g[4], g[4]})
          .Outputs({"Y", "I"});
      EXPECT_OK(host.Run(taps, 12, {x}));
      assert_memory_equal(got.data(), host.out(0)->data, static_cast<size_t>(n));
    }
}

void max_pool_rejects_bad_storage_order(void**) {
  kt::Host host;
  kt::Node node("MaxPool", "mp_idx");
  node.Ints("kernel_shape", {2, 2}).Int("storage_order", 2).Outputs({"Y", "Indices"});
  EXPECT_FAIL(host.Run(node, 12, {host.Random({1, 1, 4, 4}, 1)}), EPCTX_INVALID_GRAPH,
              "MaxPool node 'mp_idx': storage_order is 2");
  kt::Node nok("MaxPool", "mp_nok");
  EXPECT_FAIL(host.Run(nok, 12, {host.Random({1, 1, 4, 4}, 1)}), EPCTX_INVALID_GRAPH,
              "kernel_shape is missing");
}

void global_pools_reduce_spatial_axes(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -4});
  kt::Node avg("GlobalAveragePool");
  EXPECT_OK(host.Run(avg, 11, {x}));
  EXPECT_SHAPE(host.out(0), 1, 2, 1, 1);
  EXPECT_FLOATS(host.out(0), 3.0f, -2.5f);
  kt::Node mx("GlobalMaxPool");
  EXPECT_OK(host.Run(mx, 11, {x}));
  EXPECT_FLOATS(host.out(0), 6.0f, -1.0f);
}

// ---- Resize ---------------------------------------------------------------

// align_corners divides by length_resized - 1: in * scale when the scales
// were given (the ONNX reference's resize.py), the output length for sizes.
float RefOriginal(const std::string& mode, float x, float scale, int64_t in, int64_t out,
                  bool from_sizes = false) {
  if (mode == "half_pixel") return (x + 0.5f) / scale - 0.5f;
  if (mode == "asymmetric") return x / scale;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  const float len = from_sizes ? static_cast<float>(out) : scale * static_cast<float>(in);
  return out == 1 ? 0.0f : x * (in - 1) / (len - 1);  // align_corners
}

int64_t RefNearest(const std::string& nm, float x, int64_t in) {
  double v;
  const double f = std::floor(x);
  if (nm == "floor") v = f;
  else if (nm == "ceil") v = std::ceil(x);
  else if (x - f == 0.5) v = nm == "round_prefer_floor" ? f : f + 1;
  else v = std::round(x);
  return std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(v), 0), in - 1);
}

// Rows 8 wide upsampled 2x and 4x take the replicating path where the
// column table is j / 2 or j / 4 (e.g. asymmetric + floor), the gather
// elsewhere.
void resize_nearest_modes_match_reference(void**) {
  const char* coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
  const char* nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const float scales[][2] = {{2.0f, 3.0f}, {0.5f, 0.75f}, {1.5f, 0.6f}, {2.0f, 4.0f}, {1.0f, 2.0f}};
  uint32_t seed = 70;
  for (const char* c : coords)
    for (const char* n : nearest)
      for (const auto& s : scales)
        for (int64_t W : {5, 8}) {
          kt::Host host;
          const int64_t H = 6;
          TensorRef* x = host.Random({1, 2, H, W}, ++seed);
          TensorRef* sc = host.F({4}, {1.0f, 1.0f, s[0], s[1]});
          kt::Node node("Resize", "rs");
          node.Str("mode", "nearest")
              .Str("coordinate_transformation_mode", c)
              .Str("nearest_mode", n);
          EXPECT_OK(host.Run(node, 13, {x, nullptr, sc}));
          const int64_t OH = static_cast<int64_t>(std::floor(H * s[0]));
          const int64_t OW = static_cast<int64_t>(std::floor(W * s[1]));
          EXPECT_SHAPE(host.out(0), 1, 2, OH, OW);
          const float* X = static_cast<float*>(x->data);
          const float* Y = static_cast<float*>(host.out(0)->data);
          for (int64_t p = 0; p < 2; ++p)
            for (int64_t i = 0; i < OH; ++i)
              for (int64_t j = 0; j < OW; ++j) {
                int64_t yi = RefNearest(n, RefOriginal(c, i, s[0], H, OH), H);
                int64_t xi = RefNearest(n, RefOriginal(c, j, s[1], W, OW), W);
                if (Y[(p * OH + i) * OW + j] != X[(p * H + yi) * W + xi])
                  fail_msg("nearest %s/%s scale %g,%g at (%lld,%lld)", c, n, (double)s[0],
                           (double)s[1], (long long)i, (long long)j);
              }
        }
}

void resize_linear_matches_reference(void**) {
  const char* coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
  uint32_t seed = 90;
  for (const char* c : coords)
    for (int use_sizes = 0; use_sizes < 2; ++use_sizes) {
      kt::Host host;
      const int64_t H = 5, W = 7, OH = use_sizes ? 9 : 10, OW = use_sizes ? 4 : 7 * 3 / 2;
      TensorRef* x = host.Random({2, 1, H, W}, ++seed);
      kt::Node node("Resize", "rl");
      node.Str("mode", "linear").Str("coordinate_transformation_mode", c);
      float sh = 2.0f, sw = 1.5f;
      if (use_sizes) {
        EXPECT_OK(host.Run(node, 11,
                           {x, host.F({0}, {}), host.F({0}, {}), host.I64({4}, {2, 1, OH, OW})}));
        sh = static_cast<float>(OH) / H;
        sw = static_cast<float>(OW) / W;
      } else {
        EXPECT_OK(host.Run(node, 13, {x, nullptr, host.F({4}, {1, 1, sh, sw})}));
      }
      EXPECT_SHAPE(host.out(0), 2, 1, OH, OW);
      const float* X = static_cast<float*>(x->data);
      const float* Y = static_cast<float*>(host.out(0)->data);
      for (int64_t p = 0; p < 2; ++p)
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            float fy =
                std::min<float>(std::max(RefOriginal(c, i, sh, H, OH, use_sizes), 0.0f), H - 1);
            float fx =
                std::min<float>(std::max(RefOriginal(c, j, sw, W, OW, use_sizes), 0.0f), W - 1);
            int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
            int64_t y1 = std::min<int64_t>(y0 + 1, H - 1), x1 = std::min<int64_t>(x0 + 1, W - 1);
            float ly = fy - y0, lx = fx - x0;
            const float* P = X + p * H * W;
            double want = (1 - ly) * ((1 - lx) * P[y0 * W + x0] + lx * P[y0 * W + x1]) +
                          ly * ((1 - lx) * P[y1 * W + x0] + lx * P[y1 * W + x1]);
            if (std::fabs(Y[(p * OH + i) * OW + j] - want) > 1e-5)
              fail_msg("linear %s sizes=%d at (%lld,%lld)", c, use_sizes, (long long)i,
                       (long long)j);
          }
    }
}

void resize_opset10_uses_asymmetric_floor(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 1, 2, 2}, {1, 2, 3, 4});
  kt::Node node("Resize", "up");
  node.Str("mode", "nearest");
  EXPECT_OK(host.Run(node, 10, {x, host.F({4}, {1, 1, 2, 1.5f})}));
  EXPECT_SHAPE(host.out(0), 1, 1, 4, 3);
  EXPECT_FLOATS(host.out(0), 1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4);
  kt::Node aa("Resize", "aa");
  aa.Str("mode", "linear").Int("antialias", 1);
  EXPECT_FAIL(host.Run(aa, 18, {x, nullptr, host.F({4}, {1, 1, 2, 2})}), EPCTX_NOT_IMPLEMENTED,
              "antialias");
  kt::Node both("Resize", "both");
  EXPECT_FAIL(
      host.Run(both, 13, {x, nullptr, host.F({4}, {1, 1, 2, 2}), host.I64({4}, {1, 1, 4, 4})}),
      EPCTX_INVALID_ARGUMENT, "exactly one of scales and sizes");
}

// ---- Softmax --------------------------------------------------------------

void softmax_axis_semantics_follow_opset(void**) {
  kt::Host host;
  TensorRef* x = host.Random({2, 3, 4}, 5);
  const float* X = static_cast<float*>(x->data);
  // Opset 11, axis 1: softmax over the 12 trailing elements of each batch.
  kt::Node old("Softmax", "sm");
  EXPECT_OK(host.Run(old, 11, {x}));
  std::vector<float> y11 = kt::ToVec(host.out(0));
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int i = 0; i < 12; ++i) sum += std::exp(X[b * 12 + i]);
    for (int i = 0; i < 12; ++i)
      assert_true(std::fabs(y11[b * 12 + i] - std::exp(X[b * 12 + i]) / sum) < 1e-6);
  }
  // Opset 13, default axis -1: over the last 4 only.
  kt::Node nw("Softmax", "sm13");
  EXPECT_OK(host.Run(nw, 13, {x}));
  std::vector<float> y13 = kt::ToVec(host.out(0));
  for (int r = 0; r < 6; ++r) {
    double sum = 0;
    for (int i = 0; i < 4; ++i) sum += std::exp(X[r * 4 + i]);
    for (int i = 0; i < 4; ++i)
      assert_true(std::fabs(y13[r * 4 + i] - std::exp(X[r * 4 + i]) / sum) < 1e-6);
  }
  // Opset 13, axis 1: over the middle axis (stride 4).
  kt::Node mid("Softmax", "sm_mid");
  mid.Int("axis", 1);
  EXPECT_OK(host.Run(mid, 13, {x}));
  std::vector<float> ym = kt::ToVec(host.out(0));
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 4; ++k) {
      double sum = 0;
      for (int i = 0; i < 3; ++i) sum += std::exp(X[b * 12 + i * 4 + k]);
      for (int i = 0; i < 3; ++i)
        assert_true(std::fabs(ym[b * 12 + i * 4 + k] - std::exp(X[b * 12 + i * 4 + k]) / sum) <
                    1e-6);
    }
  kt::Node lsm("LogSoftmax", "lsm");
  EXPECT_OK(host.Run(lsm, 13, {x}));
  std::vector<float> yl = kt::ToVec(host.out(0));
  for (int i = 0; i < 24; ++i) assert_true(std::fabs(yl[i] - std::log(y13[i])) < 1e-5);
  kt::Node bad("Softmax", "sm_bad");
  bad.Int("axis", 3);
  EXPECT_FAIL(host.Run(bad, 13, {x}), EPCTX_INVALID_ARGUMENT,
              "Softmax node 'sm_bad': axis 3 is out of range");
}

const CMUnitTest kTests[] = {
    cmocka_unit_test(max_pool_matches_reference_with_ceil_mode_and_dilation),
    cmocka_unit_test(average_pool_counts_padding_as_configured),
    cmocka_unit_test(max_pool_rows_match_the_tap_loop_bit_for_bit),
    cmocka_unit_test(byte_max_pool_rows_match_the_tap_loop),
    cmocka_unit_test(max_pool_rejects_bad_storage_order),
    cmocka_unit_test(global_pools_reduce_spatial_axes),
    cmocka_unit_test(resize_nearest_modes_match_reference),
    cmocka_unit_test(resize_linear_matches_reference),
    cmocka_unit_test(resize_opset10_uses_asymmetric_floor),
    cmocka_unit_test(softmax_axis_semantics_follow_opset),
};

}  // namespace

TestGroup PoolResizeTests() {
  return {"pool_resize_softmax", kTests, sizeof(kTests) / sizeof(kTests[0])};
}
