// SPDX-License-Identifier: Apache-2.0
// IsEpContextNode / ExtractEpContext on generated EPContext models.
#include "onnx/epcontext.h"
#include "onnx_test_util.h"

using namespace epctx;
using namespace epctx::onnx;

namespace {

void loads_embedded_payload_without_copy(void**) {
  Parsed p;
  ParseCase("epctx_embed.onnx", &p);
  const NodeView& n = p.model.graph.nodes[0];
  assert_true(IsEpContextNode(n));
  EpContextNode ep;
  Status st = ExtractEpContext(n, &ep);
  assert_true(st.ok());
  assert_ptr_equal(ep.node, &n);
  assert_int_equal(ep.main_context, 1);
  assert_int_equal(ep.embed_mode, 1);
  assert_int_equal(ep.max_size, 4096);
  assert_true(ep.has_cache_context);
  assert_int_equal(ep.ep_cache_context.size, 2 * 1024 * 1024);
  assert_true(Inside(ep.ep_cache_context.data, ep.ep_cache_context.size, p.buf));
  const uint8_t* d = reinterpret_cast<const uint8_t*>(ep.ep_cache_context.data);
  for (size_t i : {size_t(0), size_t(1), size_t(12345), ep.ep_cache_context.size - 1})
    assert_int_equal(d[i], (7 * i + 3) % 256);
  assert_true(ep.has_source);
  assert_string_equal(Str(ep.source).c_str(), "vnpu");
  assert_string_equal(Str(ep.ep_sdk_version).c_str(), "1.2.3");
  assert_string_equal(Str(ep.hardware_architecture).c_str(), "vnpu-v1");
  assert_string_equal(Str(ep.partition_name).c_str(), "part0");
  assert_string_equal(Str(ep.onnx_model_filename).c_str(), "model.onnx");
  assert_string_equal(Str(ep.notes).c_str(), "n");
  assert_int_equal(p.model.opset(StrView{"com.microsoft", 13}), 1);
}

void absent_attributes_take_schema_defaults(void**) {
  Parsed p;
  ParseCase("epctx_defaults.onnx", &p);
  EpContextNode ep;
  assert_true(ExtractEpContext(p.model.graph.nodes[0], &ep).ok());
  assert_int_equal(ep.main_context, 1);
  assert_int_equal(ep.embed_mode, 1);
  assert_int_equal(ep.max_size, 0);
  assert_string_equal(Str(ep.ep_cache_context).c_str(), "BLOB");
  assert_true(ep.ep_sdk_version.empty());
  assert_true(ep.partition_name.empty());
}

void external_mode_keeps_the_relative_path(void**) {
  Parsed p;
  ParseCase("epctx_external.onnx", &p);
  EpContextNode ep;
  assert_true(ExtractEpContext(p.model.graph.nodes[0], &ep).ok());
  assert_int_equal(ep.embed_mode, 0);
  assert_string_equal(Str(ep.ep_cache_context).c_str(), "model_vnpu.bin");
}

void zero_input_and_secondary_nodes_are_accepted(void**) {
  Parsed p;
  ParseCase("epctx_zero_input.onnx", &p);
  const GraphView& g = p.model.graph;
  assert_int_equal(g.num_nodes, 2);
  assert_int_equal(g.num_inputs, 0);
  assert_int_equal(g.nodes[0].num_inputs, 0);
  assert_null(g.nodes[0].inputs);
  EpContextNode main_ep, sub_ep;
  assert_true(ExtractEpContext(g.nodes[0], &main_ep).ok());
  assert_int_equal(main_ep.main_context, 1);
  assert_true(ExtractEpContext(*FindNode(g, "ctx_sub"), &sub_ep).ok());
  assert_int_equal(sub_ep.main_context, 0);
  assert_false(sub_ep.has_cache_context);
  assert_string_equal(Str(sub_ep.partition_name).c_str(), "p1");
}

void ExpectInvalid(const GraphView& g, const char* node, const char* fragment) {
  EpContextNode ep;
  Status st = ExtractEpContext(*FindNode(g, node), &ep);
  assert_int_equal(st.code(), EPCTX_INVALID_GRAPH);
  if (!strstr(st.message(), fragment)) fprintf(stderr, "message: %s\n", st.message());
  assert_non_null(strstr(st.message(), fragment));
}

void bad_attributes_are_invalid_graph_naming_node_and_attribute(void**) {
  Parsed p;
  ParseCase("epctx_bad.onnx", &p);
  const GraphView& g = p.model.graph;
  ExpectInvalid(g, "bad_embed",
                "node 'bad_embed' attribute 'embed_mode': expected 0 or 1, found 2");
  ExpectInvalid(g, "bad_type",
                "node 'bad_type' attribute 'embed_mode': expected INT, found STRING");
  ExpectInvalid(g, "missing_cache", "node 'missing_cache' attribute 'ep_cache_context': missing");
  ExpectInvalid(g, "bad_main",
                "node 'bad_main' attribute 'main_context': expected 0 or 1, found 5");
  ExpectInvalid(g, "bad_cache_type",
                "node 'bad_cache_type' attribute 'ep_cache_context': expected STRING, found INT");
}

void only_com_microsoft_epcontext_is_recognised(void**) {
  NodeView n;
  n.op_type = StrView{"EPContext", 9};
  assert_false(IsEpContextNode(n));
  n.domain = StrView{"com.microsoft", 13};
  assert_true(IsEpContextNode(n));
  n.op_type = StrView{"EPContex", 8};
  assert_false(IsEpContextNode(n));
}

}  // namespace

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(loads_embedded_payload_without_copy),
    cmocka_unit_test(absent_attributes_take_schema_defaults),
    cmocka_unit_test(external_mode_keeps_the_relative_path),
    cmocka_unit_test(zero_input_and_secondary_nodes_are_accepted),
    cmocka_unit_test(bad_attributes_are_invalid_graph_naming_node_and_attribute),
    cmocka_unit_test(only_com_microsoft_epcontext_is_recognised),
};

EPCTX_TEST_MAIN(tests)
