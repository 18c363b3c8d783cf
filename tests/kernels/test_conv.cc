// SPDX-License-Identifier: Apache-2.0
// Conv, ConvTranspose, Gemm and MatMul against plain reference loops on
// random data, plus their error paths.
#include <cmath>
#include <string>

#include "test_util.h"

namespace {

struct ConvCase {
  int64_t n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
  bool bias;
  const char* auto_pad;  // nullptr = NOTSET with explicit pads
  bool one_d;
};

// Straightforward direct convolution with explicit pads.
std::vector<float> RefConv(const ConvCase& k, const float* x, const float* w, const float* b,
                           int64_t oh, int64_t ow, int64_t pt, int64_t pl) {
  std::vector<float> y(k.n * k.m * oh * ow, 0.0f);
  const int64_t cg = k.c / k.group, mg = k.m / k.group;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = b ? b[m] : 0.0;
          const int64_t g = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t a = 0; a < k.kh; ++a)
              for (int64_t e = 0; e < k.kw; ++e) {
                const int64_t ih = i * k.sh - pt + a * k.dh;
                const int64_t iw = j * k.sw - pl + e * k.dw;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                s += x[((n * k.c + g * cg + c) * k.h + ih) * k.w + iw] *
                     w[((m * cg + c) * k.kh + a) * k.kw + e];
              }
          y[((n * k.m + m) * oh + i) * ow + j] = static_cast<float>(s);
        }
  return y;
}

