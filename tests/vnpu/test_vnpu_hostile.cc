// SPDX-License-Identifier: Apache-2.0
// vnpu driver: hostile command streams end in a clean get_graph error (the
// driver reads a payload when its graph is first bound, never in
// load_context), never a crash or an out-of-bounds access (run under ASan:
// EPCTX_SANITIZE).
#include <cmath>
#include <cstring>
#include <functional>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#include "vnpu_stream.h"

using namespace vt;
using L = fb::Location;

namespace {

void ExpectRejected(const std::vector<uint8_t>& payload, const std::vector<float>& weights,
                    const char* needle) {
  Loaded l;
  Load(&l, {{"g", payload}}, weights);
  // The container level is fine: load_context does not read the payload.
  assert_int_equal(l.rc, 0);
  assert_non_null(l.ctx);
  epctx_hal_graph* g = nullptr;
  epctx_hal_graph_info info;
  // Rejected on every bind, not only the first (nothing is cached as valid).
  for (int attempt = 0; attempt < 2; ++attempt) {
    Bind(&l, "g", &g, &info);
    if (l.rc != EPCTX_INVALID_GRAPH) print_error("rc %d msg %s\n", l.rc, l.msg.c_str());
    assert_int_equal(l.rc, EPCTX_INVALID_GRAPH);
    if (!strstr(l.msg.c_str(), needle)) {
      print_error("message '%s' lacks '%s'\n", l.msg.c_str(), needle);
      fail();
    }
  }
}

// Binds graph "g" of l and executes it once on one float input and output
// of those shapes, with a scratch arena of the size get_graph asks for.
void BindAndExecute(Loaded* l, std::vector<int64_t> xd, std::vector<float>* x,
                    std::vector<int64_t> yd, std::vector<float>* y) {
  epctx_hal_graph* g = nullptr;
  epctx_hal_graph_info info;
  assert_int_equal(Bind(l, "g", &g, &info), 0);
  std::vector<uint8_t> arena(info.scratch_bytes + 64);
  epctx_hal_tensor ti = {EPCTX_DTYPE_FLOAT, uint32_t(xd.size()), xd.data(), x->data(),
                         x->size() * 4};
  epctx_hal_tensor to = {EPCTX_DTYPE_FLOAT, uint32_t(yd.size()), yd.data(), y->data(),
                         y->size() * 4};
  char msg[256];
  int rc = epctx_vnpu_driver()->execute(epctx_vnpu_driver(), g, &ti, 1, &to, 1, arena.data(),
                                        info.scratch_bytes, msg, sizeof msg);
  if (rc) print_error("%s\n", msg);
  assert_int_equal(rc, 0);
}

// CONV2D_TAPS (stream 1.4): the CONV2D table with its weights taps-major.
// A 1.3 stream naming it is refused like an unknown op; more than 24 output
// channels per group are refused; and it computes bit for bit what CONV2D
// computes from the same weights in the blocked layout.
void conv2d_taps_needs_stream_1_4_and_matches_conv2d(void**) {
  const int C = 16, H = 3, W = 6, KH = 3, KW = 3;
  auto make = [&](int co, fb::OpParams kind, std::vector<float>* wts, uint16_t minor) {
    std::vector<float> w(size_t(co * C * KH * KW));
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 7 % 23) - 11) / 16.f;
    const int nb = (co + 7) / 8, ks = KH * KW;
    if (kind == fb::OpParams::Conv2D) {
      *wts = PackConv(w, co, C, KH, KW, 1);
    } else {
      wts->assign(size_t(ks * C * nb * 8), 0.f);
      for (int o = 0; o < co; ++o)
        for (int i = 0; i < C; ++i)
          for (int k = 0; k < ks; ++k)
            (*wts)[size_t((k * C + i) * nb * 8 + o)] = w[size_t((o * C + i) * ks + k)];
    }
    Stream s;
    uint32_t x = s.Tensor("x", {1, C, H, W}, L::INPUT, 0);
    uint32_t wt = s.Tensor("w", {int64_t(wts->size())}, L::WEIGHT, 0);
    uint32_t y = s.Tensor("y", {1, co, H, W}, L::OUTPUT, 0);
    s.Op(kind, fb::CreateConv2D(s.fbb, x, wt, y, false, 0, KH, KW, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                fb::Activation::RELU));
    return s.Finish(0, "g", minor);
  };
  std::vector<float> wb, wt;
  ExpectRejected(make(8, fb::OpParams::Conv2DTaps, &wt, 3), wt, "CONV2D_TAPS came with 1.4");
  ExpectRejected(make(32, fb::OpParams::Conv2DTaps, &wt, 4), wt, "at most 24");
  std::vector<float> outs[2];
  int k = 0;
  for (fb::OpParams kind : {fb::OpParams::Conv2D, fb::OpParams::Conv2DTaps}) {
    std::vector<float>& weights = kind == fb::OpParams::Conv2D ? wb : wt;
    Loaded l;
    Load(&l, {{"g", make(8, kind, &weights, 4)}}, weights);
    assert_int_equal(l.rc, 0);
    std::vector<float> in(size_t(C * H * W));
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(int(i * 5 % 17) - 8) / 8.f;
    outs[k].assign(size_t(8 * H * W), -1.f);
    BindAndExecute(&l, {1, C, H, W}, &in, {1, 8, H, W}, &outs[k]);
    ++k;
  }
  assert_memory_equal(outs[0].data(), outs[1].data(), outs[0].size() * 4);
  bool nonzero = false;
  for (float v : outs[1]) nonzero = nonzero || v > 0.f;
  assert_true(nonzero);
}

