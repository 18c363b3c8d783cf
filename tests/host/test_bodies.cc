// SPDX-License-Identifier: Apache-2.0
// Partitions inside If/Loop bodies: the compiled model puts EPContext nodes
// in the bodies (one main context, unique names), and the runtime binds them
// at create and runs them, matching the CPU-only compile of the same model.
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <epctx/epctx.h>
#include <onnx/checker.h>

#include "epctx_host/compile_api.h"
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

void Fill(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims,
          int dtype = onnx::TensorProto::FLOAT) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out.at(0) + "_node");
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

void GraphAttr(onnx::NodeProto* n, const char* name, onnx::GraphProto g) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = std::move(g);
}

// h_final = Loop(3 times) { h = Tanh(MatMul(h, W) + x) } with an If inside
// the body on graph input `flip`: then h * 2 (Add h + h), else Relu(MatMul(h, V)).
// Nothing at the top level can run on vnpu, so the main context sits in a body.
onnx::ModelProto LoopModel() {
  ModelBuilder b;
  b.Input("x", {1, 8}).Input("h0", {1, 8}).Input("flip", {}, onnx::TensorProto::BOOL);
  b.Output("h_final", {1, 8});
  b.Init("W", {8, 8}, -0.05f).Init("V", {8, 8}, -0.02f);
  auto* trip = b.model().mutable_graph()->add_initializer();
  trip->set_name("trip");
  trip->set_data_type(onnx::TensorProto::INT64);
  trip->add_int64_data(3);

  onnx::GraphProto then_g, else_g, body;
  then_g.set_name("then");
  AddNode(&then_g, "Add", {"h1", "h1"}, {"t_out"});
  Fill(then_g.add_output(), "t_out", {1, 8});
  else_g.set_name("else");
  AddNode(&else_g, "MatMul", {"h1", "V"}, {"e_mm"});
  AddNode(&else_g, "Relu", {"e_mm"}, {"e_out"});
  Fill(else_g.add_output(), "e_out", {1, 8});

  body.set_name("step");
  Fill(body.add_input(), "i", {}, onnx::TensorProto::INT64);
  Fill(body.add_input(), "c_in", {}, onnx::TensorProto::BOOL);
  Fill(body.add_input(), "h", {1, 8});
  AddNode(&body, "MatMul", {"h", "W"}, {"hw"});
  AddNode(&body, "Add", {"hw", "x"}, {"s"});
  AddNode(&body, "Tanh", {"s"}, {"h1"});
  auto* iff = AddNode(&body, "If", {"flip"}, {"h2"});
  GraphAttr(iff, "then_branch", then_g);
  GraphAttr(iff, "else_branch", else_g);
  AddNode(&body, "Identity", {"c_in"}, {"c_out"});
  Fill(body.add_output(), "c_out", {}, onnx::TensorProto::BOOL);
  Fill(body.add_output(), "h2", {1, 8});

  auto& loop = b.Node("Loop", {"trip", "", "h0"}, {"h_final"}, "loop");
  GraphAttr(&loop, "body", body);
  return b.model();
}

CompileResult Compile(const onnx::ModelProto& m, const std::string& ep) {
  CompileSettings s;
  s.ep = ep;
  s.output_to_memory = true;
  s.config.emplace_back("ep.context_embed_mode", "1");
  return CompileModel(ModelInput::FromBuffer(m.SerializeAsString(), "loop.onnx"), s);
}

void ForEachNode(const onnx::GraphProto& g, const std::function<void(const onnx::NodeProto&)>& f) {
  for (const auto& n : g.node()) {
    f(n);
    for (const auto& a : n.attribute())
      if (a.has_g()) ForEachNode(a.g(), f);
  }
}

int64_t IntAttr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return -1;
}

void body_partitions_become_epcontext_nodes_in_the_bodies(void**) {
  CompileResult r = Compile(LoopModel(), "vnpu");
  assert_true(r.ok());
  const ModelReport& rep = r.models.at(0);
  assert_true(rep.written);
  // Loop body: {MatMul, Add, Tanh}; else branch: {MatMul, Relu}; then: {Add}.
  assert_int_equal(rep.partitions, 3);
  assert_true(rep.macs_total > 0);
  assert_int_equal(rep.macs_npu, rep.macs_total);
  onnx::ModelProto ctx;
  assert_true(ctx.ParseFromString(rep.model_data));
  onnx::checker::check_model(ctx);
  std::set<std::string> names;
  int mains = 0, top_level = 0;
  for (const auto& n : ctx.graph().node()) top_level += n.op_type() == "EPContext";
  ForEachNode(ctx.graph(), [&](const onnx::NodeProto& n) {
    if (n.op_type() != "EPContext") return;
    names.insert(n.name());
    mains += IntAttr(n, "main_context") == 1;
  });
  assert_int_equal(top_level, 0);
  assert_int_equal(names.size(), 3);  // unique
  assert_int_equal(mains, 1);
}

std::vector<float> Run(epctx_env* env, const std::string& model, bool flip, size_t* driver_nodes) {
  epctx_session* s = nullptr;
  epctx_status* st = epctx_session_create_from_buffer(env, model.data(), model.size(), nullptr, &s);
  if (st) fail_msg("create: %s", epctx_status_message(st));
  float x[8], h0[8];
  for (int i = 0; i < 8; ++i) {
    x[i] = 0.1f * float(i) - 0.3f;
    h0[i] = 0.05f * float(i);
  }
  uint8_t fl = flip ? 1 : 0;
  int64_t d2[2] = {1, 8};
  epctx_tensor *tx, *th, *tf, *out = nullptr;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, d2, 2, x, sizeof x, &tx));
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, d2, 2, h0, sizeof h0, &th));
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_BOOL, nullptr, 0, &fl, 1, &tf));
  const char* names[3] = {"x", "h0", "flip"};
  const epctx_tensor* ins[3] = {tx, th, tf};
  st = epctx_session_run(s, names, ins, 3, nullptr, &out, 1);
  if (st) fail_msg("run: %s", epctx_status_message(st));
  const float* y = static_cast<const float*>(epctx_tensor_data(out));
  std::vector<float> v(y, y + 8);
  *driver_nodes = epctx_session_driver_node_count(s);
  epctx_tensor_release(out);
  epctx_tensor_release(tx);
  epctx_tensor_release(th);
  epctx_tensor_release(tf);
  epctx_session_release(s);
  return v;
}

void body_epcontext_nodes_run_on_vnpu_like_the_cpu(void**) {
  CompileResult npu = Compile(LoopModel(), "vnpu");
  CompileResult cpu = Compile(LoopModel(), "none");
  assert_true(npu.ok() && cpu.ok());
  epctx_env* env = nullptr;
  assert_null(epctx_env_create(nullptr, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  for (bool flip : {true, false}) {
    size_t dn = 0, cn = 0;
    std::vector<float> a = Run(env, npu.models[0].model_data, flip, &dn);
    std::vector<float> b = Run(env, cpu.models[0].model_data, flip, &cn);
    assert_int_equal(dn, 3);  // the 3 EPContext nodes in the Loop's and Ifs' bodies
    assert_int_equal(cn, 0);
    for (size_t i = 0; i < 8; ++i)
      if (std::fabs(a[i] - b[i]) > 1e-5f * (1 + std::fabs(b[i])))
        fail_msg("flip=%d element %zu: vnpu %g, cpu %g", int(flip), i, a[i], b[i]);
  }
  epctx_env_release(env);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(body_partitions_become_epcontext_nodes_in_the_bodies),
      cmocka_unit_test(body_epcontext_nodes_run_on_vnpu_like_the_cpu),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
