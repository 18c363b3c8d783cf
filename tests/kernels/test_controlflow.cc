// SPDX-License-Identifier: Apache-2.0
// Control flow through whole sessions (If, Loop, Scan with subgraphs): the
// nesting limit, outer-scope resolution, allocation failure inside a body,
// concurrent runs, and edge cases the node suite does not reach. Models are
// written here as protobuf bytes and run through the public C API.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <epctx/epctx.h>

namespace {

// ---- a minimal ONNX protobuf writer ----

struct Pb {
  std::string b;
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      b.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    b.push_back(static_cast<char>(v));
  }
  Pb& Int(int field, uint64_t v) {
    Varint(static_cast<uint64_t>(field) << 3);
    Varint(v);
    return *this;
  }
  Pb& Bytes(int field, const std::string& s) {
    Varint((static_cast<uint64_t>(field) << 3) | 2);
    Varint(s.size());
    b += s;
    return *this;
  }
  Pb& Msg(int field, const Pb& m) { return Bytes(field, m.b); }
};

enum { kF32 = 1, kI64 = 7, kBool = 9 };

Pb ValueInfo(const std::string& name, int dtype, const std::vector<int64_t>& dims,
             bool shaped = true) {
  Pb shape;
  for (int64_t d : dims) shape.Msg(1, Pb().Int(1, static_cast<uint64_t>(d)));
  Pb tensor;
  tensor.Int(1, dtype);
  if (shaped) tensor.Msg(2, shape);
  return Pb().Bytes(1, name).Msg(2, Pb().Msg(1, tensor));
}

