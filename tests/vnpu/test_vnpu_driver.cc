// SPDX-License-Identifier: Apache-2.0
// vnpu driver: op numerics against reference loops, graph binding,
// compatibility decisions, and that only bound graphs' payloads are read.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>
extern "C" {
#include <cmocka.h>
}

#include "vnpu_typed_stream.h"

using namespace vt;
using L = fb::Location;

namespace {

std::vector<float> Ramp(size_t n, float scale, float bias = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(float(i) * 0.37f + bias) * scale;
  return v;
}

// Runs the single graph of `l`: one input tensor per entry of `in`.
int Run(Loaded& l, std::vector<std::vector<float>*> in, std::vector<std::vector<float>*> out,
        std::string* msg = nullptr) {
  const epctx_hal_driver* d = epctx_vnpu_driver();
  epctx_hal_graph* g;
  epctx_hal_graph_info info;
  char buf[512];
  int rc = d->get_graph(d, l.ctx, "any", &g, &info, buf, sizeof buf);
  if (rc) return rc;
  std::vector<epctx_hal_tensor> ti, to;
  for (uint32_t i = 0; i < info.num_inputs; ++i)
    ti.push_back({EPCTX_DTYPE_FLOAT, info.inputs[i].rank, info.inputs[i].dims, in[i]->data(),
                  in[i]->size() * 4});
  for (uint32_t i = 0; i < info.num_outputs; ++i)
    to.push_back({EPCTX_DTYPE_FLOAT, info.outputs[i].rank, info.outputs[i].dims, out[i]->data(),
                  out[i]->size() * 4});
  std::vector<uint8_t> scratch(info.scratch_bytes + 1);
  rc = d->execute(d, g, ti.data(), uint32_t(ti.size()), to.data(), uint32_t(to.size()),
                  scratch.data(), info.scratch_bytes, buf, sizeof buf);
  if (msg) *msg = buf;
  return rc;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  assert_int_equal(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    float tol = 1e-4f * (1.f + std::fabs(want[i]));
    if (std::fabs(got[i] - want[i]) > tol) {
      print_error("element %zu: got %g want %g\n", i, double(got[i]), double(want[i]));
      fail();
    }
  }
}

// Conv2D reference: NCHW, OIHW weights.
std::vector<float> RefConv(const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& b, int N, int C, int H, int W, int CO, int K,
                           int s, int p, int dil, int G, int OH, int OW) {
  std::vector<float> y(size_t(N) * CO * OH * OW);
  int cig = C / G, cog = CO / G;
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < CO; ++o)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          double acc = b.empty() ? 0 : b[o];
          int g = o / cog;
          for (int i = 0; i < cig; ++i)
            for (int kh = 0; kh < K; ++kh)
              for (int kw = 0; kw < K; ++kw) {
                int ih = oh * s - p + kh * dil, iw = ow * s - p + kw * dil;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[((size_t(n) * C + g * cig + i) * H + ih) * W + iw]) *
                       w[((size_t(o) * cig + i) * K + kh) * K + kw];
              }
          y[((size_t(n) * CO + o) * OH + oh) * OW + ow] = float(acc);
        }
  return y;
}