void RunConvCase(const ConvCase& k, uint32_t seed) {
  kt::Host host;
  TensorRef* x =
      k.one_d ? host.Random({k.n, k.c, k.w}, seed) : host.Random({k.n, k.c, k.h, k.w}, seed);
  TensorRef* w = k.one_d ? host.Random({k.m, k.c / k.group, k.kw}, seed + 1)
                         : host.Random({k.m, k.c / k.group, k.kh, k.kw}, seed + 1);
  TensorRef* b = k.bias ? host.Random({k.m}, seed + 2) : nullptr;
  kt::Node node("Conv", "conv0");
  node.Int("group", k.group);
  int64_t pt = k.pt, pl = k.pl, pb = k.pb, pr = k.pr;
  if (k.one_d) {
    node.Ints("strides", {k.sw}).Ints("dilations", {k.dw});
  } else {
    node.Ints("strides", {k.sh, k.sw}).Ints("dilations", {k.dh, k.dw});
  }
  if (k.auto_pad) {
    node.Str("auto_pad", k.auto_pad);
    // Reference pads for SAME_*: total = (ceil(in/s)-1)*s + span - in.
    auto same = [&](int64_t in, int64_t kk, int64_t s, int64_t d, bool upper, int64_t* b0,
                    int64_t* e0) {
      const int64_t out = (in + s - 1) / s;
      int64_t total = (out - 1) * s + (kk - 1) * d + 1 - in;
      if (total < 0) total = 0;
      *b0 = upper ? total / 2 : (total + 1) / 2;
      *e0 = total - *b0;
    };
    const bool upper = std::string(k.auto_pad) == "SAME_UPPER";
    if (std::string(k.auto_pad) == "VALID") {
      pt = pl = pb = pr = 0;
    } else {
      same(k.h, k.kh, k.sh, k.dh, upper, &pt, &pb);
      same(k.w, k.kw, k.sw, k.dw, upper, &pl, &pr);
    }
  } else if (k.one_d) {
    node.Ints("pads", {pl, pr});
  } else {
    node.Ints("pads", {pt, pl, pb, pr});
  }
  const int64_t oh = k.one_d ? 1 : (k.h + pt + pb - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
  const int64_t ow = (k.w + pl + pr - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
  EXPECT_OK(host.Run(node, 11, {x, w, b}));
  TensorRef* y = host.out(0);
  if (k.one_d) {
    EXPECT_SHAPE(y, k.n, k.m, ow);
  } else {
    EXPECT_SHAPE(y, k.n, k.m, oh, ow);
  }
  ConvCase kk = k;
  if (k.one_d) {
    kk.h = 1;
    kk.kh = 1;
    kk.sh = 1;
    kk.dh = 1;
    pt = 0;
  }
  std::vector<float> ref = RefConv(kk, static_cast<float*>(x->data), static_cast<float*>(w->data),
                                   b ? static_cast<float*>(b->data) : nullptr, oh, ow, pt, pl);
  float err = kt::MaxRelErr(static_cast<float*>(y->data), ref.data(), ref.size());
  if (err > 1e-4f) fail_msg("conv max error %g (seed %u)", static_cast<double>(err), seed);
}

void conv_matches_reference_on_varied_shapes(void**) {
  const ConvCase cases[] = {
      // n c h w m kh kw sh sw dh dw pt pl pb pr group bias auto_pad 1d
      {1, 3, 9, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, nullptr, false},
      {2, 4, 10, 7, 6, 3, 2, 2, 2, 1, 1, 0, 1, 1, 0, 2, true, nullptr, false},  // groups, stride 2
      {1, 5, 12, 12, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 5, true, nullptr,
       false},  // depthwise, dilation
      {1, 4, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, false, nullptr,
       false},  // depthwise x2, stride 2
      {1, 16, 7, 9, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, nullptr, false},  // pointwise
      {1, 6, 8, 8, 4, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 2, false, nullptr, false},   // 1x1 stride 2
      {1, 3, 13, 10, 7, 5, 3, 2, 1, 1, 2, 0, 0, 0, 0, 1, true, "SAME_UPPER", false},
      {1, 3, 13, 10, 7, 4, 4, 3, 2, 1, 1, 0, 0, 0, 0, 1, true, "SAME_LOWER", false},
      {1, 2, 6, 6, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, "VALID", false},
      {2, 4, 1, 50, 6, 1, 5, 1, 2, 1, 2, 0, 3, 0, 1, 2, true, nullptr, true},  // 1-D
      {1, 64, 30, 30, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, nullptr,
       false},  // K > 256, M > 64
      // Groups of 16 -> 16 channels (RegNet-X): in vector lanes where the
      // CPU has AVX-512; stride 2 with asymmetric padding too.
      {2, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, nullptr, false},
      {1, 48, 15, 13, 48, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 3, false, nullptr, false},
      // Left padding wider than a 384-column SGEMM block: the block ends
      // before the row's first valid column (a fuzz_session finding wrote
      // zeros past the packed strips here).
      {1, 2, 1, 10, 3, 1, 3, 1, 1, 1, 1, 0, 500, 0, 500, 1, true, nullptr, true},
      {1, 2, 3, 4, 3, 2, 2, 1, 1, 1, 1, 1, 450, 1, 450, 1, false, nullptr, false},
      // Depthwise at column stride 1 (weighted rows over a ring of padded
      // rows): wide rows, 5x5, a multiplier, row stride 2, asymmetric pads,
      // dilation, a window wider than the padded-row interior, 1-D, 9x9
      // (more taps than the rows path keeps: the direct loop), a 7x7 map,
      // and row dilation 30 (a ring taller than 49 rows: rows with edge
      // columns).
      {1, 5, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5, true, nullptr, false},
      {1, 2, 70, 20, 2, 3, 3, 1, 1, 30, 1, 30, 1, 30, 1, 2, true, nullptr, false},
      {1, 8, 12, 57, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, true, nullptr, false},
      {2, 4, 11, 40, 4, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 4, true, nullptr, false},
      {1, 3, 9, 33, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 3, true, nullptr, false},
      {1, 4, 10, 30, 4, 3, 5, 1, 1, 1, 1, 0, 3, 2, 1, 4, false, nullptr, false},
      {1, 4, 16, 35, 4, 3, 3, 1, 1, 3, 2, 3, 2, 3, 2, 4, true, nullptr, false},
      {1, 2, 6, 3, 2, 3, 7, 1, 1, 1, 1, 1, 3, 1, 3, 2, true, nullptr, false},
      {2, 6, 1, 64, 6, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3, 6, true, nullptr, true},
      {1, 3, 20, 24, 3, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4, 3, true, nullptr, false},
      // Column stride 2 (split rows): 3x3 pad 1 on even and odd widths,
      // 5x5 pad 2 with a multiplier, no padding, a left pad of 3, row
      // dilation, 1-D.
      {1, 4, 14, 40, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, true, nullptr, false},
      {1, 4, 13, 37, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, true, nullptr, false},
      {2, 3, 15, 33, 6, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 3, true, nullptr, false},
      {1, 2, 9, 20, 2, 3, 3, 1, 2, 1, 1, 0, 0, 0, 0, 2, false, nullptr, false},
      {1, 2, 9, 20, 2, 3, 4, 2, 2, 2, 1, 1, 3, 1, 0, 2, true, nullptr, false},
      {1, 3, 1, 50, 3, 1, 5, 1, 2, 1, 1, 0, 2, 0, 2, 3, true, nullptr, true},
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) RunConvCase(c, seed += 7);
}

void conv_large_output_is_chunked_and_correct(void**) {
  // K = 27, 230x230 outputs -> several im2col chunks of the 1M-float budget.
  ConvCase c{1, 3, 460, 460, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, nullptr, false};
  ConvCase d{1, 120, 100, 100, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, nullptr, false};
  RunConvCase(c, 99);
  RunConvCase(d, 98);
}

// com.microsoft FusedConv: the Conv's result clamped (Relu; Clip to its
// activation_params), on the GEMM and the depthwise paths; an activation
// it does not clamp, Clip without its two bounds, or a sum input Z are
// refused by name.
void fused_conv_clamps_and_refuses_what_it_does_not_fuse(void**) {
  struct {
    kt::Dims x, w;
    int64_t group;
  } shapes[] = {{{1, 6, 9, 9}, {8, 6, 3, 3}, 1}, {{1, 16, 10, 10}, {16, 1, 3, 3}, 16}};
  for (const auto& sh : shapes)
    for (int relu = 0; relu < 2; ++relu) {
      kt::Host host;
      TensorRef* x = host.Random(sh.x, 1);
      TensorRef* w = host.Random(sh.w, 2);
      kt::Node conv("Conv", "c");
      conv.Ints("pads", {1, 1, 1, 1}).Int("group", sh.group);
      assert_true(host.Run(conv, 13, {x, w}).ok());
      const TensorRef* y0 = host.out(0);
      std::vector<float> want(static_cast<const float*>(y0->data),
                              static_cast<const float*>(y0->data) + y0->elements());
      for (float& v : want)
        v = relu ? (v > 0.0f ? v : 0.0f) : (v < -0.5f ? -0.5f : v > 0.25f ? 0.25f : v);
      kt::Node fused("FusedConv", "f");
      fused.Domain("com.microsoft").Ints("pads", {1, 1, 1, 1}).Int("group", sh.group);
      if (relu) fused.Str("activation", "Relu");
      else fused.Str("activation", "Clip").Floats("activation_params", {-0.5f, 0.25f});
      assert_true(host.Run(fused, 1, {x, w}).ok());
      const float* got = static_cast<const float*>(host.out(0)->data);
      for (size_t i = 0; i < want.size(); ++i)
        if (std::fabs(got[i] - want[i]) > 1e-5f)
          fail_msg("group %lld %s element %zu: %g, want %g", (long long)sh.group,
                   relu ? "Relu" : "Clip", i, double(got[i]), double(want[i]));
    }
  kt::Host host;
  TensorRef* x = host.Random({1, 2, 5, 5}, 1);
  TensorRef* w = host.Random({2, 2, 3, 3}, 2);
  kt::Node sig("FusedConv", "f_sig");
  sig.Domain("com.microsoft").Str("activation", "Sigmoid");
  EXPECT_FAIL(host.Run(sig, 1, {x, w}), EPCTX_NOT_IMPLEMENTED,
              "activation 'Sigmoid' is not supported (expected Relu or Clip)");
  kt::Node clip("FusedConv", "f_clip");
  clip.Domain("com.microsoft").Str("activation", "Clip").Floats("activation_params", {0.0f});
  EXPECT_FAIL(host.Run(clip, 1, {x, w}), EPCTX_INVALID_GRAPH,
              "activation Clip needs activation_params [min, max], found 1 values");
  kt::Node sum("FusedConv", "f_sum");
  sum.Domain("com.microsoft").Str("activation", "Relu");
  EXPECT_FAIL(host.Run(sum, 1, {x, w, nullptr, host.Random({1, 2, 3, 3}, 3)}),
              EPCTX_NOT_IMPLEMENTED, "the sum input Z is not supported");
}

void conv_rejects_channel_mismatch(void**) {
  kt::Host host;
  kt::Node node("Conv", "conv_bad");
  EXPECT_FAIL(host.Run(node, 11, {host.Random({1, 3, 8, 8}, 1), host.Random({4, 2, 3, 3}, 2)}),
              EPCTX_INVALID_ARGUMENT, "Conv node 'conv_bad'");
  kt::Node grouped("Conv", "conv_g");
  grouped.Int("group", 2);
  EXPECT_FAIL(host.Run(grouped, 11, {host.Random({1, 4, 8, 8}, 1), host.Random({3, 2, 3, 3}, 2)}),
              EPCTX_INVALID_ARGUMENT, "multiple of group");
  kt::Node bias("Conv", "conv_b");
  EXPECT_FAIL(
      host.Run(bias, 11,
               {host.Random({1, 2, 8, 8}, 1), host.Random({3, 2, 3, 3}, 2), host.Random({4}, 3)}),
      EPCTX_INVALID_ARGUMENT, "bias B must have shape [3]");
}

void conv_rejects_kernel_larger_than_padded_input(void**) {
  kt::Host host;
  kt::Node node("Conv", "big_k");
  node.Ints("pads", {1, 1, 1, 1});
  EXPECT_FAIL(host.Run(node, 11, {host.Random({1, 1, 4, 4}, 1), host.Random({1, 1, 7, 7}, 2)}),
              EPCTX_INVALID_ARGUMENT, "larger than the padded input");
  kt::Node strides("Conv", "bad_strides");
  strides.Ints("strides", {1});
  EXPECT_FAIL(host.Run(strides, 11, {host.Random({1, 1, 4, 4}, 1), host.Random({1, 1, 3, 3}, 2)}),
              EPCTX_INVALID_GRAPH, "strides has 1 values, expected 2");
  kt::Node rank("Conv", "r");
  EXPECT_FAIL(host.Run(rank, 11, {host.Random({1, 4, 4}, 1), host.Random({1, 1, 3, 3}, 2)}),
              EPCTX_INVALID_ARGUMENT, "rank 3");
}

void conv_rejects_non_float(void**) {
  kt::Host host;
  kt::Node node("Conv", "c8");
  TensorRef* x = host.Make(EPCTX_DTYPE_INT8, {1, 1, 4, 4});
  EXPECT_FAIL(host.Run(node, 11, {x, host.Random({1, 1, 3, 3}, 2)}), EPCTX_NOT_IMPLEMENTED, "int8");
}

// ---- ConvTranspose --------------------------------------------------------

struct CtCase {
  int64_t n, c, h, w, m_g, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oph, opw, group;
};

void RunCtCase(const CtCase& k, uint32_t seed) {
  kt::Host host;
  TensorRef* x = host.Random({k.n, k.c, k.h, k.w}, seed);
  TensorRef* w = host.Random({k.c, k.m_g, k.kh, k.kw}, seed + 1);
  const int64_t m = k.m_g * k.group;
  TensorRef* b = host.Random({m}, seed + 2);
  kt::Node node("ConvTranspose", "ct");
  node.Int("group", k.group)
      .Ints("strides", {k.sh, k.sw})
      .Ints("dilations", {k.dh, k.dw})
      .Ints("pads", {k.pt, k.pl, k.pb, k.pr})
      .Ints("output_padding", {k.oph, k.opw});
  EXPECT_OK(host.Run(node, 11, {x, w, b}));
  const int64_t oh = k.sh * (k.h - 1) + k.oph + (k.kh - 1) * k.dh + 1 - k.pt - k.pb;
  const int64_t ow = k.sw * (k.w - 1) + k.opw + (k.kw - 1) * k.dw + 1 - k.pl - k.pr;
  TensorRef* y = host.out(0);
  EXPECT_SHAPE(y, k.n, m, oh, ow);
  // Reference: scatter every input pixel times the kernel.
  std::vector<double> ref(k.n * m * oh * ow, 0.0);
  const float* X = static_cast<float*>(x->data);
  const float* W = static_cast<float*>(w->data);
  const float* B = static_cast<float*>(b->data);
  const int64_t cg = k.c / k.group;
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh * ow; ++i) ref[(n * m + o) * oh * ow + i] = B[o];
    for (int64_t c = 0; c < k.c; ++c) {
      const int64_t g = c / cg;
      for (int64_t i = 0; i < k.h; ++i)
        for (int64_t j = 0; j < k.w; ++j)
          for (int64_t mo = 0; mo < k.m_g; ++mo)
            for (int64_t a = 0; a < k.kh; ++a)
              for (int64_t e = 0; e < k.kw; ++e) {
                const int64_t y0 = i * k.sh - k.pt + a * k.dh;
                const int64_t x0 = j * k.sw - k.pl + e * k.dw;
                if (y0 < 0 || y0 >= oh || x0 < 0 || x0 >= ow) continue;
                const int64_t o = g * k.m_g + mo;
                ref[((n * m + o) * oh + y0) * ow + x0] +=
                    X[((n * k.c + c) * k.h + i) * k.w + j] *
                    W[((c * k.m_g + mo) * k.kh + a) * k.kw + e];
              }
    }
  }
  std::vector<float> reff(ref.begin(), ref.end());
  float err = kt::MaxRelErr(static_cast<float*>(y->data), reff.data(), reff.size());
  if (err > 1e-4f) fail_msg("convtranspose error %g", static_cast<double>(err));
}

