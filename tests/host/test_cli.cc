// SPDX-License-Identifier: Apache-2.0
// epctx-compile specialisation and command line: naming, refusal, errors,
// --input-shape, --ep none. argv[1] is the path of the epctx-compile binary.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "epctx_host/compile_api.h"
#include "epctx_host/model_io.h"
#include "epctx_host/specialize.h"
#include "model_builder.h"
#include "test_util.h"

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

std::string g_tool;
std::string g_dir;

std::string Path(const std::string& name) { return g_dir + "/" + name; }

// Whole files and child processes through tests/e2e/test_util.h.
std::string Slurp(const std::string& path) {
  size_t size = 0;
  unsigned char* data = tu_read_file(path.c_str(), &size);
  std::string bytes = data ? std::string(reinterpret_cast<char*>(data), size) : std::string();
  free(data);
  return bytes;
}

void Spit(const std::string& path, const std::string& bytes) {
  tu_write_file(path.c_str(), bytes.data(), bytes.size());
}

struct RunResult {
  int code = -1;  // the exit code; 128 + the signal; -1 when it did not start
  std::string out, err;
};

RunResult Run(const std::vector<std::string>& args) {
  std::vector<const char*> argv{g_tool.c_str()};
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  tu_proc p;
  RunResult r;
  if (tu_run(argv.data(), g_dir.c_str(), &p) == 0) {
    r.code = p.exited ? p.exit_code : 128 + p.signal;
    r.out = p.out;
    r.err = p.err;
  }
  tu_proc_free(&p);
  return r;
}

size_t Lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// x[N,3,4,4] -> Relu -> Shape -> Reshape(r, shape) -> Softsign -> y, plus a
// Constant node feeding an Add.
onnx::ModelProto SmallModel() {
  ModelBuilder b;
  b.Input("x", {-1, 3, 4, 4}).Output("y", {-1, 48});
  b.Node("Relu", {"x"}, {"r"});
  auto& c = b.Node("Constant", {}, {"k"});
  auto* a = c.add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(1.0f);
  b.Node("Add", {"r", "k"}, {"s"});
  b.InitI64("new_shape", {0, 48});
  b.Node("Reshape", {"s", "new_shape"}, {"f"});
  b.Node("Softsign", {"f"}, {"y"});
  return b.model();
}

std::string WriteModel(const std::string& name, const onnx::ModelProto& m) {
  std::string p = Path(name);
  Spit(p, m.SerializeAsString());
  return p;
}

void default_output_replaces_extension(void**) {
  assert_string_equal(DefaultOutputPath("dir/model.onnx").c_str(), "dir/model_ctx.onnx");
  assert_string_equal(DefaultOutputPath("model").c_str(), "model_ctx.onnx");
  assert_string_equal(DefaultOutputPath("a.b/m.v2.onnx").c_str(), "a.b/m.v2_ctx.onnx");
  assert_string_equal(PathStem("/x/y/model.onnx").c_str(), "model");
}

void cli_writes_default_and_explicit_output(void**) {
  std::string in = WriteModel("named.onnx", SmallModel());
  RunResult r = Run({in, "--ep", "none", "--quiet"});
  assert_int_equal(r.code, 0);
  assert_true(FileExists(Path("named_ctx.onnx")));
  assert_int_equal(Lines(r.out), 1);  // the summary
  assert_true(r.err.empty());
  r = Run({in, "--ep", "none", "-o", Path("elsewhere.onnx"), "--quiet"});
  assert_int_equal(r.code, 0);
  assert_true(FileExists(Path("elsewhere.onnx")));
}

void existing_output_is_refused_and_left_untouched(void**) {
  std::string in = WriteModel("exists.onnx", SmallModel());
  Spit(Path("exists_ctx.onnx"), "precious");
  RunResult r = Run({in, "--ep", "none"});
  assert_int_equal(r.code, 1);
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "epctx-compile: error: "));
  assert_non_null(strstr(r.err.c_str(), "exists already"));
  assert_string_equal(Slurp(Path("exists_ctx.onnx")).c_str(), "precious");
  r = Run({in, "--ep", "none", "--force", "--quiet"});
  assert_int_equal(r.code, 0);
  assert_string_not_equal(Slurp(Path("exists_ctx.onnx")).c_str(), "precious");
}

