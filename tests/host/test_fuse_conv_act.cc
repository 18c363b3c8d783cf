// SPDX-License-Identifier: Apache-2.0
// Conv then Relu or Clip fused into com.microsoft FusedConv for the CPU
// (epctx_host/fuse_conv_act.h): the pairs it takes become one node that
// computes what the two computed, on every CPU conv path (GEMM, depthwise
// rows, depthwise lanes); the forms it must not take are left alone.
#include <cmath>
#include <string>
#include <vector>

#include "epctx_host/fuse_conv_act.h"
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

struct Spec {
  int64_t C, H, M, K, group;
  const char* act;  // "Relu", "Clip" (bounds as initializers) or "Clip6" (opset 6 attributes)
};

float XAt(size_t i) { return 4.0f * std::sin(0.37f * float(i) + 0.1f); }

onnx::ModelProto Model(const Spec& s, bool conv_out_is_output = false) {
  ModelBuilder b(std::string(s.act) == "Clip6" ? 6 : 13);
  const int64_t p = s.K / 2;
  b.Input("x", {1, s.C, s.H, s.H}).Output("y", {1, s.M, s.H, s.H});
  if (conv_out_is_output) b.Output("t", {1, s.M, s.H, s.H});
  b.Init("w", {s.M, s.C / s.group, s.K, s.K}, -0.3f).Init("bias", {s.M}, -0.2f);
  auto& w = *b.model().mutable_graph()->mutable_initializer(0);
  for (int i = 0; i < w.float_data_size(); ++i) w.set_float_data(i, std::cos(1.3f * float(i)));
  auto& n = b.Node("Conv", {"x", "w", "bias"}, {"t"}, "conv");
  SetIntsAttr(n, "pads", {p, p, p, p});
  SetIntsAttr(n, "kernel_shape", {s.K, s.K});
  auto* g = n.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(s.group);
  const std::string act = s.act;
  if (act == "Relu") {
    b.Node("Relu", {"t"}, {"y"}, "act");
  } else if (act == "Clip") {
    b.Init("lo", {}, -0.5f).Init("hi", {}, 1.5f);
    b.Node("Clip", {"t", "lo", "hi"}, {"y"}, "act");
  } else {
    auto& c = b.Node("Clip", {"t"}, {"y"}, "act");
    for (auto [name, v] : {std::pair<const char*, float>{"min", 0.0f}, {"max", 6.0f}}) {
      auto* a = c.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(v);
    }
  }
  return b.model();
}

std::vector<float> Run(const std::string& model, const Spec& s) {
  std::vector<float> x(size_t(s.C * s.H * s.H));
  for (size_t i = 0; i < x.size(); ++i) x[i] = XAt(i);
  return testutil::RunOne(model, "x", {1, s.C, s.H, s.H}, x, "y");
}

// The Conv's result, clamped, in double.
std::vector<float> Reference(const Spec& s) {
  const int64_t p = s.K / 2, cg = s.C / s.group, mg = s.M / s.group;
  const std::string act = s.act;
  const double lo = act == "Clip" ? -0.5 : 0.0, hi = act == "Relu"   ? 1e300
                                                     : act == "Clip" ? 1.5
                                                                     : 6.0;
  std::vector<float> y(size_t(s.M * s.H * s.H));
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t oh = 0; oh < s.H; ++oh)
      for (int64_t ow = 0; ow < s.H; ++ow) {
        double acc = -0.2 + 0.01 * double(m);
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kh = 0; kh < s.K; ++kh)
            for (int64_t kw = 0; kw < s.K; ++kw) {
              const int64_t h = oh - p + kh, w = ow - p + kw;
              if (h < 0 || h >= s.H || w < 0 || w >= s.H) continue;
              acc += double(XAt(size_t(((m / mg * cg + c) * s.H + h) * s.H + w))) *
                     double(std::cos(1.3f * float(((m * cg + c) * s.K + kh) * s.K + kw)));
            }
        y[size_t((m * s.H + oh) * s.H + ow)] = float(acc < lo ? lo : acc > hi ? hi : acc);
      }
  return y;
}

void fused_pairs_compute_the_pairs_result(void**) {
  const Spec specs[] = {
      {8, 10, 16, 3, 1, "Relu"},     // GEMM (im2col)
      {16, 9, 24, 1, 1, "Clip"},     // GEMM, B read in place
      {16, 12, 16, 3, 16, "Clip6"},  // depthwise, lanes where AVX-512 runs
      {8, 70, 8, 3, 8, "Relu"},      // depthwise rows (wider than the lanes take)
      {32, 8, 32, 3, 2, "Clip"},     // grouped GEMM
  };
  for (const Spec& s : specs) {
    onnx::ModelProto m = Model(s);
    assert_int_equal(FuseConvActivations(m), 1);
    assert_int_equal(m.graph().node_size(), 1);
    const onnx::NodeProto& n = m.graph().node(0);
    assert_string_equal(n.op_type().c_str(), "FusedConv");
    assert_string_equal(n.domain().c_str(), "com.microsoft");
    assert_string_equal(n.output(0).c_str(), "y");
    bool ms = false;
    for (const auto& o : m.opset_import()) ms = ms || o.domain() == "com.microsoft";
    assert_true(ms);
    const std::vector<float> want = Reference(s);
    const std::vector<float> got = Run(testutil::CompileToMemory(Model(s), "none"), s);
    assert_int_equal(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      if (std::fabs(got[i] - want[i]) > 1e-4f * (1.0f + std::fabs(want[i])))
        fail_msg("%s C %lld group %lld element %zu: %g, want %g", s.act, (long long)s.C,
                 (long long)s.group, i, double(got[i]), double(want[i]));
  }
}

void other_forms_are_left_alone(void**) {
  const Spec s{8, 6, 8, 3, 1, "Clip"};
  {  // the Conv's output is a graph output
    onnx::ModelProto m = Model(s, true);
    assert_int_equal(FuseConvActivations(m), 0);
  }
  {  // a second reader of the Conv's output
    onnx::ModelProto m = Model(s);
    auto* o = m.mutable_graph()->add_output();
    *o = m.graph().output(0);
    o->set_name("z");
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type("Sigmoid");
    n->add_input("t");
    n->add_output("z");
    assert_int_equal(FuseConvActivations(m), 0);
  }
  {  // a Clip bound given at run time
    onnx::ModelProto m = Model(s);
    auto* g = m.mutable_graph();
    for (int i = g->initializer_size(); i-- > 0;)
      if (g->initializer(i).name() == "hi") g->mutable_initializer()->DeleteSubrange(i, 1);
    auto* in = g->add_input();
    in->set_name("hi");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    in->mutable_type()->mutable_tensor_type()->mutable_shape();
    assert_int_equal(FuseConvActivations(m), 0);
  }
  {  // an activation the fused kernel does not clamp
    onnx::ModelProto m = Model(s);
    m.mutable_graph()->mutable_node(1)->set_op_type("Sigmoid");
    m.mutable_graph()->mutable_node(1)->mutable_input()->DeleteSubrange(1, 2);
    assert_int_equal(FuseConvActivations(m), 0);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fused_pairs_compute_the_pairs_result),
      cmocka_unit_test(other_forms_are_left_alone),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