void conv_transpose_matches_reference(void**) {
  const CtCase cases[] = {
      {1, 3, 5, 6, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1},
      {2, 4, 4, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2},  // stride 2, output_padding
      {1, 2, 7, 3, 2, 2, 4, 2, 3, 2, 1, 1, 0, 0, 2, 1, 2, 1},  // dilation, asymmetric pads
      {1, 6, 8, 8, 1, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 6},  // depthwise upsample
  };
  uint32_t seed = 200;
  for (const CtCase& c : cases) RunCtCase(c, seed += 5);
}

void conv_transpose_output_shape_sets_pads(void**) {
  kt::Host host;
  kt::Node node("ConvTranspose", "ct_os");
  node.Ints("strides", {2, 2}).Ints("output_shape", {10, 8});
  EXPECT_OK(host.Run(node, 11, {host.Random({1, 1, 5, 4}, 1), host.Random({1, 2, 3, 3}, 2)}));
  EXPECT_SHAPE(host.out(0), 1, 2, 10, 8);
  kt::Node bad("ConvTranspose", "ct_bad");
  EXPECT_FAIL(host.Run(bad, 11, {host.Random({1, 3, 5, 4}, 1), host.Random({2, 2, 3, 3}, 2)}),
              EPCTX_INVALID_ARGUMENT, "ConvTranspose node 'ct_bad'");
}

