// SPDX-License-Identifier: Apache-2.0
// vnpu int8 level: the int8 units against reference arithmetic written here
// (odd sizes, zero points at the ends of their ranges, saturation, NaN and
// infinite multipliers), and the validator refusing hostile quantisation
// fields (scales, zero points, clamp bounds, reduction length, dtypes).
#include <cmath>
#include <cstring>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#include "vnpu_typed_stream.h"

using namespace vt;

namespace {

// The README's requantisation: clamp(round_half_even(float(acc) * m) + zp).
int32_t RefRequant(int64_t acc, float m, int32_t zp, int32_t lo, int32_t hi) {
  float v = float(acc) * m;
  if (!(v >= float(lo - zp))) return lo;
  if (v > float(hi - zp)) return hi;
  return int32_t(std::nearbyint(v)) + zp;
}

// Deterministic pseudo-random bytes.
uint32_t g_seed = 12345;
int32_t Rand(int32_t lo, int32_t hi) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return lo + int32_t((g_seed >> 8) % uint32_t(hi - lo + 1));
}

// 3 x 13 (uint8, zero point 255) times 13 x 5 int8 weights (zero point
// -128), per-column multipliers and int32 bias, into int8 with a clamp.
void QGemmOddSizesAndExtremeZeroPoints(void**) {
  const int M = 3, K = 13, N = 5;
  TStream q;
  std::vector<int32_t> a(M * K), w(N * K), bias(N);
  std::vector<float> mult(N);
  for (auto& v : a) v = Rand(0, 255);
  for (auto& v : w) v = Rand(-128, 127);
  for (int j = 0; j < N; ++j)
    bias[size_t(j)] = Rand(-5000, 5000), mult[size_t(j)] = 0.0005f * float(j + 1);
  uint32_t x = q.In({M, K}, D::UINT8), y = q.Out({M, N}, D::INT8);
  uint32_t wt = q.W(w, {N, K}, D::INT8), bt = q.W(bias, {N}, D::INT32),
           mt = q.W(mult, {N}, D::FLOAT32);
  q.s.Op(fb::CreateQGemm(q.s.fbb, x, wt, y, true, bt, M, K, N, 255, false, 0, -128, mt, -3, -100,
                         120));
  auto out = Run(q, {Bytes(a, {M, K}, D::UINT8)});
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int64_t acc = bias[size_t(j)];
      for (int k = 0; k < K; ++k)
        acc += (a[size_t(i * K + k)] - 255) * (w[size_t(j * K + k)] + 128);
      assert_int_equal(At(out[0], size_t(i * N + j)),
                       RefRequant(acc, mult[size_t(j)], -3, -100, 120));
    }
}

// 1 x 3 x 5 x 7 int8 input (zero point -128), 5 uint8 filters 3x3 with
// zero point 255, stride 2, pads 1/0/2/1, dilation 1x2, groups 1; one run
// requantised into uint8, one as raw int32 (ConvInteger).
void QConvOddSizes(void**) {
  const int C = 3, H = 5, W = 7, CO = 5, KH = 3, KW = 3;
  std::vector<int32_t> x(C * H * W), w(CO * C * KH * KW), bias(CO);
  std::vector<float> mult(CO);
  for (auto& v : x) v = Rand(-128, 127);
  for (auto& v : w) v = Rand(0, 255);
  for (int c = 0; c < CO; ++c)
    bias[size_t(c)] = Rand(-100, 100), mult[size_t(c)] = 1e-5f * float(c + 3);
  const int sh = 2, sw = 2, pt = 1, pl = 0, pb = 2, pr = 1, dh = 1, dw = 2;
  const int OH = (H + pt + pb - (dh * (KH - 1) + 1)) / sh + 1,
            OW = (W + pl + pr - (dw * (KW - 1) + 1)) / sw + 1;
  for (int int32_out = 0; int32_out < 2; ++int32_out) {
    TStream q;
    uint32_t xt = q.In({1, C, H, W}, D::INT8);
    uint32_t yt = q.Out({1, CO, OH, OW}, int32_out ? D::INT32 : D::UINT8);
    uint32_t wt = q.W(w, {CO, C, KH, KW}, D::UINT8), bt = q.W(bias, {CO}, D::INT32);
    uint32_t mt = q.W(mult, {CO}, D::FLOAT32);
    q.s.Op(fb::CreateQConv2D(q.s.fbb, xt, wt, yt, true, bt, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw,
                             1, -128, false, 0, 255, mt, 7, 0, 255));
    auto out = Run(q, {Bytes(x, {1, C, H, W}, D::INT8)});
    for (int oc = 0; oc < CO; ++oc)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          int64_t acc = 0;
          for (int ic = 0; ic < C; ++ic)
            for (int kh = 0; kh < KH; ++kh)
              for (int kw = 0; kw < KW; ++kw) {
                int ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += (x[size_t((ic * H + ih) * W + iw)] + 128) *
                       (w[size_t(((oc * C + ic) * KH + kh) * KW + kw)] - 255);
              }
          size_t i = size_t((oc * OH + oh) * OW + ow);
          if (int32_out) assert_int_equal(At(out[0], i), acc + bias[size_t(oc)]);
          else
            assert_int_equal(At(out[0], i),
                             RefRequant(acc + bias[size_t(oc)], mult[size_t(oc)], 7, 0, 255));
        }
  }
}