void missing_file_is_one_line_error(void**) {
  std::string in = Path("nothere.onnx");
  RunResult r = Run({in});
  assert_int_equal(r.code, 1);
  assert_string_equal(r.err.c_str(), ("epctx-compile: error: " + in + ": No such file\n").c_str());
}

void not_onnx_is_one_line_error(void**) {
  std::string in = Path("text.onnx");
  Spit(in, "hello, this is not a protobuf\n");
  RunResult r = Run({in});
  assert_int_equal(r.code, 1);
  assert_string_equal(
      r.err.c_str(),
      ("epctx-compile: error: " + in + ": not an ONNX model (protobuf parse failed)\n").c_str());
}

void truncated_model_is_one_line_error(void**) {
  std::string bytes = SmallModel().SerializeAsString();
  std::string in = Path("cut.onnx");
  Spit(in, bytes.substr(0, bytes.size() / 2));
  RunResult r = Run({in});
  assert_int_equal(r.code, 1);
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "truncated or corrupt ONNX model"));
}

void usage_errors_exit_2(void**) {
  RunResult r = Run({});
  assert_int_equal(r.code, 2);
  assert_int_equal(Lines(r.err), 1);
  r = Run({Path("a.onnx"), "--embed-mode", "7"});
  assert_int_equal(r.code, 2);
  r = Run({Path("a.onnx"), "--bogus"});
  assert_int_equal(r.code, 2);
  assert_non_null(strstr(r.err.c_str(), "unknown option '--bogus'"));
}

void input_shape_fixes_symbolic_dims(void**) {
  onnx::ModelProto m = SmallModel();
  ApplyInputShapes(*m.mutable_graph(), {ParseInputShape("x:2,3,4,4")}, "m.onnx");
  const auto& shape = m.graph().input(0).type().tensor_type().shape();
  assert_int_equal(shape.dim_size(), 4);
  assert_int_equal(shape.dim(0).dim_value(), 2);
  assert_int_equal(shape.dim(3).dim_value(), 4);

  // Through the tool: the output model's input is fixed and y is static.
  std::string in = WriteModel("shaped.onnx", SmallModel());
  RunResult r = Run({in, "--ep", "none", "--input-shape", "x:2,3,4,4", "--quiet"});
  assert_int_equal(r.code, 0);
  onnx::ModelProto out = LoadModel(Path("shaped_ctx.onnx"));
  assert_int_equal(out.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 2);
}

void input_shape_errors_name_the_inputs(void**) {
  onnx::ModelProto m = SmallModel();
  try {
    ApplyInputShapes(*m.mutable_graph(), {ParseInputShape("nope:1")}, "m.onnx");
    fail_msg("unknown input accepted");
  } catch (const ToolError& e) {
    assert_string_equal(e.what(), "--input-shape: no graph input 'nope' (inputs: x)");
  }
  try {
    ApplyInputShapes(*m.mutable_graph(), {ParseInputShape("x:1,2,3,4")}, "m.onnx");
    fail_msg("contradicting dim accepted");
  } catch (const ToolError& e) {
    assert_non_null(strstr(e.what(), "dimension 1 is fixed to 3"));
  }
  std::string in = WriteModel("badshape.onnx", SmallModel());
  RunResult r = Run({in, "--ep", "none", "--input-shape", "y:1", "--quiet"});
  assert_int_equal(r.code, 1);
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "(inputs: x)"));
  r = Run({in, "--input-shape", "x:1,a"});
  assert_int_equal(r.code, 2);
}

void specialise_lifts_constants_and_infers_static_shapes(void**) {
  onnx::ModelProto m = SmallModel();
  SpecializeOptions o;
  o.input_shapes = {ParseInputShape("x:1,3,4,4")};
  o.fold = false;  // independent of the runtime
  SpecializeStats s = Specialize(m, o, "m.onnx", Progress());
  assert_int_equal(s.constants_lifted, 1);
  GraphInfo info = BuildGraphInfo(m);
  assert_non_null(info.constant("k"));
  const ValueType* f = info.type("f");
  assert_non_null(f);
  assert_true(f->fully_static());
  assert_int_equal(f->dims.size(), 2);
  assert_int_equal(f->dims[1], 48);
  for (const auto& n : m.graph().node()) assert_string_not_equal(n.op_type().c_str(), "Constant");
}

