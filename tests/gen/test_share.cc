// SPDX-License-Identifier: Apache-2.0
// Node name prefixes and weight sharing through the compile library and the
// command line (research/ort_epcontext.md §5 items 21, 32, 34; §6).
// argv[1]: the work folder; argv[2]: the epctx-compile binary.
#include <chrono>
#include <cstdio>

#include "gen_util.h"

// cmocka last: its fail() macro clashes with <ios>.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
extern "C" {
#include <cmocka.h>
}

using namespace gentest;
using epctx::host::CompileModel;
using epctx::host::CompileModelGroup;
using epctx::host::Compiler;

namespace {

#define assert_has(haystack, needle) assert_non_null(strstr((haystack).c_str(), (needle)))

std::string g_tool;

// Backbone of two 256x256 MatMuls + bias: 2*256*256*4 + 1024 bytes.
constexpr int64_t kN = 256;
constexpr uint64_t kBackboneBytes = 2 * kN * kN * 4 + kN * 4;

void ExpectRunsLikeSource(const std::string& source, const std::string& ctx,
                          const std::string& input) {
  std::vector<Tensor> in = {Floats(input, {1, kN}, 9)};
  RunOutcome ref = RunModel(source, in), got = RunModel(ctx, in);
  if (got.code != EPCTX_OK) print_error("%s: %s\n", ctx.c_str(), got.message.c_str());
  assert_int_equal(got.code, EPCTX_OK);
  assert_int_equal(got.driver_nodes, 1);
  assert_int_equal(got.cpu_nodes, 0);
  assert_true(Close(got.outputs.at(0), ref.outputs.at(0), 1e-3f));
}

// Copies graph b into graph a (values, nodes, initializers, types) and
// joins the opset imports.
onnx::ModelProto Merge(onnx::ModelProto a, const onnx::ModelProto& b) {
  auto* g = a.mutable_graph();
  const auto& h = b.graph();
  for (const auto& v : h.input()) *g->add_input() = v;
  for (const auto& v : h.output()) *g->add_output() = v;
  for (const auto& n : h.node()) *g->add_node() = n;
  for (const auto& t : h.initializer()) *g->add_initializer() = t;
  for (const auto& v : h.value_info()) *g->add_value_info() = v;
  return a;
}

// §5 item 21: the prefix is in every EPContext node name, partition_name
// and graph name inside the binary; two models of the same file name,
// compiled with different prefixes, merge into one model that loads (two
// contexts) and runs.
void prefixed_models_merge_and_run(void**) {
  const std::string d = Fresh("prefix");
  Fresh("prefix/a");
  Fresh("prefix/b");
  Save(BackboneModel("a", kN, 10, 1, 100), d + "/a/model.onnx");
  Save(BackboneModel("b", kN, 4, 2, 200), d + "/b/model.onnx");
  // a -> <d>/a_ctx.onnx + <d>/model_vnpu.bin; b -> <d>/b/b_ctx.onnx +
  // <d>/b/model_vnpu.bin (both sources are called model.onnx).
  const std::string outs[2] = {d + "/a_ctx.onnx", d + "/b/b_ctx.onnx"};
  for (int k = 0; k < 2; ++k) {
    const std::string side = k == 0 ? "a" : "b", prefix = k == 0 ? "A_" : "B_";
    CompileResult r = CompileModel(
        ModelInput::FromPath(d + "/" + side + "/model.onnx"),
        Settings({{"ep.context_node_name_prefix", prefix}, {"ep.context_file_path", outs[k]}}));
    ASSERT_OK(r);
    const std::string bin = ReadFileBytes(r.binary_path);
    const onnx::ModelProto out = LoadProto(outs[k]);
    for (const auto* n : EpNodes(out)) {
      assert_int_equal(n->name().rfind(prefix, 0), 0);
      assert_int_equal(AttrS(*n, "partition_name").rfind(prefix, 0), 0);
      assert_true(bin.find(n->name()) != std::string::npos);  // graph name in the binary
    }
    RecordForOrt(outs[k]);
  }
  onnx::ModelProto a = LoadProto(outs[0]), b = LoadProto(outs[1]);
  // Same source file name: the names differ by the prefix alone.
  assert_string_equal(EpNodes(a)[0]->name().c_str(), "A_model_vnpu_0");
  assert_string_equal(EpNodes(b)[0]->name().c_str(), "B_model_vnpu_0");
  // b again with embed 1, so the merged model (in <d>) refers to a's .bin only.
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/b/model.onnx"),
                                 Settings({{"ep.context_node_name_prefix", "B_"},
                                           {"ep.context_embed_mode", "1"},
                                           {"ep.context_file_path", d + "/b_embed_ctx.onnx"}}));
  ASSERT_OK(r);
  Save(Merge(a, LoadProto(d + "/b_embed_ctx.onnx")), d + "/merged.onnx");
  std::vector<Tensor> in = {Floats("a_x", {1, kN}, 1), Floats("b_x", {1, kN}, 2)};
  RunOutcome got = RunModel(d + "/merged.onnx", in);
  if (got.code != EPCTX_OK) print_error("%s\n", got.message.c_str());
  assert_int_equal(got.code, EPCTX_OK);
  assert_int_equal(got.driver_nodes, 2);
  RunOutcome ra = RunModel(d + "/a/model.onnx", {in[0]});
  RunOutcome rb = RunModel(d + "/b/model.onnx", {in[1]});
  assert_true(Close(got.outputs.at(0), ra.outputs.at(0), 1e-3f));
  assert_true(Close(got.outputs.at(1), rb.outputs.at(0), 1e-3f));
  RecordForOrt(d + "/merged.onnx");
}

