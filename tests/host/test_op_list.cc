// SPDX-License-Identifier: Apache-2.0
// epctx-compile --emit-op-list: the list of CPU ops models need, in the
// format a selective build (EPCTX_CPU_OPS) reads. argv: epctx-compile, the
// generated test models folder (tests/models), tests/selective/small_cnn_ops.txt.
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "epctx_host/diagnostics.h"
#include "epctx_host/op_list.h"
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

std::string g_tool, g_models, g_small_cnn_list, g_dir;

std::string Slurp(const std::string& path) {
  size_t size = 0;
  unsigned char* data = tu_read_file(path.c_str(), &size);
  std::string bytes = data ? std::string(reinterpret_cast<char*>(data), size) : std::string();
  free(data);
  return bytes;
}

struct RunResult {
  int code = -1;
  std::string err;
};

RunResult Run(const std::vector<std::string>& args) {
  std::vector<const char*> argv{g_tool.c_str()};
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  tu_proc p;
  RunResult r;
  if (tu_run(argv.data(), g_dir.c_str(), &p) == 0) {
    r.code = p.exited ? p.exit_code : 128 + p.signal;
    r.err = p.err;
  }
  tu_proc_free(&p);
  return r;
}

std::string Model(const std::string& name) { return g_models + "/" + name + "/model.onnx"; }

void small_cnn_list_is_the_selective_build_list(void** state) {
  (void)state;
  const std::string out = g_dir + "/cnn_ops.txt";
  RunResult r = Run({"--emit-op-list", out, "--ep", "none", "--quiet", Model("small_cnn")});
  if (r.code != 0) fail_msg("%s", r.err.c_str());
  assert_string_equal(Slurp(out).c_str(), Slurp(g_small_cnn_list).c_str());
}

// vnpu takes everything of `split` but its Softsign, and all of small_cnn.
void lists_only_nodes_the_backend_leaves_over_several_models(void** state) {
  (void)state;
  const std::string out = g_dir + "/vnpu_ops.txt";
  RunResult r = Run({"--emit-op-list", out, "--ep", "vnpu", Model("small_cnn"),
                     Model("split") + "," + Model("relu")});
  if (r.code != 0) fail_msg("%s", r.err.c_str());
  assert_string_equal(Slurp(out).c_str(), "Softsign\n");
  r = Run({"--emit-op-list", out, "--ep", "none", "--quiet", Model("split"), Model("add")});
  if (r.code != 0) fail_msg("%s", r.err.c_str());
  // The CPU package's ops: split's Conv and Relu are one FusedConv.
  assert_string_equal(Slurp(out).c_str(), "Add\nConv\nSoftsign\ncom.microsoft:FusedConv\n");
}

void lists_cpu_nodes_of_a_compiled_model_as_it_is(void** state) {
  (void)state;
  const std::string ctx = g_dir + "/split_ctx.onnx", out = g_dir + "/ctx_ops.txt";
  RunResult r = Run({Model("split"), "-o", ctx, "--embed-mode", "1", "--quiet", "--force"});
  if (r.code != 0) fail_msg("%s", r.err.c_str());
  // --ep none would keep every node on CPU, were the model compiled again.
  r = Run({"--emit-op-list", out, "--ep", "none", "--quiet", ctx});
  if (r.code != 0) fail_msg("%s", r.err.c_str());
  assert_string_equal(Slurp(out).c_str(), "Softsign\n");
}

void op_without_kernel_names_node_and_op(void** state) {
  (void)state;
  ModelBuilder b(18);
  b.Input("x", {1, 4}).Output("y", {1, 4});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Col2Im", {"r"}, {"y"}, "fold_back");
  std::set<std::string> ops;
  try {
    CollectCpuOps(b.model(), "m.onnx", &ops);
    fail_msg("Col2Im has no kernel: expected an error");
  } catch (const ToolError& e) {
    assert_int_equal(e.code(), EPCTX_MODEL_REQUIRES_COMPILATION);
    assert_string_equal(e.file().c_str(), "m.onnx");
    if (!std::strstr(e.what(), "node 'fold_back': op Col2Im"))
      fail_msg("message should name node and op: %s", e.what());
  }
}

void other_domains_are_written_domain_colon_op(void** state) {
  (void)state;
  ModelBuilder b(17);
  b.Input("x", {1}).Output("y", {1});
  auto& n = b.Node("Adam", {"x"}, {"y"});
  n.set_domain("ai.onnx.preview.training");
  b.Node("Abs", {"x"}, {"z"}).set_domain("ai.onnx");
  std::set<std::string> ops;
  CollectCpuOps(b.model(), "m.onnx", &ops);
  assert_string_equal(FormatOpList(ops).c_str(), "Abs\nai.onnx.preview.training:Adam\n");
}

void unwritable_list_is_one_line_error(void** state) {
  (void)state;
  RunResult r = Run(
      {"--emit-op-list", g_dir + "/no/such/dir/ops.txt", "--ep", "none", "--quiet", Model("relu")});
  assert_int_equal(r.code, 1);
  assert_int_equal(tu_count_lines(r.err.c_str()), 1);
  assert_non_null(std::strstr(r.err.c_str(), "no/such/dir/ops.txt"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s EPCTX_COMPILE MODELS_DIR SMALL_CNN_OPS_TXT\n", argv[0]);
    return 2;
  }
  g_tool = argv[1];
  g_models = argv[2];
  g_small_cnn_list = argv[3];
  char tmpl[] = "/tmp/epctx_op_list_test_XXXXXX";
  if (!mkdtemp(tmpl)) return 2;
  g_dir = tmpl;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_cnn_list_is_the_selective_build_list),
      cmocka_unit_test(lists_only_nodes_the_backend_leaves_over_several_models),
      cmocka_unit_test(lists_cpu_nodes_of_a_compiled_model_as_it_is),
      cmocka_unit_test(op_without_kernel_names_node_and_op),
      cmocka_unit_test(other_domains_are_written_domain_colon_op),
      cmocka_unit_test(unwritable_list_is_one_line_error),
  };
  int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
  std::string rm = "rm -rf " + g_dir;
  if (std::system(rm.c_str()) != 0) return failed ? failed : 1;
  return failed;
}