void static_shape_node_folds_without_runtime(void**) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {6});
  b.Node("Shape", {"x"}, {"sh"});
  b.Node("ReduceProd", {"sh"}, {"n"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("keepdims");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(1);
    return a;
  }());
  b.Node("Reshape", {"x", "n"}, {"y"});
  onnx::ModelProto m = b.model();
  SpecializeOptions o;
  Specialize(m, o, "m.onnx", Progress());
  GraphInfo info = BuildGraphInfo(m);
  // Shape folded to [2, 3], ReduceProd of it to [6]; only the Reshape
  // stays, and the intermediate [2, 3] is dropped: nothing reads it.
  const onnx::TensorProto* n = info.constant("n");
  assert_non_null(n);
  assert_int_equal(n->raw_data().size(), 8);
  int64_t v = 0;
  std::memcpy(&v, n->raw_data().data(), 8);
  assert_int_equal(v, 6);
  assert_null(info.constant("sh"));
  assert_int_equal(m.graph().node_size(), 1);
  assert_string_equal(m.graph().node(0).op_type().c_str(), "Reshape");
}

void ep_none_output_has_no_epcontext_and_equals_folded_graph(void**) {
  std::string in = WriteModel("plain.onnx", SmallModel());
  RunResult r = Run({in, "--ep", "none", "--input-shape", "x:1,3,4,4", "--quiet"});
  assert_int_equal(r.code, 0);
  assert_non_null(strstr(r.out.c_str(), "0 partitions"));
  onnx::ModelProto out = LoadModel(Path("plain_ctx.onnx"));
  onnx::ModelProto folded = LoadModel(in);
  SpecializeOptions o;
  o.input_shapes = {ParseInputShape("x:1,3,4,4")};
  Specialize(folded, o, in, Progress());
  assert_int_equal(out.graph().node_size(), folded.graph().node_size());
  for (int i = 0; i < out.graph().node_size(); ++i) {
    assert_string_not_equal(out.graph().node(i).op_type().c_str(), "EPContext");
    assert_true(out.graph().node(i).SerializeAsString() ==
                folded.graph().node(i).SerializeAsString());
  }
  assert_true(out.graph().input(0).SerializeAsString() ==
              folded.graph().input(0).SerializeAsString());
  assert_int_equal(out.graph().initializer_size(), folded.graph().initializer_size());
  for (const auto& op : out.opset_import())
    assert_string_not_equal(op.domain().c_str(), "com.microsoft");
}

// x -> Relu -> r; If(c) whose branches multiply r by top-level initializers
// read nowhere else (a sample-rate switch).
onnx::ModelProto SwitchModel() {
  ModelBuilder b(13);
  b.Input("x", {4}).Input("c", {}, onnx::TensorProto::BOOL).Output("y", {4});
  b.Init("taps_hi", {4}, 2.0f).Init("taps_lo", {4}, 0.5f);
  b.Node("Relu", {"x"}, {"r"});
  auto& n = b.Node("If", {"c"}, {"y"}, "switch");
  for (const char* branch : {"then_branch", "else_branch"}) {
    const bool hi = branch[0] == 't';
    auto* a = n.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(hi ? "hi" : "lo");
    auto* mul = g->add_node();
    mul->set_op_type("Mul");
    mul->add_input("r");
    mul->add_input(hi ? "taps_hi" : "taps_lo");
    mul->add_output(hi ? "y_hi" : "y_lo");
    auto* out = g->add_output();
    out->set_name(mul->output(0));
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  return b.model();
}

void initializers_only_subgraphs_read_are_kept(void**) {
  std::string in = WriteModel("switch.onnx", SwitchModel());
  // vnpu with Mul disabled: the branches stay CPU subgraphs (vnpu would
  // otherwise compile them, packing the taps as weights).
  for (const char* ep : {"none", "vnpu"}) {
    std::string out = Path(std::string("switch_") + ep + "_ctx.onnx");
    RunResult r = Run({in, "--ep", ep, "-i", "disable_ops|Mul", "-o", out, "--quiet"});
    // The tool runs the ONNX checker on what it writes.
    assert_int_equal(r.code, 0);
    onnx::ModelProto m = LoadModel(out);
    std::vector<std::string> inits;
    for (const auto& t : m.graph().initializer()) inits.push_back(t.name());
    assert_true(std::find(inits.begin(), inits.end(), "taps_hi") != inits.end());
    assert_true(std::find(inits.begin(), inits.end(), "taps_lo") != inits.end());
    // With vnpu, Relu becomes an EPContext node whose output the If reads.
    int if_at = -1, producer_at = -1;
    for (int i = 0; i < m.graph().node_size(); ++i) {
      const auto& node = m.graph().node(i);
      if (node.op_type() == "If") if_at = i;
      for (const auto& o : node.output())
        if (o == "r") producer_at = i;
    }
    assert_true(producer_at >= 0 && producer_at < if_at);
  }
}

void branches_compile_to_epcontext_nodes_holding_their_initializers(void**) {
  std::string in = WriteModel("switch_b.onnx", SwitchModel());
  std::string out = Path("switch_b_ctx.onnx");
  RunResult r = Run({in, "--ep", "vnpu", "-o", out, "--quiet"});
  assert_int_equal(r.code, 0);
  onnx::ModelProto m = LoadModel(out);
  // The taps are packed into the context binary with their branch.
  assert_int_equal(m.graph().initializer_size(), 0);
  int branches = 0;
  for (const auto& node : m.graph().node())
    for (const auto& a : node.attribute()) {
      if (!a.has_g()) continue;
      assert_int_equal(a.g().node_size(), 1);
      assert_string_equal(a.g().node(0).op_type().c_str(), "EPContext");
      ++branches;
    }
  assert_int_equal(branches, 2);
}

void checker_errors_print_every_line(void**) {
  ModelBuilder b;
  b.Input("x", {4}).Output("y", {4});
  b.Node("Add", {"x", "nowhere"}, {"y"}, "bad_add");
  std::string in = WriteModel("unsorted.onnx", b.model());
  RunResult r = Run({in, "--ep", "none", "--quiet"});
  assert_int_equal(r.code, 1);
  // The checker names the node on a later line of its message: every line
  // is kept, joined into the one error line.
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "epctx-compile: error: "));
  assert_non_null(strstr(r.err.c_str(), "bad_add"));
  assert_non_null(strstr(r.err.c_str(), "is not output of any previous nodes"));
}