void CheckConv(int N, int C, int H, int W, int CO, int K, int s, int p, int dil, int G, bool relu) {
  int cig = C / G;
  int OH = (H + 2 * p - dil * (K - 1) - 1) / s + 1, OW = (W + 2 * p - dil * (K - 1) - 1) / s + 1;
  auto x = Ramp(size_t(N) * C * H * W, 1.f);
  auto w = Ramp(size_t(CO) * cig * K * K, 0.5f, 1.f);
  auto b = Ramp(size_t(CO), 0.3f, 2.f);
  auto packed = PackConv(w, CO, cig, K, K, G);
  std::vector<float> weights = packed;
  uint64_t boff = (weights.size() * 4 + 63) / 64 * 64;
  weights.resize(boff / 4);
  weights.insert(weights.end(), b.begin(), b.end());
  Stream st;
  uint32_t ti = st.Tensor("x", {N, C, H, W}, L::INPUT, 0);
  uint32_t tw = st.Tensor("w", {int64_t(packed.size())}, L::WEIGHT, 0);
  uint32_t tb = st.Tensor("b", {CO}, L::WEIGHT, boff);
  uint32_t to = st.Tensor("y", {N, CO, OH, OW}, L::OUTPUT, 0);
  st.Op(fb::CreateConv2D(st.fbb, ti, tw, to, true, tb, K, K, s, s, p, p, p, p, dil, dil, G,
                         relu ? fb::Activation::RELU : fb::Activation::NONE));
  Loaded l;
  Load(&l, {{"g", st.Finish(0)}}, weights);
  assert_int_equal(l.rc, 0);
  std::vector<float> y(size_t(N) * CO * OH * OW);
  assert_int_equal(Run(l, {&x}, {&y}), 0);
  auto want = RefConv(x, w, b, N, C, H, W, CO, K, s, p, dil, G, OH, OW);
  if (relu)
    for (float& v : want) v = v > 0 ? v : 0;
  ExpectNear(y, want);
}

void conv2d_matches_reference_loops(void**) {
  CheckConv(1, 3, 9, 11, 5, 3, 1, 1, 1, 1, true);   // 3x3 same, channel tail
  CheckConv(2, 4, 8, 8, 16, 3, 2, 1, 1, 2, false);  // grouped, strided
  CheckConv(1, 6, 7, 7, 6, 3, 1, 2, 2, 6, false);   // depthwise, dilated
  CheckConv(1, 8, 5, 5, 9, 1, 1, 0, 1, 1, false);   // pointwise
  // Rows wide enough for the 8-pixel vector tiles, with border and tail
  // columns on the scalar path: block tails of 3 and 6 channels, dilation,
  // two batches, and depthwise rows with 4-lane bodies and odd tails.
  CheckConv(1, 5, 6, 29, 6, 1, 1, 0, 1, 1, true);    // pointwise, wide
  CheckConv(2, 3, 7, 27, 11, 3, 1, 1, 1, 1, false);  // 3x3 same, wide
  CheckConv(1, 4, 9, 30, 3, 3, 1, 2, 2, 1, true);    // dilated, wide
  CheckConv(1, 4, 9, 30, 6, 3, 1, 1, 1, 2, false);   // grouped, wide
  CheckConv(1, 5, 11, 23, 5, 5, 1, 2, 1, 5, true);   // depthwise 5x5, wide
  CheckConv(1, 5, 11, 23, 5, 5, 2, 2, 1, 5, false);  // depthwise 5x5, strided
  CheckConv(1, 4, 9, 37, 4, 3, 2, 1, 1, 4, true);   // depthwise 3x3 stride 2: even-lane body, tails
  CheckConv(1, 3, 6, 20, 6, 3, 1, 1, 1, 3, false);  // channel multiplier 2, wide
}

