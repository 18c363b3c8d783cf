/* SPDX-License-Identifier: Apache-2.0 */
/* Loading EPContext models: routing by source, schema defaults, binding of
 * several contexts and main_context=0 nodes, tensor types at the boundary,
 * and MODEL_REQUIRES_COMPILATION. The tqnn driver records what it was handed;
 * the tests assert those bytes and names.
 * Items (ort_epcontext.md): §5 30, 31; §9.1, 9.2, 9.7, 9.13; §9.16 dangling
 * main_context=0 and duplicate node names. */
#include "loading_util.h"

static const char kBlobA[] = "TQNN\nctx_a 1 1 1 4\n";
static const char kBlobB[] = "TQNN\nctx_b 1 1 1 4\n";

static void assert_blob(int k, const char* text) {
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->blob_size[k], strlen(text));
  assert_memory_equal(r->blob_copy[k], text, strlen(text));
  assert_memory_equal(r->blob_data[k], text, strlen(text));
  assert_int_equal(r->is_container[k], 0);
}

/* Runs a [1,4] float model with input x = {1,2,3,4}; returns y[0..3] in y. */
static void run_float(epctx_env* env, epctx_session* s, float y[4]) {
  float x[4] = {1, 2, 3, 4};
  int64_t dims[2] = {1, 4};
  epctx_tensor* in = NULL;
  epctx_tensor* out = NULL;
  ok(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, &in));
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {in};
  ok(epctx_session_run(s, names, ins, 1, NULL, &out, 1));
  assert_int_equal(epctx_tensor_bytes(out), 16);
  memcpy(y, epctx_tensor_data(out), 16);
  epctx_tensor_release(in);
  epctx_tensor_release(out);
}

static void two_primaries_embedded_each_get_their_own_blob(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 1);
  epctx_session* s;
  ok(load(env, "two_primaries_embed.onnx", NULL, &s));
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->loads, 2);
  assert_blob(0, kBlobA);
  assert_blob(1, kBlobB);
  assert_int_equal(r->asks, 2);
  assert_string_equal(r->asked[0], "ctx_a");
  assert_string_equal(r->asked[1], "ctx_b");
  assert_int_equal(epctx_session_driver_node_count(s), 2);
  float y[4];
  run_float(env, s, y);
  assert_true(y[0] == 1 && y[3] == 4);
  epctx_session_release(s);
  assert_int_equal(r->releases, 2);
  epctx_env_release(env);
}

static void two_primaries_external_map_each_file(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  ok(load(env, "two_primaries_external.onnx", NULL, &s));
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->loads, 2);
  assert_blob(0, kBlobA); /* m/ctx_a.bin */
  assert_blob(1, kBlobB); /* m/sub/deeper/ctx_b.bin */
  epctx_session_release(s);
  epctx_env_release(env);
}

static void single_graph_binds_whatever_its_name(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  ok(load(env, "single_graph_mismatch.onnx", NULL, &s));
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->asks, 1);
  assert_string_equal(r->asked[0], "QnnNodeNotMatching");
  assert_string_equal(r->bound[0], "graph_in_bin");
  epctx_session_release(s);
  epctx_env_release(env);
}

static void main_context0_binds_by_partition_name_and_node_name(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  ok(load(env, "main0_binding.onnx", NULL, &s));
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->loads, 1);
  assert_int_equal(r->asks, 3);
  assert_string_equal(r->asked[0], "g1");
  assert_string_equal(r->bound[0], "g1");
  assert_string_equal(r->asked[1], "g2"); /* node n2, partition_name g2 */
  assert_string_equal(r->bound[1], "g2");
  assert_string_equal(r->asked[2], "g3"); /* node name */
  assert_string_equal(r->bound[2], "g3");
  float y[4];
  run_float(env, s, y);
  assert_true(y[1] == 2);
  epctx_session_release(s);
  epctx_env_release(env);
}