void all_constant_node_folds_through_the_runtime(void**) {
  ModelBuilder b;
  b.Input("x", {2}).Output("y", {2});
  b.Init("a", {2}, 2.0f).Init("b", {2}, 4.0f);
  b.Node("Mul", {"a", "b"}, {"ab"});
  b.Node("Add", {"x", "ab"}, {"y"});
  onnx::ModelProto m = b.model();
  SpecializeStats s = Specialize(m, SpecializeOptions(), "m.onnx", Progress());
  assert_int_equal(s.folded, 1);
  assert_int_equal(m.graph().node_size(), 1);
  GraphInfo info = BuildGraphInfo(m);
  const onnx::TensorProto* ab = info.constant("ab");
  assert_non_null(ab);
  assert_int_equal(ab->raw_data().size(), 8);
  float v[2];
  memcpy(v, ab->raw_data().data(), 8);
  assert_true(v[0] == 2.0f * 4.0f);
  assert_true(v[1] == 2.01f * 4.01f);
}

// x -> Conv -> Relu -> Softsign -> Conv -> y with the real vnpu backend.
onnx::ModelProto ConvChain() {
  ModelBuilder b;
  b.Input("x", {-1, 3, 4, 4}).Output("y", {-1, 3, 4, 4});
  b.Init("w", {3, 3, 1, 1});
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Softsign", {"r"}, {"s"});
  b.Node("Conv", {"s", "w"}, {"y"});
  return b.model();
}

// Issue 27: a model nothing of which runs on the backend is written with
// every node on the CPU, with one warning line, also with --quiet; with
// --error-if-no-compiled-nodes it is one error line, exit 1, no file.
void nothing_claimable_writes_a_cpu_model_and_warns(void**) {
  ModelBuilder b;
  b.Input("x", {1, 4}).Output("y", {1, 4});
  b.Node("Relu", {"x"}, {"y"});
  std::string in = WriteModel("cpu_only.onnx", b.model());
  RunResult r = Run({in, "-i", "disable_ops|Relu", "--quiet"});
  assert_int_equal(r.code, 0);
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "epctx-compile: warning: "));
  assert_non_null(strstr(r.err.c_str(), "no node can run on vnpu: every node runs on the CPU"));
  assert_non_null(strstr(r.out.c_str(), "0 on vnpu, 1 on CPU; 0 partitions"));
  onnx::ModelProto m = LoadModel(Path("cpu_only_ctx.onnx"));
  assert_int_equal(m.graph().node_size(), 1);
  assert_string_equal(m.graph().node(0).op_type().c_str(), "Relu");
  assert_false(FileExists(Path("cpu_only_vnpu.bin")));

  r = Run({in, "-i", "disable_ops|Relu", "--error-if-no-compiled-nodes", "-o",
           Path("cpu_only_err.onnx")});
  assert_int_equal(r.code, 1);
  // Progress notes go first; the error is the last line.
  assert_non_null(strstr(r.err.c_str(), "epctx-compile: error: "));
  assert_non_null(strstr(r.err.c_str(), "Unable to compile any nodes: no node can run on vnpu"));
  assert_false(FileExists(Path("cpu_only_err.onnx")));
  r = Run({in, "-i", "disable_ops|Relu", "--error-if-no-compiled-nodes", "--quiet", "-o",
           Path("cpu_only_err.onnx")});
  assert_int_equal(r.code, 1);
  assert_int_equal(Lines(r.err), 1);
}

