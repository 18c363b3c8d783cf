// SPDX-License-Identifier: Apache-2.0
// Dead convolution taps (epctx_host/dead_taps.h): which taps are live on an
// axis; convolutions with dead end taps lose them and still compute what
// the full kernel computes, on the CPU and on vnpu; the forms the pass does
// not take are left alone.
#include <cmath>
#include <string>
#include <vector>

#include <epctx/epctx.h>

#include "epctx_host/compile_api.h"
#include "epctx_host/dead_taps.h"
#include "epctx_host/specialize.h"
#include "model_builder.h"
#include "run_model.h"

// cmocka last: its fail() macro clashes with <ios>.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace epctx::host;
using testutil::ModelBuilder;
using testutil::SetIntsAttr;

namespace {

void live_taps_per_axis(void**) {
  // DeepLabV3's atrous rates on a 16-wide map: 36 and 24 keep the centre.
  LiveTaps t = LiveTapsOf(16, 16, 3, 1, 36, 36);
  assert_int_equal(t.first, 1);
  assert_int_equal(t.last, 1);
  t = LiveTapsOf(16, 16, 3, 1, 24, 24);
  assert_int_equal(t.first, 1);
  assert_int_equal(t.last, 1);
  // Rate 12: each outer tap is live for 4 of the 16 outputs.
  t = LiveTapsOf(16, 16, 3, 1, 12, 12);
  assert_int_equal(t.first, 0);
  assert_int_equal(t.last, 2);
  // Padding only at the start, tap 0 never reaches the input.
  t = LiveTapsOf(5, 5, 3, 1, 3, 6);
  assert_int_equal(t.first, 1);
  assert_int_equal(t.last, 2);
  // Stride steps over the input: one output, only tap 1 inside.
  t = LiveTapsOf(1, 1, 3, 3, 1, 1);
  assert_int_equal(t.first, 1);
  assert_int_equal(t.last, 1);
  // No live tap at all.
  t = LiveTapsOf(2, 1, 2, 1, 5, 6);
  assert_true(t.first > t.last);
}

struct ConvSpec {
  int64_t C, H, W, M, KH, KW, dh, dw, pt, pl, pb, pr;
};

int64_t OutSize(int64_t in, int64_t k, int64_t d, int64_t pb, int64_t pe) {
  return in + pb + pe - d * (k - 1);
}

// The values of input x and weights w (index i): varied, signed.
float XAt(size_t i) { return std::sin(0.37f * float(i) + 0.1f); }
float WAt(size_t i) { return std::cos(1.3f * float(i)) * 0.5f; }

onnx::ModelProto ConvModel(const ConvSpec& s, bool weights_shared) {
  const int64_t OH = OutSize(s.H, s.KH, s.dh, s.pt, s.pb),
                OW = OutSize(s.W, s.KW, s.dw, s.pl, s.pr);
  ModelBuilder b;
  b.Input("x", {1, s.C, s.H, s.W}).Output("y", {1, s.M, OH, OW});
  b.Init("w", {s.M, s.C, s.KH, s.KW}).Init("bias", {s.M}, -0.2f);
  auto& w = b.model().mutable_graph()->mutable_initializer()->at(0);
  for (int i = 0; i < w.float_data_size(); ++i) w.set_float_data(i, WAt(size_t(i)));
  auto& n = b.Node("Conv", {"x", "w", "bias"}, {"y"}, "conv");
  SetIntsAttr(n, "dilations", {s.dh, s.dw});
  SetIntsAttr(n, "pads", {s.pt, s.pl, s.pb, s.pr});
  if (weights_shared) {
    // A second, unpadded convolution reads the same weights: all its taps
    // are live, so the first gets a copy.
    const int64_t OH2 = s.H - s.KH + 1, OW2 = s.W - s.KW + 1;
    b.Output("y2", {1, s.M, OH2, OW2});
    b.Node("Conv", {"x", "w"}, {"y2"}, "conv2");
  }
  return b.model();
}

// The convolution with every tap, in double.
std::vector<float> Reference(const ConvSpec& s) {
  const int64_t OH = OutSize(s.H, s.KH, s.dh, s.pt, s.pb),
                OW = OutSize(s.W, s.KW, s.dw, s.pl, s.pr);
  std::vector<float> y(size_t(s.M * OH * OW));
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = -0.2 + 0.01 * double(m);
        for (int64_t c = 0; c < s.C; ++c)
          for (int64_t kh = 0; kh < s.KH; ++kh)
            for (int64_t kw = 0; kw < s.KW; ++kw) {
              const int64_t h = oh - s.pt + kh * s.dh, w = ow - s.pl + kw * s.dw;
              if (h < 0 || h >= s.H || w < 0 || w >= s.W) continue;
              acc += double(XAt(size_t((c * s.H + h) * s.W + w))) *
                     double(WAt(size_t(((m * s.C + c) * s.KH + kh) * s.KW + kw)));
            }
        y[size_t((m * OH + oh) * OW + ow)] = float(acc);
      }
  return y;
}

