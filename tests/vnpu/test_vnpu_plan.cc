// SPDX-License-Identifier: Apache-2.0
// vnpu planner: which strategy each representative convolution takes, that
// get_graph's plan is the planner's, that the workspace it reserves is what
// the strategy uses (run serially: slot 0 only, the high-water mark of its
// writes at most, and more than half of, the planned floats; the other
// slots untouched), and that the strategy computes the convolution.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#include "conv/plan.h"
#include "epctx_uk/depthwise.h"
#include "vnpu_typed_stream.h"

using namespace vt;
using L = fb::Location;
using epctx::vnpu::Graph;
using epctx::vnpu::OpPlan;
using epctx::vnpu::Strategy;

namespace {

const char* Name(Strategy s) {
  switch (s) {
    case Strategy::kNone: return "none";
    case Strategy::kFused: return "fused";
    case Strategy::kDense: return "dense";
    case Strategy::kDenseRows: return "dense_rows";
    case Strategy::kShifted: return "shifted";
    case Strategy::kShiftedPacked: return "shifted_packed";
    case Strategy::kRowShift: return "row_shift";
    case Strategy::kTransposed: return "transposed";
    case Strategy::kTransposedRing: return "transposed_ring";
    case Strategy::kNarrow: return "narrow";
    case Strategy::kDepthwise: return "depthwise";
    case Strategy::kDepthwiseBand: return "depthwise_band";
    case Strategy::kDepthwiseRing: return "depthwise_ring";
    case Strategy::kDepthwiseLanes: return "depthwise_lanes";
    case Strategy::kGroupLanes: return "group_lanes";
    case Strategy::kDeconvScatter: return "deconv_scatter";
    case Strategy::kDeconvExact: return "deconv_exact";
    case Strategy::kDeconvPair: return "deconv_pair";
    case Strategy::kGemm: return "gemm";
    case Strategy::kGemmPacked: return "gemm_packed";
    case Strategy::kGemmBlocked: return "gemm_blocked";
    case Strategy::kQPanel: return "q_panel";
    case Strategy::kQDot: return "q_dot";
    case Strategy::kQDepthwise: return "q_depthwise";
    case Strategy::kBatchMatMul: return "batch_matmul";
  }
  return "?";
}

struct Case {
  const char* name;
  int N, C, H, W, CO, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, G;
  bool taps;
  Strategy want;
};

// clang-format off
const Case kCases[] = {
  // name                      N  C   H    W    CO  KH KW sh sw pt pl pb pr dh dw G   taps   strategy
  {"1x1",                      1, 16, 12,  20,  24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,  false, Strategy::kShifted},
  {"1x1, K in chunks, short last block", 2, 300, 25, 40, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, Strategy::kShifted},
  {"1x1 on a 4 KiB plane",     1, 16, 32,  32,  16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,  false, Strategy::kShiftedPacked},
  {"1x1 on 7x7",               1, 32, 7,   7,   16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,  false, Strategy::kDense},
  {"1x1 128 4 KiB planes",     1, 128, 32, 32,  16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,  false, Strategy::kDense},
  {"1x1 stride 2",             1, 16, 16,  16,  16, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1,  false, Strategy::kDense},
  {"3x3 stride 1",             1, 16, 20,  20,  32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDense},
  // A last pixel (7x7), or 4 (14x14), in the narrow kernel, 64 rows at a
  // time after the block tiles: past the first 64 output channels too, and
  // from a run's first row (threads split few blocks by channel runs).
  {"3x3 7x7 narrow past 64",   1, 24, 7,   7,   80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDense},
  {"1x1 7x7 runs of 48 rows",  1, 40, 7,   7,  200, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,  false, Strategy::kDense},
  {"3x3 14x14 narrow 3 + 1",   1, 16, 14,  14, 136, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDense},
  {"3x3 stride 1 wide rows",   1, 8,  6,   64,  16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDenseRows},
  {"3x3 stride 2",             1, 16, 20,  20,  32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDense},
  {"3x3 stride 2 stem",        1, 3,  8,   130, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDenseRows},
  {"7x7 stride 2 stem",        1, 3,  16,  112, 8,  7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1,  false, Strategy::kDenseRows},
  {"7x7 stride 2 narrow rows", 1, 3,  16,  80,  8,  7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1,  false, Strategy::kDense},
  {"3x3 wide rows, big panel", 1, 64, 6,   64,  64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDense},
  {"grouped 3x3",              1, 16, 10,  10,  32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2,  false, Strategy::kDense},
  {"dilated 3x3",              1, 8,  12,  12,  16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1,  false, Strategy::kDense},
  {"3x3 weights past L2",      1, 128, 20, 20,  260, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, Strategy::kDense},
  {"3x3 input past L2",        1, 200, 40, 40,  64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDense},
  {"depthwise 3x3",            1, 8,  16,  16,  8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8,  false, Strategy::kDepthwiseBand},
  {"depthwise 3x3 stride 2",   1, 4,  9,   200, 4,  3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4,  false, Strategy::kDepthwiseRing},
  {"depthwise 3x3 wide rows",  1, 4,  6,   200, 4,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4,  false, Strategy::kDepthwise},
  {"groups of 16 3x3",         1, 48, 14,  14,  48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3,  false, Strategy::kTransposedRing},
  {"taps groups of 16 s2",     1, 32, 15,  13,  32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2,  true,  Strategy::kTransposedRing},
  {"depthwise 5x5 s2 20ch",    1, 20, 14,  14,  20, 5, 5, 2, 2, 2, 2, 1, 2, 1, 1, 20, false, Strategy::kDepthwiseBand},
  {"depthwise 3x3 dilated",    1, 17, 9,   11,  17, 3, 3, 1, 1, 2, 1, 2, 3, 2, 1, 17, false, Strategy::kDepthwiseBand},
  {"depthwise 3x3 stride 3",   1, 4,  12,  12,  4,  3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 4,  false, Strategy::kDepthwise},
  {"one channel into eight",   1, 1,  16,  16,  8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kDepthwiseBand},
  {"3x1",                      1, 8,  12,  10,  16, 3, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,  false, Strategy::kShifted},
  {"1x3 same",                 1, 8,  4,   32,  16, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1,  false, Strategy::kRowShift},
  {"1x64 stft",                1, 1,  1,   100, 16, 1, 64,1, 16,0, 0, 0, 0, 1, 1, 1,  false, Strategy::kNarrow},
  {"many into few 3x3",        1, 32, 10,  16,  8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  false, Strategy::kTransposedRing},
  {"many into few dilated",    1, 32, 10,  16,  8,  3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1,  false, Strategy::kTransposed},
  {"taps 3x3",                 1, 32, 10,  16,  8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  true,  Strategy::kTransposedRing},
  {"taps 1x3 same",            1, 16, 4,   32,  8,  1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1,  true,  Strategy::kRowShift},
  {"taps one channel",         1, 1,  8,   16,  1,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,  true,  Strategy::kTransposedRing},
};
// clang-format on

std::vector<float> Ramp(size_t n, float scale, float bias = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(float(i) * 0.37f + bias) * scale;
  return v;
}

// w [Cout][Cin_g][KH][KW] in the op's layout: blocked (PackConv) or taps-major
// [G][KH * KW][Cin_g][ceil(Cout_g / 8) * 8].
std::vector<float> Pack(const Case& k, const std::vector<float>& w) {
  const int cig = k.C / k.G, ks = k.KH * k.KW;
  if (!k.taps) return PackConv(w, k.CO, cig, k.KH, k.KW, k.G);
  const int cog = k.CO / k.G, nb = (cog + 7) / 8;
  std::vector<float> out(size_t(k.G) * ks * cig * nb * 8, 0.f);
  for (int o = 0; o < k.CO; ++o)
    for (int i = 0; i < cig; ++i)
      for (int t = 0; t < ks; ++t)
        out[((size_t(o / cog) * ks + t) * cig + i) * nb * 8 + o % cog] =
            w[(size_t(o) * cig + i) * ks + t];
  return out;
}

std::vector<float> RefConv(const Case& k, int OH, int OW, const std::vector<float>& x,
                           const std::vector<float>& w, const std::vector<float>& b) {
  std::vector<float> y(size_t(k.N) * k.CO * OH * OW);
  const int cig = k.C / k.G, cog = k.CO / k.G;
  for (int n = 0; n < k.N; ++n)
    for (int o = 0; o < k.CO; ++o)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          double acc = b[o];
          for (int i = 0; i < cig; ++i)
            for (int kh = 0; kh < k.KH; ++kh)
              for (int kw = 0; kw < k.KW; ++kw) {
                const int ih = oh * k.sh - k.pt + kh * k.dh, iw = ow * k.sw - k.pl + kw * k.dw;
                if (ih < 0 || ih >= k.H || iw < 0 || iw >= k.W) continue;
                acc += double(x[((size_t(n) * k.C + o / cog * cig + i) * k.H + ih) * k.W + iw]) *
                       w[((size_t(o) * cig + i) * k.KH + kh) * k.KW + kw];
              }
          y[((size_t(n) * k.CO + o) * OH + oh) * OW + ow] = float(acc);
        }
  return y;
}