// Depthwise (groups = channels), the kQDepthwise strategy: int8 input with
// zero point -3, weights int8 with zero point 0 or uint8 with 128 (read as
// signed bytes, zero point 0), 3x3 stride 1 and 5x5 stride 2 with uneven
// pads, 19 columns (a 16-lane step and a partial one); bias, uint8 output.
void QConvDepthwiseMatchesReference(void**) {
  const int C = 6, H = 9, W = 19;
  struct Geo {
    int K, s, pt, pl, pb, pr;
    bool u8w;
  };
  for (const Geo& g : {Geo{3, 1, 1, 1, 1, 1, false}, Geo{5, 2, 2, 1, 2, 2, true}}) {
    const int KH = g.K, KW = g.K;
    const int OH = (H + g.pt + g.pb - KH) / g.s + 1, OW = (W + g.pl + g.pr - KW) / g.s + 1;
    std::vector<int32_t> x(C * H * W), w(C * KH * KW), bias(C);
    std::vector<float> mult(C);
    for (auto& v : x) v = Rand(-128, 127);
    for (auto& v : w) v = g.u8w ? Rand(0, 255) : Rand(-128, 127);
    for (int c = 0; c < C; ++c)
      bias[size_t(c)] = Rand(-300, 300), mult[size_t(c)] = 0.004f * float(c + 1);
    const int32_t wzp = g.u8w ? 128 : 0;
    TStream q;
    uint32_t xt = q.In({1, C, H, W}, D::INT8), yt = q.Out({1, C, OH, OW}, D::UINT8);
    uint32_t wt = q.W(w, {C, 1, KH, KW}, g.u8w ? D::UINT8 : D::INT8), bt = q.W(bias, {C}, D::INT32);
    uint32_t mt = q.W(mult, {C}, D::FLOAT32);
    q.s.Op(fb::CreateQConv2D(q.s.fbb, xt, wt, yt, true, bt, KH, KW, g.s, g.s, g.pt, g.pl, g.pb,
                             g.pr, 1, 1, C, -3, false, 0, wzp, mt, 100, 0, 255));
    auto out = Run(q, {Bytes(x, {1, C, H, W}, D::INT8)});
    for (int c = 0; c < C; ++c)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          int64_t acc = bias[size_t(c)];
          for (int kh = 0; kh < KH; ++kh)
            for (int kw = 0; kw < KW; ++kw) {
              int ih = oh * g.s - g.pt + kh, iw = ow * g.s - g.pl + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += (x[size_t((c * H + ih) * W + iw)] + 3) *
                     (w[size_t((c * KH + kh) * KW + kw)] - wzp);
            }
          assert_int_equal(At(out[0], size_t((c * OH + oh) * OW + ow)),
                           RefRequant(acc, mult[size_t(c)], 100, 0, 255));
        }
  }
}

// 50 x 13 x 11: enough rows of A for the panel strategy (two 48-row
// panels, the second of 2), K with a tail group, N over one 8-row tile;
// int8 A with zero point 5, uint8 weights with zero point 3 (the column
// sums' term); requantised to INT8, and as INT32 (MatMulInteger).
void QGemmPanelsMatchReference(void**) {
  for (int out32 = 0; out32 < 2; ++out32) {
    const int M = 50, K = 13, N = 11;
    TStream q;
    std::vector<int32_t> a(M * K), w(N * K), bias(N);
    std::vector<float> mult(N);
    for (auto& v : a) v = Rand(-128, 127);
    for (auto& v : w) v = Rand(0, 255);
    for (int j = 0; j < N; ++j)
      bias[size_t(j)] = Rand(-5000, 5000), mult[size_t(j)] = 0.0003f * float(j + 1);
    uint32_t x = q.In({M, K}, D::INT8), y = q.Out({M, N}, out32 ? D::INT32 : D::INT8);
    uint32_t wt = q.W(w, {N, K}, D::UINT8), bt = q.W(bias, {N}, D::INT32),
             mt = q.W(mult, {N}, D::FLOAT32);
    q.s.Op(fb::CreateQGemm(q.s.fbb, x, wt, y, true, bt, M, K, N, 5, false, 0, 3, mt, 1, -128, 127));
    auto out = Run(q, {Bytes(a, {M, K}, D::INT8)});
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        int64_t acc = bias[size_t(j)];
        for (int k = 0; k < K; ++k) acc += (a[size_t(i * K + k)] - 5) * (w[size_t(j * K + k)] - 3);
        assert_int_equal(At(out[0], size_t(i * N + j)),
                         out32 ? int32_t(acc) : RefRequant(acc, mult[size_t(j)], 1, -128, 127));
      }
  }
}