void vnpu_compile_writes_bin_beside_the_model(void**) {
  std::string in = WriteModel("conv.onnx", ConvChain());
  RunResult r = Run({in, "--input-shape", "x:1,3,4,4", "--quiet", "-o", Path("out_ctx.onnx")});
  assert_int_equal(r.code, 0);
  assert_non_null(strstr(r.out.c_str(), "2 partitions"));
  std::string bin = Slurp(Path("conv_vnpu.bin"));
  assert_true(bin.size() > 4096);
  assert_memory_equal(bin.data(), "EPCTXBIN", 8);
  onnx::ModelProto out = LoadModel(Path("out_ctx.onnx"));
  assert_int_equal(out.graph().node_size(), 3);
  assert_string_equal(out.graph().node(0).op_type().c_str(), "EPContext");
  assert_string_equal(out.graph().node(0).attribute(1).s().c_str(), "conv_vnpu.bin");
}

void vnpu_embed_mode_payload_is_64_aligned_in_the_file(void**) {
  std::string in = WriteModel("emb.onnx", ConvChain());
  RunResult r = Run({in, "--input-shape", "x:1,3,4,4", "--quiet", "--embed-mode", "1"});
  assert_int_equal(r.code, 0);
  assert_false(FileExists(Path("emb_vnpu.bin")));
  std::string bytes = Slurp(Path("emb_ctx.onnx"));
  size_t off = bytes.find("EPCTXBIN");
  assert_true(off != std::string::npos);
  assert_int_equal(off % 64, 0);
}

// ConvChain's MACs: two 1x1 convolutions over [1,3,4,4] -> [1,3,4,4], each
// 48 outputs x 3 input channels.
void report_gives_macs_partitions_and_cpu_reasons(void**) {
  std::string in = WriteModel("report.onnx", ConvChain());
  RunResult r = Run({in, "--input-shape", "x:1,3,4,4", "--quiet", "--force"});
  assert_int_equal(r.code, 0);
  assert_non_null(strstr(r.out.c_str(), "288 MACs, 100.0% on vnpu"));
  r = Run({in, "--input-shape", "x:1,3,4,4", "--force", "--json"});
  assert_int_equal(r.code, 0);
  assert_non_null(strstr(r.err.c_str(), "nodes (Conv x1, Relu x1), 144 MACs"));
  assert_non_null(strstr(r.out.c_str(), "\"macs_total\": 288, \"macs_npu\": 288"));
  assert_non_null(strstr(r.out.c_str(), "\"op_types\": {\"Conv\": 1, \"Relu\": 1}"));
  assert_non_null(strstr(
      r.out.c_str(), "\"op_type\": \"Softsign\", \"reason\": \"vnpu: Softsign has no vnpu op\""));
  assert_int_equal(Lines(r.out), 1);
}

// A converter appends producers after their consumers; only a real cycle is
// refused, naming a node on it.
void unsorted_graph_is_sorted_and_only_cycles_refused(void**) {
  ModelBuilder b;
  b.Input("x", {1, 4}).Output("y", {1, 4});
  b.Node("Sqrt", {"r"}, {"y"}).set_name("last_in_order");
  b.Node("Relu", {"x"}, {"r"}).set_name("appended_producer");
  std::string in = WriteModel("unsorted.onnx", b.model());
  RunResult r = Run({in, "--ep", "none", "--quiet", "--force"});
  assert_int_equal(r.code, 0);
  onnx::ModelProto out = LoadModel(Path("unsorted_ctx.onnx"));
  assert_string_equal(out.graph().node(0).name().c_str(), "appended_producer");

  ModelBuilder c;
  c.Input("x", {1, 4}).Output("y", {1, 4});
  c.Node("Relu", {"b"}, {"a"}).set_name("ring_a");
  c.Node("Relu", {"a"}, {"b"}).set_name("ring_b");
  c.Node("Add", {"x", "a"}, {"y"}).set_name("reader");
  in = WriteModel("cycle.onnx", c.model());
  r = Run({in, "--ep", "none", "--quiet", "--force"});
  assert_int_equal(r.code, 1);
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "has a cycle: Relu node 'ring_"));
}

