// SPDX-License-Identifier: Apache-2.0
// vnpu transformer level (stream 1.8; 1.9's reversed copies and PAD modes):
// BATCH_MATMUL, LAYER_NORM, REDUCE, STRIDED_COPY, PAD and the new UNARY kinds against reference
// arithmetic in double written here (odd sizes, broadcast and transposed operands read through
// strides, an addend, a fused activation), and the validator refusing hostile fields of each op by
// name.
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

uint32_t g_seed = 777;
float RandF() {
  g_seed = g_seed * 1103515245u + 12345u;
  return float(int32_t((g_seed >> 8) % 20001) - 10000) / 5000.0f;
}
std::vector<float> RandV(size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = RandF();
  return v;
}

void Near(double got, double want, double tol, const char* what, size_t i) {
  if (!(std::fabs(got - want) <= tol * (1.0 + std::fabs(want))))
    fail_msg("%s[%zu] = %.9g, want %.9g", what, i, got, want);
}

std::vector<int64_t> V(std::initializer_list<int64_t> l) { return l; }

// C[b0][b1] = relu(alpha * A[b1] x B[b0][b1]^T + mask): A broadcast over b0
// and read with a row stride wider than K (a transposed view), B stored
// [n, k] (K^T read in place), the addend one [M, N] plane for all batches.
void BatchMatMulStridesBroadcastAddend(void**) {
  const int64_t B0 = 2, B1 = 3, M = 13, K = 7, N = 19, lda = 11;
  TStream q;
  q.minor = 8;
  const std::vector<float> a = RandV(size_t(B1 * M * lda)), b = RandV(size_t(B0 * B1 * N * K)),
                           mask = RandV(size_t(M * N));
  const uint32_t at = q.In({B1, M, lda}, D::FLOAT32), bt = q.In({B0, B1, N, K}, D::FLOAT32),
                 mt = q.In({M, N}, D::FLOAT32), yt = q.Out({B0, B1, M, N}, D::FLOAT32);
  const std::vector<int64_t> batch = V({B0, B1}), as = V({0, M * lda}), bs = V({B1 * N * K, N * K}),
                             cs = V({0, 0, N, 1});
  q.s.Op(fb::CreateBatchMatMulDirect(q.s.fbb, at, bt, yt, &batch, &as, &bs, M, K, N, lda, K, true,
                                     0.5f, true, mt, &cs, fb::Activation::RELU, 0.f, 0.f));
  auto out = Run(q, {Bytes(a, {B1, M, lda}, D::FLOAT32), Bytes(b, {B0, B1, N, K}, D::FLOAT32),
                     Bytes(mask, {M, N}, D::FLOAT32)});
  for (int64_t b0 = 0; b0 < B0; ++b0)
    for (int64_t b1 = 0; b1 < B1; ++b1)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += double(a[size_t((b1 * M + i) * lda + k)]) *
                   double(b[size_t(((b0 * B1 + b1) * N + j) * K + k)]);
          double want = 0.5 * acc + double(mask[size_t(i * N + j)]);
          want = want > 0 ? want : 0;
          const size_t o = size_t(((b0 * B1 + b1) * M + i) * N + j);
          Near(AtF(out[0], o), want, 1e-5, "batch_matmul", o);
        }
}

// B not transposed, no batch dimensions, GELU as the epilogue (not a
// clamp: it runs after the product).
void BatchMatMulPlainWithGelu(void**) {
  const int64_t M = 5, K = 33, N = 50;
  TStream q;
  q.minor = 8;
  const std::vector<float> a = RandV(size_t(M * K)), b = RandV(size_t(K * N));
  const uint32_t at = q.In({M, K}, D::FLOAT32), bt = q.In({K, N}, D::FLOAT32),
                 yt = q.Out({M, N}, D::FLOAT32);
  const std::vector<int64_t> none;
  q.s.Op(fb::CreateBatchMatMulDirect(q.s.fbb, at, bt, yt, &none, &none, &none, M, K, N, K, N, false,
                                     1.0f, false, 0, nullptr, fb::Activation::GELU, 0.70710678f,
                                     0.5f));
  auto out = Run(q, {Bytes(a, {M, K}, D::FLOAT32), Bytes(b, {K, N}, D::FLOAT32)});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(a[size_t(i * K + k)]) * double(b[size_t(k * N + j)]);
      const double want = 0.5 * acc * (1.0 + std::erf(acc / std::sqrt(2.0)));
      Near(AtF(out[0], size_t(i * N + j)), want, 2e-5, "gelu_matmul", size_t(i * N + j));
    }
}