// Quantize saturates at both ends, sends NaN to the minimum (as ORT) and
// rounds ties to even; Dequantize inverts it.
void QuantizeSaturatesAndRoundsToEven(void**) {
  TStream q;
  std::vector<float> x = {1e9f, -1e9f, NAN, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, INFINITY};
  const int64_t n = int64_t(x.size());
  uint32_t xt = q.In({n}, D::FLOAT32), yq = q.Out({n}, D::INT8), yf = q.Out({n}, D::FLOAT32);
  q.s.Op(fb::CreateQuantize(q.s.fbb, xt, yq, 1.0f, -1));
  q.s.Op(fb::CreateDequantize(q.s.fbb, yq, yf, 0.25f, -1));
  auto out = Run(q, {Bytes(x, {n}, D::FLOAT32)});
  const int32_t want[] = {127, -128, -128, -1, 1, 1, -1, -3, 127};
  for (size_t i = 0; i < x.size(); ++i) {
    assert_int_equal(At(out[0], i), want[i]);
    assert_true(AtF(out[1], i) == float(want[i] + 1) * 0.25f);
  }
}

// A NaN multiplier gives the clamp's minimum, an infinite one its maximum:
// no undefined float -> int conversion whatever the weight segment holds.
void HostileMultipliersClampNotCrash(void**) {
  TStream q;
  uint32_t x = q.In({1, 2}, D::INT8), y = q.Out({1, 3}, D::UINT8);
  uint32_t wt = q.W(std::vector<int32_t>{1, 1, 1, 1, 1, 1}, {3, 2}, D::INT8);
  uint32_t mt = q.W(std::vector<float>{NAN, INFINITY, -INFINITY}, {3}, D::FLOAT32);
  q.s.Op(fb::CreateQGemm(q.s.fbb, x, wt, y, false, 0, 1, 2, 3, 0, false, 0, 0, mt, 10, 5, 200));
  auto out = Run(q, {Bytes(std::vector<int32_t>{3, 4}, {1, 2}, D::INT8)});
  assert_int_equal(At(out[0], 0), 5);
  assert_int_equal(At(out[0], 1), 200);
  assert_int_equal(At(out[0], 2), 5);
}

// ONNX DynamicQuantizeLinear: scale (max - min) / 255 over a range widened to
// 0, zero point round(-min / scale); all-zero input: scale 1, zero point 0.
void DynamicQuantizeMatchesOnnx(void**) {
  for (int zero = 0; zero < 2; ++zero) {
    TStream q;
    std::vector<float> x = {-1.0f, 0.25f, 3.0f, 0.0f, -0.6f};
    if (zero) x.assign(5, 0.f);
    uint32_t xt = q.In({5}, D::FLOAT32), y = q.Out({5}, D::UINT8), s = q.Out({}, D::FLOAT32),
             z = q.Out({}, D::UINT8);
    q.s.Op(fb::CreateDynamicQuantize(q.s.fbb, xt, y, s, z));
    auto out = Run(q, {Bytes(x, {5}, D::FLOAT32)});
    const float scale = zero ? 1.f : 4.0f / 255.0f;
    const int32_t zp = zero ? 0 : int32_t(std::nearbyint(1.0f / scale));
    assert_true(AtF(out[1], 0) == scale);
    assert_int_equal(At(out[2], 0), zp);
    for (size_t i = 0; i < x.size(); ++i)
      assert_int_equal(At(out[0], i),
                       std::min(255, std::max(0, int32_t(std::nearbyint(x[i] / scale)) + zp)));
  }
}

// ADD with broadcasting ([2,3] + [3]) saturating at 255; MUL of int8.
void QBinaryBroadcastsAndSaturates(void**) {
  TStream q;
  uint32_t a = q.In({2, 3}, D::UINT8), b = q.In({3}, D::UINT8), y = q.Out({2, 3}, D::UINT8);
  std::vector<int64_t> sa = {3, 1}, sb = {0, 1};
  q.s.Op(fb::CreateQBinaryDirect(q.s.fbb, fb::BinaryKind::ADD, a, b, y, &sa, &sb, 0.5f, 10, 0.25f,
                                 0, 0.5f, 3));
  std::vector<int32_t> av = {10, 20, 255, 0, 100, 200}, bv = {0, 4, 255};
  auto out = Run(q, {Bytes(av, {2, 3}, D::UINT8), Bytes(bv, {3}, D::UINT8)});
  for (int i = 0; i < 6; ++i) {
    float f = float(av[size_t(i)] - 10) * 0.5f + float(bv[size_t(i % 3)]) * 0.25f;
    int32_t want = std::min(255, std::max(0, int32_t(std::nearbyint(f / 0.5f)) + 3));
    assert_int_equal(At(out[0], size_t(i)), want);
  }
}