// The checker's message spans lines (the node on a line of its own): all of
// it is printed, on one line.
void checker_error_names_the_node_on_one_line(void**) {
  ModelBuilder b;
  b.Input("x", {1, 4}).Output("y", {1, 4});
  b.Node("Relu", {"nobody_makes_this"}, {"y"}).set_name("orphan_reader");
  std::string in = WriteModel("orphan.onnx", b.model());
  RunResult r = Run({in, "--ep", "none", "--quiet", "--force"});
  assert_int_equal(r.code, 1);
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "nobody_makes_this"));
  assert_non_null(strstr(r.err.c_str(), "orphan_reader"));
}

// Shape inference names a failing node by name only: an unnamed one is
// named by the output it produces.
void shape_inference_error_names_unnamed_node(void**) {
  ModelBuilder b;
  b.Input("x", {1, 2}).Input("w", {1, 2}).Output("z", {3, 2});
  auto& n = b.Node("Concat", {"x", "w"}, {"z"});
  n.set_name("");
  auto* a = n.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(0);
  std::string in = WriteModel("concat_mismatch.onnx", b.model());
  RunResult r = Run({in, "--ep", "none", "--quiet", "--force"});
  assert_int_equal(r.code, 1);
  assert_int_equal(Lines(r.err), 1);
  assert_non_null(strstr(r.err.c_str(), "shape inference failed"));
  assert_non_null(strstr(r.err.c_str(), "op_type:Concat, node name: producing 'z'"));
  assert_non_null(strstr(r.err.c_str(), "(2) vs (3)"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s path/to/epctx-compile\n", argv[0]);
    return 2;
  }
  g_tool = argv[1];
  char tmpl[] = "/tmp/epctx_host_test_XXXXXX";
  if (!mkdtemp(tmpl)) return 2;
  g_dir = tmpl;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_output_replaces_extension),
      cmocka_unit_test(cli_writes_default_and_explicit_output),
      cmocka_unit_test(existing_output_is_refused_and_left_untouched),
      cmocka_unit_test(missing_file_is_one_line_error),
      cmocka_unit_test(not_onnx_is_one_line_error),
      cmocka_unit_test(truncated_model_is_one_line_error),
      cmocka_unit_test(usage_errors_exit_2),
      cmocka_unit_test(input_shape_fixes_symbolic_dims),
      cmocka_unit_test(input_shape_errors_name_the_inputs),
      cmocka_unit_test(specialise_lifts_constants_and_infers_static_shapes),
      cmocka_unit_test(static_shape_node_folds_without_runtime),
      cmocka_unit_test(ep_none_output_has_no_epcontext_and_equals_folded_graph),
      cmocka_unit_test(initializers_only_subgraphs_read_are_kept),
      cmocka_unit_test(branches_compile_to_epcontext_nodes_holding_their_initializers),
      cmocka_unit_test(checker_errors_print_every_line),
      cmocka_unit_test(all_constant_node_folds_through_the_runtime),
      cmocka_unit_test(nothing_claimable_writes_a_cpu_model_and_warns),
      cmocka_unit_test(vnpu_compile_writes_bin_beside_the_model),
      cmocka_unit_test(vnpu_embed_mode_payload_is_64_aligned_in_the_file),
      cmocka_unit_test(report_gives_macs_partitions_and_cpu_reasons),
      cmocka_unit_test(unsorted_graph_is_sorted_and_only_cycles_refused),
      cmocka_unit_test(checker_error_names_the_node_on_one_line),
      cmocka_unit_test(shape_inference_error_names_unnamed_node),
  };
  int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
  std::string cleanup = "rm -rf '" + g_dir + "'";
  if (failed == 0 && std::system(cleanup.c_str()) != 0) return 1;
  return failed;
}