constexpr uint32_t kUntouched = 0x7fc0dead;  // a NaN no kernel computes

void RunCase(const Case& k) {
  const int OH = (k.H + k.pt + k.pb - k.dh * (k.KH - 1) - 1) / k.sh + 1;
  const int OW = (k.W + k.pl + k.pr - k.dw * (k.KW - 1) - 1) / k.sw + 1;
  epctx::vnpu::Shape s;
  s.N = k.N, s.C = k.C, s.H = k.H, s.W = k.W, s.CO = k.CO, s.OH = OH, s.OW = OW, s.G = k.G;
  s.cig = k.C / k.G, s.cog = k.CO / k.G, s.nb = (s.cog + 7) / 8, s.KH = k.KH, s.KW = k.KW;
  s.sh = k.sh, s.sw = k.sw, s.dh = k.dh, s.dw = k.dw, s.pt = k.pt, s.pl = k.pl;
  s.kstride = s.KH * s.KW * 8;
  const OpPlan want = epctx::vnpu::PlanConv(s, k.taps);
  // Depthwise maps and groups of 16 -> 16 channels take the lanes where the
  // CPU runs them (AVX-512 up to 64 output columns, AVX2 up to 16:
  // test_ukernels pins which): the table names the strategy elsewhere.
  Strategy expect = k.want;
  const epctx::uk::DwShape dws{s.H,  s.W,  s.OH, s.OW, s.KH, s.KW,
                               s.sh, s.sw, s.dh, s.dw, s.pt, s.pl};
  if (!k.taps && s.cig == 1 && s.cog == 1 && s.G > 1 && epctx::uk::DepthwiseLanesFloats(dws) > 0)
    expect = Strategy::kDepthwiseLanes;
  if (s.cig == 16 && s.cog == 16 && s.G > 1 && k.KH * k.KW > 1 &&
      epctx::uk::GroupLanesFloats(dws) > 0)
    expect = Strategy::kGroupLanes;
  if (want.strategy != expect) {
    print_error("%s: planned %s, expected %s\n", k.name, Name(want.strategy), Name(expect));
    fail();
  }

  auto x = Ramp(size_t(k.N) * k.C * k.H * k.W, 1.f);
  auto w = Ramp(size_t(k.CO) * (k.C / k.G) * k.KH * k.KW, 0.5f, 1.f);
  auto b = Ramp(size_t(k.CO), 0.3f, 2.f);
  std::vector<float> weights = Pack(k, w);
  const uint64_t boff = (weights.size() * 4 + 63) / 64 * 64;
  const size_t nw = weights.size();
  weights.resize(boff / 4);
  weights.insert(weights.end(), b.begin(), b.end());
  Stream st;
  uint32_t ti = st.Tensor("x", {k.N, k.C, k.H, k.W}, L::INPUT, 0);
  uint32_t tw = st.Tensor("w", {int64_t(nw)}, L::WEIGHT, 0);
  uint32_t tb = st.Tensor("b", {k.CO}, L::WEIGHT, boff);
  uint32_t to = st.Tensor("y", {k.N, k.CO, OH, OW}, L::OUTPUT, 0);
  auto conv = fb::CreateConv2D(st.fbb, ti, tw, to, true, tb, k.KH, k.KW, k.sh, k.sw, k.pt, k.pl,
                               k.pb, k.pr, k.dh, k.dw, k.G);
  if (k.taps) st.Op(fb::OpParams::Conv2DTaps, conv);
  else st.Op(conv);
  Loaded l;
  Load(&l, {{"g", st.Finish(0, "g", 4)}}, weights);
  assert_int_equal(l.rc, 0);
  epctx_hal_graph* hg;
  epctx_hal_graph_info info;
  if (Bind(&l, "g", &hg, &info) != 0) {
    print_error("%s: %s\n", k.name, l.msg.c_str());
    fail();
  }
  // get_graph's plan is the planner's, and the workspace is its size.
  const Graph* g = reinterpret_cast<const Graph*>(hg);
  assert_int_equal(int(g->plans[0].strategy), int(want.strategy));
  assert_int_equal(g->plans[0].work_floats, want.work_floats);
  assert_int_equal(g->work_floats, (want.work_floats + 15) / 16 * 16);

  const size_t words = (info.scratch_bytes + 3) / 4;
  uint32_t* scratch = static_cast<uint32_t*>(aligned_alloc(64, (words * 4 + 63) / 64 * 64 + 64));
  for (size_t i = 0; i < words; ++i) scratch[i] = kUntouched;
  std::vector<float> y(size_t(k.N) * k.CO * OH * OW);
  epctx_hal_tensor tin = {EPCTX_DTYPE_FLOAT, info.inputs[0].rank, info.inputs[0].dims, x.data(),
                          x.size() * 4};
  epctx_hal_tensor tout = {EPCTX_DTYPE_FLOAT, info.outputs[0].rank, info.outputs[0].dims, y.data(),
                           y.size() * 4};
  const epctx_hal_driver* d = epctx_vnpu_driver();
  char msg[512];
  assert_int_equal(
      d->execute(d, hg, &tin, 1, &tout, 1, scratch, info.scratch_bytes, msg, sizeof msg), 0);
  // Serial: slot 0 (the arena is empty: the workspace starts the scratch).
  // It writes more than a quarter of the plan: a case whose only packed
  // block is a last one of at most 24 pixels (a 1x1 on 7x7 reads its first
  // block in place) fills one of the block's two 24-column panels
  // (uk::BlockPanelCols on AVX2), which start half the slot apart.
  uint64_t high = 0;
  for (size_t i = 0; i < words; ++i)
    if (scratch[i] != kUntouched) high = i + 1;
  free(scratch);
  if (high > want.work_floats || (want.work_floats > 0 && 4 * high <= want.work_floats)) {
    print_error("%s (%s): wrote %llu workspace floats, planned %llu\n", k.name, Name(want.strategy),
                (unsigned long long)high, (unsigned long long)want.work_floats);
    fail();
  }
  // The same bytes on 2 and 3 threads (chunks run last first, each as
  // worker chunk % threads): no strategy's split changes what a pixel or
  // an output channel is computed with.
  for (uint32_t threads : {2u, 3u}) {
    epctx_hal_parallel par{sizeof(epctx_hal_parallel), threads, &threads,
                           ReverseThreads::ParallelFor};
    std::vector<float> yt(y.size(), -1.f);
    std::vector<uint8_t> sc(info.scratch_bytes + 64);
    uint8_t* sa = sc.data() + (64 - reinterpret_cast<uintptr_t>(sc.data()) % 64) % 64;
    epctx_hal_tensor tt = {EPCTX_DTYPE_FLOAT, info.outputs[0].rank, info.outputs[0].dims, yt.data(),
                           yt.size() * 4};
    assert_int_equal(
        d->execute_parallel(d, hg, &tin, 1, &tt, 1, sa, info.scratch_bytes, &par, msg, sizeof msg),
        0);
    if (memcmp(yt.data(), y.data(), y.size() * 4) != 0) {
      print_error("%s (%s): %u threads computed other bytes than 1\n", k.name, Name(want.strategy),
                  threads);
      fail();
    }
  }
  const auto ref = RefConv(k, OH, OW, x, w, b);
  for (size_t i = 0; i < y.size(); ++i)
    if (std::fabs(y[i] - ref[i]) > 1e-4f * (1.f + std::fabs(ref[i]))) {
      print_error("%s (%s): element %zu: got %g want %g\n", k.name, Name(want.strategy), i,
                  double(y[i]), double(ref[i]));
      fail();
    }
}