// A per-channel gate over planes ([1,4,5,5] * [1,4,1,1], the row kernel
// with a one-element operand) and a plane added to every channel
// ([1,4,5,5] + [1,1,5,5]: rows of 25 with the second operand repeating).
void QBinaryRowsBroadcast(void**) {
  for (int gate = 0; gate < 2; ++gate) {
    TStream q;
    const std::vector<int64_t> bshape =
        gate ? std::vector<int64_t>{1, 4, 1, 1} : std::vector<int64_t>{1, 1, 5, 5};
    uint32_t a = q.In({1, 4, 5, 5}, D::UINT8), b = q.In(bshape, D::UINT8);
    uint32_t y = q.Out({1, 4, 5, 5}, D::UINT8);
    std::vector<int64_t> sa = {100, 25, 5, 1};
    std::vector<int64_t> sb =
        gate ? std::vector<int64_t>{4, 1, 0, 0} : std::vector<int64_t>{0, 0, 5, 1};
    q.s.Op(fb::CreateQBinaryDirect(q.s.fbb, gate ? fb::BinaryKind::MUL : fb::BinaryKind::ADD, a, b,
                                   y, &sa, &sb, 0.02f, 7, 0.01f, 3, 0.03f, 9));
    std::vector<int32_t> av(100), bv(gate ? 4 : 25);
    for (auto& v : av) v = Rand(0, 255);
    for (auto& v : bv) v = Rand(0, 255);
    auto out = Run(q, {Bytes(av, {1, 4, 5, 5}, D::UINT8), Bytes(bv, bshape, D::UINT8)});
    for (int c = 0; c < 4; ++c)
      for (int i = 0; i < 25; ++i) {
        const float fa = float(av[size_t(c * 25 + i)] - 7) * 0.02f;
        const float fb = float(bv[size_t(gate ? c : i)] - 3) * 0.01f;
        float v = (gate ? fa * fb : fa + fb) / 0.03f;
        v = std::min(246.0f, std::max(-9.0f, v));
        assert_int_equal(At(out[0], size_t(c * 25 + i)), int32_t(std::nearbyint(v)) + 9);
      }
  }
}

// QBINARY_CLAMPED (1.10): QBINARY's bytes clamped to [output_min,
// output_max], on the row kernel (rows of 40) and the element loop (an
// operand broadcast along the inner axis); refused in a 1.9 stream, with
// the bounds out of the dtype's range or crossed, and a QBINARY with bounds.
void QBinaryClampedClampsAndIsVersioned(void**) {
  for (int rows = 0; rows < 2; ++rows) {
    for (D d : {D::UINT8, D::INT8}) {
      const bool s8 = d == D::INT8;
      const int32_t qlo = s8 ? -128 : 0, qhi = s8 ? 127 : 255;
      const int32_t yz = s8 ? -5 : 100, lo = yz, hi = s8 ? 90 : 220;  // Relu, then a cap
      std::vector<int32_t> av(80), bv(rows ? 80 : 2);
      for (size_t i = 0; i < av.size(); ++i) av[i] = qlo + int32_t((i * 37 + 5) % 256);
      for (size_t i = 0; i < bv.size(); ++i) bv[i] = qlo + int32_t((i * 91 + 1) % 256);
      const std::vector<int64_t> bshape =
          rows ? std::vector<int64_t>{2, 40} : std::vector<int64_t>{2, 1};
      std::vector<int64_t> sa = {40, 1},
                           sb = rows ? std::vector<int64_t>{40, 1} : std::vector<int64_t>{1, 0};
      std::vector<uint8_t> plain_out, clamped_out;
      for (int clamped = 0; clamped < 2; ++clamped) {
        TStream q;
        q.minor = clamped ? 10 : 2;
        uint32_t a = q.In({2, 40}, d), b = q.In(bshape, d), y = q.Out({2, 40}, d);
        auto t = fb::CreateQBinaryDirect(q.s.fbb, fb::BinaryKind::ADD, a, b, y, &sa, &sb, 0.02f,
                                         s8 ? 0 : 128, 0.03f, s8 ? 1 : 120, 0.025f, yz,
                                         clamped ? lo : 0, clamped ? hi : 0);
        q.s.Op(clamped ? fb::OpParams::QBinaryClamped : fb::OpParams::QBinary, t);
        auto out = Run(q, {Bytes(av, {2, 40}, d), Bytes(bv, bshape, d)});
        for (size_t i = 0; i < 80; ++i) {
          const int32_t v = At(out[0], i);
          if (!clamped) {
            assert_true(v >= qlo && v <= qhi);
            plain_out.push_back(uint8_t(v));
          } else {
            const int32_t p = s8 ? int32_t(int8_t(plain_out[i])) : int32_t(plain_out[i]);
            assert_int_equal(v, std::min(std::max(p, lo), hi));
          }
        }
      }
    }
  }
  struct Case {
    fb::OpParams kind;
    uint16_t minor;
    int32_t lo, hi;
    const char* needle;
  } cases[] = {
      {fb::OpParams::QBinaryClamped, 9, 0, 255, "QBINARY_CLAMPED came with 1.10"},
      {fb::OpParams::QBinaryClamped, 10, 0, 256, "output_max = 256 outside [0, 255]"},
      {fb::OpParams::QBinaryClamped, 10, 200, 100, "output_min 200 > output_max 100"},
      {fb::OpParams::QBinary, 10, 0, 200, "expected 0 and 0 (QBINARY_CLAMPED clamps)"},
  };
  for (const Case& c : cases) {
    TStream q;
    q.minor = c.minor;
    uint32_t a = q.In({4}, D::UINT8), b = q.In({4}, D::UINT8), y = q.Out({4}, D::UINT8);
    std::vector<int64_t> st = {1};
    q.s.Op(c.kind, fb::CreateQBinaryDirect(q.s.fbb, fb::BinaryKind::ADD, a, b, y, &st, &st, 1.f, 0,
                                           1.f, 0, 1.f, 0, c.lo, c.hi));
    ExpectRejected(q, c.needle);
  }
}

