// SPDX-License-Identifier: Apache-2.0
// Generation through the compile library: what the ctx model keeps, embed
// modes, buffers, external initializers, partitions, input types and order
// (research/ort_epcontext.md §5 items 2-6, 12-15, 19, 20). Every generated
// model is run on the runtime and compared with the source model on the
// runtime's CPU kernels. argv[1]: the work folder.
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

namespace {

#define assert_has(haystack, needle) assert_non_null(strstr((haystack).c_str(), (needle)))

const std::vector<Tensor> kMixedInput = {Floats("x", {1, 8}, 3)};

void ExpectSameAsSource(const std::string& source, const std::string& ctx,
                        const std::vector<Tensor>& in, size_t driver_nodes,
                        const std::string& ctx_path_option = "") {
  RunOutcome ref = RunModel(source, in);
  assert_int_equal(ref.code, EPCTX_OK);
  RunOutcome got = RunModel(ctx, in, ctx_path_option);
  if (got.code != EPCTX_OK) print_error("%s\n", got.message.c_str());
  assert_int_equal(got.code, EPCTX_OK);
  assert_int_equal(got.driver_nodes, driver_nodes);
  assert_int_equal(got.outputs.size(), ref.outputs.size());
  for (size_t i = 0; i < ref.outputs.size(); ++i)
    assert_true(Close(got.outputs[i], ref.outputs[i]));
}

// §5 items 2, 12: file -> file; model A gives 2 EPContext nodes (one per
// partition, exactly one primary) around 1 CPU node; it runs.
void mixed_model_compiles_to_two_partitions_and_runs(void**) {
  const std::string d = Fresh("mixed");
  Save(MixedModel(), d + "/a.onnx");
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/a.onnx"), Settings());
  ASSERT_OK(r);
  assert_int_equal(r.models[0].partitions, 2);
  assert_int_equal(r.models[0].nodes_cpu, 1);
  onnx::ModelProto m = LoadProto(d + "/a_ctx.onnx");
  assert_int_equal(m.graph().node_size(), 3);
  auto eps = EpNodes(m);
  assert_int_equal(eps.size(), 2);
  for (const auto* n : eps) {
    assert_int_equal(n->input_size(), 1);
    assert_string_equal(n->domain().c_str(), "com.microsoft");
    assert_string_equal(AttrS(*n, "partition_name").c_str(), n->name().c_str());
    assert_string_equal(AttrS(*n, "source").c_str(), "vnpu");
  }
  ExpectSameAsSource(d + "/a.onnx", d + "/a_ctx.onnx", kMixedInput, 2);
  RecordForOrt(d + "/a_ctx.onnx");

  // §5 item 12 (1 partition): with the backend option disable_ops=Relu only
  // the MatMul is compiled. (Another folder: a_vnpu.bin exists here.)
  CompileSettings s = Settings({{"ep.context_file_path", d + "/one/one_ctx.onnx"}});
  s.backend_options = {{"disable_ops", "Relu"}};
  r = CompileModel(ModelInput::FromPath(d + "/a.onnx"), s);
  ASSERT_OK(r);
  assert_int_equal(r.models[0].partitions, 1);
  assert_int_equal(EpNodes(LoadProto(d + "/one/one_ctx.onnx")).size(), 1);
  assert_int_equal(LoadProto(d + "/one/one_ctx.onnx").graph().node_size(), 4);
  ExpectSameAsSource(d + "/a.onnx", d + "/one/one_ctx.onnx", kMixedInput, 1);
  RecordForOrt(d + "/one/one_ctx.onnx");
}

// §5 item 3 and §3.4: buffer -> file, embed_mode 1: no .bin, the payload
// is inside the model at a multiple of 64 bytes.
void embed1_from_buffer_writes_no_side_file(void**) {
  const std::string d = Fresh("embed1");
  Save(MixedModel(), d + "/a.onnx");
  CompileResult r = CompileModel(
      ModelInput::FromBuffer(MixedModel().SerializeAsString()),
      Settings({{"ep.context_file_path", d + "/a_ctx.onnx"}, {"ep.context_embed_mode", "1"}}));
  ASSERT_OK(r);
  assert_int_equal(r.files_written.size(), 1);
  assert_true(r.binary_path.empty());
  assert_false(FileExists(d + "/a_ctx_vnpu.bin") || FileExists(d + "/a_vnpu.bin"));
  auto m = LoadProto(d + "/a_ctx.onnx");
  const auto* main = EpNodes(m)[0];
  assert_int_equal(AttrI(*main, "embed_mode"), 1);
  const std::string payload = AttrS(*main, "ep_cache_context");
  assert_true(payload.size() > 64);
  const std::string file = ReadFileBytes(d + "/a_ctx.onnx");
  assert_int_equal(file.find(payload.substr(0, 64)) % 64, 0);
  ExpectSameAsSource(d + "/a.onnx", d + "/a_ctx.onnx", kMixedInput, 2);
  RecordForOrt(d + "/a_ctx.onnx");
}

// §5 items 4, 5: the ctx model returned in memory; embed 1 from a buffer
// needs no path; embed 0 from a buffer puts the .bin beside
// ep.context_file_path and loads from the buffer with that key.
void ctx_model_to_memory(void**) {
  const std::string d = Fresh("memory");
  Save(MixedModel(), d + "/a.onnx");
  CompileSettings s = Settings({{"ep.context_embed_mode", "1"}});
  s.output_to_memory = true;
  CompileResult r = CompileModel(ModelInput::FromBuffer(MixedModel().SerializeAsString()), s);
  ASSERT_OK(r);
  assert_true(r.files_written.empty());
  const std::string& bytes = r.models.at(0).model_data;
  assert_true(bytes.size() > 0);
  std::ofstream(d + "/from_memory.onnx", std::ios::binary) << bytes;
  ExpectSameAsSource(d + "/a.onnx", d + "/from_memory.onnx", kMixedInput, 2);
  RecordForOrt(d + "/from_memory.onnx");

  s = Settings({{"ep.context_file_path", d + "/test_model_in_mem.onnx"}});
  s.output_to_memory = true;
  r = CompileModel(ModelInput::FromBuffer(MixedModel().SerializeAsString()), s);
  ASSERT_OK(r);
  assert_false(FileExists(d + "/test_model_in_mem.onnx"));
  assert_true(FileExists(d + "/test_model_in_mem_vnpu.bin"));
  std::ofstream(d + "/copy.onnx", std::ios::binary) << r.models.at(0).model_data;
  ExpectSameAsSource(d + "/a.onnx", d + "/copy.onnx", kMixedInput, 2,
                     d + "/test_model_in_mem.onnx");
}

// Writes `m` with every initializer as external data in <dir>/<data>.
void SaveWithExternalData(onnx::ModelProto m, const std::string& dir, const std::string& name,
                          const std::string& data) {
  std::string blob;
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    std::string raw = t.raw_data();
    if (raw.empty()) {
      for (float f : t.float_data()) raw.append(reinterpret_cast<const char*>(&f), 4);
      t.clear_float_data();
    }
    const size_t off = blob.size();
    blob += raw;
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto kv : {std::make_pair("location", data), std::make_pair("offset", std::to_string(off)),
                    std::make_pair("length", std::to_string(raw.size()))}) {
      auto* e = t.add_external_data();
      e->set_key(kv.first);
      e->set_value(kv.second);
    }
  }
  std::ofstream(dir + "/" + data, std::ios::binary) << blob;
  Save(m, dir + "/" + name);
}