// LAYER_NORM over a last axis (with scale and bias, odd length) and over a
// channel axis (inner 6, RMS, no bias).
void LayerNormLastAxisAndChannels(void**) {
  for (int rms = 0; rms < 2; ++rms) {
    const int64_t outer = 4, n = 37, inner = rms ? 6 : 1;
    TStream q;
    q.minor = 8;
    std::vector<float> x = RandV(size_t(outer * n * inner)), sc = RandV(size_t(n)),
                       bi = RandV(size_t(n));
    for (float& v : x) v += 3.0f;  // a mean far from 0
    const uint32_t xt = q.In({outer, n, inner}, D::FLOAT32),
                   yt = q.Out({outer, n, inner}, D::FLOAT32);
    const uint32_t st = q.W(sc, {n}, D::FLOAT32), bt = q.W(bi, {n}, D::FLOAT32);
    q.s.Op(
        fb::CreateLayerNorm(q.s.fbb, xt, yt, true, st, !rms, bt, outer, n, inner, 1e-5f, rms != 0));
    auto out = Run(q, {Bytes(x, {outer, n, inner}, D::FLOAT32)});
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        double m = 0, v = 0;
        for (int64_t a = 0; a < n; ++a) m += x[size_t((o * n + a) * inner + in)];
        m = rms ? 0 : m / double(n);
        for (int64_t a = 0; a < n; ++a) {
          const double d = x[size_t((o * n + a) * inner + in)] - m;
          v += d * d;
        }
        v /= double(n);
        for (int64_t a = 0; a < n; ++a) {
          const size_t i = size_t((o * n + a) * inner + in);
          const double want =
              (x[i] - m) / std::sqrt(v + 1e-5) * sc[size_t(a)] + (rms ? 0.0 : bi[size_t(a)]);
          Near(AtF(out[0], i), want, 1e-5, rms ? "rms_norm" : "layer_norm", i);
        }
      }
  }
}

// REDUCE of each kind over a last axis and a middle axis.
void ReduceKindsAndViews(void**) {
  const fb::ReduceKind kinds[] = {fb::ReduceKind::SUM, fb::ReduceKind::MEAN,
                                  fb::ReduceKind::MAXIMUM, fb::ReduceKind::MINIMUM};
  for (fb::ReduceKind kind : kinds)
    for (int64_t inner : {int64_t(1), int64_t(5)}) {
      const int64_t outer = 3, n = 21;
      TStream q;
      q.minor = 8;
      const std::vector<float> x = RandV(size_t(outer * n * inner));
      const uint32_t xt = q.In({outer, n, inner}, D::FLOAT32),
                     yt = q.Out({outer, inner}, D::FLOAT32);
      q.s.Op(fb::CreateReduce(q.s.fbb, kind, xt, yt, outer, n, inner));
      auto out = Run(q, {Bytes(x, {outer, n, inner}, D::FLOAT32)});
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          double acc = x[size_t(o * n * inner + i)];
          for (int64_t a = 1; a < n; ++a) {
            const double v = x[size_t((o * n + a) * inner + i)];
            if (kind == fb::ReduceKind::MAXIMUM) acc = v > acc ? v : acc;
            else if (kind == fb::ReduceKind::MINIMUM) acc = v < acc ? v : acc;
            else acc += v;
          }
          if (kind == fb::ReduceKind::MEAN) acc /= double(n);
          Near(AtF(out[0], size_t(o * inner + i)), acc, 1e-6, "reduce", size_t(o * inner + i));
        }
    }
}

// STRIDED_COPY: a slice with step 2 along the last axis, a broadcast
// (stride 0), and one element at an offset.
void StridedCopySliceBroadcastScalar(void**) {
  TStream q;
  q.minor = 8;
  std::vector<float> x(4 * 9);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
  const uint32_t xt = q.In({4, 9}, D::FLOAT32);
  const uint32_t y1 = q.Out({3, 4}, D::FLOAT32), y2 = q.Out({2, 4, 9}, D::FLOAT32),
                 y3 = q.Out({}, D::FLOAT32);
  const std::vector<int64_t> s1 = V({9, 2}), s2 = V({0, 9, 1}), s3;
  q.s.Op(fb::CreateStridedCopyDirect(q.s.fbb, xt, y1, 9 + 1, &s1));  // x[1:, 1::2]
  q.s.Op(fb::CreateStridedCopyDirect(q.s.fbb, xt, y2, 0, &s2));
  q.s.Op(fb::CreateStridedCopyDirect(q.s.fbb, xt, y3, 35, &s3));
  auto out = Run(q, {Bytes(x, {4, 9}, D::FLOAT32)});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      assert_true(AtF(out[0], size_t(i * 4 + j)) == float((i + 1) * 9 + 1 + 2 * j));
  for (size_t i = 0; i < 72; ++i) assert_true(AtF(out[1], i) == float(i % 36));
  assert_true(AtF(out[2], 0) == 35.0f);
}

