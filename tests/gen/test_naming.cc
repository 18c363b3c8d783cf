// SPDX-License-Identifier: Apache-2.0
// Generation through the compile library: output naming, refusals and
// options (research/ort_epcontext.md §5 items 7-11, 16-18, 35, 44, 46).
// argv[1]: the work folder.
#include <utime.h>

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
using epctx::host::IfNoCompiledNodes;

namespace {

#define assert_has(haystack, needle) assert_non_null(strstr((haystack).c_str(), (needle)))

// §5 item 44: no ep.context_file_path -> <model>_ctx.onnx beside the model,
// [model]_vnpu.bin beside it, referenced by file name only.
void default_name_replaces_onnx_with_ctx_onnx(void**) {
  const std::string d = Fresh("default_name");
  Save(MixedModel(), d + "/mixed.onnx");
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/mixed.onnx"), Settings());
  ASSERT_OK(r);
  assert_string_equal(r.models.at(0).output_path.c_str(), (d + "/mixed_ctx.onnx").c_str());
  assert_string_equal(r.binary_path.c_str(), (d + "/mixed_vnpu.bin").c_str());
  assert_true(FileExists(d + "/mixed_ctx.onnx") && FileExists(d + "/mixed_vnpu.bin"));
  const onnx::ModelProto m = LoadProto(d + "/mixed_ctx.onnx");
  auto eps = EpNodes(m);
  assert_int_equal(eps.size(), 2);
  assert_string_equal(AttrS(*eps[0], "ep_cache_context").c_str(), "mixed_vnpu.bin");
  assert_int_equal(AttrI(*eps[0], "embed_mode"), 0);
  assert_int_equal(AttrI(*eps[0], "main_context"), 1);
  assert_int_equal(AttrI(*eps[1], "main_context"), 0);
  assert_string_equal(AttrS(*eps[1], "ep_cache_context").c_str(), "<absent>");
  RecordForOrt(d + "/mixed_ctx.onnx");
}

// §5 items 8, 18, 44: an existing output is FAIL "exists already", checked
// before compiling; neither the model nor the .bin is touched. force
// overwrites.
void existing_output_fails_before_compiling(void**) {
  const std::string d = Fresh("exists");
  Save(MixedModel(), d + "/m.onnx");
  {
    CompileResult r0 = CompileModel(ModelInput::FromPath(d + "/m.onnx"), Settings());
    ASSERT_OK(r0);
  }
  const std::string model_before = ReadFileBytes(d + "/m_ctx.onnx");
  struct utimbuf old_time = {1000000000, 1000000000};
  utime((d + "/m_vnpu.bin").c_str(), &old_time);
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/m.onnx"), Settings());
  assert_int_equal(r.status.code, EPCTX_FAIL);
  assert_has(r.status.message, "exists already");
  assert_has(r.status.message, "m_ctx.onnx");
  assert_true(r.files_written.empty());
  assert_true(r.models.empty());  // refused before loading
  assert_true(ReadFileBytes(d + "/m_ctx.onnx") == model_before);
  struct stat st;
  stat((d + "/m_vnpu.bin").c_str(), &st);
  assert_int_equal(st.st_mtime, 1000000000);

  // Only the .bin left over: still refused, the .bin is not overwritten.
  std::remove((d + "/m_ctx.onnx").c_str());
  r = CompileModel(ModelInput::FromPath(d + "/m.onnx"), Settings());
  assert_int_equal(r.status.code, EPCTX_FAIL);
  assert_has(r.status.message, "m_vnpu.bin");

  CompileSettings s = Settings();
  s.force = true;
  r = CompileModel(ModelInput::FromPath(d + "/m.onnx"), s);
  ASSERT_OK(r);
  stat((d + "/m_vnpu.bin").c_str(), &st);
  assert_true(st.st_mtime != 1000000000);
}

// §5 items 16, 17, 46: a folder or an extension-less name.
void folder_output_path_is_invalid_argument(void**) {
  const std::string d = Fresh("folder");
  Save(MixedModel(), d + "/m.onnx");
  for (const std::string& bad : {d + "/", d + "/invalid_file", d, std::string("./")}) {
    CompileResult r = CompileModel(ModelInput::FromPath(d + "/m.onnx"),
                                   Settings({{"ep.context_file_path", bad}}));
    assert_int_equal(r.status.code, EPCTX_INVALID_ARGUMENT);
    assert_has(r.status.message, "should not point to a folder");
    assert_true(r.files_written.empty());
  }
  assert_false(FileExists(d + "/invalid_file"));
  assert_false(FileExists(d + "/m_vnpu.bin"));
}

// §5 item 35 (and the session-option path of §3.2): a buffer input needs
// ep.context_file_path; with it, the output and the .bin go there.
void buffer_input_needs_context_file_path(void**) {
  const std::string d = Fresh("buffer");
  const std::string bytes = MixedModel().SerializeAsString();
  for (const auto& cfg :
       {epctx::host::ConfigEntries{}, epctx::host::ConfigEntries{{"ep.context_file_path", ""}}}) {
    CompileResult r = CompileModel(ModelInput::FromBuffer(bytes, "mem_model"), Settings(cfg));
    assert_int_equal(r.status.code, EPCTX_FAIL);
    assert_has(r.status.message, "Please specify a valid ep.context_file_path");
  }
  CompileResult r = CompileModel(ModelInput::FromBuffer(bytes),
                                 Settings({{"ep.context_file_path", d + "/in_mem.onnx"}}));
  ASSERT_OK(r);
  assert_true(FileExists(d + "/in_mem.onnx"));
  assert_true(FileExists(d + "/in_mem_vnpu.bin"));  // [model_name] from the output for buffers
  RecordForOrt(d + "/in_mem.onnx");
}

// §5 items 9, 11: a model that already holds EPContext nodes is
// INVALID_GRAPH "already compiled" (ORT's compile API; its session-option
// path silently writes nothing — we refuse both ways), no file written.
void compiled_input_is_invalid_graph(void**) {
  const std::string d = Fresh("recompile");
  Save(MixedModel(), d + "/m.onnx");
  {
    CompileResult r0 = CompileModel(ModelInput::FromPath(d + "/m.onnx"), Settings());
    ASSERT_OK(r0);
  }
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/m_ctx.onnx"),
                                 Settings({{"ep.context_embed_mode", "1"}}));
  assert_int_equal(r.status.code, EPCTX_INVALID_GRAPH);
  assert_has(r.status.message, "Please ensure the input model is not already compiled");
  assert_false(FileExists(d + "/m_ctx_ctx.onnx"));
  assert_false(FileExists(d + "/m_ctx_vnpu.bin"));
}