template <typename T>
Pb Tensor(const std::string& name, int dtype, const std::vector<int64_t>& dims,
          const std::vector<T>& values) {
  Pb t;
  for (int64_t d : dims) t.Int(1, static_cast<uint64_t>(d));
  t.Int(2, dtype).Bytes(8, name);
  t.Bytes(9, std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
  return t;
}

struct Attr {
  Pb pb;
};
Attr GraphAttr(const std::string& name, const Pb& g) {
  return {Pb().Bytes(1, name).Int(20, 5).Msg(6, g)};
}
Attr IntAttr(const std::string& name, int64_t v) {
  return {Pb().Bytes(1, name).Int(20, 2).Int(3, static_cast<uint64_t>(v))};
}
Attr IntsAttr(const std::string& name, const std::vector<int64_t>& v) {
  Pb a;
  a.Bytes(1, name).Int(20, 7);
  for (int64_t x : v) a.Int(8, static_cast<uint64_t>(x));
  return {a};
}

Pb Node(const std::string& op, const std::vector<std::string>& ins,
        const std::vector<std::string>& outs, const std::string& name,
        const std::vector<Attr>& attrs = {}) {
  Pb n;
  for (const auto& i : ins) n.Bytes(1, i);
  for (const auto& o : outs) n.Bytes(2, o);
  n.Bytes(3, name).Bytes(4, op);
  for (const auto& a : attrs) n.Msg(5, a.pb);
  return n;
}

struct Graph {
  std::vector<Pb> nodes, inits, inputs, outputs;
  Pb Build(const std::string& name) const {
    Pb g;
    for (const auto& n : nodes) g.Msg(1, n);
    g.Bytes(2, name);
    for (const auto& t : inits) g.Msg(5, t);
    for (const auto& v : inputs) g.Msg(11, v);
    for (const auto& v : outputs) g.Msg(12, v);
    return g;
  }
};

std::string Model(const Pb& graph, int64_t opset = 13) {
  Pb m;
  m.Int(1, 8).Msg(7, graph).Msg(8, Pb().Bytes(1, "").Int(2, static_cast<uint64_t>(opset)));
  return m.b;
}

// ---- running ----

// Counts live allocations; fails the allocation numbered fail_at (from when
// it was armed) and every later one.
struct CountingAlloc {
  std::atomic<long> live{0};
  std::atomic<long> count{0};
  std::atomic<long> fail_at{-1};
  static void* Alloc(void* user, size_t size, size_t alignment) {
    auto* c = static_cast<CountingAlloc*>(user);
    long n = c->count++;
    if (c->fail_at >= 0 && n >= c->fail_at) return nullptr;
    void* p = nullptr;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if (posix_memalign(&p, alignment, size)) return nullptr;
    ++c->live;
    return p;
  }
  static void Free(void* user, void* p) {
    if (!p) return;
    --static_cast<CountingAlloc*>(user)->live;
    free(p);
  }
};

struct Result {
  int code = 0;
  std::string message;
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<int64_t>> shapes;
};

void TakeStatus(epctx_status* st, Result* r) {
  if (!st) return;
  r->code = epctx_status_code(st);
  r->message = epctx_status_message(st);
  epctx_status_release(st);
}

struct Input {
  std::string name;
  int dtype;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

Input FloatIn(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
  Input in{name, kF32, std::move(dims), {}};
  in.bytes.resize(v.size() * 4);
  memcpy(in.bytes.data(), v.data(), in.bytes.size());
  return in;
}

// Runs a loaded session once with these inputs, collecting float outputs.
Result RunOnce(epctx_env* env, epctx_session* s, const std::vector<Input>& inputs) {
  Result r;
  std::vector<epctx_tensor*> ins;
  std::vector<const char*> names;
  for (const auto& in : inputs) {
    epctx_tensor* t = nullptr;
    TakeStatus(epctx_tensor_wrap(env, static_cast<epctx_dtype>(in.dtype), in.dims.data(),
                                 in.dims.size(), const_cast<uint8_t*>(in.bytes.data()),
                                 in.bytes.size(), &t),
               &r);
    if (r.code) {
      for (auto* done : ins) epctx_tensor_release(done);
      return r;
    }
    ins.push_back(t);
    names.push_back(in.name.c_str());
  }
  size_t n_out = epctx_session_output_count(s);
  std::vector<epctx_tensor*> outs(n_out, nullptr);
  TakeStatus(
      epctx_session_run(s, names.data(), ins.data(), ins.size(), nullptr, outs.data(), n_out), &r);
  for (auto* t : ins) epctx_tensor_release(t);
  if (r.code) return r;
  for (auto* t : outs) {
    const int64_t* d = epctx_tensor_dims(t);
    r.shapes.emplace_back(d, d + epctx_tensor_rank(t));
    std::vector<float> v;
    if (epctx_tensor_dtype(t) == EPCTX_DTYPE_FLOAT) {
      const float* p = static_cast<const float*>(epctx_tensor_data(t));
      v.assign(p, p + epctx_tensor_bytes(t) / 4);
    }
    r.floats.push_back(v);
    epctx_tensor_release(t);
  }
  return r;
}

// Creates a session on `model` (an env with the default allocator) and runs it.
Result CreateAndRun(const std::string& model, const std::vector<Input>& inputs) {
  epctx_env* env = nullptr;
  Result r;
  TakeStatus(epctx_env_create(nullptr, 0, &env), &r);
  if (r.code) return r;
  epctx_session* s = nullptr;
  TakeStatus(epctx_session_create_from_buffer(env, model.data(), model.size(), nullptr, &s), &r);
  if (!r.code) r = RunOnce(env, s, inputs);
  epctx_session_release(s);
  epctx_env_release(env);
  return r;
}

bool Has(const std::string& haystack, const char* needle) {
  if (haystack.find(needle) != std::string::npos) return true;
  fprintf(stderr, "'%s' not in: %s\n", needle, haystack.c_str());
  return false;
}

// ---- models ----

// `levels` nested Ifs (if0 in the main graph, if<k> inside the branches of
// if<k-1>); the innermost branches return Identity(w) of a top-level
// initializer, so every level captures it.
std::string NestedIfs(int levels) {
  Pb inner;
  {
    Graph g;
    g.nodes.push_back(Node("Identity", {"w"}, {"leaf_out"}, "leaf"));
    g.outputs.push_back(ValueInfo("leaf_out", kF32, {2}));
    inner = g.Build("leaf");
  }
  for (int k = levels - 1; k >= 1; --k) {
    Graph g;
    std::string out = "out" + std::to_string(k);
    g.nodes.push_back(Node("If", {"c"}, {out}, "if" + std::to_string(k),
                           {GraphAttr("then_branch", inner), GraphAttr("else_branch", inner)}));
    g.outputs.push_back(ValueInfo(out, kF32, {2}));
    inner = g.Build("level" + std::to_string(k));
  }
  Graph m;
  m.inputs.push_back(ValueInfo("c", kBool, {}));
  m.inits.push_back(Tensor<float>("w", kF32, {2}, {1.5f, -2.5f}));
  m.nodes.push_back(Node("If", {"c"}, {"y"}, "if0",
                         {GraphAttr("then_branch", inner), GraphAttr("else_branch", inner)}));
  m.outputs.push_back(ValueInfo("y", kF32, {2}));
  return Model(m.Build("nested"));
}

Input BoolIn(const std::string& name, bool v) {
  return Input{name, kBool, {}, {static_cast<uint8_t>(v)}};
}

// Loop: s = s * 2 + x (x a graph input read from the body), scan output s.
// M and cond as given ("" to omit); body cond_out = cond_in.
std::string DoublingLoop(const std::string& m_name, int64_t trips, int body_outputs = 3) {
  Graph body;
  body.inputs = {ValueInfo("i", kI64, {}), ValueInfo("cond_in", kBool, {}),
                 ValueInfo("s_in", kF32, {2})};
  body.nodes.push_back(Node("Identity", {"cond_in"}, {"cond_out"}, "keep"));
  body.nodes.push_back(Node("Mul", {"s_in", "two"}, {"doubled"}, "double"));
  body.nodes.push_back(Node("Add", {"doubled", "x"}, {"s_out"}, "feed"));
  body.nodes.push_back(Node("Identity", {"s_out"}, {"scan_out"}, "record"));
  body.outputs = {ValueInfo("cond_out", kBool, {}), ValueInfo("s_out", kF32, {2}),
                  ValueInfo("scan_out", kF32, {2})};
  body.outputs.resize(body_outputs);
  Graph m;
  m.inputs = {ValueInfo("x", kF32, {2}), ValueInfo("s0", kF32, {2})};
  m.inits.push_back(Tensor<float>("two", kF32, {}, {2.0f}));
  if (!m_name.empty()) m.inits.push_back(Tensor<int64_t>(m_name, kI64, {}, {trips}));
  m.nodes.push_back(Node("Loop", {m_name, "", "s0"}, {"s_final", "history"}, "loop",
                         {GraphAttr("body", body.Build("body"))}));
  m.outputs = {ValueInfo("s_final", kF32, {2}), ValueInfo("history", kF32, {})};
  m.outputs[1] = ValueInfo("history", kF32, {}, false);
  return Model(m.Build("doubling"));
}

// ---- tests ----

void nested_ifs_at_the_depth_limit_run(void**) {
  // if0 .. if15: subgraphs 16 deep, the limit.
  Result r = CreateAndRun(NestedIfs(16), {BoolIn("c", true)});
  assert_int_equal(r.code, 0);
  assert_int_equal(r.floats[0].size(), 2);
  assert_true(r.floats[0][0] == 1.5f && r.floats[0][1] == -2.5f);
}

void nesting_past_the_limit_is_invalid_graph_naming_the_node(void**) {
  Result r = CreateAndRun(NestedIfs(17), {BoolIn("c", true)});
  assert_int_equal(r.code, EPCTX_INVALID_GRAPH);
  // if16 sits at depth 16; its branches would be the 17th level.
  assert_true(Has(r.message, "node 'if16'"));
  assert_true(Has(r.message, "limit of 16"));
}

void a_name_no_scope_defines_is_invalid_graph(void**) {
  Graph then_g;
  then_g.nodes.push_back(Node("Add", {"w", "nowhere"}, {"t"}, "bad_add"));
  then_g.outputs.push_back(ValueInfo("t", kF32, {2}));
  Graph else_g;
  else_g.nodes.push_back(Node("Identity", {"w"}, {"e"}, "ok"));
  else_g.outputs.push_back(ValueInfo("e", kF32, {2}));
  Graph m;
  m.inputs.push_back(ValueInfo("c", kBool, {}));
  m.inits.push_back(Tensor<float>("w", kF32, {2}, {1, 2}));
  m.nodes.push_back(Node("If", {"c"}, {"y"}, "switch",
                         {GraphAttr("then_branch", then_g.Build("then")),
                          GraphAttr("else_branch", else_g.Build("else"))}));
  m.outputs.push_back(ValueInfo("y", kF32, {2}));
  Result r = CreateAndRun(Model(m.Build("unresolved")), {BoolIn("c", false)});
  // Refused at creation, even though this run would take the other branch.
  assert_int_equal(r.code, EPCTX_INVALID_GRAPH);
  assert_true(Has(r.message, "attribute 'then_branch' of If node 'switch'"));
  assert_true(Has(r.message, "node 'bad_add' (Add) input 'nowhere'"));
  assert_true(Has(r.message, "enclosing"));
}

void a_subgraph_output_may_be_an_outer_value(void**) {
  // then_branch returns the graph input itself; else_branch a top-level
  // initializer: neither is produced inside the branch.
  Graph then_g;
  then_g.outputs.push_back(ValueInfo("x", kF32, {2}));
  Graph else_g;
  else_g.outputs.push_back(ValueInfo("w", kF32, {2}));
  Graph m;
  m.inputs = {ValueInfo("c", kBool, {}), ValueInfo("x", kF32, {2})};
  m.inits.push_back(Tensor<float>("w", kF32, {2}, {7, 8}));
  m.nodes.push_back(Node("If", {"c"}, {"y"}, "pick",
                         {GraphAttr("then_branch", then_g.Build("then")),
                          GraphAttr("else_branch", else_g.Build("else"))}));
  m.outputs.push_back(ValueInfo("y", kF32, {2}));
  std::string model = Model(m.Build("passthrough"));
  Result r = CreateAndRun(model, {BoolIn("c", true), FloatIn("x", {2}, {3, 4})});
  assert_int_equal(r.code, 0);
  assert_true(r.floats[0][0] == 3 && r.floats[0][1] == 4);
  r = CreateAndRun(model, {BoolIn("c", false), FloatIn("x", {2}, {3, 4})});
  assert_int_equal(r.code, 0);
  assert_true(r.floats[0][0] == 7 && r.floats[0][1] == 8);
}

void a_body_reading_a_later_node_runs_after_it(void**) {
  // The If comes first in the file; the value its branch reads is produced
  // by the Relu after it. The implicit input orders the If second.
  Graph then_g;
  then_g.nodes.push_back(Node("Neg", {"late"}, {"t"}, "neg"));
  then_g.outputs.push_back(ValueInfo("t", kF32, {2}));
  Graph else_g;
  else_g.nodes.push_back(Node("Identity", {"late"}, {"e"}, "id"));
  else_g.outputs.push_back(ValueInfo("e", kF32, {2}));
  Graph m;
  m.inputs = {ValueInfo("c", kBool, {}), ValueInfo("x", kF32, {2})};
  m.nodes.push_back(Node("If", {"c"}, {"y"}, "early_if",
                         {GraphAttr("then_branch", then_g.Build("then")),
                          GraphAttr("else_branch", else_g.Build("else"))}));
  m.nodes.push_back(Node("Relu", {"x"}, {"late"}, "relu"));
  m.outputs.push_back(ValueInfo("y", kF32, {2}));
  Result r =
      CreateAndRun(Model(m.Build("unsorted")), {BoolIn("c", true), FloatIn("x", {2}, {-1, 5})});
  assert_int_equal(r.code, 0);
  assert_true(r.floats[0][0] == 0 && r.floats[0][1] == -5);
}

void loop_carries_state_and_stacks_scan_outputs(void**) {
  Result r =
      CreateAndRun(DoublingLoop("M", 3), {FloatIn("x", {2}, {1, -1}), FloatIn("s0", {2}, {0, 1})});
  assert_int_equal(r.code, 0);
  // s: [1,1] -> [3,1] -> [7,1]
  assert_true(r.floats[0] == std::vector<float>({7, 1}));
  assert_true(r.shapes[1] == std::vector<int64_t>({3, 2}));
  assert_true(r.floats[1] == std::vector<float>({1, 1, 3, 1, 7, 1}));
}

void loop_without_iterations_keeps_the_initial_state_and_empty_scan_output(void**) {
  Result r =
      CreateAndRun(DoublingLoop("M", 0), {FloatIn("x", {2}, {1, -1}), FloatIn("s0", {2}, {4, 5})});
  assert_int_equal(r.code, 0);
  assert_true(r.floats[0] == std::vector<float>({4, 5}));
  // [0] then the body's declared per-iteration shape [2], as ORT does.
  assert_true(r.shapes[1] == std::vector<int64_t>({0, 2}));
}

void loop_with_a_body_of_the_wrong_arity_is_invalid_graph(void**) {
  Result r = CreateAndRun(DoublingLoop("M", 2, 2),
                          {FloatIn("x", {2}, {1, -1}), FloatIn("s0", {2}, {4, 5})});
  assert_int_equal(r.code, EPCTX_INVALID_GRAPH);
  assert_true(Has(r.message, "Loop node 'loop'"));
  assert_true(Has(r.message, "found 3 and 2"));
}

void allocation_failure_inside_a_body_is_clean(void**) {
  std::string model = DoublingLoop("M", 4);
  std::vector<Input> inputs = {FloatIn("x", {2}, {1, -1}), FloatIn("s0", {2}, {0, 1})};
  bool body_failed = false;
  int ok_runs = 0;
  for (long fail_at = 0; fail_at < 200 && ok_runs < 3; ++fail_at) {
    CountingAlloc counter;
    epctx_allocator a{&counter, CountingAlloc::Alloc, CountingAlloc::Free};
    epctx_env* env = nullptr;
    Result r;
    TakeStatus(epctx_env_create(&a, 0, &env), &r);
    assert_int_equal(r.code, 0);
    epctx_session* s = nullptr;
    TakeStatus(epctx_session_create_from_buffer(env, model.data(), model.size(), nullptr, &s), &r);
    assert_int_equal(r.code, 0);
    counter.count = 0;
    counter.fail_at = fail_at;  // the run's allocation number fail_at fails
    r = RunOnce(env, s, inputs);
    counter.fail_at = -1;
    if (r.code == 0) {
      ++ok_runs;
      assert_true(r.floats[0] == std::vector<float>({15, 1}));
    } else {
      assert_int_equal(r.code, EPCTX_OUT_OF_MEMORY);
      body_failed = body_failed ||
                    r.message.find("attribute 'body' of Loop node 'loop'") != std::string::npos;
    }
    epctx_session_release(s);
    epctx_env_release(env);
    assert_int_equal(counter.live.load(), 0);  // nothing leaked, whatever failed
  }
  assert_true(ok_runs > 0);
  assert_true(body_failed);
}

void scan_with_a_bad_num_scan_inputs_is_invalid_graph(void**) {
  Graph body;
  body.inputs = {ValueInfo("s_in", kF32, {2}), ValueInfo("x_t", kF32, {2})};
  body.nodes.push_back(Node("Add", {"s_in", "x_t"}, {"s_out"}, "add"));
  body.outputs = {ValueInfo("s_out", kF32, {2})};
  for (int64_t m_attr : {0, 3}) {
    Graph m;
    m.inputs = {ValueInfo("s0", kF32, {2}), ValueInfo("xs", kF32, {3, 2})};
    m.nodes.push_back(
        Node("Scan", {"s0", "xs"}, {"s"}, "scan",
             {GraphAttr("body", body.Build("body")), IntAttr("num_scan_inputs", m_attr)}));
    m.outputs = {ValueInfo("s", kF32, {2})};
    Result r = CreateAndRun(Model(m.Build("scan")), {FloatIn("s0", {2}, {0, 0}),
                                                     FloatIn("xs", {3, 2}, {1, 2, 3, 4, 5, 6})});
    assert_int_equal(r.code, EPCTX_INVALID_GRAPH);
    assert_true(Has(r.message, "num_scan_inputs"));
  }
}

void scan_axis_out_of_range_is_invalid_argument(void**) {
  Graph body;
  body.inputs = {ValueInfo("s_in", kF32, {2}), ValueInfo("x_t", kF32, {2})};
  body.nodes.push_back(Node("Add", {"s_in", "x_t"}, {"s_out"}, "add"));
  body.outputs = {ValueInfo("s_out", kF32, {2})};
  Graph m;
  m.inputs = {ValueInfo("s0", kF32, {2}), ValueInfo("xs", kF32, {3, 2})};
  m.nodes.push_back(Node("Scan", {"s0", "xs"}, {"s"}, "scan",
                         {GraphAttr("body", body.Build("body")), IntAttr("num_scan_inputs", 1),
                          IntsAttr("scan_input_axes", {2})}));
  m.outputs = {ValueInfo("s", kF32, {2})};
  Result r = CreateAndRun(Model(m.Build("scan")),
                          {FloatIn("s0", {2}, {0, 0}), FloatIn("xs", {3, 2}, {1, 2, 3, 4, 5, 6})});
  assert_int_equal(r.code, EPCTX_INVALID_ARGUMENT);
  assert_true(Has(r.message, "scan_input_axes"));
}

void scan8_rows_shorter_than_the_batch_are_zero_padded(void**) {
  // Scan-8: batch 2, sequence 3, sequence_lens [3, 1]; body s += x, y = s.
  Graph body;
  body.inputs = {ValueInfo("s_in", kF32, {1}), ValueInfo("x_t", kF32, {1})};
  body.nodes.push_back(Node("Add", {"s_in", "x_t"}, {"s_out"}, "add"));
  body.nodes.push_back(Node("Identity", {"s_out"}, {"y_t"}, "copy"));
  body.outputs = {ValueInfo("s_out", kF32, {1}), ValueInfo("y_t", kF32, {1})};
  Graph m;
  m.inputs = {ValueInfo("s0", kF32, {2, 1}), ValueInfo("xs", kF32, {2, 3, 1})};
  m.inits.push_back(Tensor<int64_t>("lens", kI64, {2}, {3, 1}));
  m.nodes.push_back(Node("Scan", {"lens", "s0", "xs"}, {"s", "ys"}, "scan8",
                         {GraphAttr("body", body.Build("body")), IntAttr("num_scan_inputs", 1)}));
  m.outputs = {ValueInfo("s", kF32, {2, 1}), ValueInfo("ys", kF32, {2, 3, 1})};
  Result r =
      CreateAndRun(Model(m.Build("scan8"), 8),
                   {FloatIn("s0", {2, 1}, {0, 10}), FloatIn("xs", {2, 3, 1}, {1, 2, 3, 4, 5, 6})});
  assert_int_equal(r.code, 0);
  assert_true(r.floats[0] == std::vector<float>({6, 14}));
  assert_true(r.shapes[1] == std::vector<int64_t>({2, 3, 1}));
  assert_true(r.floats[1] == std::vector<float>({1, 3, 6, 14, 0, 0}));
}

#if EPCTX_TEST_THREADS
void concurrent_runs_of_one_loop_session_agree(void**) {
  std::string model = DoublingLoop("M", 6);
  epctx_env* env = nullptr;
  Result setup;
  TakeStatus(epctx_env_create(nullptr, 0, &env), &setup);
  epctx_session* s = nullptr;
  TakeStatus(epctx_session_create_from_buffer(env, model.data(), model.size(), nullptr, &s),
             &setup);
  assert_int_equal(setup.code, 0);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        float x = static_cast<float>(t + i);
        Result r = RunOnce(env, s, {FloatIn("x", {2}, {x, -x}), FloatIn("s0", {2}, {0, 0})});
        // s_k = 2 s_{k-1} + x from 0, six times: 63 x.
        if (r.code || r.floats[0] != std::vector<float>({63 * x, -63 * x})) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  epctx_session_release(s);
  epctx_env_release(env);
  assert_int_equal(wrong.load(), 0);
}
#endif

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(nested_ifs_at_the_depth_limit_run),
    cmocka_unit_test(nesting_past_the_limit_is_invalid_graph_naming_the_node),
    cmocka_unit_test(a_name_no_scope_defines_is_invalid_graph),
    cmocka_unit_test(a_subgraph_output_may_be_an_outer_value),
    cmocka_unit_test(a_body_reading_a_later_node_runs_after_it),
    cmocka_unit_test(loop_carries_state_and_stacks_scan_outputs),
    cmocka_unit_test(loop_without_iterations_keeps_the_initial_state_and_empty_scan_output),
    cmocka_unit_test(loop_with_a_body_of_the_wrong_arity_is_invalid_graph),
    cmocka_unit_test(allocation_failure_inside_a_body_is_clean),
    cmocka_unit_test(scan_with_a_bad_num_scan_inputs_is_invalid_graph),
    cmocka_unit_test(scan_axis_out_of_range_is_invalid_argument),
    cmocka_unit_test(scan8_rows_shorter_than_the_batch_are_zero_padded),
#if EPCTX_TEST_THREADS
    cmocka_unit_test(concurrent_runs_of_one_loop_session_agree),
#endif
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