// The new UNARY kinds against libm.
void UnaryKinds(void**) {
  struct K {
    fb::Activation kind;
    float alpha, beta;
    double (*ref)(double, double, double);
  } kinds[] = {
      {fb::Activation::ERF, 0, 0, [](double v, double, double) { return std::erf(v); }},
      {fb::Activation::GELU, 0.70710678f, 0.5f,
       [](double v, double a, double b) { return v * (std::erf(v * a) + 1) * b; }},
      {fb::Activation::EXP, 0, 0, [](double v, double, double) { return std::exp(v); }},
      {fb::Activation::SQRT, 0, 0,
       [](double v, double, double) { return std::sqrt(std::fabs(v)); }},
      {fb::Activation::RECIPROCAL, 0, 0, [](double v, double, double) { return 1.0 / v; }},
      {fb::Activation::NEG, 0, 0, [](double v, double, double) { return -v; }},
      {fb::Activation::ABS, 0, 0, [](double v, double, double) { return std::fabs(v); }},
      {fb::Activation::POW, 2, 0, [](double v, double a, double) { return std::pow(v, a); }},
      {fb::Activation::POW, 3, 0, [](double v, double a, double) { return std::pow(v, a); }},
      {fb::Activation::POW, 1.5f, 0,
       [](double v, double a, double) { return std::pow(std::fabs(v), a); }},
      {fb::Activation::LOG, 0, 0, [](double v, double, double) { return std::log(std::fabs(v)); }},
  };
  for (const K& k : kinds) {
    TStream q;
    q.minor = 8;
    std::vector<float> x = RandV(45);
    const bool positive =
        k.kind == fb::Activation::SQRT || k.kind == fb::Activation::LOG || k.alpha == 1.5f;
    if (positive)
      for (float& v : x) v = std::fabs(v) + (k.kind == fb::Activation::LOG ? 0.25f : 0.0f);
    if (k.kind == fb::Activation::RECIPROCAL)
      for (float& v : x) v += v >= 0 ? 0.5f : -0.5f;
    const uint32_t xt = q.In({45}, D::FLOAT32), yt = q.Out({45}, D::FLOAT32);
    q.s.Op(fb::CreateUnary(q.s.fbb, k.kind, xt, yt, k.alpha, k.beta));
    auto out = Run(q, {Bytes(x, {45}, D::FLOAT32)});
    for (size_t i = 0; i < x.size(); ++i)
      Near(AtF(out[0], i), k.ref(x[i], k.alpha, k.beta), 1e-6, "unary", i);
  }
}