// QLUT maps each byte (int8 read as its unsigned value), QMAX_POOL ignores
// padding, QCONCAT joins along axis 1.
void LutPoolConcat(void**) {
  TStream q;
  std::vector<int32_t> table(256);
  for (int i = 0; i < 256; ++i)
    table[size_t(i)] = int8_t(uint8_t(i)) < 0 ? 0 : int8_t(uint8_t(i));  // relu
  uint32_t x = q.In({1, 1, 3, 3}, D::INT8), r = q.Arena({1, 1, 3, 3}, D::INT8);
  uint32_t p = q.Arena({1, 1, 2, 2}, D::INT8), y = q.Out({1, 2, 2, 2}, D::INT8);
  uint32_t t = q.W(table, {256}, D::INT8);
  q.s.Op(fb::CreateQLut(q.s.fbb, x, r, t));
  q.s.Op(fb::CreateQMaxPool(q.s.fbb, r, p, 2, 2, 2, 2, 1, 1, 0, 0));
  std::vector<uint32_t> both = {p, p};
  q.s.Op(fb::CreateQConcatDirect(q.s.fbb, &both, y, 1));
  std::vector<int32_t> xv = {-5, 3, -128, 7, -1, 2, 127, -9, 4};
  auto out = Run(q, {Bytes(xv, {1, 1, 3, 3}, D::INT8)});
  // relu: [0 3 0; 7 0 2; 127 0 4]; 2x2 windows from (-1,-1) stride 2.
  const int32_t want[] = {0, 3, 127, 4};
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 4; ++i) assert_int_equal(At(out[0], size_t(c * 4 + i)), want[i]);
}

// QMAX_POOL over planes wide enough for the row kernel (windows inside
// the plane, 16 bytes a vector) and its clipped edges: 3x3 stride 2 pad 1
// (ResNet's), 2x2 stride 1 and 3x3 stride 3, on INT8 and UINT8 bytes either
// side of 0x80 (where the two orders differ), against the window maximum.
void QMaxPoolRowsMatchWindowMaximum(void**) {
  struct P {
    int64_t k, s, pad;
  } const pools[] = {{3, 2, 1}, {2, 1, 0}, {3, 3, 1}};
  for (D d : {D::INT8, D::UINT8})
    for (const P& pp : pools) {
      const int64_t C = 3, H = 21, W = 45;
      const int64_t OH = (H + 2 * pp.pad - pp.k) / pp.s + 1,
                    OW = (W + 2 * pp.pad - pp.k) / pp.s + 1;
      TStream q;
      uint32_t x = q.In({1, C, H, W}, d), y = q.Out({1, C, OH, OW}, d);
      q.s.Op(fb::CreateQMaxPool(q.s.fbb, x, y, uint32_t(pp.k), uint32_t(pp.k), uint32_t(pp.s),
                                uint32_t(pp.s), uint32_t(pp.pad), uint32_t(pp.pad),
                                uint32_t(pp.pad), uint32_t(pp.pad)));
      std::vector<int32_t> xv(size_t(C * H * W));
      for (size_t i = 0; i < xv.size(); ++i) {
        const int v = int((i * 97 + i / 7 * 31) % 256);
        xv[i] = d == D::INT8 ? v - 128 : v;
      }
      auto out = Run(q, {Bytes(xv, {1, C, H, W}, d)});
      for (int64_t c = 0; c < C; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            int32_t m = -1000;
            for (int64_t kh = 0; kh < pp.k; ++kh)
              for (int64_t kw = 0; kw < pp.k; ++kw) {
                const int64_t ih = oh * pp.s - pp.pad + kh, iw = ow * pp.s - pp.pad + kw;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                  m = std::max(m, xv[size_t((c * H + ih) * W + iw)]);
              }
            assert_int_equal(At(out[0], size_t((c * OH + oh) * OW + ow)), m);
          }
    }
}