// GEMM_BLOCKED (stream 1.6): the GEMM table with its weights in 48-column
// blocks, read in place. A 1.5 stream naming it is refused like an unknown
// op; it computes what GEMM computes from the same weights: bit for bit
// where GEMM packs its slices into the same block rows (M >= 16), to
// rounding where GEMM reads its strips in place (M < 16). Shapes: two and
// three column blocks with 5- and 4-column tails, K past one 1024-row slice.
void gemm_blocked_needs_stream_1_6_and_matches_gemm(void**) {
  struct Case {
    int M, K, N;
  };
  for (Case cs : {Case{17, 40, 53}, Case{24, 1100, 100}, Case{3, 70, 53}, Case{9, 8, 8}}) {
    const int M = cs.M, K = cs.K, N = cs.N;
    std::vector<float> bm(size_t(K) * N), a(size_t(M) * K), bias(static_cast<size_t>(N));
    for (size_t i = 0; i < bm.size(); ++i) bm[i] = float(int(i * 7 % 23) - 11) / 16.f;
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 5 % 17) - 8) / 8.f;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = float(i % 5) - 2.f;
    auto make = [&](fb::OpParams kind, std::vector<float>* wts, uint16_t minor) {
      *wts = kind == fb::OpParams::Gemm ? PackGemm(bm, K, N) : PackGemmBlocked(bm, K, N);
      const uint64_t boff = wts->size() * 4;
      wts->insert(wts->end(), bias.begin(), bias.end());
      Stream s;
      uint32_t x = s.Tensor("a", {M, K}, L::INPUT, 0);
      uint32_t w = s.Tensor("w", {int64_t((N + 7) / 8 * 8 * K)}, L::WEIGHT, 0);
      uint32_t b = s.Tensor("b", {N}, L::WEIGHT, boff);
      uint32_t y = s.Tensor("y", {M, N}, L::OUTPUT, 0);
      s.Op(kind, fb::CreateGemm(s.fbb, x, w, y, true, b, uint64_t(M), uint64_t(K), uint64_t(N),
                                fb::Activation::RELU));
      return s.Finish(0, "g", minor);
    };
    std::vector<float> wg, wb;
    ExpectRejected(make(fb::OpParams::GemmBlocked, &wb, 5), wb, "GEMM_BLOCKED came with 1.6");
    std::vector<float> outs[2];
    int k = 0;
    for (fb::OpParams kind : {fb::OpParams::Gemm, fb::OpParams::GemmBlocked}) {
      std::vector<float>& weights = kind == fb::OpParams::Gemm ? wg : wb;
      Loaded l;
      Load(&l, {{"g", make(kind, &weights, 6)}}, weights);
      assert_int_equal(l.rc, 0);
      outs[k].assign(size_t(M) * N, -1.f);
      BindAndExecute(&l, {M, K}, &a, {M, N}, &outs[k]);
      ++k;
    }
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double acc = bias[size_t(n)];
        for (int i = 0; i < K; ++i) acc += double(a[size_t(m) * K + i]) * bm[size_t(i) * N + n];
        const float want = float(acc > 0 ? acc : 0);
        const float got = outs[1][size_t(m) * N + n];
        if (std::fabs(got - want) > 1e-4f * (1.f + std::fabs(want)))
          fail_msg("M %d K %d N %d: y[%d][%d] = %g, want %g", M, K, N, m, n, double(got),
                   double(want));
      }
    if (M >= 16) assert_memory_equal(outs[0].data(), outs[1].data(), outs[0].size() * 4);
  }
}