// RESIZE of the last two axes: nearest (asymmetric, floor; half_pixel,
// round_prefer_floor) and linear (half_pixel, align_corners), upsampling
// one axis and downsampling the other, against the ONNX formulas in double.
void ResizeNearestAndLinear(void**) {
  struct C {
    fb::ResizeMode mode;
    fb::ResizeCoord coord;
    fb::ResizeRound round;
  } cases[] = {
      {fb::ResizeMode::NEAREST, fb::ResizeCoord::ASYMMETRIC, fb::ResizeRound::FLOOR},
      {fb::ResizeMode::NEAREST, fb::ResizeCoord::HALF_PIXEL, fb::ResizeRound::PREFER_FLOOR},
      {fb::ResizeMode::LINEAR, fb::ResizeCoord::HALF_PIXEL, fb::ResizeRound::PREFER_FLOOR},
      {fb::ResizeMode::LINEAR, fb::ResizeCoord::ALIGN_CORNERS, fb::ResizeRound::PREFER_FLOOR},
      {fb::ResizeMode::LINEAR, fb::ResizeCoord::PYTORCH_HALF_PIXEL, fb::ResizeRound::PREFER_FLOOR},
  };
  const int64_t N = 2, H = 5, W = 8, OH = 12, OW = 3;
  const float sh = float(OH) / float(H), sw = float(OW) / float(W);
  for (const C& k : cases) {
    TStream q;
    q.minor = 8;
    const std::vector<float> x = RandV(size_t(N * H * W));
    const uint32_t xt = q.In({N, H, W}, D::FLOAT32), yt = q.Out({N, OH, OW}, D::FLOAT32);
    q.s.Op(
        fb::CreateResize(q.s.fbb, xt, yt, k.mode, k.coord, k.round, sh, sw, float(OH), float(OW)));
    auto out = Run(q, {Bytes(x, {N, H, W}, D::FLOAT32)});
    // The input coordinate of output o (ONNX's definitions).
    auto src = [&](int64_t o, int64_t in, int64_t outn, double s) {
      switch (k.coord) {
        case fb::ResizeCoord::ASYMMETRIC: return o / s;
        case fb::ResizeCoord::ALIGN_CORNERS:
          return outn == 1 ? 0.0 : double(o) * double(in - 1) / double(outn - 1);
        case fb::ResizeCoord::PYTORCH_HALF_PIXEL: return outn > 1 ? (o + 0.5) / s - 0.5 : 0.0;
        default: return (o + 0.5) / s - 0.5;
      }
    };
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          const double u = src(i, H, OH, sh), v = src(j, W, OW, sw);
          double want;
          if (k.mode == fb::ResizeMode::NEAREST) {
            auto pick = [&](double c, int64_t in) {
              double r = k.round == fb::ResizeRound::FLOOR ? std::floor(c)
                         : (c - std::floor(c) == 0.5)      ? std::floor(c)
                                                           : std::round(c);
              return int64_t(std::min(std::max(r, 0.0), double(in - 1)));
            };
            want = x[size_t((n * H + pick(u, H)) * W + pick(v, W))];
          } else {
            auto taps = [](double c, int64_t in, int64_t* i0, int64_t* i1, double* f) {
              c = std::min(std::max(c, 0.0), double(in - 1));
              *i0 = int64_t(c);
              *i1 = std::min(*i0 + 1, in - 1);
              *f = *i0 == *i1 ? 0.5 : c - double(*i0);
              if (*i0 == *i1) *f = 0.5;
            };
            int64_t a0, a1, b0, b1;
            double fu, fv;
            taps(u, H, &a0, &a1, &fu);
            taps(v, W, &b0, &b1, &fv);
            auto at = [&](int64_t a, int64_t b) { return double(x[size_t((n * H + a) * W + b)]); };
            want = (1 - fu) * ((1 - fv) * at(a0, b0) + fv * at(a0, b1)) +
                   fu * ((1 - fv) * at(a1, b0) + fv * at(a1, b1));
          }
          const size_t o = size_t((n * OH + i) * OW + j);
          Near(AtF(out[0], o), want, 1e-5, "resize", o);
        }
  }
}

// PAD, constant mode: begins and ends on every axis, a value of -1.5.
void PadConstant(void**) {
  TStream q;
  q.minor = 8;
  std::vector<float> x(2 * 3 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
  const uint32_t xt = q.In({2, 3, 4}, D::FLOAT32), yt = q.Out({3, 5, 7}, D::FLOAT32);
  const std::vector<int64_t> begins = V({0, 1, 2});
  q.s.Op(fb::CreatePadDirect(q.s.fbb, xt, yt, &begins, -1.5f));
  auto out = Run(q, {Bytes(x, {2, 3, 4}, D::FLOAT32)});
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 5; ++b)
      for (int64_t c = 0; c < 7; ++c) {
        const int64_t i = a, j = b - 1, k = c - 2;
        const float want =
            i < 2 && j >= 0 && j < 3 && k >= 0 && k < 4 ? x[size_t((i * 3 + j) * 4 + k)] : -1.5f;
        assert_true(AtF(out[0], size_t((a * 5 + b) * 7 + c)) == want);
      }
}

// STRIDED_COPY 1.9: negative strides read a reversed slice, x[::-1, 7:0:-3].
void StridedCopyReversed(void**) {
  TStream q;
  q.minor = 9;
  std::vector<float> x(4 * 9);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
  const uint32_t xt = q.In({4, 9}, D::FLOAT32), yt = q.Out({4, 3}, D::FLOAT32);
  const std::vector<int64_t> st = V({-9, -3});
  q.s.Op(fb::CreateStridedCopyDirect(q.s.fbb, xt, yt, 3 * 9 + 7, &st));
  auto out = Run(q, {Bytes(x, {4, 9}, D::FLOAT32)});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      assert_true(AtF(out[0], size_t(i * 3 + j)) == float((3 - i) * 9 + 7 - 3 * j));
}