void gemm_matches_reference_with_fused_clip(void**) {
  int M = 6, K = 7, N = 11;
  auto a = Ramp(size_t(M) * K, 1.f), bm = Ramp(size_t(K) * N, 0.7f, 0.5f),
       bias = Ramp(N, 0.2f, 3.f);
  auto weights = PackGemm(bm, K, N);
  uint64_t boff = weights.size() * 4;
  weights.insert(weights.end(), bias.begin(), bias.end());
  Stream st;
  uint32_t ta = st.Tensor("a", {M, K}, L::INPUT, 0);
  uint32_t tw = st.Tensor("w", {int64_t((N + 7) / 8 * 8 * K)}, L::WEIGHT, 0);
  uint32_t tb = st.Tensor("b", {N}, L::WEIGHT, boff);
  uint32_t tm = st.Tensor("mid", {M, N}, L::ARENA, 64);
  uint32_t ty = st.Tensor("y", {M, N}, L::OUTPUT, 0);
  st.Op(fb::CreateGemm(st.fbb, ta, tw, tm, true, tb, M, K, N, fb::Activation::CLIP, -0.5f, 0.5f));
  st.Op(fb::CreateCopy(st.fbb, tm, ty));
  Loaded l;
  Load(&l, {{"g", st.Finish(64 + M * N * 4)}}, weights);
  assert_int_equal(l.rc, 0);
  std::vector<float> y(size_t(M) * N), want(y.size());
  assert_int_equal(Run(l, {&a}, {&y}), 0);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double acc = bias[n];
      for (int k = 0; k < K; ++k) acc += double(a[m * K + k]) * bm[k * N + n];
      want[m * N + n] = float(acc < -0.5 ? -0.5 : acc > 0.5 ? 0.5 : acc);
    }
  ExpectNear(y, want);
}

void binary_broadcasts_with_strides(void**) {
  // a [2,3,4] - b [3,1] -> [2,3,4]
  auto a = Ramp(24, 1.f), b = Ramp(3, 2.f, 1.f);
  Stream st;
  uint32_t ta = st.Tensor("a", {2, 3, 4}, L::INPUT, 0);
  uint32_t tb = st.Tensor("b", {3, 1}, L::INPUT, 1);
  uint32_t ty = st.Tensor("y", {2, 3, 4}, L::OUTPUT, 0);
  std::vector<int64_t> sa = {12, 4, 1}, sb = {0, 1, 0};
  st.Op(fb::CreateBinaryDirect(st.fbb, fb::BinaryKind::SUB, ta, tb, ty, &sa, &sb));
  Loaded l;
  Load(&l, {{"g", st.Finish(0)}}, {});
  assert_int_equal(l.rc, 0);
  std::vector<float> y(24), want(24);
  assert_int_equal(Run(l, {&a, &b}, {&y}), 0);
  for (int i = 0; i < 24; ++i) want[i] = a[i] - b[(i / 4) % 3];
  ExpectNear(y, want);
}

void pool_max_and_avg_match_reference(void**) {
  int H = 7, W = 6, K = 3, S = 2, P = 1, OH = 4, OW = 3;
  auto x = Ramp(2 * H * W, 1.f);
  for (fb::PoolKind kind : {fb::PoolKind::MAX_POOL, fb::PoolKind::AVG_POOL}) {
    for (bool cip : {false, true}) {
      Stream st;
      uint32_t ti = st.Tensor("x", {1, 2, H, W}, L::INPUT, 0);
      uint32_t ty = st.Tensor("y", {1, 2, OH, OW}, L::OUTPUT, 0);
      st.Op(fb::CreatePool(st.fbb, kind, ti, ty, K, K, S, S, P, P, P, P, cip));
      Loaded l;
      Load(&l, {{"g", st.Finish(0)}}, {});
      assert_int_equal(l.rc, 0);
      std::vector<float> y(2 * OH * OW), want(y.size());
      assert_int_equal(Run(l, {&x}, {&y}), 0);
      for (int c = 0; c < 2; ++c)
        for (int oh = 0; oh < OH; ++oh)
          for (int ow = 0; ow < OW; ++ow) {
            float mx = -1e30f, sum = 0;
            int cnt = 0;
            for (int kh = 0; kh < K; ++kh)
              for (int kw = 0; kw < K; ++kw) {
                int ih = oh * S - P + kh, iw = ow * S - P + kw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                float v = x[(c * H + ih) * W + iw];
                mx = v > mx ? v : mx;
                sum += v;
                ++cnt;
              }
            want[(c * OH + oh) * OW + ow] =
                kind == fb::PoolKind::MAX_POOL ? mx : sum / float(cip ? K * K : cnt);
          }
      ExpectNear(y, want);
    }
  }
}