void each_conv_case_takes_its_strategy_and_uses_its_planned_workspace(void**) {
  for (const Case& k : kCases) RunCase(k);
}

// Dense packs 8 pixel blocks per K chunk when the group's weights or input
// planes pass 1 MiB (L2), one block otherwise.
void dense_groups_blocks_when_weights_or_input_pass_l2(void**) {
  auto plan = [](int64_t C, int64_t HW, int64_t CO, int64_t k) {
    epctx::vnpu::Shape s{};
    s.N = 1, s.C = C, s.H = HW, s.W = HW, s.CO = CO, s.OH = HW, s.OW = HW, s.G = 1;
    s.cig = C, s.cog = CO, s.nb = (CO + 7) / 8, s.KH = k, s.KW = k, s.sh = 1, s.sw = 1;
    s.dh = 1, s.dw = 1, s.pt = k / 2, s.pl = k / 2, s.kstride = k * k * 8;
    return epctx::vnpu::PlanConv(s, false);
  };
  const OpPlan small = plan(32, 20, 64, 3), heavy = plan(2048, 32, 512, 3),
               tall = plan(200, 40, 64, 3);
  assert_int_equal(int(small.strategy), int(Strategy::kDense));
  assert_int_equal(small.group, 1);
  assert_int_equal(small.chunk_k, 288);
  assert_int_equal(heavy.group, 8);
  assert_int_equal(heavy.chunk_k, 256);
  assert_int_equal(heavy.work_floats, 256 * 48 * 8);
  assert_int_equal(tall.group, 8);
}