// §5 items 32, 34: session keys through one Compiler. The first model opens
// the group and names the .bin; nothing is written to it until the model
// with ep.stop_share_ep_contexts=1; every ctx model's primary EPContext node
// points at that one file and its graph is found by partition_name.
void session_keys_share_one_binary(void**) {
  const std::string d = Fresh("session_group");
  Save(BackboneModel("m1", kN, 10, 1, 100), d + "/m1.onnx");
  Save(BackboneModel("m2", kN, 4, 1, 200), d + "/m2.onnx");
  Compiler c;
  CompileResult r1 =
      c.Compile(ModelInput::FromPath(d + "/m1.onnx"), Settings({{"ep.share_ep_contexts", "1"}}));
  ASSERT_OK(r1);
  assert_true(r1.binary_pending);
  assert_true(c.group_open());
  assert_true(FileExists(d + "/m1_ctx.onnx"));
  assert_false(FileExists(d + "/m1_vnpu.bin"));
  // A different backend option set cannot join.
  CompileSettings bad = Settings({{"ep.share_ep_contexts", "1"}});
  bad.backend_options = {{"disable_ops", "Relu"}};
  assert_int_equal(c.Compile(ModelInput::FromPath(d + "/m2.onnx"), bad).status.code,
                   EPCTX_INVALID_ARGUMENT);
  CompileResult r2 =
      c.Compile(ModelInput::FromPath(d + "/m2.onnx"),
                Settings({{"ep.share_ep_contexts", "1"}, {"ep.stop_share_ep_contexts", "1"}}));
  ASSERT_OK(r2);
  assert_false(c.group_open());
  assert_string_equal(r2.binary_path.c_str(), (d + "/m1_vnpu.bin").c_str());
  assert_true(FileSize(d + "/m1_vnpu.bin") > 0);
  assert_false(FileExists(d + "/m2_vnpu.bin"));
  for (const char* m : {"m1", "m2"}) {
    const std::string ctx = d + "/" + m + "_ctx.onnx";
    const onnx::ModelProto model = LoadProto(ctx);
    auto eps = EpNodes(model);
    assert_int_equal(eps.size(), 1);
    assert_int_equal(AttrI(*eps[0], "main_context"), 1);
    assert_string_equal(AttrS(*eps[0], "ep_cache_context").c_str(), "m1_vnpu.bin");
    assert_string_equal(AttrS(*eps[0], "partition_name").c_str(),
                        (std::string(m) + "_vnpu_0").c_str());
    ExpectRunsLikeSource(d + "/" + m + ".onnx", ctx, std::string(m) + "_x");
    RecordForOrt(ctx);
  }
  // Two graphs of one name cannot share a binary: the error names the fix.
  Compiler c2;
  CompileResult first = c2.Compile(
      ModelInput::FromPath(d + "/m1.onnx"),
      Settings({{"ep.share_ep_contexts", "1"}, {"ep.context_file_path", d + "/again/a.onnx"}}));
  ASSERT_OK(first);
  CompileResult dup = c2.Compile(
      ModelInput::FromPath(d + "/m1.onnx"),
      Settings({{"ep.share_ep_contexts", "1"}, {"ep.context_file_path", d + "/again/b.onnx"}}));
  assert_int_equal(dup.status.code, EPCTX_INVALID_ARGUMENT);
  assert_has(dup.status.message, "ep.context_node_name_prefix");
  assert_false(FileExists(d + "/again/b.onnx"));
  CompileResult fixed = c2.Compile(ModelInput::FromPath(d + "/m1.onnx"),
                                   Settings({{"ep.share_ep_contexts", "1"},
                                             {"ep.stop_share_ep_contexts", "1"},
                                             {"ep.context_node_name_prefix", "b_"},
                                             {"ep.context_file_path", d + "/again/b.onnx"}}));
  ASSERT_OK(fixed);
  assert_string_equal(fixed.binary_path.c_str(), (d + "/again/m1_vnpu.bin").c_str());
  ExpectRunsLikeSource(d + "/m1.onnx", d + "/again/b.onnx", "m1_x");

  // The backbone is stored once: exactly its bytes were deduplicated (the
  // heads differ; the vnpu pads their columns, so their size is its own).
  assert_int_equal(r2.weight_bytes_before_dedup - r2.weight_bytes_after_dedup, kBackboneBytes);
}