// ---- Gemm / MatMul --------------------------------------------------------

void gemm_matches_reference_with_transposes_and_broadcast_c(void**) {
  struct G {
    int64_t m, n, k;
    int ta, tb;
    kt::Dims c;
    float alpha, beta;
  };
  const G cases[] = {
      {5, 7, 3, 0, 0, {7}, 1.0f, 1.0f},        {17, 33, 300, 1, 0, {17, 1}, 0.5f, 2.0f},
      {70, 9, 20, 0, 1, {70, 9}, 1.0f, -1.0f}, {3, 260, 5, 1, 1, {}, 2.0f, 1.0f},
      {4, 4, 4, 0, 0, {1, 1}, 1.0f, 0.0f},     {6, 5, 4, 0, 0, {0}, 1.0f, 1.0f},
  };
  uint32_t seed = 300;
  for (const G& g : cases) {
    kt::Host host;
    TensorRef* a = g.ta ? host.Random({g.k, g.m}, ++seed) : host.Random({g.m, g.k}, ++seed);
    TensorRef* b = g.tb ? host.Random({g.n, g.k}, ++seed) : host.Random({g.k, g.n}, ++seed);
    TensorRef* c = nullptr;
    if (!(g.c.size() == 1 && g.c[0] == 0)) c = host.Random(g.c, ++seed);
    kt::Node node("Gemm", "gemm0");
    node.Int("transA", g.ta).Int("transB", g.tb).Float("alpha", g.alpha).Float("beta", g.beta);
    EXPECT_OK(host.Run(node, 13, {a, b, c}));
    EXPECT_SHAPE(host.out(0), g.m, g.n);
    const float* A = static_cast<float*>(a->data);
    const float* B = static_cast<float*>(b->data);
    std::vector<float> ref(g.m * g.n);
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < g.k; ++k)
          s += (g.ta ? A[k * g.m + i] : A[i * g.k + k]) * (g.tb ? B[j * g.k + k] : B[k * g.n + j]);
        double cv = 0;
        if (c) {
          const float* C = static_cast<float*>(c->data);
          int64_t rows = c->rank == 2 ? c->dims[0] : 1;
          int64_t cols = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
          cv = C[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
        }
        ref[i * g.n + j] = static_cast<float>(g.alpha * s + g.beta * cv);
      }
    float err = kt::MaxRelErr(static_cast<float*>(host.out(0)->data), ref.data(), ref.size());
    if (err > 1e-4f) fail_msg("gemm error %g", static_cast<double>(err));
  }
}