// §5 items 13, 14, 6: a source with external data. Without the key every
// CPU initializer is embedded (the source data file can be deleted); with
// ep.context_model_external_initializers_file_name they all go to that file.
void external_initializers_embedded_or_moved(void**) {
  const std::string d = Fresh("external");
  SaveWithExternalData(MixedModel(), d, "src.onnx", "src.data");
  Save(MixedModel(), d + "/ref.onnx");
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/src.onnx"), Settings());
  ASSERT_OK(r);
  onnx::ModelProto m = LoadProto(d + "/src_ctx.onnx");
  assert_int_equal(m.graph().initializer_size(), 1);  // e, used by the CPU PRelu
  assert_int_equal(m.graph().initializer(0).data_location(), onnx::TensorProto::DEFAULT);
  assert_int_equal(r.files_written.size(), 2);  // model + .bin, no data file

  r = CompileModel(
      ModelInput::FromPath(d + "/src.onnx"),
      Settings({{"ep.context_file_path", d + "/ext/ext_ctx.onnx"},
                {"ep.context_model_external_initializers_file_name", "ext_ctx.data"}}));
  ASSERT_OK(r);
  assert_true(FileExists(d + "/ext/ext_ctx.data"));
  m = LoadProto(d + "/ext/ext_ctx.onnx");
  assert_int_equal(m.graph().initializer(0).data_location(), onnx::TensorProto::EXTERNAL);
  assert_int_equal(FileSize(d + "/ext/ext_ctx.data"), 4);

  // §5 item 6: ctx model in memory, embedded context, initializers in a file.
  CompileSettings mem =
      Settings({{"ep.context_embed_mode", "1"},
                {"ep.context_model_external_initializers_file_name", "mem.data"}});
  mem.output_to_memory = true;
  r = CompileModel(ModelInput::FromPath(d + "/src.onnx"), mem);
  ASSERT_OK(r);
  assert_int_equal(r.files_written.size(), 1);
  assert_string_equal(r.files_written[0].c_str(), (d + "/mem.data").c_str());
  std::ofstream(d + "/mem_ctx.onnx", std::ios::binary) << r.models.at(0).model_data;

  std::remove((d + "/src.data").c_str());  // the outputs never need it
  ExpectSameAsSource(d + "/ref.onnx", d + "/src_ctx.onnx", kMixedInput, 2);
  ExpectSameAsSource(d + "/ref.onnx", d + "/ext/ext_ctx.onnx", kMixedInput, 2);
  ExpectSameAsSource(d + "/ref.onnx", d + "/mem_ctx.onnx", kMixedInput, 2);
  RecordForOrt(d + "/mem_ctx.onnx");
  RecordForOrt(d + "/src_ctx.onnx");
  RecordForOrt(d + "/ext/ext_ctx.onnx");
}