// The weight-sharing test of the issue: two models sharing a backbone,
// compiled as a group (ep_weight_sharing_ctx_gen's behaviour). The binary is
// about one backbone in size; both models load from it and give the source
// models' outputs. Prints the measured numbers.
void group_binary_is_about_one_backbone(void**) {
  const std::string d = Fresh("backbone");
  Save(BackboneModel("cls", kN, 10, 1, 100), d + "/classifier.onnx");
  Save(BackboneModel("det", kN, 4, 1, 200), d + "/detector.onnx");
  auto t0 = std::chrono::steady_clock::now();
  CompileResult alone = CompileModel(ModelInput::FromPath(d + "/classifier.onnx"),
                                     Settings({{"ep.context_file_path", d + "/alone/c_ctx.onnx"}}));
  const double alone_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_OK(alone);
  t0 = std::chrono::steady_clock::now();
  CompileResult r = CompileModelGroup(
      {ModelInput::FromPath(d + "/classifier.onnx"), ModelInput::FromPath(d + "/detector.onnx")},
      Settings());
  const double group_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_OK(r);
  assert_int_equal(r.models.size(), 2);
  assert_string_equal(r.binary_path.c_str(), (d + "/classifier_vnpu.bin").c_str());
  const int64_t bin = FileSize(d + "/classifier_vnpu.bin");
  assert_int_equal(bin, static_cast<int64_t>(r.binary_bytes));
  print_message("  backbone %llu bytes; group binary %lld bytes (classifier alone %llu bytes); "
                "weights %llu bytes before dedup, %llu after; compile %.1f ms (alone %.1f ms)\n",
                (unsigned long long)kBackboneBytes, (long long)bin,
                (unsigned long long)alone.binary_bytes,
                (unsigned long long)r.weight_bytes_before_dedup,
                (unsigned long long)r.weight_bytes_after_dedup, group_ms, alone_ms);
  assert_true(static_cast<uint64_t>(bin) < kBackboneBytes * 11 / 10);
  assert_true(static_cast<uint64_t>(bin) < alone.binary_bytes + 16 * 1024);
  assert_true(r.weight_bytes_before_dedup > 2 * kBackboneBytes);
  ExpectRunsLikeSource(d + "/classifier.onnx", d + "/classifier_ctx.onnx", "cls_x");
  ExpectRunsLikeSource(d + "/detector.onnx", d + "/detector_ctx.onnx", "det_x");
  // Both sessions from the one binary, alive at once in one env.
  std::vector<Tensor> in = {Floats("cls_x", {1, kN}, 4), Floats("det_x", {1, kN}, 5)};
  std::vector<RunOutcome> both =
      RunTogether({d + "/classifier_ctx.onnx", d + "/detector_ctx.onnx"}, in);
  if (both[0].code != EPCTX_OK) print_error("%s\n", both[0].message.c_str());
  assert_int_equal(both[0].code, EPCTX_OK);
  assert_int_equal(both[0].driver_nodes + both[1].driver_nodes, 2);
  assert_true(
      Close(both[0].outputs.at(0), RunModel(d + "/classifier.onnx", {in[0]}).outputs.at(0), 1e-3f));
  assert_true(
      Close(both[1].outputs.at(0), RunModel(d + "/detector.onnx", {in[1]}).outputs.at(0), 1e-3f));
  RecordForOrt(d + "/classifier_ctx.onnx");
  RecordForOrt(d + "/detector_ctx.onnx");

  // All outputs are checked before anything compiles: a second run is
  // refused and leaves every file as it was.
  const std::string before = ReadFileBytes(d + "/classifier_vnpu.bin");
  CompileResult again = CompileModelGroup(
      {ModelInput::FromPath(d + "/classifier.onnx"), ModelInput::FromPath(d + "/detector.onnx")},
      Settings());
  assert_int_equal(again.status.code, EPCTX_FAIL);
  assert_has(again.status.message, "exists already");
  assert_true(ReadFileBytes(d + "/classifier_vnpu.bin") == before);
  // The group fixes its own keys.
  again = CompileModelGroup({ModelInput::FromPath(d + "/classifier.onnx")},
                            Settings({{"ep.context_file_path", d + "/x.onnx"}}));
  assert_int_equal(again.status.code, EPCTX_INVALID_ARGUMENT);
  assert_has(again.status.message, "ep.context_file_path");
}

