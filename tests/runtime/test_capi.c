/* SPDX-License-Identifier: Apache-2.0 */
/* The public C API on small generated models: loading, running, and the
 * specific status code and message each kind of bad input produces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>

#include "test_io.h"

static const char* g_dir;
static epctx_env* g_env;

static const char* path_of(const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

/* Reads a generated model; the caller frees the buffer. */
static unsigned char* read_model(const char* name, size_t* size) {
  unsigned char* buf = tu_read_file(path_of(name), size);
  assert_non_null(buf);
  return buf;
}

/* Creates a session and expects failure with `code`; every word in
 * `must_contain` (NULL-terminated) must appear in the message. */
static void expect_create_fails(const char* model, int code, const char* const* must_contain) {
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(g_env, path_of(model), NULL, &s);
  assert_non_null(st);
  const char* msg = epctx_status_message(st);
  if (epctx_status_code(st) != code)
    fail_msg("%s: expected %s, got %s: %s", model, epctx_code_name(code),
             epctx_code_name(epctx_status_code(st)), msg);
  for (const char* const* w = must_contain; w && *w; ++w)
    if (!strstr(msg, *w)) fail_msg("%s: message lacks '%s': %s", model, *w, msg);
  assert_null(s);
  epctx_status_release(st);
}

static void runs_cpu_model_and_gives_exact_values(void** state) {
  (void)state;
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(g_env, path_of("add_relu.onnx"), NULL, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  assert_int_equal(epctx_session_input_count(s), 1);
  assert_int_equal(epctx_session_output_count(s), 1);
  epctx_io_info info;
  assert_null(epctx_session_input_info(s, 0, &info));
  assert_string_equal(info.name, "x");
  assert_int_equal(info.rank, 2);
  float x[6] = {-10, 1, -3, 0.5f, -100, 2};
  int64_t dims[2] = {2, 3};
  epctx_tensor* in = NULL;
  assert_null(epctx_tensor_wrap(g_env, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, &in));
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {in};
  epctx_tensor* out[1] = {NULL};
  st = epctx_session_run(s, names, ins, 1, NULL, out, 1);
  if (st) fail_msg("%s", epctx_status_message(st));
  const float* y = (const float*)epctx_tensor_data(out[0]);
  float want[6] = {0, 2, 0, 3.5f, 0, 7};
  for (int i = 0; i < 6; ++i) assert_float_equal(y[i], want[i], 0.0f);
  assert_int_equal(epctx_session_cpu_node_count(s), 2);
  assert_int_equal(epctx_session_driver_node_count(s), 0);
  epctx_tensor_release(out[0]);
  epctx_tensor_release(in);
  epctx_session_release(s);
}

static void loads_from_buffer(void** state) {
  (void)state;
  size_t n;
  unsigned char* buf = read_model("add_relu.onnx", &n);
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create_from_buffer(g_env, buf, n, NULL, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  assert_int_equal(epctx_session_cpu_node_count(s), 2);
  epctx_session_release(s);
  free(buf);
}

static void rejects_wrong_input_shape_naming_input(void** state) {
  (void)state;
  epctx_session* s = NULL;
  assert_null(epctx_session_create(g_env, path_of("add_relu.onnx"), NULL, &s));
  float x[4] = {0};
  int64_t dims[2] = {2, 2};
  epctx_tensor* in = NULL;
  assert_null(epctx_tensor_wrap(g_env, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, &in));
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {in};
  epctx_tensor* out[1] = {NULL};
  epctx_status* st = epctx_session_run(s, names, ins, 1, NULL, out, 1);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "input 'x'"));
  assert_null(out[0]);
  epctx_status_release(st);
  epctx_tensor_release(in);
  epctx_session_release(s);
}

static void missing_file_is_no_suchfile_naming_path(void** state) {
  (void)state;
  const char* words[] = {"does_not_exist.onnx", NULL};
  expect_create_fails("does_not_exist.onnx", EPCTX_NO_SUCHFILE, words);
}