// PAD_MIRROR (1.9), REFLECT and EDGE on two axes against ONNX's definitions
// (numpy.pad's 'reflect' and 'edge').
void PadReflectEdge(void**) {
  for (const fb::PadMode mode : {fb::PadMode::REFLECT, fb::PadMode::EDGE}) {
    TStream q;
    q.minor = 9;
    std::vector<float> x(2 * 3 * 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
    const uint32_t xt = q.In({2, 3, 4}, D::FLOAT32), yt = q.Out({2, 6, 9}, D::FLOAT32);
    const std::vector<int64_t> begins = V({0, 2, 3});  // ends 0, 1, 2
    q.s.Op(fb::OpParams::PadMirror, fb::CreatePadDirect(q.s.fbb, xt, yt, &begins, 7.f, mode));
    auto out = Run(q, {Bytes(x, {2, 3, 4}, D::FLOAT32)});
    auto src = [mode](int64_t i, int64_t n) {
      if (i >= 0 && i < n) return i;
      if (mode == fb::PadMode::EDGE) return i < 0 ? int64_t(0) : n - 1;
      return i < 0 ? -i : 2 * (n - 1) - i;
    };
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 6; ++b)
        for (int64_t c = 0; c < 9; ++c) {
          const float want = x[size_t((a * 3 + src(b - 2, 3)) * 4 + src(c - 3, 4))];
          if (AtF(out[0], size_t((a * 6 + b) * 9 + c)) != want)
            fail_msg("mode %d y[%lld][%lld][%lld] = %g, want %g", int(mode), (long long)a,
                     (long long)b, (long long)c, double(AtF(out[0], size_t((a * 6 + b) * 9 + c))),
                     double(want));
        }
  }
}