// Threads change nothing: a residual add of two whole tensors (one row
// of 40,000 bytes, cut into pieces), a per-channel gate (rows of 400 with a
// one-byte operand), a 3x3 QCONV2D on a 7x7 map (one pixel block, its 40
// output channels cut into runs), QUANTIZE / DEQUANTIZE of 140,000 floats
// and a QGEMM of 4 row blocks give the same bytes at 1 and 3 threads, and
// the expected ones.
void ThreadsGiveTheSameBytes(void**) {
  for (int kind = 0; kind < 5; ++kind) {
    TStream q;
    std::vector<Buf> ins;
    if (kind == 4) {  // QGEMM of 4 row blocks, each cut into runs of output columns
      const int M = 150, K = 300, N = 64;
      std::vector<int32_t> a(M * K), w(N * K), bias(N);
      std::vector<float> mult(N);
      for (size_t i = 0; i < a.size(); ++i) a[i] = int32_t((i * 37 + 11) % 256) - 128;
      for (size_t i = 0; i < w.size(); ++i) w[i] = int32_t((i * 53 + 5) % 256);
      for (int j = 0; j < N; ++j)
        bias[size_t(j)] = j * 131 - 4000, mult[size_t(j)] = 0.00002f * float(j + 1);
      uint32_t x = q.In({M, K}, D::INT8), y = q.Out({M, N}, D::INT8);
      uint32_t wt = q.W(w, {N, K}, D::UINT8), bt = q.W(bias, {N}, D::INT32),
               mt = q.W(mult, {N}, D::FLOAT32);
      q.s.Op(
          fb::CreateQGemm(q.s.fbb, x, wt, y, true, bt, M, K, N, 5, false, 0, 3, mt, 1, -128, 127));
      const auto one = Run(q, {Bytes(a, {M, K}, D::INT8)});
      const auto three = Run(q, {Bytes(a, {M, K}, D::INT8)}, 3);
      assert_true(one[0].bytes == three[0].bytes);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          int64_t acc = bias[size_t(j)];
          for (int k = 0; k < K; ++k)
            acc += (a[size_t(i * K + k)] - 5) * (w[size_t(j * K + k)] - 3);
          assert_int_equal(At(three[0], size_t(i * N + j)),
                           RefRequant(acc, mult[size_t(j)], 1, -128, 127));
        }
      continue;
    }
    if (kind == 3) {  // QUANTIZE then DEQUANTIZE of 140,000 floats (runs of 64k)
      const int64_t n = 140000;
      uint32_t xt = q.In({n}, D::FLOAT32), yq = q.Arena({n}, D::UINT8), yf = q.Out({n}, D::FLOAT32);
      q.s.Op(fb::CreateQuantize(q.s.fbb, xt, yq, 0.5f, 100));
      q.s.Op(fb::CreateDequantize(q.s.fbb, yq, yf, 0.5f, 100));
      std::vector<float> xv(static_cast<size_t>(n));
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(int64_t(i % 301) - 150) * 0.75f;
      const auto one = Run(q, {Bytes(xv, {n}, D::FLOAT32)});
      const auto three = Run(q, {Bytes(xv, {n}, D::FLOAT32)}, 3);
      assert_true(one[0].bytes == three[0].bytes);
      for (size_t i = 0; i < xv.size(); ++i) {
        const float want =
            float(std::min(255, std::max(0, int(std::nearbyint(xv[i] / 0.5f)) + 100)) - 100) * 0.5f;
        assert_true(AtF(three[0], i) == want);
      }
      continue;
    }
    if (kind < 2) {
      const std::vector<int64_t> as = {1, 100, 20, 20};
      const std::vector<int64_t> bs = kind ? std::vector<int64_t>{1, 100, 1, 1} : as;
      uint32_t a = q.In(as, D::UINT8), b = q.In(bs, D::UINT8), y = q.Out(as, D::UINT8);
      std::vector<int64_t> sa = {40000, 400, 20, 1};
      std::vector<int64_t> sb = kind ? std::vector<int64_t>{100, 1, 0, 0} : sa;
      q.s.Op(fb::CreateQBinaryDirect(q.s.fbb, kind ? fb::BinaryKind::MUL : fb::BinaryKind::ADD, a,
                                     b, y, &sa, &sb, 0.02f, 7, 0.01f, 3, 0.03f, 9));
      std::vector<int32_t> av(40000), bv(size_t(kind ? 100 : 40000));
      for (size_t i = 0; i < av.size(); ++i) av[i] = int32_t((i * 37 + 5) % 256);
      for (size_t i = 0; i < bv.size(); ++i) bv[i] = int32_t((i * 91 + 1) % 256);
      ins = {Bytes(av, as, D::UINT8), Bytes(bv, bs, D::UINT8)};
    } else {
      const int64_t C = 6, CO = 40;
      std::vector<int32_t> wv(size_t(CO * C * 9));
      std::vector<int32_t> bias(static_cast<size_t>(CO));
      for (size_t i = 0; i < wv.size(); ++i) wv[i] = int32_t((i * 53) % 256) - 128;
      for (size_t i = 0; i < bias.size(); ++i) bias[i] = int32_t(i * 17) - 300;
      uint32_t xt = q.In({1, C, 7, 7}, D::UINT8), yt = q.Out({1, CO, 7, 7}, D::UINT8);
      uint32_t wt = q.W(wv, {CO, C, 3, 3}, D::INT8), bt = q.W(bias, {CO}, D::INT32);
      std::vector<float> mult(size_t(CO), 0.0007f);
      uint32_t mt = q.W(mult, {CO}, D::FLOAT32);
      q.s.Op(fb::CreateQConv2D(q.s.fbb, xt, wt, yt, true, bt, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 12,
                               false, 0, 0, mt, 5, 0, 255));
      std::vector<int32_t> xv(size_t(C * 49));
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = int32_t((i * 29 + 3) % 256);
      ins = {Bytes(xv, {1, C, 7, 7}, D::UINT8)};
    }
    const auto one = Run(q, ins);
    const auto three = Run(q, ins, 3);
    assert_true(one[0].bytes == three[0].bytes);
    if (kind < 2) {  // and the right bytes (QBinaryRowsBroadcast's rule)
      for (size_t i = 0; i < 40000; ++i) {
        const float fa = float(At(ins[0], i) - 7) * 0.02f;
        const float fb = float(At(ins[1], kind ? i / 400 : i) - 3) * 0.01f;
        float v = (kind ? fa * fb : fa + fb) / 0.03f;
        v = std::min(246.0f, std::max(-9.0f, v));
        assert_int_equal(At(three[0], i), int32_t(std::nearbyint(v)) + 9);
      }
    }
  }
}