std::vector<float> Run(const std::string& model, const ConvSpec& s) {
  std::vector<float> x(size_t(s.C * s.H * s.W));
  for (size_t i = 0; i < x.size(); ++i) x[i] = XAt(i);
  return testutil::RunOne(model, "x", {1, s.C, s.H, s.W}, x, "y");
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::vector<int64_t> IntsOf(const onnx::NodeProto& n, const char* name) {
  const onnx::AttributeProto* a = FindAttr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>();
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  assert_int_equal(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-4f)
      fail_msg("%s element %zu: %g, the full kernel gives %g", what, i, double(got[i]),
               double(want[i]));
}

void cut_kernels_compute_the_full_kernels_result(void**) {
  // H: padding only at the top, dilation 3: tap row 0 never reaches the
  // input (3 rows -> 2, pads 6/0 -> 3/0). W: ordinary 3 taps, all live.
  const ConvSpec a{2, 5, 6, 3, 3, 3, 3, 1, 6, 1, 0, 1};
  // Atrous 3x3 at rate 4 on a 4x4 map: only the centre is live (a 1x1).
  const ConvSpec b{3, 4, 4, 4, 3, 3, 4, 4, 4, 4, 4, 4};
  for (const ConvSpec* s : {&a, &b}) {
    onnx::ModelProto m = ConvModel(*s, false);
    Specialize(m, SpecializeOptions(), "conv.onnx", Progress());
    assert_int_equal(TrimDeadTaps(*m.mutable_graph(), BuildGraphInfo(m)), 1);
    const onnx::NodeProto& n = m.graph().node(0);
    if (s == &a) {
      assert_true(IntsOf(n, "kernel_shape") == std::vector<int64_t>({2, 3}));
      assert_true(IntsOf(n, "pads") == std::vector<int64_t>({3, 1, 0, 1}));
      assert_true(IntsOf(n, "dilations") == std::vector<int64_t>({3, 1}));
    } else {
      assert_true(IntsOf(n, "kernel_shape") == std::vector<int64_t>({1, 1}));
      assert_true(IntsOf(n, "pads") == std::vector<int64_t>({0, 0, 0, 0}));
      assert_true(IntsOf(n, "dilations") == std::vector<int64_t>({1, 1}));
    }
    const onnx::TensorProto& w = m.graph().initializer(0);
    assert_int_equal(w.dims(2), s == &a ? 2 : 1);
    const std::vector<float> want = Reference(*s);
    for (const char* ep : {"none", "vnpu"}) {
      ExpectClose(Run(testutil::CompileToMemory(ConvModel(*s, false), ep), *s), want, ep);
    }
  }
}

void shared_weights_are_copied(void**) {
  const ConvSpec s{3, 4, 4, 4, 3, 3, 4, 4, 4, 4, 4, 4};
  onnx::ModelProto m = ConvModel(s, true);
  Specialize(m, SpecializeOptions(), "conv.onnx", Progress());
  assert_int_equal(TrimDeadTaps(*m.mutable_graph(), BuildGraphInfo(m)), 1);
  const auto& g = m.graph();
  assert_string_equal(g.node(1).input(1).c_str(), "w");
  assert_string_not_equal(g.node(0).input(1).c_str(), "w");
  for (const auto& t : g.initializer())
    if (t.name() == "w") assert_int_equal(t.dims(2), 3);
    else if (t.name() == g.node(0).input(1)) assert_int_equal(t.dims(2), 1);
  ExpectClose(Run(testutil::CompileToMemory(ConvModel(s, true), "none"), s), Reference(s),
              "none, shared weights");
}

void other_forms_are_left_alone(void**) {
  const ConvSpec s{3, 4, 4, 4, 3, 3, 4, 4, 4, 4, 4, 4};
  {  // weights given at run time
    onnx::ModelProto m = ConvModel(s, false);
    auto* w = m.mutable_graph()->add_input();
    w->set_name("w");
    auto* tt = w->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {s.M, s.C, s.KH, s.KW}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    Specialize(m, SpecializeOptions(), "conv.onnx", Progress());
    assert_int_equal(TrimDeadTaps(*m.mutable_graph(), BuildGraphInfo(m)), 0);
  }
  {  // implicit padding
    onnx::ModelProto m = ConvModel(s, false);
    auto* n = m.mutable_graph()->mutable_node(0);
    for (int i = n->attribute_size(); i-- > 0;)
      if (n->attribute(i).name() == "pads") n->mutable_attribute()->DeleteSubrange(i, 1);
    auto* a = n->add_attribute();
    a->set_name("auto_pad");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("SAME_UPPER");
    Specialize(m, SpecializeOptions(), "conv.onnx", Progress());
    assert_int_equal(TrimDeadTaps(*m.mutable_graph(), BuildGraphInfo(m)), 0);
  }
  {  // every tap live
    const ConvSpec full{2, 6, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1};
    onnx::ModelProto m = ConvModel(full, false);
    Specialize(m, SpecializeOptions(), "conv.onnx", Progress());
    assert_int_equal(TrimDeadTaps(*m.mutable_graph(), BuildGraphInfo(m)), 0);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(live_taps_per_axis),
      cmocka_unit_test(cut_kernels_compute_the_full_kernels_result),
      cmocka_unit_test(shared_weights_are_copied),
      cmocka_unit_test(other_forms_are_left_alone),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