static void non_onnx_file_is_invalid_protobuf(void** state) {
  (void)state;
  const char* words[] = {"not_onnx.onnx", NULL};
  expect_create_fails("not_onnx.onnx", EPCTX_INVALID_PROTOBUF, words);
}

static void truncated_model_is_invalid_protobuf(void** state) {
  (void)state;
  const char* words[] = {"truncated.onnx", NULL};
  expect_create_fails("truncated.onnx", EPCTX_INVALID_PROTOBUF, words);
}

static void unknown_source_is_not_implemented_naming_node_and_source(void** state) {
  (void)state;
#if EPCTX_TEST_HAS_VNPU
  const char* words[] = {"ctx_node_0", "NoSuchNpu", "vnpu", NULL};
#else
  const char* words[] = {"ctx_node_0", "NoSuchNpu", "registered: none", NULL};
#endif
  expect_create_fails("unknown_source.onnx", EPCTX_NOT_IMPLEMENTED, words);
}

static void missing_source_is_invalid_graph(void** state) {
  (void)state;
  const char* words[] = {"ctx_node_0", "source", NULL};
  expect_create_fails("no_source.onnx", EPCTX_INVALID_GRAPH, words);
}

#if EPCTX_TEST_HAS_VNPU
static void context_path_escaping_folder_is_rejected(void** state) {
  (void)state;
  const char* words[] = {"../outside.bin", NULL};
  expect_create_fails("escape.onnx", EPCTX_PATH_REJECTED, words);
  const char* words2[] = {"/etc/passwd", NULL};
  expect_create_fails("absolute.onnx", EPCTX_PATH_REJECTED, words2);
}
#endif

#if EPCTX_TEST_HAS_VNPU
static void missing_context_file_is_invalid_graph_with_ort_prefix(void** state) {
  (void)state;
  const char* words[] = {"Failed to load from EpContext model.", "missing_vnpu.bin", NULL};
  expect_create_fails("missing_bin.onnx", EPCTX_INVALID_GRAPH, words);
}
#endif

#if EPCTX_TEST_HAS_VNPU
static void corrupt_container_is_invalid_graph(void** state) {
  (void)state;
  const char* words[] = {"Failed to load from EpContext model.", "ctx_node_0", NULL};
  expect_create_fails("bad_container.onnx", EPCTX_INVALID_GRAPH, words);
  expect_create_fails("not_container.onnx", EPCTX_INVALID_GRAPH, words);
}
#endif

static void unknown_op_requires_compilation(void** state) {
  (void)state;
  const char* words[] = {"mystery", "NoSuchOp", NULL};
  expect_create_fails("unknown_op.onnx", EPCTX_MODEL_REQUIRES_COMPILATION, words);
}

/* 100,000 nodes listed last to first: ordered in O(n log n) at create
 * (pairwise sweeps took 64 s here), and run in dependency order. */
static void reverse_ordered_graph_is_sorted_and_runs(void** state) {
  (void)state;
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(g_env, path_of("reverse_chain.onnx"), NULL, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  float x[2] = {1.5f, -2.0f};
  int64_t dims[1] = {2};
  epctx_tensor* in = NULL;
  assert_null(epctx_tensor_wrap(g_env, EPCTX_DTYPE_FLOAT, dims, 1, x, sizeof x, &in));
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {in};
  epctx_tensor* out[1] = {NULL};
  st = epctx_session_run(s, names, ins, 1, NULL, out, 1);
  if (st) fail_msg("%s", epctx_status_message(st));
  const float* y = (const float*)epctx_tensor_data(out[0]);
  assert_true(y[0] == 1.5f && y[1] == -2.0f); /* an even number of Negs */
  epctx_tensor_release(out[0]);
  epctx_tensor_release(in);
  epctx_session_release(s);
}

static void cycle_is_invalid_graph_naming_a_node(void** state) {
  (void)state;
  const char* words[] = {"is part of a cycle or depends on one", "(Add)", NULL};
  expect_create_fails("cycle.onnx", EPCTX_INVALID_GRAPH, words);
}

static void unknown_option_key_is_rejected_by_name(void** state) {
  (void)state;
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  epctx_status* st = epctx_session_options_set(o, "ep.context_fiel_path", "x");
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "ep.context_fiel_path"));
  epctx_status_release(st);
  assert_null(epctx_session_options_set(o, "ep.context_file_path", "/tmp/m_ctx.onnx"));
  epctx_session_options_release(o);
}