// One small valid graph per op type; `bad` selects which tensor of the op is
// replaced by an out-of-range arena tensor (or index when bad_index).
using OpMaker = std::function<void(Stream&, uint32_t x, uint32_t w, uint32_t y)>;

std::vector<std::pair<const char*, OpMaker>> OpMakers() {
  return {
      {"CONV2D", [](Stream& s, uint32_t x, uint32_t w,
                    uint32_t y) { s.Op(fb::CreateConv2D(s.fbb, x, w, y, false, 0, 1, 1)); }},
      {"GEMM", [](Stream& s, uint32_t x, uint32_t w,
                  uint32_t y) { s.Op(fb::CreateGemm(s.fbb, x, w, y, false, 0, 1, 8, 8)); }},
      {"BINARY",
       [](Stream& s, uint32_t x, uint32_t w, uint32_t y) {
         std::vector<int64_t> st = {0, 1, 0, 0};
         s.Op(fb::CreateBinaryDirect(s.fbb, fb::BinaryKind::ADD, x, w, y, &st, &st));
       }},
      {"UNARY", [](Stream& s, uint32_t x, uint32_t,
                   uint32_t y) { s.Op(fb::CreateUnary(s.fbb, fb::Activation::RELU, x, y)); }},
      {"POOL", [](Stream& s, uint32_t x, uint32_t,
                  uint32_t y) { s.Op(fb::CreatePool(s.fbb, fb::PoolKind::MAX_POOL, x, y, 1, 1)); }},
      {"SOFTMAX", [](Stream& s, uint32_t x, uint32_t,
                     uint32_t y) { s.Op(fb::CreateSoftmax(s.fbb, x, y, 1, 8, 1)); }},
      {"TRANSPOSE",
       [](Stream& s, uint32_t x, uint32_t, uint32_t y) {
         std::vector<uint32_t> perm = {0, 1, 2, 3};
         s.Op(fb::CreateTransposeDirect(s.fbb, x, y, &perm));
       }},
      {"CONCAT",
       [](Stream& s, uint32_t x, uint32_t, uint32_t y) {
         std::vector<uint32_t> in = {x};
         s.Op(fb::CreateConcatDirect(s.fbb, &in, y, 1));
       }},
      {"COPY",
       [](Stream& s, uint32_t x, uint32_t, uint32_t y) { s.Op(fb::CreateCopy(s.fbb, x, y)); }},
      {"SCALE_SHIFT",
       [](Stream& s, uint32_t x, uint32_t w, uint32_t y) {
         uint32_t sc = s.Tensor("sc", {8}, L::WEIGHT, 0);
         (void)w;
         s.Op(fb::CreateScaleShift(s.fbb, x, sc, sc, y, 1, 8, 1));
       }},
      {"CONVERT",
       [](Stream& s, uint32_t x, uint32_t, uint32_t y) { s.Op(fb::CreateConvert(s.fbb, x, y)); }},
      {"CONV_TRANSPOSE2D",
       [](Stream& s, uint32_t x, uint32_t w, uint32_t y) {
         s.Op(fb::CreateConvTranspose2D(s.fbb, x, w, y, false, 0, 1, 1));
       }},
  };
}

// A FLOAT16 tensor of `n` elements (2 bytes each).
uint32_t HalfTensor(Stream& s, std::vector<int64_t> shape, L loc, uint64_t offset_or_index) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  bool io = loc == L::INPUT || loc == L::OUTPUT;
  s.tensors.push_back(fb::CreateTensorDirect(s.fbb, "half", fb::DType::FLOAT16, &shape, loc,
                                             io ? uint32_t(offset_or_index) : 0,
                                             io ? 0 : offset_or_index, n * 2));
  return uint32_t(s.tensors.size() - 1);
}