// §5 items 7, 10 (issue 27): nothing to compile is not an error: the model
// is written with every node on the CPU, as ep "none" writes it, with a
// warning and no .bin; with error-if-no-compiled-nodes it is FAIL "Unable to
// compile any nodes" and nothing is written.
void nothing_to_compile_writes_a_cpu_only_model(void**) {
  const std::string d = Fresh("nothing");
  Save(CpuOnlyModel(), d + "/cpu.onnx");
  CompileSettings s = Settings();
  s.if_no_compiled_nodes = IfNoCompiledNodes::kError;
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/cpu.onnx"), s);
  assert_int_equal(r.status.code, EPCTX_FAIL);
  assert_has(r.status.message, "Unable to compile any nodes");
  assert_false(FileExists(d + "/cpu_ctx.onnx"));

  r = CompileModel(ModelInput::FromPath(d + "/cpu.onnx"), Settings());
  ASSERT_OK(r);
  assert_int_equal(r.models.size(), 1);
  assert_true(r.models[0].written);
  assert_has(r.models[0].message, "no node can run on vnpu: every node runs on the CPU");
  assert_int_equal(r.models[0].nodes_npu, 0);
  assert_int_equal(r.models[0].partitions, 0);
  assert_int_equal(r.files_written.size(), 1);
  assert_true(FileExists(d + "/cpu_ctx.onnx"));
  assert_false(FileExists(d + "/cpu_vnpu.bin"));
  const onnx::ModelProto written = LoadProto(d + "/cpu_ctx.onnx");
  assert_true(EpNodes(written).empty());

  // ep "none" asks for a CPU-only model: the same model, no warning.
  s = Settings();
  s.ep = "none";
  s.force = true;
  r = CompileModel(ModelInput::FromPath(d + "/cpu.onnx"), s);
  ASSERT_OK(r);
  assert_true(r.models[0].message.empty());
  const onnx::ModelProto none = LoadProto(d + "/cpu_ctx.onnx");
  assert_true(none.graph().SerializeAsString() == written.graph().SerializeAsString());
}