void softmax_transpose_concat_match_reference(void**) {
  // x [2,3,4]: softmax over axis 1, transpose (2,0,1), concat with x' on axis 0.
  auto x = Ramp(24, 2.f);
  Stream st;
  uint32_t ti = st.Tensor("x", {2, 3, 4}, L::INPUT, 0);
  uint32_t ts = st.Tensor("s", {2, 3, 4}, L::ARENA, 0);
  uint32_t tt = st.Tensor("t", {4, 2, 3}, L::OUTPUT, 0);
  uint32_t tc = st.Tensor("c", {2, 6, 4}, L::OUTPUT, 1);
  st.Op(fb::CreateSoftmax(st.fbb, ti, ts, 2, 3, 4));
  std::vector<uint32_t> perm = {2, 0, 1};
  st.Op(fb::CreateTransposeDirect(st.fbb, ts, tt, &perm));
  std::vector<uint32_t> cat = {ts, ti};
  st.Op(fb::CreateConcatDirect(st.fbb, &cat, tc, 1));
  Loaded l;
  Load(&l, {{"g", st.Finish(96)}}, {});
  assert_int_equal(l.rc, 0);
  std::vector<float> t(24), c(48), sm(24), wt(24), wc(48);
  assert_int_equal(Run(l, {&x}, {&t, &c}), 0);
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 4; ++i) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += std::exp(double(x[(o * 3 + k) * 4 + i]));
      for (int k = 0; k < 3; ++k)
        sm[(o * 3 + k) * 4 + i] = float(std::exp(double(x[(o * 3 + k) * 4 + i])) / sum);
    }
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int d = 0; d < 4; ++d) wt[(d * 2 + a) * 3 + b] = sm[(a * 3 + b) * 4 + d];
  for (int a = 0; a < 2; ++a)
    for (int j = 0; j < 12; ++j) {
      wc[a * 24 + j] = sm[a * 12 + j];
      wc[a * 24 + 12 + j] = x[a * 12 + j];
    }
  ExpectNear(t, wt);
  ExpectNear(c, wc);
}