void HostileQuantisationFieldsAreRefused(void**) {
  struct Case {
    float scale;
    int32_t zp;
    D out;
    const char* needle;
  } cases[] = {{NAN, 0, D::INT8, "scale is not a finite scale > 0"},
               {0.f, 0, D::INT8, "scale is not a finite scale > 0"},
               {-1.f, 0, D::INT8, "scale is not a finite scale > 0"},
               {INFINITY, 0, D::INT8, "scale is not a finite scale > 0"},
               {1.f, 128, D::INT8, "zero_point = 128 outside [-128, 127] of INT8"},
               {1.f, -1, D::UINT8, "zero_point = -1 outside [0, 255] of UINT8"},
               {1.f, 0, D::INT32, "output tensor 1 has dtype INT32, expected INT8 or UINT8"}};
  for (const Case& c : cases) {
    TStream q;
    uint32_t x = q.In({4}, D::FLOAT32), y = q.Out({4}, c.out);
    q.s.Op(fb::CreateQuantize(q.s.fbb, x, y, c.scale, c.zp));
    ExpectRejected(q, c.needle);
  }
}

// QGEMM variants: each breaks one promise the kernels rely on.
void HostileMacFieldsAreRefused(void**) {
  struct Case {
    uint64_t k;
    int32_t lo, hi, yzp, wzp;
    int mult_count;
    D wtype;
    const char* needle;
  } cases[] = {
      {40000, 0, 255, 0, 0, 2, D::INT8, "reduction of 40000 products exceeds 32768"},
      {4, 10, 5, 0, 0, 2, D::INT8, "output_min 10 > output_max 5"},
      {4, 0, 256, 0, 0, 2, D::INT8, "output_max = 256 outside [0, 255]"},
      {4, 0, 255, -1, 0, 2, D::INT8, "output_zero_point = -1 outside"},
      {4, 0, 255, 0, 200, 2, D::INT8, "weight_zero_point = 200 outside [-128, 127]"},
      {4, 0, 255, 0, 0, 3, D::INT8, "multipliers has 3 elements, expected 2"},
      {4, 0, 255, 0, 0, 2, D::FLOAT32,
       "weights tensor 2 has dtype FLOAT32, expected INT8 or UINT8"},
  };
  for (const Case& c : cases) {
    TStream q;
    uint32_t x = q.In({1, int64_t(c.k)}, D::UINT8), y = q.Out({1, 2}, D::UINT8);
    uint32_t w = q.W(std::vector<int32_t>(size_t(2 * c.k), 1), {2, int64_t(c.k)}, c.wtype);
    uint32_t m = q.W(std::vector<float>(size_t(c.mult_count), 1.f), {c.mult_count}, D::FLOAT32);
    q.s.Op(fb::CreateQGemm(q.s.fbb, x, w, y, false, 0, 1, c.k, 2, 0, false, 0, c.wzp, m, c.yzp,
                           c.lo, c.hi));
    ExpectRejected(q, c.needle);
  }
}