// §5 item 15: from a buffer, external data is found through
// session.model_external_initializers_file_folder_path; without it the
// error names the key.
void external_data_from_buffer_needs_folder_key(void**) {
  const std::string d = Fresh("external_buffer");
  SaveWithExternalData(MixedModel(), d, "src.onnx", "src.data");
  Save(MixedModel(), d + "/ref.onnx");
  const std::string bytes = ReadFileBytes(d + "/src.onnx");
  CompileResult r = CompileModel(ModelInput::FromBuffer(bytes),
                                 Settings({{"ep.context_file_path", d + "/out_ctx.onnx"}}));
  assert_int_equal(r.status.code, EPCTX_INVALID_ARGUMENT);
  assert_has(r.status.message, "session.model_external_initializers_file_folder_path");
  assert_false(FileExists(d + "/out_ctx.onnx"));
  r = CompileModel(ModelInput::FromBuffer(bytes),
                   Settings({{"ep.context_file_path", d + "/out_ctx.onnx"},
                             {"session.model_external_initializers_file_folder_path", d}}));
  ASSERT_OK(r);
  ExpectSameAsSource(d + "/ref.onnx", d + "/out_ctx.onnx", kMixedInput, 2);
  RecordForOrt(d + "/out_ctx.onnx");
}

// §5 items 19, 20: an int32 and a float input (Cast stays on the CPU), and
// graph inputs listed in an order different from first use: the ctx model
// keeps the source's input and output order.
void two_input_types_keep_source_order(void**) {
  const std::string d = Fresh("inputs");
  testutil::ModelBuilder b(13);
  b.Input("attention_mask", {1, 6}, onnx::TensorProto::INT32).Input("Add_input_0", {1, 6});
  b.Output("sum", {1, 6}).Output("act", {1, 6});
  b.Node("Relu", {"Add_input_0"}, {"r"});
  auto* to = b.Node("Cast", {"attention_mask"}, {"maskf"}).add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  b.Node("Add", {"r", "maskf"}, {"sum"});
  b.Node("Sigmoid", {"sum"}, {"act"});
  Save(b.model(), d + "/m.onnx");
  CompileResult r = CompileModel(ModelInput::FromPath(d + "/m.onnx"), Settings());
  ASSERT_OK(r);
  assert_true(r.models[0].nodes_npu >= 2);
  onnx::ModelProto m = LoadProto(d + "/m_ctx.onnx");
  assert_string_equal(m.graph().input(0).name().c_str(), "attention_mask");
  assert_string_equal(m.graph().input(1).name().c_str(), "Add_input_0");
  assert_string_equal(m.graph().output(0).name().c_str(), "sum");
  assert_string_equal(m.graph().output(1).name().c_str(), "act");
  Tensor mask;
  mask.name = "attention_mask";
  mask.dtype = EPCTX_DTYPE_INT32;
  mask.dims = {1, 6};
  mask.i = {1, 0, 1, 1, 0, 2};
  std::vector<Tensor> in = {mask, Floats("Add_input_0", {1, 6}, 5)};
  RunOutcome ref = RunModel(d + "/m.onnx", in), got = RunModel(d + "/m_ctx.onnx", in);
  assert_int_equal(got.code, EPCTX_OK);
  assert_true(got.driver_nodes >= 1);
  assert_true(Close(got.outputs.at(0), ref.outputs.at(0)));
  assert_true(Close(got.outputs.at(1), ref.outputs.at(1)));
  RecordForOrt(d + "/m_ctx.onnx");
}