// HARD_SWISH came with stream 1.3: a 1.2 stream naming it (as a fused
// activation or a UNARY kind) is refused like an unknown kind; at 1.3 both
// load.
void hard_swish_needs_stream_1_3(void**) {
  std::vector<float> weights(8, 0.5f);
  for (uint16_t minor : {2, 3}) {
    Stream a;
    uint32_t x = a.Tensor("x", {1, 1, 1, 8}, L::INPUT, 0);
    uint32_t w = a.Tensor("w", {8}, L::WEIGHT, 0);
    uint32_t y = a.Tensor("y", {1, 1, 1, 8}, L::OUTPUT, 0);
    a.Op(fb::CreateConv2D(a.fbb, x, w, y, false, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,
                          fb::Activation::HARD_SWISH, 1.f, 0.f));
    Stream b;
    x = b.Tensor("x", {8}, L::INPUT, 0);
    y = b.Tensor("y", {8}, L::OUTPUT, 0);
    b.Op(fb::CreateUnary(b.fbb, fb::Activation::HARD_SWISH, x, y));
    if (minor == 2) {
      ExpectRejected(a.Finish(0, "g", minor), weights, "unknown activation 7");
      ExpectRejected(b.Finish(0, "g", minor), {}, "unknown kind 7");
      continue;
    }
    for (Stream* s : {&a, &b}) {
      Loaded l;
      Load(&l, {{"g", s->Finish(0, "g", minor)}}, s == &a ? weights : std::vector<float>{});
      assert_int_equal(l.rc, 0);
      epctx_hal_graph* g = nullptr;
      epctx_hal_graph_info info;
      Bind(&l, "g", &g, &info);
      if (l.rc) print_error("%s\n", l.msg.c_str());
      assert_int_equal(l.rc, 0);
    }
  }
}

// LEAKY_RELU_MAX came with stream 1.5: a 1.4 stream naming it (fused or as
// a UNARY kind) is refused like an unknown kind; at 1.5 both load and the
// UNARY computes max(leaky(x), beta), a NaN becoming beta.
void leaky_relu_max_needs_stream_1_5(void**) {
  std::vector<float> weights(8, 0.5f);
  for (uint16_t minor : {4, 5}) {
    Stream a;
    uint32_t x = a.Tensor("x", {1, 1, 1, 8}, L::INPUT, 0);
    uint32_t w = a.Tensor("w", {8}, L::WEIGHT, 0);
    uint32_t y = a.Tensor("y", {1, 1, 1, 8}, L::OUTPUT, 0);
    a.Op(fb::CreateConv2D(a.fbb, x, w, y, false, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,
                          fb::Activation::LEAKY_RELU_MAX, 0.25f, -0.5f));
    Stream b;
    x = b.Tensor("x", {8}, L::INPUT, 0);
    y = b.Tensor("y", {8}, L::OUTPUT, 0);
    b.Op(fb::CreateUnary(b.fbb, fb::Activation::LEAKY_RELU_MAX, x, y, 0.25f, -0.5f));
    if (minor == 4) {
      ExpectRejected(a.Finish(0, "g", minor), weights, "unknown activation 8");
      ExpectRejected(b.Finish(0, "g", minor), {}, "unknown kind 8");
      continue;
    }
    Loaded l;
    Load(&l, {{"g", b.Finish(0, "g", minor)}}, {});
    assert_int_equal(l.rc, 0);
    epctx_hal_graph* g = nullptr;
    epctx_hal_graph_info info;
    assert_int_equal(Bind(&l, "g", &g, &info), 0);
    int64_t d[1] = {8};
    std::vector<float> in = {3.f, 0.f, -1.f, -2.f, -4.f, -8.f, __builtin_nanf(""), -0.f};
    std::vector<float> out(8, 7.f);
    std::vector<uint8_t> arena(info.scratch_bytes + 64);
    epctx_hal_tensor ti = {EPCTX_DTYPE_FLOAT, 1, d, in.data(), 32};
    epctx_hal_tensor to = {EPCTX_DTYPE_FLOAT, 1, d, out.data(), 32};
    char msg[256];
    assert_int_equal(epctx_vnpu_driver()->execute(epctx_vnpu_driver(), g, &ti, 1, &to, 1,
                                                  arena.data(), info.scratch_bytes, msg,
                                                  sizeof msg),
                     0);
    const float want[8] = {3.f, 0.f, -0.25f, -0.5f, -0.5f, -0.5f, -0.5f, -0.f};
    assert_memory_equal(out.data(), want, sizeof want);
  }
}