// RECURRENT against ONNX's LSTM and GRU equations in double: a
// bidirectional LSTM with initial states, a GRU with linear_before_reset
// and a reversed GRU without it; batch 2 (dot products) and 5 (Sgemm).
void RecurrentLstmGru(void**) {
  struct C {
    fb::RecurrentCell cell;
    uint32_t dirs;
    bool reverse, lbr;
    int64_t B;
  } cases[] = {{fb::RecurrentCell::LSTM, 2, false, false, 2},
               {fb::RecurrentCell::GRU, 1, false, true, 5},
               {fb::RecurrentCell::GRU, 1, true, false, 2}};
  for (const C& k : cases) {
    const bool lstm = k.cell == fb::RecurrentCell::LSTM;
    const int64_t S = 3, B = k.B, I = 5, H = 4, D = k.dirs, G = lstm ? 4 : 3, GH = G * H;
    TStream q;
    q.minor = 8;
    const std::vector<float> x = RandV(size_t(S * B * I)), w = RandV(size_t(D * GH * I)),
                             r = RandV(size_t(D * GH * H)), bias = RandV(size_t(D * GH)),
                             rbh = RandV(size_t(D * H)), h0 = RandV(size_t(D * B * H)),
                             c0 = RandV(size_t(D * B * H));
    const uint32_t xt = q.In({S, B, I}, D::FLOAT32), ht = q.In({D, B, H}, D::FLOAT32);
    const uint32_t ct = lstm ? q.In({D, B, H}, D::FLOAT32) : 0;
    const uint32_t yt = q.Out({S, D, B, H}, D::FLOAT32), yht = q.Out({D, B, H}, D::FLOAT32);
    const uint32_t yct = lstm ? q.Out({D, B, H}, D::FLOAT32) : 0;
    const uint32_t wt = q.W(w, {D, GH, I}, D::FLOAT32), rt = q.W(r, {D, GH, H}, D::FLOAT32),
                   bt = q.W(bias, {D, GH}, D::FLOAT32), rbt = q.W(rbh, {D, H}, D::FLOAT32);
    q.s.Op(fb::CreateRecurrent(q.s.fbb, k.cell, xt, wt, rt, bt, k.lbr, rbt, true, ht, lstm, ct,
                               true, yt, true, yht, lstm, yct, uint64_t(S), uint64_t(B),
                               uint64_t(I), uint64_t(H), k.dirs, k.reverse, k.lbr));
    std::vector<Buf> ins = {Bytes(x, {S, B, I}, D::FLOAT32), Bytes(h0, {D, B, H}, D::FLOAT32)};
    if (lstm) ins.push_back(Bytes(c0, {D, B, H}, D::FLOAT32));
    auto out = Run(q, ins);
    auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b) {
        std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j)
          h[size_t(j)] = h0[size_t((d * B + b) * H + j)],
          c[size_t(j)] = c0[size_t((d * B + b) * H + j)];
        for (int64_t step = 0; step < S; ++step) {
          const int64_t t = (k.reverse || d == 1) ? S - 1 - step : step;
          // Gate pre-activations: x W^T + h R^T + bias (GRU's h gate apart).
          std::vector<double> xw(static_cast<size_t>(GH)), hr(static_cast<size_t>(GH));
          for (int64_t g = 0; g < GH; ++g) {
            double a = 0, e = 0;
            for (int64_t i = 0; i < I; ++i)
              a += x[size_t((t * B + b) * I + i)] * double(w[size_t((d * GH + g) * I + i)]);
            for (int64_t i = 0; i < H; ++i) e += h[size_t(i)] * r[size_t((d * GH + g) * H + i)];
            xw[size_t(g)] = a + bias[size_t(d * GH + g)];
            hr[size_t(g)] = e;
          }
          std::vector<double> nh(static_cast<size_t>(H));
          if (lstm) {
            for (int64_t j = 0; j < H; ++j) {
              const double gi = sig(xw[size_t(j)] + hr[size_t(j)]);
              const double go = sig(xw[size_t(H + j)] + hr[size_t(H + j)]);
              const double gf = sig(xw[size_t(2 * H + j)] + hr[size_t(2 * H + j)]);
              const double gc = std::tanh(xw[size_t(3 * H + j)] + hr[size_t(3 * H + j)]);
              c[size_t(j)] = gf * c[size_t(j)] + gi * gc;
              nh[size_t(j)] = go * std::tanh(c[size_t(j)]);
            }
          } else {
            std::vector<double> z(static_cast<size_t>(H)), rr(static_cast<size_t>(H));
            for (int64_t j = 0; j < H; ++j) {
              z[size_t(j)] = sig(xw[size_t(j)] + hr[size_t(j)]);
              rr[size_t(j)] = sig(xw[size_t(H + j)] + hr[size_t(H + j)]);
            }
            for (int64_t j = 0; j < H; ++j) {
              double cand;
              if (k.lbr) {
                cand = rr[size_t(j)] * (hr[size_t(2 * H + j)] + rbh[size_t(d * H + j)]);
              } else {
                cand = 0;
                for (int64_t i = 0; i < H; ++i)
                  cand += rr[size_t(i)] * h[size_t(i)] * r[size_t((d * GH + 2 * H + j) * H + i)];
              }
              cand = std::tanh(xw[size_t(2 * H + j)] + cand);
              nh[size_t(j)] = (1 - z[size_t(j)]) * cand + z[size_t(j)] * h[size_t(j)];
            }
          }
          h = nh;
          for (int64_t j = 0; j < H; ++j)
            Near(AtF(out[0], size_t(((t * D + d) * B + b) * H + j)), h[size_t(j)], 2e-5, "y",
                 size_t(j));
        }
        for (int64_t j = 0; j < H; ++j) {
          Near(AtF(out[1], size_t((d * B + b) * H + j)), h[size_t(j)], 2e-5, "y_h", size_t(j));
          if (lstm)
            Near(AtF(out[2], size_t((d * B + b) * H + j)), c[size_t(j)], 2e-5, "y_c", size_t(j));
        }
      }
  }
}