void IntegerTensorsOnlyForInt8Ops(void**) {
  {  // a float GEMM reading an INT8 tensor
    TStream q;
    uint32_t x = q.In({1, 8}, D::INT8), y = q.Out({1, 8}, D::FLOAT32);
    uint32_t w = q.W(std::vector<float>(64, 0.f), {64}, D::FLOAT32);
    q.s.Op(fb::CreateGemm(q.s.fbb, x, w, y, false, 0, 1, 8, 8));
    ExpectRejected(q, "is an integer tensor; only the int8 ops read it");
  }
  {  // QCONCAT of INT8 into UINT8
    TStream q;
    uint32_t a = q.In({1, 2}, D::INT8), y = q.Out({1, 2}, D::UINT8);
    std::vector<uint32_t> ins = {a};
    q.s.Op(fb::CreateQConcatDirect(q.s.fbb, &ins, y, 1));
    ExpectRejected(q, "inputs tensor 0 has dtype INT8, expected UINT8");
  }
  {  // QLUT with a short table
    TStream q;
    uint32_t a = q.In({4}, D::INT8), y = q.Out({4}, D::INT8);
    uint32_t t = q.W(std::vector<int32_t>(255, 0), {255}, D::INT8);
    q.s.Op(fb::CreateQLut(q.s.fbb, a, y, t));
    ExpectRejected(q, "table has 255 elements, expected 256");
  }
  {  // QMAX_POOL whose padding could fill a whole window
    TStream q;
    uint32_t a = q.In({1, 1, 4, 4}, D::INT8), y = q.Out({1, 1, 3, 3}, D::INT8);
    q.s.Op(fb::CreateQMaxPool(q.s.fbb, a, y, 2, 2, 2, 2, 2, 2, 0, 0));
    ExpectRejected(q, "pads must be smaller than the kernel");
  }
  {  // a dynamic input zero point of another dtype than the input
    TStream q;
    uint32_t x = q.In({1, 2}, D::UINT8), z = q.In({}, D::INT8), y = q.Out({1, 2}, D::INT32);
    uint32_t w = q.W(std::vector<int32_t>(4, 1), {2, 2}, D::INT8);
    q.s.Op(fb::CreateQGemm(q.s.fbb, x, w, y, false, 0, 1, 2, 2, 0, true, z, 0, 0, 0, 0, 0));
    ExpectRejected(q, "input_zp_tensor tensor 1 has dtype INT8, expected UINT8");
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(QGemmOddSizesAndExtremeZeroPoints),
      cmocka_unit_test(QConvOddSizes),
      cmocka_unit_test(QConvDepthwiseMatchesReference),
      cmocka_unit_test(QBinaryRowsBroadcast),
      cmocka_unit_test(QGemmPanelsMatchReference),
      cmocka_unit_test(QuantizeSaturatesAndRoundsToEven),
      cmocka_unit_test(HostileMultipliersClampNotCrash),
      cmocka_unit_test(DynamicQuantizeMatchesOnnx),
      cmocka_unit_test(QBinaryBroadcastsAndSaturates),
      cmocka_unit_test(QBinaryClampedClampsAndIsVersioned),
      cmocka_unit_test(LutPoolConcat),
      cmocka_unit_test(QMaxPoolRowsMatchWindowMaximum),
      cmocka_unit_test(ThreadsGiveTheSameBytes),
      cmocka_unit_test(HostileQuantisationFieldsAreRefused),
      cmocka_unit_test(HostileMacFieldsAreRefused),
      cmocka_unit_test(IntegerTensorsOnlyForInt8Ops),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