// The transposed path keeps a tap row's inputs on the stack (49 taps):
// get_graph refuses a CONV2D_TAPS with more rather than run it.
void taps_op_beyond_the_stack_taps_is_refused(void**) {
  const int C = 16, CO = 8, KH = 50, H = 60, W = 8, OH = H - KH + 1;
  std::vector<float> weights(size_t(KH) * C * 8, 0.f);
  Stream st;
  uint32_t ti = st.Tensor("x", {1, C, H, W}, L::INPUT, 0);
  uint32_t tw = st.Tensor("w", {int64_t(weights.size())}, L::WEIGHT, 0);
  uint32_t to = st.Tensor("y", {1, CO, OH, W}, L::OUTPUT, 0);
  st.Op(fb::OpParams::Conv2DTaps, fb::CreateConv2D(st.fbb, ti, tw, to, false, 0, KH, 1));
  Loaded l;
  Load(&l, {{"g", st.Finish(0, "g", 4)}}, weights);
  assert_int_equal(l.rc, 0);
  epctx_hal_graph* hg;
  epctx_hal_graph_info info;
  assert_int_equal(Bind(&l, "g", &hg, &info), EPCTX_INVALID_GRAPH);
  assert_non_null(strstr(l.msg.c_str(), "graph 'g' op 0 (CONV2D_TAPS)"));
  assert_non_null(strstr(l.msg.c_str(), "expected at most 49, found 50"));
}