// Model metadata, opset imports (plus com.microsoft), producer, doc
// strings and graph name are kept.
void model_header_is_kept(void**) {
  const std::string d = Fresh("header");
  onnx::ModelProto src = MixedModel();
  src.set_doc_string("model doc");
  src.set_model_version(42);
  src.mutable_graph()->set_doc_string("graph doc");
  src.mutable_graph()->set_name("header_graph");
  auto* p = src.add_metadata_props();
  p->set_key("author");
  p->set_value("gen test");
  auto* op = src.add_opset_import();
  op->set_domain("ai.onnx.ml");
  op->set_version(3);
  Save(src, d + "/m.onnx");
  {
    CompileResult r0 = CompileModel(ModelInput::FromPath(d + "/m.onnx"), Settings());
    ASSERT_OK(r0);
  }
  onnx::ModelProto m = LoadProto(d + "/m_ctx.onnx");
  assert_string_equal(m.doc_string().c_str(), "model doc");
  assert_int_equal(m.model_version(), 42);
  assert_string_equal(m.graph().doc_string().c_str(), "graph doc");
  assert_string_equal(m.graph().name().c_str(), "header_graph");
  assert_int_equal(m.metadata_props_size(), 1);
  assert_string_equal(m.metadata_props(0).value().c_str(), "gen test");
  int found = 0;
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() && o.version() == 13) found |= 1;
    if (o.domain() == "ai.onnx.ml" && o.version() == 3) found |= 2;
    if (o.domain() == "com.microsoft" && o.version() == 1) found |= 4;
  }
  assert_int_equal(found, 7);
  RecordForOrt(d + "/m_ctx.onnx");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  Begin(argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mixed_model_compiles_to_two_partitions_and_runs),
      cmocka_unit_test(embed1_from_buffer_writes_no_side_file),
      cmocka_unit_test(ctx_model_to_memory),
      cmocka_unit_test(external_initializers_embedded_or_moved),
      cmocka_unit_test(external_data_from_buffer_needs_folder_key),
      cmocka_unit_test(two_input_types_keep_source_order),
      cmocka_unit_test(model_header_is_kept),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