void gemm_rejects_inner_dimension_mismatch(void**) {
  kt::Host host;
  kt::Node node("Gemm", "fc");
  EXPECT_FAIL(host.Run(node, 13, {host.Random({2, 3}, 1), host.Random({4, 5}, 2)}),
              EPCTX_INVALID_ARGUMENT, "Gemm node 'fc': inner dimensions differ");
  kt::Node c("Gemm", "fc_c");
  EXPECT_FAIL(
      host.Run(c, 13, {host.Random({2, 3}, 1), host.Random({3, 5}, 2), host.Random({3}, 3)}),
      EPCTX_INVALID_ARGUMENT, "does not broadcast");
}

void RefMatMulCheck(kt::Host& host, TensorRef* a, TensorRef* b, const kt::Dims& want) {
  kt::Node node("MatMul", "mm");
  EXPECT_OK(host.Run(node, 13, {a, b}));
  TensorRef* y = host.out(0);
  if (kt::ShapeVec(y) != want) fail_msg("matmul shape mismatch");
  // Reference via explicit broadcasting of padded shapes.
  kt::Dims da(a->dims, a->dims + a->rank), db(b->dims, b->dims + b->rank);
  if (da.size() == 1) da.insert(da.begin(), 1);
  if (db.size() == 1) db.push_back(1);
  size_t r = std::max(da.size(), db.size());
  while (da.size() < r) da.insert(da.begin(), 1);
  while (db.size() < r) db.insert(db.begin(), 1);
  const int64_t M = da[r - 2], K = da[r - 1], N = db[r - 1];
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < r; ++i) batches *= std::max(da[i], db[i]);
  const float* A = static_cast<float*>(a->data);
  const float* B = static_cast<float*>(b->data);
  std::vector<float> ref;
  for (int64_t t = 0; t < batches; ++t) {
    int64_t rem = t, oa = 0, ob = 0, sa = 1, sb = 1;
    for (size_t i = r - 2; i-- > 0;) {
      int64_t d = std::max(da[i], db[i]);
      int64_t idx = rem % d;
      rem /= d;
      oa += (da[i] == 1 ? 0 : idx) * sa;
      ob += (db[i] == 1 ? 0 : idx) * sb;
      sa *= da[i];
      sb *= db[i];
    }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += A[oa * M * K + i * K + k] * B[ob * K * N + k * N + j];
        ref.push_back(static_cast<float>(s));
      }
  }
  assert_int_equal(ref.size(), y->elements());
  float err = kt::MaxRelErr(static_cast<float*>(y->data), ref.data(), ref.size());
  if (err > 1e-4f) fail_msg("matmul error %g", static_cast<double>(err));
}