// Loads one stream as graph "g" over `weights` and binds it (failing the
// test with the driver's message otherwise): the driver's graph and plans.
const Graph* LoadAndBind(Loaded* l, const std::vector<uint8_t>& stream,
                         const std::vector<float>& weights) {
  Load(l, {{"g", stream}}, weights);
  assert_int_equal(l->rc, 0);
  epctx_hal_graph* hg = nullptr;
  epctx_hal_graph_info info;
  if (Bind(l, "g", &hg, &info) != 0) {
    print_error("%s\n", l->msg.c_str());
    fail();
  }
  return reinterpret_cast<const Graph*>(hg);
}

// GEMM packs B slices from 16 rows of A; two exact deconvolutions in a row
// (the second writing arena bytes apart from the first's input) run as a
// pair, the second planned as fused into the first; a 3x3 stride-2 one
// scatters.
void gemm_and_deconv_plans(void**) {
  Stream st;
  const int C = 8, H = 4, W = 4;
  uint32_t gx = st.Tensor("gx", {16, 8}, L::INPUT, 0);
  uint32_t gw = st.Tensor("gw", {64}, L::WEIGHT, 0);
  uint32_t gy = st.Tensor("gy", {16, 8}, L::OUTPUT, 0);
  uint32_t hx = st.Tensor("hx", {2, 8}, L::INPUT, 1);
  uint32_t hy = st.Tensor("hy", {2, 8}, L::OUTPUT, 1);
  uint32_t dx = st.Tensor("dx", {1, C, H, W}, L::INPUT, 2);
  uint32_t dw = st.Tensor("dw", {C * C * 4}, L::WEIGHT, 0);
  uint32_t dm = st.Tensor("dm", {1, C, 2 * H, 2 * W}, L::ARENA, 0);
  uint32_t dy = st.Tensor("dy", {1, C, 4 * H, 4 * W}, L::ARENA, uint64_t(C) * 4 * H * W * 4);
  uint32_t cy = st.Tensor("cy", {1, C, 4 * H, 4 * W}, L::OUTPUT, 2);
  uint32_t sw = st.Tensor("sw", {C * C * 9}, L::WEIGHT, 0);
  uint32_t sy = st.Tensor("sy", {1, C, 2 * H + 1, 2 * W + 1}, L::OUTPUT, 3);
  st.Op(fb::CreateGemm(st.fbb, gx, gw, gy, false, 0, 16, 8, 8));
  st.Op(fb::CreateGemm(st.fbb, hx, gw, hy, false, 0, 2, 8, 8));
  st.Op(fb::CreateConvTranspose2D(st.fbb, dx, dw, dm, false, 0, 2, 2, 2, 2));
  st.Op(fb::CreateConvTranspose2D(st.fbb, dm, dw, dy, false, 0, 2, 2, 2, 2));
  st.Op(fb::CreateCopy(st.fbb, dy, cy));
  st.Op(fb::CreateConvTranspose2D(st.fbb, dx, sw, sy, false, 0, 3, 3, 2, 2));
  Loaded l;
  const Graph* g = LoadAndBind(&l, st.Finish(uint64_t(C) * 20 * H * W * 4, "g", 1),
                               std::vector<float>(C * C * 9));
  const Strategy want[] = {Strategy::kGemmPacked, Strategy::kGemm, Strategy::kDeconvPair,
                           Strategy::kFused,      Strategy::kNone, Strategy::kDeconvScatter};
  for (int i = 0; i < 6; ++i) {
    if (g->plans[i].strategy != want[i]) {
      print_error("op %d: planned %s, expected %s\n", i, Name(g->plans[i].strategy), Name(want[i]));
      fail();
    }
  }
  assert_int_equal(g->plans[0].work_floats, 8 * 48);
  assert_int_equal(g->plans[1].work_floats, 0);
  assert_int_equal(g->plans[2].work_floats, 8 * 192);
  assert_int_equal(g->plans[5].work_floats, 0);
}