// The vnpu computes in float32: float16 lives at the graph's edges (only
// CONVERT touches those) and in the weight segment (widened once at bind).
void float16_only_at_edges_and_only_through_convert(void**) {
  Stream a;
  HalfTensor(a, {8}, L::ARENA, 0);
  ExpectRejected(a.Finish(64), {}, "FLOAT16 tensor in the ARENA");
  Stream b;
  uint32_t x = HalfTensor(b, {8}, L::INPUT, 0);
  uint32_t y = b.Tensor("y", {8}, L::OUTPUT, 0);
  b.Op(fb::CreateUnary(b.fbb, fb::Activation::RELU, x, y));
  ExpectRejected(b.Finish(0), {}, "only CONVERT reads or writes FLOAT16");
  Stream c;
  x = HalfTensor(c, {8}, L::INPUT, 0);
  y = c.Tensor("y", {4}, L::OUTPUT, 0);
  c.Op(fb::CreateConvert(c.fbb, x, y));
  ExpectRejected(c.Finish(0), {}, "CONVERT): output has 4 elements, expected 8");
  Stream d;
  std::vector<int64_t> eight = {8};
  d.tensors.push_back(
      fb::CreateTensorDirect(d.fbb, "odd", fb::DType::FLOAT16, &eight, L::INPUT, 0, 0, 32));
  ExpectRejected(d.Finish(0), {}, "does not match shape (expected 8 x 2 bytes)");
  // A FLOAT16 weight: element-aligned inside the segment, and never a CONVERT input.
  std::vector<float> weights(16, 0.5f);
  Stream e;
  HalfTensor(e, {8}, L::WEIGHT, 1);
  ExpectRejected(e.Finish(0), weights, "weight range [1, +16)");
  Stream f;
  x = HalfTensor(f, {8}, L::WEIGHT, 0);
  y = f.Tensor("y", {8}, L::OUTPUT, 0);
  f.Op(fb::CreateConvert(f.fbb, x, y));
  ExpectRejected(f.Finish(0), weights, "is a WEIGHT; CONVERT reads INPUT/ARENA");
}

void conv_transpose_output_shape_checked(void**) {
  std::vector<float> weights(64, 0.5f);
  Stream s;
  uint32_t x = s.Tensor("x", {1, 8, 2, 2}, L::INPUT, 0);
  uint32_t w = s.Tensor("w", {64}, L::WEIGHT, 0);
  uint32_t y = s.Tensor("y", {1, 8, 5, 4}, L::OUTPUT, 0);  // stride 2, k 1: 3x3
  s.Op(fb::CreateConvTranspose2D(s.fbb, x, w, y, false, 0, 1, 1, 2, 2));
  ExpectRejected(s.Finish(0), weights, "output height = 5, expected 3");
}

// x [1,8,1,1] input, w weights of 64 floats ([8,8] conv/gemm weights ...),
// y [1,8,1,1] in the arena. Shapes chosen so every op above is valid.
std::vector<uint8_t> Build(const OpMaker& make, int variant) {
  Stream s;
  uint32_t x = s.Tensor("x", {1, 8, 1, 1}, L::INPUT, 0);
  uint32_t w = variant == 2 ? s.Tensor("w", {64}, L::WEIGHT, 4096)  // past the segment
                            : s.Tensor("w", {64}, L::WEIGHT, 0);
  if (variant == 3) w = s.Tensor("w8", {8}, L::WEIGHT, 0);
  uint32_t y = variant == 1 ? s.Tensor("y", {1, 8, 1, 1}, L::ARENA, 1024)  // past the arena
                            : s.Tensor("y", {1, 8, 1, 1}, L::ARENA, 0);
  uint32_t o = s.Tensor("out", {1, 8, 1, 1}, L::OUTPUT, 0);
  if (variant == 4) x = 77;  // dangling tensor index
  if (variant == 5) y = w;   // op writes the weights
  make(s, x, w, y);
  s.Op(fb::CreateCopy(s.fbb, variant == 5 ? x : y, o));
  return s.Finish(64);
}