struct Cli {
  int code;
  std::string out, err;
};

Cli RunTool(const std::string& args) {
  const std::string out = WorkDir() + "/cli.out", err = WorkDir() + "/cli.err";
  const std::string cmd = "'" + g_tool + "' " + args + " >'" + out + "' 2>'" + err + "'";
  int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ReadFileBytes(out), ReadFileBytes(err)};
}

// The command line of ep_weight_sharing_ctx_gen: -e, -i, -C and a comma list;
// progress (stage, partition, sizes) on stderr unless --quiet.
void command_line_group(void**) {
  const std::string d = Fresh("cli");
  Save(BackboneModel("p", kN, 10, 1, 100), d + "/p.onnx");
  Save(BackboneModel("q", kN, 4, 1, 200), d + "/q.onnx");
  Cli c = RunTool("-e vnpu -i \"disable_ops|Sigmoid\" -C \"ep.context_node_name_prefix|g_\" " + d +
                  "/p.onnx," + d + "/q.onnx");
  if (c.code != 0) print_error("%s", c.err.c_str());
  assert_int_equal(c.code, 0);
  assert_has(c.out, "p_vnpu.bin: ");
  assert_has(c.out, "bytes before dedup");
  assert_has(c.err, "compile: partition 1/1 g_p_vnpu_0: 6 nodes, in p_x[1,256], out p_y[1,10]");
  assert_has(c.err, "pack: ");
  assert_true(FileExists(d + "/p_ctx.onnx") && FileExists(d + "/q_ctx.onnx"));
  assert_string_equal(AttrS(*EpNodes(LoadProto(d + "/q_ctx.onnx"))[0], "ep_cache_context").c_str(),
                      "p_vnpu.bin");
  ExpectRunsLikeSource(d + "/q.onnx", d + "/q_ctx.onnx", "q_x");
  RecordForOrt(d + "/p_ctx.onnx");
  RecordForOrt(d + "/q_ctx.onnx");

  c = RunTool("--quiet --force -e vnpu " + d + "/p.onnx," + d + "/q.onnx");
  assert_int_equal(c.code, 0);
  assert_true(c.err.empty());
  c = RunTool("-C \"ep.bogus|1\" " + d + "/p.onnx");
  assert_int_equal(c.code, 1);
  assert_has(c.err, "unknown key 'ep.bogus'");
  c = RunTool("-C \"ep.context_embed_mode\" " + d + "/p.onnx");
  assert_int_equal(c.code, 2);
  assert_has(c.err, "key|value");
  c = RunTool("-i \"vtcm_mb|8\" --force " + d + "/p.onnx");
  assert_int_equal(c.code, 1);
  assert_has(c.err, "unknown backend option 'vtcm_mb'");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  Begin(argv[1]);
  g_tool = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(prefixed_models_merge_and_run),
      cmocka_unit_test(session_keys_share_one_binary),
      cmocka_unit_test(group_binary_is_about_one_backbone),
      cmocka_unit_test(command_line_group),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