// Session config: unknown keys and bad values name the key.
void unknown_or_bad_config_is_invalid_argument(void**) {
  const std::string d = Fresh("config");
  Save(MixedModel(), d + "/m.onnx");
  struct Case {
    const char* key;
    const char* value;
    const char* expect;
  } cases[] = {
      {"ep.context_embedmode", "1", "unknown key 'ep.context_embedmode'"},
      {"ep.context_embed_mode", "2", "'ep.context_embed_mode': expected 0 or 1, found '2'"},
      {"ep.context_enable", "0", "ep.context_enable"},
      {"ep.share_ep_contexts", "yes", "'ep.share_ep_contexts': expected 0 or 1"},
      {"ep.context_model_external_initializers_file_name", "../x.bin", "without '..'"},
      {"ep.context_node_name_prefix", "a/b", "ep.context_node_name_prefix"},
  };
  for (const Case& c : cases) {
    CompileResult r =
        CompileModel(ModelInput::FromPath(d + "/m.onnx"), Settings({{c.key, c.value}}));
    assert_int_equal(r.status.code, EPCTX_INVALID_ARGUMENT);
    assert_has(r.status.message, c.expect);
  }
  // share + embed 1 conflict (ORT only logs "Inference will not work").
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/m.onnx"),
                                 Settings({{"ep.share_ep_contexts", "1"},
                                           {"ep.stop_share_ep_contexts", "1"},
                                           {"ep.context_embed_mode", "1"}}));
  assert_int_equal(r.status.code, EPCTX_INVALID_ARGUMENT);
  assert_has(r.status.message, "ep.context_embed_mode=0");
  assert_false(FileExists(d + "/m_ctx.onnx"));
  // The accepted keys, explicitly.
  r = CompileModel(ModelInput::FromPath(d + "/m.onnx"),
                   Settings({{"ep.context_enable", "1"},
                             {"ep.context_embed_mode", "0"},
                             {"ep.context_file_path", d + "/out/m_ctx.onnx"},
                             {"ep.context_node_name_prefix", "p_"},
                             {"session.model_external_initializers_file_folder_path", d}}));
  ASSERT_OK(r);
}

// Backend options: vnpu knows disable_ops; unknown keys name the key.
void backend_options_are_checked(void**) {
  const std::string d = Fresh("backend_options");
  Save(MixedModel(), d + "/m.onnx");
  CompileSettings s = Settings();
  s.backend_options = {{"vtcm_mb", "8"}};
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/m.onnx"), s);
  assert_int_equal(r.status.code, EPCTX_INVALID_ARGUMENT);
  assert_has(r.status.message, "unknown backend option 'vtcm_mb'");
  s.backend_options = {{"disable_ops", "Relu,"}};
  r = CompileModel(ModelInput::FromPath(d + "/m.onnx"), s);
  assert_int_equal(r.status.code, EPCTX_INVALID_ARGUMENT);
  s.ep = "npu9000";
  s.backend_options.clear();
  r = CompileModel(ModelInput::FromPath(d + "/m.onnx"), s);
  assert_int_equal(r.status.code, EPCTX_INVALID_ARGUMENT);
  assert_has(r.status.message, "unknown backend 'npu9000'");
  assert_false(FileExists(d + "/m_ctx.onnx"));
}

// embed_mode 0 with the output in a (new) subfolder: the .bin goes beside
// the output and is referenced by file name; the model runs from there.
void embed0_output_in_subfolder_runs(void**) {
  const std::string d = Fresh("subfolder");
  Save(MixedModel(), d + "/m.onnx");
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/m.onnx"),
                                 Settings({{"ep.context_file_path", d + "/out/deep/m_ctx.onnx"}}));
  ASSERT_OK(r);
  assert_true(FileExists(d + "/out/deep/m_vnpu.bin"));
  assert_string_equal(
      AttrS(*EpNodes(LoadProto(d + "/out/deep/m_ctx.onnx"))[0], "ep_cache_context").c_str(),
      "m_vnpu.bin");
  std::vector<Tensor> in = {Floats("x", {1, 8}, 1)};
  RunOutcome ref = RunModel(d + "/m.onnx", in);
  RunOutcome got = RunModel(d + "/out/deep/m_ctx.onnx", in);
  assert_int_equal(got.code, EPCTX_OK);
  assert_int_equal(got.driver_nodes, 2);
  assert_true(Close(got.outputs.at(0), ref.outputs.at(0)));
  RecordForOrt(d + "/out/deep/m_ctx.onnx");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  Begin(argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_name_replaces_onnx_with_ctx_onnx),
      cmocka_unit_test(existing_output_fails_before_compiling),
      cmocka_unit_test(folder_output_path_is_invalid_argument),
      cmocka_unit_test(buffer_input_needs_context_file_path),
      cmocka_unit_test(compiled_input_is_invalid_graph),
      cmocka_unit_test(nothing_to_compile_writes_a_cpu_only_model),
      cmocka_unit_test(unknown_or_bad_config_is_invalid_argument),
      cmocka_unit_test(backend_options_are_checked),
      cmocka_unit_test(embed0_output_in_subfolder_runs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