// Issue 14 finding 2: with mmap loading the payload is the file's shared
// mapping, and a process that can write the file can rewrite it after the
// graph was validated. The driver executes from a private copy made before
// validation, so a rewritten (here: wholly overwritten) payload changes
// nothing: the run gives the same outputs and touches no other memory (ASan).
void payload_rewritten_after_bind_changes_nothing(void**) {
  Stream s;
  uint32_t x = s.Tensor("x", {1, 8, 1, 1}, L::INPUT, 0);
  uint32_t y = s.Tensor("y", {1, 8, 1, 1}, L::ARENA, 0);
  uint32_t o = s.Tensor("out", {1, 8, 1, 1}, L::OUTPUT, 0);
  s.Op(fb::CreateUnary(s.fbb, fb::Activation::RELU, x, y));
  s.Op(fb::CreateCopy(s.fbb, y, o));
  Loaded l;
  Load(&l, {{"g", s.Finish(64)}}, std::vector<float>(16, 0.f));
  assert_int_equal(l.rc, 0);
  epctx_hal_graph* g = nullptr;
  epctx_hal_graph_info info;
  assert_int_equal(Bind(&l, "g", &g, &info), 0);
  int64_t dims[4] = {1, 8, 1, 1};
  float in[8] = {-1, 2, -3, 4, -5, 6, -7, 8};
  std::vector<uint8_t> arena(info.scratch_bytes + 64);
  auto run = [&](float* out) {
    epctx_hal_tensor ti = {EPCTX_DTYPE_FLOAT, 4, dims, in, sizeof in};
    epctx_hal_tensor to = {EPCTX_DTYPE_FLOAT, 4, dims, out, 8 * sizeof(float)};
    char msg[256];
    return epctx_vnpu_driver()->execute(epctx_vnpu_driver(), g, &ti, 1, &to, 1, arena.data(),
                                        info.scratch_bytes, msg, sizeof msg);
  };
  float first[8] = {}, second[8] = {};
  assert_int_equal(run(first), 0);
  // Every shape, offset and op parameter in the mapped bytes now says 0xA5...
  std::vector<uint8_t>& payload = l.graphs[0].second;
  memset(payload.data(), 0xA5, payload.size());
  assert_int_equal(run(second), 0);
  for (int i = 0; i < 8; ++i) {
    assert_true(first[i] == (in[i] > 0 ? in[i] : 0.f));
    assert_true(second[i] == first[i]);
  }
  // The descriptors get_graph handed out are private too.
  assert_int_equal(info.outputs[0].dims[1], 8);
}

// Issue 14 finding 5: a stream with no ops validated, and execute returned
// whatever the output buffers held (other heap data). Every OUTPUT must be
// written by some op.
void stream_leaving_an_output_unwritten_rejected(void**) {
  Stream s;
  s.Tensor("x", {1, 8, 1, 1}, L::INPUT, 0);
  s.Tensor("out", {1, 8, 1, 1}, L::OUTPUT, 0);
  ExpectRejected(s.Finish(64), std::vector<float>(16, 0.f), "output 0 'out' is written by no op");
  Stream t;
  uint32_t x = t.Tensor("x", {1, 8, 1, 1}, L::INPUT, 0);
  uint32_t o0 = t.Tensor("o0", {1, 8, 1, 1}, L::OUTPUT, 0);
  t.Tensor("o1", {1, 8, 1, 1}, L::OUTPUT, 1);
  t.Op(fb::CreateCopy(t.fbb, x, o0));
  ExpectRejected(t.Finish(64), std::vector<float>(16, 0.f), "output 1 'o1' is written by no op");
}

// Issue 14 finding 7: binding checks were pairwise (80,000 inputs: 6.5 s).
// One pass with a flag per index: a duplicate placed last is still found.
void eighty_thousand_input_bindings_checked_in_one_pass(void**) {
  for (int dup = 0; dup < 2; ++dup) {
    Stream s;
    uint32_t x = 0;
    for (uint32_t i = 0; i < 80000; ++i)
      x = s.Tensor("x", {1}, L::INPUT, dup && i == 79999 ? 0 : i);
    uint32_t o = s.Tensor("out", {1}, L::OUTPUT, 0);
    s.Op(fb::CreateCopy(s.fbb, x, o));
    Loaded l;
    Load(&l, {{"g", s.Finish(64)}}, std::vector<float>(16, 0.f));
    epctx_hal_graph* g = nullptr;
    epctx_hal_graph_info info;
    Bind(&l, "g", &g, &info);
    if (dup) {
      assert_int_equal(l.rc, EPCTX_INVALID_GRAPH);
      assert_non_null(strstr(l.msg.c_str(), "tensor 79999: input index 0 bound twice"));
    } else {
      if (l.rc) print_error("%s\n", l.msg.c_str());
      assert_int_equal(l.rc, 0);
      assert_int_equal(info.num_inputs, 80000);
    }
  }
}