// TRANSPOSE's paths (rows copied whole, 16 x 16 tiles of the last two
// axes, strided rows): every permutation of [2, 1, 19, 37] and of
// [3, 20, 17, 2] (unit axes dropped, neighbours merged, tile edges), equal
// to an index-by-index reference; and SOFTMAX over a last axis of 197 (the
// vector rows) against a double reference.
void transpose_every_permutation_and_softmax_rows_match_reference(void**) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{2, 1, 19, 37}, {3, 20, 17, 2}}) {
    std::vector<uint32_t> perm = {0, 1, 2, 3};
    const int64_t total = dims[0] * dims[1] * dims[2] * dims[3];
    auto x = Ramp(size_t(total), 1.f);
    do {
      std::vector<int64_t> od(4);
      for (int d = 0; d < 4; ++d) od[size_t(d)] = dims[perm[size_t(d)]];
      Stream st;
      uint32_t ti = st.Tensor("x", dims, L::INPUT, 0);
      uint32_t ty = st.Tensor("y", od, L::OUTPUT, 0);
      st.Op(fb::CreateTransposeDirect(st.fbb, ti, ty, &perm));
      Loaded l;
      Load(&l, {{"g", st.Finish(0)}}, {});
      assert_int_equal(l.rc, 0);
      std::vector<float> y(static_cast<size_t>(total)), want(y.size());
      assert_int_equal(Run(l, {&x}, {&y}), 0);
      int64_t in_stride[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
      int64_t i = 0;
      for (int64_t a = 0; a < od[0]; ++a)
        for (int64_t b = 0; b < od[1]; ++b)
          for (int64_t c = 0; c < od[2]; ++c)
            for (int64_t d = 0; d < od[3]; ++d)
              want[size_t(i++)] = x[size_t(a * in_stride[perm[0]] + b * in_stride[perm[1]] +
                                           c * in_stride[perm[2]] + d * in_stride[perm[3]])];
      if (y != want)
        fail_msg("transpose of [%lld,%lld,%lld,%lld] by (%u,%u,%u,%u) differs", (long long)dims[0],
                 (long long)dims[1], (long long)dims[2], (long long)dims[3], perm[0], perm[1],
                 perm[2], perm[3]);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  const int R = 5, N = 197;
  auto x = Ramp(size_t(R * N), 0.05f, -4.f);
  Stream st;
  uint32_t ti = st.Tensor("x", {R, N}, L::INPUT, 0);
  uint32_t ty = st.Tensor("y", {R, N}, L::OUTPUT, 0);
  st.Op(fb::CreateSoftmax(st.fbb, ti, ty, R, N, 1));
  Loaded l;
  Load(&l, {{"g", st.Finish(0)}}, {});
  assert_int_equal(l.rc, 0);
  std::vector<float> y(static_cast<size_t>(R * N)), want(y.size());
  assert_int_equal(Run(l, {&x}, {&y}), 0);
  for (int r = 0; r < R; ++r) {
    double m = -1e300, sum = 0;
    for (int k = 0; k < N; ++k) m = std::max(m, double(x[size_t(r * N + k)]));
    for (int k = 0; k < N; ++k) sum += std::exp(double(x[size_t(r * N + k)]) - m);
    for (int k = 0; k < N; ++k)
      want[size_t(r * N + k)] = float(std::exp(double(x[size_t(r * N + k)]) - m) / sum);
  }
  ExpectNear(y, want);
}

std::vector<uint8_t> CopyGraph(const char* name) {
  Stream st;
  uint32_t ti = st.Tensor("x", {4}, L::INPUT, 0);
  uint32_t ty = st.Tensor("y", {4}, L::OUTPUT, 0);
  st.Op(fb::CreateCopy(st.fbb, ti, ty));
  return st.Finish(0, name);
}

void get_graph_binds_single_graph_by_any_name(void**) {
  Loaded l;
  Load(&l, {{"only", CopyGraph("only")}}, {});
  assert_int_equal(l.rc, 0);
  const epctx_hal_driver* d = epctx_vnpu_driver();
  epctx_hal_graph* g = nullptr;
  epctx_hal_graph_info info;
  char msg[256];
  assert_int_equal(d->get_graph(d, l.ctx, "some_other_node", &g, &info, msg, sizeof msg), 0);
  assert_non_null(g);
  assert_int_equal(info.num_inputs, 1);
  assert_int_equal(info.num_outputs, 1);
  assert_string_equal(info.inputs[0].name, "x");
  assert_int_equal(info.inputs[0].dims[0], 4);
  assert_int_equal(info.scratch_bytes, 0);
}

void get_graph_unknown_name_lists_available(void**) {
  Loaded l;
  Load(&l, {{"first", CopyGraph("first")}, {"second", CopyGraph("second")}}, {});
  assert_int_equal(l.rc, 0);
  const epctx_hal_driver* d = epctx_vnpu_driver();
  epctx_hal_graph* g;
  epctx_hal_graph_info info;
  char msg[256];
  assert_int_equal(d->get_graph(d, l.ctx, "second", &g, &info, msg, sizeof msg), 0);
  assert_int_equal(d->get_graph(d, l.ctx, "third", &g, &info, msg, sizeof msg),
                   EPCTX_INVALID_GRAPH);
  assert_non_null(strstr(msg, "'third'"));
  assert_non_null(strstr(msg, "'first', 'second'"));
}

// Graphs are found through a name index sorted at load (100k EPContext
// nodes made the linear scan quadratic): names in scrambled order, prefixes
// of one another and the empty name each bind their own graph, whose input
// length (k + 1) says which one it is.
void get_graph_finds_each_of_many_names(void**) {
  const uint32_t n = 2003;
  std::vector<std::string> names(n);
  for (uint32_t k = 0; k < n; ++k) {
    char buf[32];
    snprintf(buf, sizeof buf, "g%u", (k * 7919u) % n);  // g1 < g10 < g100 < g1000 < g2
    names[k] = buf;
  }
  names[0] = "";
  names[1] = "g1000x";
  std::vector<std::pair<std::string, std::vector<uint8_t>>> graphs;
  for (uint32_t k = 0; k < n; ++k) {
    Stream st;
    uint32_t ti = st.Tensor("x", {int64_t(k) + 1}, L::INPUT, 0);
    uint32_t ty = st.Tensor("y", {int64_t(k) + 1}, L::OUTPUT, 0);
    st.Op(fb::CreateCopy(st.fbb, ti, ty));
    graphs.push_back({names[k], st.Finish(0, names[k].c_str())});
  }
  Loaded l;
  Load(&l, graphs, {});
  assert_int_equal(l.rc, 0);
  for (uint32_t k = n; k-- > 0;) {
    epctx_hal_graph* g = nullptr;
    epctx_hal_graph_info info;
    if (Bind(&l, names[k].c_str(), &g, &info) != 0)
      fail_msg("'%s': %s", names[k].c_str(), l.msg.c_str());
    assert_int_equal(info.inputs[0].dims[0], int64_t(k) + 1);
  }
  epctx_hal_graph* g = nullptr;
  epctx_hal_graph_info info;
  assert_int_equal(Bind(&l, "g10000", &g, &info), EPCTX_INVALID_GRAPH);
  assert_int_equal(Bind(&l, "g", &g, &info), EPCTX_INVALID_GRAPH);
  assert_non_null(strstr(l.msg.c_str(), "no graph 'g'"));
}

// load_context reads no payload and get_graph reads only the bound graph's:
// the other graph's payload sits on a page with no access, so any read of
// it would fault. Binding that graph later reports it, and the good graph
// is validated once (a second bind returns the same graph).
void only_bound_graphs_payloads_are_read(void**) {
  long page = sysconf(_SC_PAGESIZE);
  void* fence = mmap(nullptr, size_t(page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(fence != MAP_FAILED);
  std::vector<uint8_t> good = CopyGraph("used");
  epctx_hal_graph_blob blobs[2] = {{"unused", static_cast<const uint8_t*>(fence), uint64_t(page)},
                                   {"used", good.data(), good.size()}};
  epctx_hal_blob blob = {sizeof(epctx_hal_blob), nullptr, 0, 1, nullptr, 0, blobs, 2};
  const epctx_hal_driver* d = epctx_vnpu_driver();
  epctx_hal_context* ctx = nullptr;
  char msg[256];
  assert_int_equal(d->load_context(d, &blob, Host(), &ctx, msg, sizeof msg), 0);
  epctx_hal_graph *g = nullptr, *again = nullptr;
  epctx_hal_graph_info info;
  assert_int_equal(d->get_graph(d, ctx, "used", &g, &info, msg, sizeof msg), 0);
  assert_int_equal(d->get_graph(d, ctx, "used", &again, &info, msg, sizeof msg), 0);
  assert_ptr_equal(g, again);
  float x[4] = {1, 2, 3, 4}, y[4] = {0, 0, 0, 0};
  int64_t dims[1] = {4};
  epctx_hal_tensor in = {EPCTX_DTYPE_FLOAT, 1, dims, x, sizeof x};
  epctx_hal_tensor out = {EPCTX_DTYPE_FLOAT, 1, dims, y, sizeof y};
  assert_int_equal(d->execute(d, g, &in, 1, &out, 1, nullptr, 0, msg, sizeof msg), 0);
  assert_memory_equal(x, y, sizeof x);
  // Now make the unused payload readable but corrupt: binding it fails.
  assert_int_equal(mprotect(fence, size_t(page), PROT_READ | PROT_WRITE), 0);
  memset(fence, 0xA5, size_t(page));
  assert_int_equal(d->get_graph(d, ctx, "unused", &g, &info, msg, sizeof msg), EPCTX_INVALID_GRAPH);
  assert_non_null(strstr(msg, "graph 'unused'"));
  d->release_context(d, ctx);
  munmap(fence, size_t(page));
}

int Compat(const char* sdk, const char* arch, char* msg) {
  const epctx_hal_driver* d = epctx_vnpu_driver();
  epctx_hal_context_desc desc = {sizeof(epctx_hal_context_desc), "vnpu", sdk, arch, "node0"};
  return d->check_compatibility(d, &desc, msg, 256);
}

void check_compatibility_accepts_and_rejects(void**) {
  char msg[256];
  assert_int_equal(Compat("", "", msg), 0);
  assert_int_equal(Compat("1.0.0", "vnpu-1.0", msg), 0);
  assert_int_equal(Compat("1.0.7", "vnpu-1.0", msg), 0);
  assert_int_equal(Compat("2.0.0", "vnpu-1.0", msg), EPCTX_INCOMPATIBLE_SDK);
  assert_non_null(strstr(msg, "2.0.0"));
  assert_non_null(strstr(msg, "1.1.0"));  // the driver's SDK: 1.1 with the int8 level
  assert_int_equal(Compat("1.3.0", "", msg), EPCTX_INCOMPATIBLE_SDK);
  assert_int_equal(Compat("one", "", msg), EPCTX_INCOMPATIBLE_SDK);
  assert_int_equal(Compat("", "vnpu-2.0", msg), EPCTX_INCOMPATIBLE_HARDWARE);
  assert_non_null(strstr(msg, "vnpu-2.0"));
  assert_non_null(strstr(msg, "vnpu-1.1"));
  assert_int_equal(Compat("", "qnpu-1.0", msg), EPCTX_INCOMPATIBLE_HARDWARE);
  assert_int_equal(Compat("", "vnpu-1.1", msg), 0);  // the int8 level
  assert_int_equal(Compat("", "vnpu-1.2", msg), EPCTX_INCOMPATIBLE_HARDWARE);
  // Impersonating newer hardware makes the 1.2 program acceptable.
  assert_int_equal(epctx_vnpu_configure("hardware_architecture", "vnpu-1.2"), 0);
  assert_int_equal(Compat("", "vnpu-1.2", msg), 0);
  epctx_hal_driver_info info;
  const epctx_hal_driver* d = epctx_vnpu_driver();
  assert_int_equal(d->get_info(d, &info), 0);
  assert_string_equal(info.hardware_architecture, "vnpu-1.2");
  assert_int_equal(epctx_vnpu_configure("hardware_architecture", nullptr), 0);
  assert_int_equal(epctx_vnpu_configure("sdk_version", "x"), EPCTX_INVALID_ARGUMENT);
  assert_int_equal(epctx_vnpu_configure("bogus", "1.0.0"), EPCTX_INVALID_ARGUMENT);
  assert_int_equal(d->get_info(d, &info), 0);
  assert_string_equal(info.hardware_architecture, "vnpu-1.1");
  assert_int_equal(info.payload_alignment, 64);
  assert_int_equal(info.num_source_keys, 2);
  assert_string_equal(info.source_keys[1], "VnpuExecutionProvider");
}

// CONCAT, SCALE_SHIFT and TRANSPOSE split over threads (rows cut into
// segments that span input boundaries; planes; bands of 16 rows): the
// values serial execution writes, on 1 and 3 threads.
void concat_scale_shift_transpose_same_on_any_threads(void**) {
  const int64_t c[3] = {3, 5, 2}, HW = 10000;
  TStream q;
  std::vector<Buf> ins;
  std::vector<uint32_t> cat;
  std::vector<std::vector<float>> xs;
  for (int i = 0; i < 3; ++i) {
    xs.push_back(Ramp(size_t(2 * c[i] * HW), 1.f, float(i)));
    cat.push_back(q.In({2, c[i], 100, 100}, D::FLOAT32));
    ins.push_back(Bytes(xs.back(), {2, c[i], 100, 100}, D::FLOAT32));
  }
  const uint32_t y = q.Out({2, 10, 100, 100}, D::FLOAT32);
  q.s.Op(fb::CreateConcatDirect(q.s.fbb, &cat, y, 1));
  const std::vector<float> sx = Ramp(2 * 10 * 3600, 2.f), sc = Ramp(10, 1.f, 3.f),
                           sh = Ramp(10, 0.5f, 4.f);
  const uint32_t tx = q.In({2, 10, 60, 60}, D::FLOAT32), ts = q.W(sc, {10}, D::FLOAT32),
                 th = q.W(sh, {10}, D::FLOAT32), ty = q.Out({2, 10, 60, 60}, D::FLOAT32);
  q.s.Op(fb::CreateScaleShift(q.s.fbb, tx, ts, th, ty, 2, 10, 3600));
  ins.push_back(Bytes(sx, {2, 10, 60, 60}, D::FLOAT32));
  // A swap of the last two axes (tiles in bands of 16 rows, outer 1).
  const std::vector<float> px = Ramp(509 * 770, 1.f, 5.f);
  const std::vector<uint32_t> perm = {0, 2, 1};
  const uint32_t tin = q.In({1, 509, 770}, D::FLOAT32), tout = q.Out({1, 770, 509}, D::FLOAT32);
  q.s.Op(fb::CreateTransposeDirect(q.s.fbb, tin, tout, &perm));
  ins.push_back(Bytes(px, {1, 509, 770}, D::FLOAT32));
  for (uint32_t threads : {1u, 3u}) {
    const std::vector<Buf> out = Run(q, ins, threads);
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t ch = 0, i = 0, base = 0; ch < 10; ++ch, ++base) {
        while (base >= c[i]) base -= c[i++];
        for (int64_t e = 0; e < HW; ++e)
          if (AtF(out[0], size_t((o * 10 + ch) * HW + e)) !=
              xs[size_t(i)][size_t((o * c[i] + base) * HW + e)])
            fail_msg("%u threads: concat [%lld][%lld][%lld]", threads, (long long)o, (long long)ch,
                     (long long)e);
      }
    for (size_t k = 0; k < sx.size(); ++k) {
      const size_t ch = k / 3600 % 10;
      if (AtF(out[1], k) != sx[k] * sc[ch] + sh[ch])
        fail_msg("%u threads: scale_shift element %zu", threads, k);
    }
    for (size_t i = 0; i < 770; ++i)
      for (size_t j = 0; j < 509; ++j)
        if (AtF(out[2], i * 509 + j) != px[j * 770 + i])
          fail_msg("%u threads: transpose [%zu][%zu]", threads, i, j);
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conv2d_matches_reference_loops),
      cmocka_unit_test(gemm_matches_reference_with_fused_clip),
      cmocka_unit_test(binary_broadcasts_with_strides),
      cmocka_unit_test(pool_max_and_avg_match_reference),
      cmocka_unit_test(softmax_transpose_concat_match_reference),
      cmocka_unit_test(transpose_every_permutation_and_softmax_rows_match_reference),
      cmocka_unit_test(get_graph_binds_single_graph_by_any_name),
      cmocka_unit_test(get_graph_unknown_name_lists_available),
      cmocka_unit_test(get_graph_finds_each_of_many_names),
      cmocka_unit_test(only_bound_graphs_payloads_are_read),
      cmocka_unit_test(check_compatibility_accepts_and_rejects),
      cmocka_unit_test(concat_scale_shift_transpose_same_on_any_threads),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