// A GEMM of many rows takes K in slices the micro-kernel library sizes
// for B's block to stay in L1 (uk::BlockKc); one of a single row block
// reads B once whatever the slice and takes K in slices of 1024.
void gemm_slices_k_by_its_rows(void**) {
  Stream st;
  const int K = 2048, N = 8;
  uint32_t w = st.Tensor("w", {K * N}, L::WEIGHT, 0);
  uint32_t ax = st.Tensor("ax", {64, K}, L::INPUT, 0);
  uint32_t ay = st.Tensor("ay", {64, N}, L::OUTPUT, 0);
  uint32_t bx = st.Tensor("bx", {8, K}, L::INPUT, 1);
  uint32_t by = st.Tensor("by", {8, N}, L::OUTPUT, 1);
  st.Op(fb::CreateGemm(st.fbb, ax, w, ay, false, 0, 64, K, N));
  st.Op(fb::CreateGemm(st.fbb, bx, w, by, false, 0, 8, K, N));
  Loaded l;
  const Graph* g = LoadAndBind(&l, st.Finish(0, "g", 1), std::vector<float>(size_t(K) * N));
  const int64_t kc = epctx::uk::BlockKc(epctx::uk::Isa::kAuto);
  assert_true(kc >= 64 && kc <= 1024);
  assert_int_equal(g->plans[0].strategy, Strategy::kGemmPacked);
  assert_int_equal(g->plans[0].chunk_k, kc);
  assert_int_equal(g->plans[0].work_floats, uint64_t(kc) * 48);
  assert_int_equal(g->plans[1].strategy, Strategy::kGemm);
  assert_int_equal(g->plans[1].chunk_k, 1024);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_conv_case_takes_its_strategy_and_uses_its_planned_workspace),
      cmocka_unit_test(dense_groups_blocks_when_weights_or_input_pass_l2),
      cmocka_unit_test(taps_op_beyond_the_stack_taps_is_refused),
      cmocka_unit_test(gemm_and_deconv_plans),
      cmocka_unit_test(gemm_slices_k_by_its_rows),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