void every_op_valid_baseline_loads_and_runs(void**) {
  std::vector<float> weights(64, 0.5f);
  for (auto& m : OpMakers()) {
    // SCALE_SHIFT and BINARY read 8 of the 64 weights; the rest use all.
    Loaded l;
    Load(&l, {{"g", Build(m.second, 0)}}, weights);
    if (l.rc != 0) print_error("%s: %s\n", m.first, l.msg.c_str());
    assert_int_equal(l.rc, 0);
  }
}

void every_op_rejects_out_of_range_arena_offset(void**) {
  std::vector<float> weights(64, 0.5f);
  for (auto& m : OpMakers()) ExpectRejected(Build(m.second, 1), weights, "outside arena");
}

void every_op_rejects_weight_offset_past_segment(void**) {
  std::vector<float> weights(64, 0.5f);
  for (auto& m : OpMakers()) ExpectRejected(Build(m.second, 2), weights, "outside weight segment");
}

void every_op_rejects_dangling_tensor_index(void**) {
  std::vector<float> weights(64, 0.5f);
  for (auto& m : OpMakers()) ExpectRejected(Build(m.second, 4), weights, m.first);
}

void every_op_rejects_writing_weights(void**) {
  std::vector<float> weights(64, 0.5f);
  for (auto& m : OpMakers()) ExpectRejected(Build(m.second, 5), weights, "INPUT or WEIGHT");
}

void weight_shape_mismatch_rejected(void**) {
  std::vector<float> weights(64, 0.5f);
  ExpectRejected(Build(OpMakers()[0].second, 3), weights, "CONV2D");
  ExpectRejected(Build(OpMakers()[1].second, 3), weights, "GEMM");
}

void shape_product_overflow_rejected(void**) {
  Stream s;
  s.RawTensor({int64_t(1) << 31, int64_t(1) << 31, int64_t(1) << 31}, L::ARENA, 0, 64);
  ExpectRejected(s.Finish(64), {}, "overflow");
  Stream s2;
  s2.RawTensor({-1}, L::ARENA, 0, 0);
  ExpectRejected(s2.Finish(64), {}, "out of range");
  Stream s3;
  s3.RawTensor({4}, L::ARENA, 0, 15);  // size disagrees with shape
  ExpectRejected(s3.Finish(64), {}, "does not match shape");
}

void binary_strides_past_operand_rejected(void**) {
  Stream s;
  uint32_t a = s.Tensor("a", {4}, L::INPUT, 0);
  uint32_t y = s.Tensor("y", {2, 4}, L::OUTPUT, 0);
  std::vector<int64_t> sa = {4, 1}, sb = {0, 1};
  s.Op(fb::CreateBinaryDirect(s.fbb, fb::BinaryKind::MUL, a, a, y, &sa, &sb));
  ExpectRejected(s.Finish(0), {}, "a_strides reach element 7");
}

void wrong_identifier_and_non_container_rejected(void**) {
  std::vector<float> weights(64, 0.5f);
  auto p = Build(OpMakers()[8].second, 0);
  p[4] = 'X';
  ExpectRejected(p, weights, "identifier");
  std::vector<uint8_t> good = Build(OpMakers()[8].second, 0);
  epctx_hal_graph_blob gb = {"g", good.data(), good.size()};
  epctx_hal_blob blob = {sizeof(epctx_hal_blob), good.data(), good.size(), 0, nullptr, 0, &gb, 1};
  epctx_hal_context* ctx = nullptr;
  char msg[256];
  const epctx_hal_driver* d = epctx_vnpu_driver();
  assert_int_equal(d->load_context(d, &blob, Host(), &ctx, msg, sizeof msg), EPCTX_INVALID_GRAPH);
  assert_string_equal(msg, "vnpu: payload is not an epctx container");
  assert_null(ctx);
}

