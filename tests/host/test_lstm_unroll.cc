// SPDX-License-Identifier: Apache-2.0
// LSTM unrolling (epctx_host/lstm_unroll.h): the plain forward LSTM becomes
// primitive steps whose vnpu result matches the CPU's LSTM kernel; the other
// forms stay LSTM nodes.
#include <cmath>
#include <string>
#include <vector>

#include <epctx/epctx.h>

#include "epctx_host/compile_api.h"
#include "epctx_host/lstm_unroll.h"
#include "epctx_host/specialize.h"
#include "model_builder.h"

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

namespace {

constexpr int64_t T = 3, B = 2, I = 5, H = 4;

void Attr(onnx::NodeProto& n, const char* name, int64_t i) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(i);
}

// Y, Y_h, Y_c of an LSTM with initial state; `direction` as given.
onnx::ModelProto LstmModel(const char* direction) {
  const int64_t D = std::string(direction) == "bidirectional" ? 2 : 1;
  ModelBuilder b;
  b.Input("x", {T, B, I}).Input("h0", {D, B, H}).Input("c0", {D, B, H});
  b.Output("y", {T, D, B, H}).Output("yh", {D, B, H}).Output("yc", {D, B, H});
  b.Init("W", {D, 4 * H, I}, -0.3f).Init("R", {D, 4 * H, H}, -0.2f).Init("Bias", {D, 8 * H}, -0.1f);
  // ModelBuilder's values grow by 0.01 per element: scale them down so the
  // gates do not all saturate.
  for (auto& t : *b.model().mutable_graph()->mutable_initializer())
    for (auto& v : *t.mutable_float_data()) v = std::sin(13.f * v) * 0.5f;
  auto& n = b.Node("LSTM", {"x", "W", "R", "Bias", "", "h0", "c0"}, {"y", "yh", "yc"}, "lstm");
  Attr(n, "hidden_size", H);
  auto* a = n.add_attribute();
  a->set_name("direction");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(direction);
  return b.model();
}

CompileResult Compile(const onnx::ModelProto& m, const std::string& ep) {
  CompileSettings s;
  s.ep = ep;
  s.output_to_memory = true;
  s.config.emplace_back("ep.context_embed_mode", "1");
  return CompileModel(ModelInput::FromBuffer(m.SerializeAsString(), "lstm.onnx"), s);
}

std::vector<std::vector<float>> Run(epctx_env* env, const std::string& model) {
  epctx_session* s = nullptr;
  epctx_status* st = epctx_session_create_from_buffer(env, model.data(), model.size(), nullptr, &s);
  if (st) fail_msg("create: %s", epctx_status_message(st));
  std::vector<float> x(size_t(T * B * I)), h0(size_t(B * H)), c0(size_t(B * H));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.7f * float(i));
  for (size_t i = 0; i < h0.size(); ++i) {
    h0[i] = 0.1f * float(i % 5);
    c0[i] = -0.2f * float(i % 3);
  }
  int64_t xd[3] = {T, B, I}, sd[3] = {1, B, H};
  epctx_tensor* in[3];
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, xd, 3, x.data(), x.size() * 4, &in[0]));
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, sd, 3, h0.data(), h0.size() * 4, &in[1]));
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, sd, 3, c0.data(), c0.size() * 4, &in[2]));
  const char* names[3] = {"x", "h0", "c0"};
  epctx_tensor* out[3] = {nullptr, nullptr, nullptr};
  st = epctx_session_run(s, names, in, 3, nullptr, out, 3);
  if (st) fail_msg("run: %s", epctx_status_message(st));
  std::vector<std::vector<float>> v;
  for (epctx_tensor* t : out) {
    const float* p = static_cast<const float*>(epctx_tensor_data(t));
    v.emplace_back(p, p + epctx_tensor_bytes(t) / 4);
    epctx_tensor_release(t);
  }
  for (epctx_tensor* t : in) epctx_tensor_release(t);
  epctx_session_release(s);
  return v;
}

void forward_lstm_unrolls_onto_vnpu_and_matches_the_cpu_kernel(void**) {
  CompileResult npu = Compile(LstmModel("forward"), "vnpu");
  CompileResult cpu = Compile(LstmModel("forward"), "none");
  assert_true(npu.ok() && cpu.ok());
  const ModelReport& rep = npu.models.at(0);
  assert_int_equal(rep.macs_npu, rep.macs_total);  // the Split of x too: a strided copy
  assert_int_equal(rep.nodes_cpu, 0);
  epctx_env* env = nullptr;
  assert_null(epctx_env_create(nullptr, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  auto a = Run(env, npu.models[0].model_data);
  auto b = Run(env, cpu.models[0].model_data);
  assert_int_equal(a.size(), 3);
  for (size_t o = 0; o < 3; ++o) {
    assert_int_equal(a[o].size(), b[o].size());
    for (size_t i = 0; i < a[o].size(); ++i)
      if (std::fabs(a[o][i] - b[o][i]) > 1e-5f)
        fail_msg("output %zu element %zu: unrolled %g, LSTM kernel %g", o, i, a[o][i], b[o][i]);
  }
  epctx_env_release(env);
}

void other_lstm_forms_stay_whole(void**) {
  for (const char* dir : {"bidirectional", "reverse"}) {
    onnx::ModelProto m = LstmModel(dir);
    Specialize(m, SpecializeOptions(), "m.onnx", Progress());
    assert_int_equal(UnrollLstms(*m.mutable_graph(), BuildGraphInfo(m)), 0);
  }
  // Weights given at run time: nothing to pack.
  onnx::ModelProto m = LstmModel("forward");
  auto* w = m.mutable_graph()->add_input();
  w->set_name("W");
  auto* tt = w->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t(1), 4 * H, I}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  m.mutable_graph()->mutable_initializer()->DeleteSubrange(0, 1);
  Specialize(m, SpecializeOptions(), "m.onnx", Progress());
  assert_int_equal(UnrollLstms(*m.mutable_graph(), BuildGraphInfo(m)), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(forward_lstm_unrolls_onto_vnpu_and_matches_the_cpu_kernel),
      cmocka_unit_test(other_lstm_forms_stay_whole),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