// Hostile fields are refused at bind with a message naming them.
void HostileTransformerOpsRefused(void**) {
  {  // a 1.8 op in a 1.7 stream
    TStream q;
    q.minor = 7;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({2}, D::FLOAT32);
    q.s.Op(fb::CreateReduce(q.s.fbb, fb::ReduceKind::SUM, x, y, 2, 3, 1));
    ExpectRejected(q, "came with 1.8");
  }
  {  // a 1.8 unary kind in a 1.7 stream
    TStream q;
    q.minor = 7;
    const uint32_t x = q.In({2}, D::FLOAT32), y = q.Out({2}, D::FLOAT32);
    q.s.Op(fb::CreateUnary(q.s.fbb, fb::Activation::GELU, x, y, 1, 0));
    ExpectRejected(q, "unknown kind");
  }
  {  // batch strides that reach past A
    TStream q;
    q.minor = 8;
    const uint32_t a = q.In({2, 4, 4}, D::FLOAT32), b = q.In({4, 4}, D::FLOAT32),
                   y = q.Out({3, 4, 4}, D::FLOAT32);
    const std::vector<int64_t> batch = V({3}), as = V({16}), bs = V({0});
    q.s.Op(fb::CreateBatchMatMulDirect(q.s.fbb, a, b, y, &batch, &as, &bs, 4, 4, 4, 4, 4, false,
                                       1.f, false, 0, nullptr));
    ExpectRejected(q, "a_strides reach element");
  }
  {  // an empty batch dimension (the fuzzer's: refused with no message)
    TStream q;
    q.minor = 8;
    const uint32_t a = q.In({4, 4}, D::FLOAT32), b = q.In({4, 4}, D::FLOAT32),
                   y = q.Out({0, 4, 4}, D::FLOAT32);
    const std::vector<int64_t> batch = V({0}), as = V({0}), bs = V({0});
    q.s.Op(fb::CreateBatchMatMulDirect(q.s.fbb, a, b, y, &batch, &as, &bs, 4, 4, 4, 4, 4, false,
                                       1.f, false, 0, nullptr));
    ExpectRejected(q, "batch[0] = 0, expected at least 1");
  }
  {  // a row stride shorter than a row of B^T
    TStream q;
    q.minor = 8;
    const uint32_t a = q.In({4, 4}, D::FLOAT32), b = q.In({4, 4}, D::FLOAT32),
                   y = q.Out({4, 4}, D::FLOAT32);
    const std::vector<int64_t> none;
    q.s.Op(fb::CreateBatchMatMulDirect(q.s.fbb, a, b, y, &none, &none, &none, 4, 4, 4, 4, 3, true,
                                       1.f, false, 0, nullptr));
    ExpectRejected(q, "shorter than a row");
  }
  {  // an addend whose strides reach past it
    TStream q;
    q.minor = 8;
    const uint32_t a = q.In({4, 4}, D::FLOAT32), b = q.In({4, 4}, D::FLOAT32),
                   m = q.In({4}, D::FLOAT32), y = q.Out({4, 4}, D::FLOAT32);
    const std::vector<int64_t> none, cs = V({4, 1});
    q.s.Op(fb::CreateBatchMatMulDirect(q.s.fbb, a, b, y, &none, &none, &none, 4, 4, 4, 4, 4, false,
                                       1.f, true, m, &cs));
    ExpectRejected(q, "addend_strides reach element");
  }
  {  // a copy whose offset leaves its input
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({4, 9}, D::FLOAT32), y = q.Out({3, 4}, D::FLOAT32);
    const std::vector<int64_t> s = V({9, 2});
    q.s.Op(fb::CreateStridedCopyDirect(q.s.fbb, x, y, 20, &s));
    ExpectRejected(q, "strides reach element");
  }
  {  // a negative stride in a 1.8 stream
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({4, 9}, D::FLOAT32), y = q.Out({4}, D::FLOAT32);
    const std::vector<int64_t> s = V({-9});
    q.s.Op(fb::CreateStridedCopyDirect(q.s.fbb, x, y, 27, &s));
    ExpectRejected(q, "strides[0] = -9 out of range");
  }
  {  // a reversed copy that starts too low: reaches before its input
    TStream q;
    q.minor = 9;
    const uint32_t x = q.In({4, 9}, D::FLOAT32), y = q.Out({4}, D::FLOAT32);
    const std::vector<int64_t> s = V({-9});
    q.s.Op(fb::CreateStridedCopyDirect(q.s.fbb, x, y, 26, &s));
    ExpectRejected(q, "before the input");
  }
  {  // a mirror pad in a 1.8 stream
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({2, 5}, D::FLOAT32);
    const std::vector<int64_t> begins = V({0, 1});
    q.s.Op(fb::OpParams::PadMirror,
           fb::CreatePadDirect(q.s.fbb, x, y, &begins, 0.f, fb::PadMode::REFLECT));
    ExpectRejected(q, "PAD_MIRROR came with 1.9");
  }
  {  // PAD with a mirror mode (it writes constants only)
    TStream q;
    q.minor = 9;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({2, 5}, D::FLOAT32);
    const std::vector<int64_t> begins = V({0, 1});
    q.s.Op(fb::CreatePadDirect(q.s.fbb, x, y, &begins, 0.f, fb::PadMode::EDGE));
    ExpectRejected(q, "expected CONSTANT (0)");
  }
  {  // a reflect pad longer than the axis less one
    TStream q;
    q.minor = 9;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({2, 6}, D::FLOAT32);
    const std::vector<int64_t> begins = V({0, 3});
    q.s.Op(fb::OpParams::PadMirror,
           fb::CreatePadDirect(q.s.fbb, x, y, &begins, 0.f, fb::PadMode::REFLECT));
    ExpectRejected(q, "REFLECT mode");
  }
  {  // an unknown pad mode
    TStream q;
    q.minor = 9;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({2, 3}, D::FLOAT32);
    const std::vector<int64_t> begins = V({0, 0});
    q.s.Op(fb::OpParams::PadMirror,
           fb::CreatePadDirect(q.s.fbb, x, y, &begins, 0.f, fb::PadMode(7)));
    ExpectRejected(q, "mode 7: expected REFLECT (1) or EDGE (2)");
  }
  {  // a NaN epsilon
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({2, 3}, D::FLOAT32);
    q.s.Op(fb::CreateLayerNorm(q.s.fbb, x, y, false, 0, false, 0, 2, 3, 1, NAN, false));
    ExpectRejected(q, "epsilon");
  }
  {  // a NaN resize scale
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({1, 2, 2}, D::FLOAT32), y = q.Out({1, 4, 4}, D::FLOAT32);
    q.s.Op(fb::CreateResize(q.s.fbb, x, y, fb::ResizeMode::LINEAR, fb::ResizeCoord::HALF_PIXEL,
                            fb::ResizeRound::FLOOR, NAN, 2.f, 4.f, 4.f));
    ExpectRejected(q, "scale_h/scale_w");
  }
  {  // a resize that changes a leading axis
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({1, 2, 2}, D::FLOAT32), y = q.Out({2, 4, 4}, D::FLOAT32);
    q.s.Op(fb::CreateResize(q.s.fbb, x, y, fb::ResizeMode::NEAREST, fb::ResizeCoord::HALF_PIXEL,
                            fb::ResizeRound::FLOOR, 2.f, 2.f, 4.f, 4.f));
    ExpectRejected(q, "output dim");
  }
  {  // a pad whose input does not fit its output
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({2, 4}, D::FLOAT32);
    const std::vector<int64_t> begins = V({0, 2});
    q.s.Op(fb::CreatePadDirect(q.s.fbb, x, y, &begins, 0.f));
    ExpectRejected(q, "does not fit output");
  }
  {  // a recurrent op whose weights are short
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({2, 1, 3}, D::FLOAT32), y = q.Out({2, 1, 1, 4}, D::FLOAT32);
    const uint32_t w = q.W(RandV(16 * 3 - 1), {16 * 3 - 1}, D::FLOAT32),
                   r = q.W(RandV(64), {64}, D::FLOAT32), b = q.W(RandV(16), {16}, D::FLOAT32);
    q.s.Op(fb::CreateRecurrent(q.s.fbb, fb::RecurrentCell::LSTM, x, w, r, b, false, 0, false, 0,
                               false, 0, true, y, false, 0, false, 0, 2, 1, 3, 4, 1));
    ExpectRejected(q, "(RECURRENT): w");
  }
  {  // a reduction view that does not match its tensors
    TStream q;
    q.minor = 8;
    const uint32_t x = q.In({2, 3}, D::FLOAT32), y = q.Out({3}, D::FLOAT32);
    q.s.Op(fb::CreateReduce(q.s.fbb, fb::ReduceKind::MEAN, x, y, 2, 3, 1));
    ExpectRejected(q, "output");
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(BatchMatMulStridesBroadcastAddend),
      cmocka_unit_test(BatchMatMulPlainWithGelu),
      cmocka_unit_test(LayerNormLastAxisAndChannels),
      cmocka_unit_test(ReduceKindsAndViews),
      cmocka_unit_test(StridedCopySliceBroadcastScalar),
      cmocka_unit_test(UnaryKinds),
      cmocka_unit_test(ResizeNearestAndLinear),
      cmocka_unit_test(PadConstant),
      cmocka_unit_test(StridedCopyReversed),
      cmocka_unit_test(PadReflectEdge),
      cmocka_unit_test(RecurrentLstmGru),
      cmocka_unit_test(HostileTransformerOpsRefused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