static void main_context0_without_graph_is_invalid_graph(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  expect(load(env, "main0_dangling.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INVALID_GRAPH,
         LOAD_FAILED, "'dangling'", "'nope'", "no primary EPContext node's context holds",
         "(tqnn: no graph 'nope')", NULL);
  assert_null(s);
  epctx_env_release(env);
}

/* The container lists g2, so its driver's refusal is the reason to report,
 * with the driver's code, not "no primary's context holds it". */
static void main_context0_reports_driver_refusal_of_listed_graph(void** state) {
  (void)state;
  tqnn_reset();
  snprintf(tqnn_config_get()->refuse_graph, sizeof tqnn_config_get()->refuse_graph, "g2");
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  expect(load(env, "main0_binding.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INVALID_GRAPH,
         LOAD_FAILED, "EPContext node 'n2'", "graph 'g2'", "tqnn: graph 'g2' refused by its driver",
         NULL);
  assert_null(s);
  assert_int_equal(tqnn_record_get()->releases, tqnn_record_get()->loads);
  epctx_env_release(env);
}

static void duplicate_epcontext_names_are_rejected(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  expect(load(env, "duplicate_names.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INVALID_GRAPH,
         "'dup' appears twice", NULL);
  assert_int_equal(tqnn_record_get()->loads, 0);
  epctx_env_release(env);
}

static void unknown_source_is_not_implemented_naming_node_and_source(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 1);
  epctx_session* s;
  expect(load(env, "unknown_source.onnx", NULL, &s), EPCTX_NOT_IMPLEMENTED, EPCTX_NOT_IMPLEMENTED,
         "'ctx0'", "'TensorrtExecutionProvider'", "tqnn, vnpu", NULL);
  assert_int_equal(tqnn_record_get()->loads, 0);
  epctx_env_release(env);
}

static void source_aliases_match_case_insensitively(void** state) {
  (void)state;
  const char* models[] = {"alias_lowercase.onnx", "defaults.onnx", "extra_attrs.onnx"};
  for (int i = 0; i < 3; ++i) {
    tqnn_reset();
    epctx_env* env = env_with(1, 1);
    epctx_session* s;
    ok(load(env, models[i], NULL, &s));
    assert_int_equal(tqnn_record_get()->loads, 1);
    epctx_session_release(s);
    epctx_env_release(env);
  }
}

static void node_without_source_needs_a_lone_opted_in_driver(void** state) {
  (void)state;
  epctx_session* s;
  tqnn_reset();
  epctx_env* env = env_with(1, 0); /* lone, not opted in */
  expect(load(env, "no_source.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INVALID_GRAPH,
         "'ctx0' has no 'source'", NULL);
  epctx_env_release(env);

  tqnn_reset();
  tqnn_config_get()->flags = EPCTX_HAL_FLAG_ACCEPTS_UNNAMED_SOURCE;
  env = env_with(1, 1); /* opted in, but not alone */
  expect(load(env, "no_source.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INVALID_GRAPH,
         "2 registered", NULL);
  epctx_env_release(env);

  tqnn_reset();
  tqnn_config_get()->flags = EPCTX_HAL_FLAG_ACCEPTS_UNNAMED_SOURCE;
  env = env_with(1, 0); /* opted in and alone */
  ok(load(env, "no_source.onnx", NULL, &s));
  assert_blob(0, "TQNN\nctx0 1 1 1 4\n");
  epctx_session_release(s);
  epctx_env_release(env);
}

static void defaults_apply_when_attributes_are_absent(void** state) {
  (void)state;
  /* defaults.onnx has only ep_cache_context and source: main_context=1 and
   * embed_mode=1 make the attribute the payload itself. */
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  ok(load(env, "defaults.onnx", NULL, &s));
  assert_int_equal(tqnn_record_get()->loads, 1);
  assert_blob(0, "TQNN\nctx0 1 1 1 4\n");
  epctx_session_release(s);
  epctx_env_release(env);
}

static void unknown_extra_attributes_are_ignored(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  ok(load(env, "extra_attrs.onnx", NULL, &s));
  assert_blob(0, "TQNN\nctx0 1 1 1 4\n");
  float y[4];
  run_float(env, s, y);
  assert_true(y[2] == 3);
  epctx_session_release(s);
  epctx_env_release(env);
}

static void zero_input_epcontext_node_runs(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  ok(load(env, "zero_input.onnx", NULL, &s));
  assert_int_equal(epctx_session_input_count(s), 0);
  epctx_tensor* out = NULL;
  ok(epctx_session_run(s, NULL, NULL, 0, NULL, &out, 1));
  const uint8_t* y = epctx_tensor_data(out);
  for (int i = 0; i < 16; ++i) assert_int_equal(y[i], 7);
  epctx_tensor_release(out);
  epctx_session_release(s);
  epctx_env_release(env);
}

static void every_type_of_T_crosses_the_boundary(void** state) {
  (void)state;
  static const struct {
    const char* name;
    epctx_dtype t;
  } types[] = {{"bool", EPCTX_DTYPE_BOOL},        {"int8", EPCTX_DTYPE_INT8},
               {"int16", EPCTX_DTYPE_INT16},      {"int32", EPCTX_DTYPE_INT32},
               {"int64", EPCTX_DTYPE_INT64},      {"uint8", EPCTX_DTYPE_UINT8},
               {"uint16", EPCTX_DTYPE_UINT16},    {"uint32", EPCTX_DTYPE_UINT32},
               {"uint64", EPCTX_DTYPE_UINT64},    {"float16", EPCTX_DTYPE_FLOAT16},
               {"float", EPCTX_DTYPE_FLOAT},      {"double", EPCTX_DTYPE_DOUBLE},
               {"bfloat16", EPCTX_DTYPE_BFLOAT16}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    char name[64];
    snprintf(name, sizeof name, "type_%s.onnx", types[i].name);
    tqnn_reset();
    epctx_env* env = env_with(1, 0);
    epctx_session* s;
    ok(load(env, name, NULL, &s));
    epctx_io_info info;
    ok(epctx_session_input_info(s, 0, &info));
    assert_int_equal(info.dtype, types[i].t);
    size_t es = epctx_dtype_size(types[i].t);
    uint8_t x[32];
    /* Bools must be 0/1 bytes (the run refuses others), the rest varied. */
    for (size_t b = 0; b < 4 * es; ++b)
      x[b] = (uint8_t)(b % 2 ? 0 : types[i].t == EPCTX_DTYPE_BOOL ? 1 : b + 1);
    int64_t dims[2] = {1, 4};
    epctx_tensor* in = NULL;
    epctx_tensor* out = NULL;
    ok(epctx_tensor_wrap(env, types[i].t, dims, 2, x, 4 * es, &in));
    const char* names[1] = {"x"};
    const epctx_tensor* ins[1] = {in};
    ok(epctx_session_run(s, names, ins, 1, NULL, &out, 1));
    assert_int_equal(epctx_tensor_dtype(out), types[i].t);
    assert_int_equal(epctx_tensor_bytes(out), 4 * es);
    if (types[i].t != EPCTX_DTYPE_FLOAT) assert_memory_equal(epctx_tensor_data(out), x, 4 * es);
    epctx_tensor_release(in);
    epctx_tensor_release(out);
    epctx_session_release(s);
    epctx_env_release(env);
  }
}

static void op_without_kernel_requires_compilation(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  expect(load(env, "needs_compilation.onnx", NULL, &s), EPCTX_MODEL_REQUIRES_COMPILATION,
         EPCTX_MODEL_REQUIRES_COMPILATION, "Tokenizer", "'tok_0'", NULL);
  assert_int_equal(tqnn_record_get()->loads, 0); /* decided before any context loads */
  epctx_env_release(env);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(two_primaries_embedded_each_get_their_own_blob),
    cmocka_unit_test(two_primaries_external_map_each_file),
    cmocka_unit_test(single_graph_binds_whatever_its_name),
    cmocka_unit_test(main_context0_binds_by_partition_name_and_node_name),
    cmocka_unit_test(main_context0_without_graph_is_invalid_graph),
    cmocka_unit_test(main_context0_reports_driver_refusal_of_listed_graph),
    cmocka_unit_test(duplicate_epcontext_names_are_rejected),
    cmocka_unit_test(unknown_source_is_not_implemented_naming_node_and_source),
    cmocka_unit_test(source_aliases_match_case_insensitively),
    cmocka_unit_test(node_without_source_needs_a_lone_opted_in_driver),
    cmocka_unit_test(defaults_apply_when_attributes_are_absent),
    cmocka_unit_test(unknown_extra_attributes_are_ignored),
    cmocka_unit_test(zero_input_epcontext_node_runs),
    cmocka_unit_test(every_type_of_T_crosses_the_boundary),
    cmocka_unit_test(op_without_kernel_requires_compilation),
};

LOADING_MAIN(tests)