void every_truncation_rejected(void**) {
  std::vector<float> weights(64, 0.5f);
  auto full = Build(OpMakers()[0].second, 0);
  // The last bytes of a flatbuffer may be alignment padding nothing refers
  // to; every cut that reaches referenced bytes must fail.
  for (size_t n = 0; n + 8 < full.size(); ++n) {
    // A fresh buffer of exactly n bytes, so ASan sees any read past it.
    std::vector<uint8_t> cut(full.begin(), full.begin() + long(n));
    Loaded l;
    Load(&l, {{"g", cut}}, weights);
    assert_int_equal(l.rc, 0);
    epctx_hal_graph* g;
    epctx_hal_graph_info info;
    Bind(&l, "g", &g, &info);
    if (l.rc == 0) print_error("truncated to %zu of %zu bytes: bound\n", n, full.size());
    assert_int_equal(l.rc, EPCTX_INVALID_GRAPH);
  }
}

// Every single-byte corruption either fails to bind or binds something that
// executes within bounds (ASan checks the second half).
void byte_flips_never_crash(void**) {
  std::vector<float> weights(64, 0.5f);
  auto full = Build(OpMakers()[0].second, 0);
  const epctx_hal_driver* d = epctx_vnpu_driver();
  for (size_t i = 0; i < full.size(); ++i)
    for (uint8_t flip : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      auto p = full;
      p[i] ^= flip;
      Loaded l;
      Load(&l, {{"g", p}}, weights);
      assert_int_equal(l.rc, 0);
      epctx_hal_graph* g;
      epctx_hal_graph_info info;
      char msg[256];
      if (Bind(&l, "g", &g, &info) != 0) continue;
      if (info.scratch_bytes > (1u << 20) || info.num_inputs > 4 || info.num_outputs > 4) continue;
      std::vector<std::vector<float>> bufs;
      std::vector<epctx_hal_tensor> in, out;
      auto bind = [&](const epctx_hal_tensor_desc& t, std::vector<epctx_hal_tensor>* v) {
        uint64_t n = 1;
        for (uint32_t k = 0; k < t.rank; ++k) n *= uint64_t(t.dims[k]);
        if (n > (1u << 20)) return false;
        bufs.emplace_back(n);
        v->push_back({EPCTX_DTYPE_FLOAT, t.rank, t.dims, bufs.back().data(), n * 4});
        return true;
      };
      bufs.reserve(8);
      bool ok = true;
      for (uint32_t k = 0; k < info.num_inputs; ++k) ok = ok && bind(info.inputs[k], &in);
      for (uint32_t k = 0; k < info.num_outputs; ++k) ok = ok && bind(info.outputs[k], &out);
      if (!ok) continue;
      std::vector<uint8_t> scratch(info.scratch_bytes + 1);
      (void)d->execute(d, g, in.data(), uint32_t(in.size()), out.data(), uint32_t(out.size()),
                       scratch.data(), info.scratch_bytes, msg, sizeof msg);
    }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(payload_rewritten_after_bind_changes_nothing),
      cmocka_unit_test(stream_leaving_an_output_unwritten_rejected),
      cmocka_unit_test(eighty_thousand_input_bindings_checked_in_one_pass),
      cmocka_unit_test(every_op_valid_baseline_loads_and_runs),
      cmocka_unit_test(float16_only_at_edges_and_only_through_convert),
      cmocka_unit_test(hard_swish_needs_stream_1_3),
      cmocka_unit_test(leaky_relu_max_needs_stream_1_5),
      cmocka_unit_test(conv2d_taps_needs_stream_1_4_and_matches_conv2d),
      cmocka_unit_test(gemm_blocked_needs_stream_1_6_and_matches_gemm),
      cmocka_unit_test(conv_transpose_output_shape_checked),
      cmocka_unit_test(every_op_rejects_out_of_range_arena_offset),
      cmocka_unit_test(every_op_rejects_weight_offset_past_segment),
      cmocka_unit_test(every_op_rejects_dangling_tensor_index),
      cmocka_unit_test(every_op_rejects_writing_weights),
      cmocka_unit_test(weight_shape_mismatch_rejected),
      cmocka_unit_test(shape_product_overflow_rejected),
      cmocka_unit_test(binary_strides_past_operand_rejected),
      cmocka_unit_test(wrong_identifier_and_non_container_rejected),
      cmocka_unit_test(every_truncation_rejected),
      cmocka_unit_test(byte_flips_never_crash),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