void matmul_broadcasts_batches_and_vectors(void**) {
  kt::Host host;
  RefMatMulCheck(host, host.Random({2, 1, 3, 4}, 1), host.Random({3, 4, 5}, 2), {2, 3, 3, 5});
  RefMatMulCheck(host, host.Random({2, 7, 9}, 3), host.Random({9, 6}, 4), {2, 7, 6});
  RefMatMulCheck(host, host.Random({9}, 5), host.Random({2, 9, 6}, 6), {2, 6});
  RefMatMulCheck(host, host.Random({3, 9}, 7), host.Random({9}, 8), {3});
  RefMatMulCheck(host, host.Random({9}, 7), host.Random({9}, 8), {});
  kt::Node node("MatMul", "mm_bad");
  EXPECT_FAIL(host.Run(node, 13, {host.Random({2, 3, 4}, 1), host.Random({3, 4, 5}, 2)}),
              EPCTX_INVALID_ARGUMENT, "do not broadcast");
}

const CMUnitTest kTests[] = {
    cmocka_unit_test(conv_matches_reference_on_varied_shapes),
    cmocka_unit_test(conv_large_output_is_chunked_and_correct),
    cmocka_unit_test(conv_rejects_channel_mismatch),
    cmocka_unit_test(fused_conv_clamps_and_refuses_what_it_does_not_fuse),
    cmocka_unit_test(conv_rejects_kernel_larger_than_padded_input),
    cmocka_unit_test(conv_rejects_non_float),
    cmocka_unit_test(conv_transpose_matches_reference),
    cmocka_unit_test(conv_transpose_output_shape_sets_pads),
    cmocka_unit_test(gemm_matches_reference_with_transposes_and_broadcast_c),
    cmocka_unit_test(gemm_rejects_inner_dimension_mismatch),
    cmocka_unit_test(matmul_broadcasts_batches_and_vectors),
};

}  // namespace

TestGroup ConvTests() { return {"conv", kTests, sizeof(kTests) / sizeof(kTests[0])}; }
