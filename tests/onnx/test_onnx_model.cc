// SPDX-License-Identifier: Apache-2.0
// ParseModel on models written by gen_onnx_cases.py: every field the view
// exposes, every dtype's data path, and a 5 MB model parsed into views.
#include <cmath>

#include "onnx_test_util.h"

using namespace epctx;
using namespace epctx::onnx;

namespace {

template <typename T>
T At(const TensorView* t, size_t i) {
  T v;
  memcpy(&v, static_cast<const uint8_t*>(t->data) + i * sizeof(T), sizeof(T));
  return v;
}

void parses_model_header_opsets_and_metadata(void**) {
  Parsed p;
  ParseCase("basic.onnx", &p);
  const ModelView& m = p.model;
  assert_int_equal(m.ir_version, 8);
  assert_string_equal(Str(m.producer_name).c_str(), "gen_onnx_cases");
  assert_string_equal(Str(m.producer_version).c_str(), "1.0");
  assert_string_equal(Str(m.domain).c_str(), "ai.epctx.test");
  assert_int_equal(m.model_version, 3);
  assert_int_equal(m.num_opsets, 2);
  assert_int_equal(m.opset(StrView{"", 0}), 13);
  assert_int_equal(m.opset(StrView{"ai.onnx", 7}), 13);
  assert_int_equal(m.opset(StrView{"test.domain", 11}), 1);
  assert_int_equal(m.opset(StrView{"com.microsoft", 13}), -1);
  assert_int_equal(m.num_metadata, 2);
  assert_string_equal(Str(m.metadata[0].key).c_str(), "author");
  assert_string_equal(Str(m.metadata[0].value).c_str(), "epctx");
  assert_string_equal(Str(m.metadata[1].key).c_str(), "k2");
  assert_string_equal(Str(m.graph.name).c_str(), "basic_graph");
}

void parses_graph_inputs_with_symbolic_and_unknown_dims(void**) {
  Parsed p;
  ParseCase("basic.onnx", &p);
  const GraphView& g = p.model.graph;
  assert_int_equal(g.num_inputs, 1);
  const ValueInfoView& x = g.inputs[0];
  assert_string_equal(Str(x.name).c_str(), "X");
  assert_true(x.is_tensor);
  assert_int_equal(x.dtype, EPCTX_DTYPE_FLOAT);
  assert_true(x.has_shape);
  assert_int_equal(x.rank, 3);
  assert_int_equal(x.dims[0], -1);
  assert_string_equal(Str(x.dim_params[0]).c_str(), "batch");
  assert_int_equal(x.dims[1], 3);
  assert_int_equal(x.dims[2], -1);
  assert_true(x.dim_params[2].empty());
  assert_int_equal(g.num_outputs, 1);
  assert_int_equal(g.outputs[0].rank, 2);
  assert_int_equal(g.outputs[0].dims[0], 2);
  assert_int_equal(g.outputs[0].dims[1], 3);
  assert_int_equal(g.num_value_infos, 1);
  assert_string_equal(Str(g.value_infos[0].name).c_str(), "Y");
  assert_false(g.value_infos[0].has_shape);
}

void raw_initializers_are_views_into_the_file_when_aligned(void**) {
  Parsed p;
  ParseCase("basic.onnx", &p);
  const GraphView& g = p.model.graph;
  assert_int_equal(g.num_initializers, 18);
  const TensorView* f = FindInit(g, "w_f32_raw");
  assert_non_null(f);
  assert_int_equal(f->storage, Storage::kRaw);
  assert_int_equal(f->dtype, EPCTX_DTYPE_FLOAT);
  assert_int_equal(f->rank, 2);
  assert_int_equal(f->dims[0], 2);
  assert_int_equal(f->dims[1], 3);
  assert_int_equal(f->bytes, 24);
  assert_int_equal(reinterpret_cast<uintptr_t>(f->data) % 4, 0);
  assert_true(f->copied != Inside(f->data, f->bytes, p.buf));
  for (int i = 0; i < 6; ++i) assert_true(At<float>(f, i) == 0.5f * i);
  const TensorView* l = FindInit(g, "w_i64_raw");
  assert_int_equal(reinterpret_cast<uintptr_t>(l->data) % 8, 0);
  assert_int_equal(At<int64_t>(l, 0), -1);
  assert_int_equal(At<int64_t>(l, 2), int64_t(1) << 40);
  const TensorView* u = FindInit(g, "w_u8_raw");
  assert_false(u->copied);  // one-byte elements are always aligned
  assert_true(Inside(u->data, 4, p.buf));
  assert_int_equal(At<uint8_t>(u, 3), 255);
  const TensorView* s = FindInit(g, "scalar");
  assert_int_equal(s->rank, 0);
  assert_int_equal(s->bytes, 4);
  assert_true(At<float>(s, 0) == 3.0f);
}

void typed_initializers_decode_and_narrow_per_dtype(void**) {
  Parsed p;
  ParseCase("basic.onnx", &p);
  const GraphView& g = p.model.graph;
  const TensorView* t = FindInit(g, "t_f32");
  assert_int_equal(t->storage, Storage::kTyped);
  assert_int_equal(t->bytes, 16);
  assert_true(At<float>(t, 1) == -2.25f);
  t = FindInit(g, "t_i32");
  assert_int_equal(At<int32_t>(t, 0), -7);
  assert_int_equal(At<int32_t>(t, 2), 2147483647);
  t = FindInit(g, "t_i8");
  assert_int_equal(t->bytes, 3);
  assert_int_equal(At<int8_t>(t, 0), -3);
  assert_int_equal(At<int8_t>(t, 1), 127);
  assert_int_equal(At<int8_t>(t, 2), -128);
  t = FindInit(g, "t_u8");
  assert_int_equal(At<uint8_t>(t, 0), 200);
  t = FindInit(g, "t_i16");
  assert_int_equal(At<int16_t>(t, 0), -300);
  assert_int_equal(At<int16_t>(t, 1), 300);
  t = FindInit(g, "t_u16");
  assert_int_equal(At<uint16_t>(t, 0), 65535);
  t = FindInit(g, "t_bool");
  assert_int_equal(t->bytes, 3);
  assert_int_equal(At<uint8_t>(t, 0), 1);
  assert_int_equal(At<uint8_t>(t, 1), 0);
  assert_int_equal(At<uint8_t>(t, 2), 1);
  t = FindInit(g, "t_f16");
  assert_int_equal(At<uint16_t>(t, 0), 0x3c00);
  assert_int_equal(At<uint16_t>(t, 1), 0xc000);
  t = FindInit(g, "t_i64");
  assert_int_equal(reinterpret_cast<uintptr_t>(t->data) % 8, 0);
  assert_int_equal(At<int64_t>(t, 0), -5);
  assert_int_equal(At<int64_t>(t, 1), int64_t(1) << 50);
  t = FindInit(g, "t_f64");
  assert_true(At<double>(t, 0) == 0.25);
  assert_true(At<double>(t, 1) == -1e300);
  t = FindInit(g, "t_u32");
  assert_int_equal(t->bytes, 8);
  assert_int_equal(At<uint32_t>(t, 0), 4000000000u);
  t = FindInit(g, "t_u64");
  assert_true(At<uint64_t>(t, 0) == UINT64_MAX);
  t = FindInit(g, "t_str");
  assert_int_equal(t->dtype, EPCTX_DTYPE_STRING);
  assert_int_equal(t->storage, Storage::kNone);
  assert_null(t->data);
}

void external_initializer_reports_location_offset_length(void**) {
  Parsed p;
  ParseCase("basic.onnx", &p);
  const TensorView* t = FindInit(p.model.graph, "ext");
  assert_int_equal(t->storage, Storage::kExternal);
  assert_null(t->data);
  assert_string_equal(Str(t->external_location).c_str(), "weights.bin");
  assert_int_equal(t->external_offset, 64);
  assert_int_equal(t->external_length, 16);
  assert_int_equal(t->dims[0], 4);
}

void node_attributes_of_every_kind_are_decoded(void**) {
  Parsed p;
  ParseCase("basic.onnx", &p);
  const GraphView& g = p.model.graph;
  assert_int_equal(g.num_nodes, 2);
  const NodeView* n = FindNode(g, "attrs");
  assert_non_null(n);
  assert_string_equal(Str(n->op_type).c_str(), "Custom");
  assert_string_equal(Str(n->domain).c_str(), "test.domain");
  assert_int_equal(n->num_inputs, 3);
  assert_string_equal(Str(n->inputs[0]).c_str(), "X");
  assert_true(n->inputs[1].empty());  // omitted optional input
  assert_string_equal(Str(n->inputs[2]).c_str(), "w_f32_raw");
  assert_int_equal(n->num_outputs, 1);
  assert_int_equal(n->num_attrs, 8);
  const AttributeView* a = n->attr("f");
  assert_int_equal(a->type, AttrType::kFloat);
  assert_true(a->f == 0.5f);
  a = n->attr("i");
  assert_int_equal(a->type, AttrType::kInt);
  assert_int_equal(a->i, -42);
  a = n->attr("s");
  assert_int_equal(a->type, AttrType::kString);
  assert_string_equal(Str(a->s).c_str(), "hello");
  assert_true(Inside(a->s.data, a->s.size, p.buf));
  a = n->attr("t");
  assert_int_equal(a->type, AttrType::kTensor);
  assert_non_null(a->t);
  assert_string_equal(Str(a->t->name).c_str(), "tv");
  assert_int_equal(At<int32_t>(a->t, 1), 10);
  a = n->attr("g");
  assert_int_equal(a->type, AttrType::kGraph);
  assert_true(a->graph.size > 0);
  assert_true(Inside(a->graph.data, a->graph.size, p.buf));
  a = n->attr("floats");
  assert_int_equal(a->type, AttrType::kFloats);
  assert_int_equal(a->count, 2);
  assert_true(a->floats[1] == 2.5f);
  a = n->attr("ints");
  assert_int_equal(a->type, AttrType::kInts);
  assert_int_equal(a->count, 3);
  assert_int_equal(a->ints[1], -2);
  assert_int_equal(a->ints[2], 3);
  a = n->attr("strings");
  assert_int_equal(a->type, AttrType::kStrings);
  assert_int_equal(a->count, 2);
  assert_string_equal(Str(a->strings[1]).c_str(), "bc");
  assert_null(n->attr("missing"));
  const NodeView* relu = FindNode(g, "relu");
  assert_true(relu->domain.empty());
  assert_int_equal(relu->num_attrs, 0);
}

// A 5 MB, 700-node model parses whole, with every view into the buffer (how
// fast is the session-creation benchmark's business, tests/bench, not a test's).
void large_model_parses_into_views(void**) {
  std::vector<uint8_t> buf = ReadCase("big.onnx");
  assert_true(buf.size() > 5000000);
  Arena arena(Allocator::Default());
  ModelView m;
  Status st = ParseModel(AsBytes(buf), "big.onnx", arena, &m);
  assert_true(st.ok());
  assert_int_equal(m.graph.num_nodes, 700);
  assert_int_equal(m.graph.num_initializers, 100);
  assert_int_equal(m.graph.nodes[698].attr("kernel_shape")->ints[1], 3);
  assert_int_equal(m.graph.initializers[99].bytes, 50000);
  // zero-copy: aligned weights are views into the file's bytes
  int views = 0;
  for (uint32_t i = 0; i < m.graph.num_initializers; ++i) {
    const TensorView& t = m.graph.initializers[i];
    const uint8_t* w = static_cast<const uint8_t*>(t.data);
    bool inside = w >= buf.data() && w + t.bytes <= buf.data() + buf.size();
    assert_true(inside != t.copied);
    views += inside;
  }
  assert_true(views > 0);
}

}  // namespace

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(parses_model_header_opsets_and_metadata),
    cmocka_unit_test(parses_graph_inputs_with_symbolic_and_unknown_dims),
    cmocka_unit_test(raw_initializers_are_views_into_the_file_when_aligned),
    cmocka_unit_test(typed_initializers_decode_and_narrow_per_dtype),
    cmocka_unit_test(external_initializer_reports_location_offset_length),
    cmocka_unit_test(node_attributes_of_every_kind_are_decoded),
    cmocka_unit_test(large_model_parses_into_views),
};

EPCTX_TEST_MAIN(tests)