/* ORT's key: a count from 0 (all cores) to 256; anything else is refused at
 * set time, naming the key and the value. (Thread counts above 1 are
 * exercised on the host only: kernels_threads_test, test_mem_threads_intra.) */
static void intra_op_num_threads_takes_a_count_and_refuses_the_rest(void** state) {
  (void)state;
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  static const char* const kBad[] = {"", "-1", "two", "257", "1000", "2 "};
  for (size_t i = 0; i < sizeof kBad / sizeof kBad[0]; ++i) {
    epctx_status* st = epctx_session_options_set(o, "session.intra_op_num_threads", kBad[i]);
    assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
    assert_non_null(strstr(epctx_status_message(st), "session.intra_op_num_threads"));
    assert_non_null(strstr(epctx_status_message(st), "0 (all cores) to 256"));
    epctx_status_release(st);
  }
  assert_null(epctx_session_options_set(o, "session.intra_op_num_threads", "0"));
  assert_null(epctx_session_options_set(o, "session.intra_op_num_threads", "256"));
  assert_null(epctx_session_options_set(o, "session.intra_op_num_threads", "1"));
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(g_env, path_of("add_relu.onnx"), o, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  assert_int_equal(epctx_session_intra_op_thread_count(s), 1);
  epctx_session_release(s);
  epctx_session_options_release(o);
}

#if EPCTX_TEST_HAS_VNPU
static void buffer_model_with_external_context_needs_context_file_path(void** state) {
  (void)state;
  size_t n;
  unsigned char* buf = read_model("missing_bin.onnx", &n);
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create_from_buffer(g_env, buf, n, NULL, &s);
  assert_non_null(st);
  assert_non_null(strstr(epctx_status_message(st), "ep.context_file_path"));
  assert_null(s);
  epctx_status_release(st);
  free(buf);
}
#endif

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL_DIR\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  epctx_status* st = epctx_env_create(NULL, 0, &g_env);
  if (!st) st = epctx_env_register_builtin_drivers(g_env);
  if (st) {
    fprintf(stderr, "env: %s\n", epctx_status_message(st));
    return 1;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(runs_cpu_model_and_gives_exact_values),
    cmocka_unit_test(loads_from_buffer),
    cmocka_unit_test(rejects_wrong_input_shape_naming_input),
    cmocka_unit_test(missing_file_is_no_suchfile_naming_path),
    cmocka_unit_test(non_onnx_file_is_invalid_protobuf),
    cmocka_unit_test(truncated_model_is_invalid_protobuf),
    cmocka_unit_test(unknown_source_is_not_implemented_naming_node_and_source),
    cmocka_unit_test(missing_source_is_invalid_graph),
#if EPCTX_TEST_HAS_VNPU
    cmocka_unit_test(context_path_escaping_folder_is_rejected),
#endif
#if EPCTX_TEST_HAS_VNPU
    cmocka_unit_test(missing_context_file_is_invalid_graph_with_ort_prefix),
#endif
#if EPCTX_TEST_HAS_VNPU
    cmocka_unit_test(corrupt_container_is_invalid_graph),
#endif
    cmocka_unit_test(unknown_op_requires_compilation),
    cmocka_unit_test(unknown_option_key_is_rejected_by_name),
    cmocka_unit_test(intra_op_num_threads_takes_a_count_and_refuses_the_rest),
    cmocka_unit_test(reverse_ordered_graph_is_sorted_and_runs),
    cmocka_unit_test(cycle_is_invalid_graph_naming_a_node),
#if EPCTX_TEST_HAS_VNPU
    cmocka_unit_test(buffer_model_with_external_context_needs_context_file_path),
#endif
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  epctx_env_release(g_env);
  return rc;
}
