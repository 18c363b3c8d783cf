/* SPDX-License-Identifier: Apache-2.0 */
/* A runtime built with EPCTX_CPU_OPS=small_cnn_ops.txt (the ops of the
 * small CNN's CPU package): it runs that package, and refuses a model that needs a kernel the
 * list left out at session creation, with MODEL_REQUIRES_COMPILATION naming
 * the op. check_selective_symbols.py checks the same program's symbols. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>

static const char* g_small_cnn;  /* small_cnn/model.onnx compiled --ep none */
static const char* g_models_dir; /* tests/runtime generated models */
static epctx_env* g_env;

static const char* runtime_model(const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", g_models_dir, name);
  return buf;
}

static void runs_model_whose_ops_are_all_listed(void** state) {
  (void)state;
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(g_env, g_small_cnn, NULL, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  assert_int_equal(epctx_session_cpu_node_count(s), 7);
  static float x[1 * 3 * 16 * 16];
  for (size_t i = 0; i < sizeof x / sizeof x[0]; ++i) x[i] = (float)(i % 7) * 0.25f - 0.5f;
  int64_t dims[4] = {1, 3, 16, 16};
  epctx_tensor* in = NULL;
  assert_null(epctx_tensor_wrap(g_env, EPCTX_DTYPE_FLOAT, dims, 4, x, sizeof x, &in));
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {in};
  epctx_tensor* out[1] = {NULL};
  st = epctx_session_run(s, names, ins, 1, NULL, out, 1);
  if (st) fail_msg("%s", epctx_status_message(st));
  /* Softmax over 10 classes: positive, summing to 1. */
  const float* p = (const float*)epctx_tensor_data(out[0]);
  float sum = 0;
  for (int i = 0; i < 10; ++i) {
    assert_true(p[i] > 0.0f);
    sum += p[i];
  }
  assert_float_equal(sum, 1.0f, 1e-5f);
  epctx_tensor_release(out[0]);
  epctx_tensor_release(in);
  epctx_session_release(s);
}

static void refuses_left_out_op_at_session_create_naming_it(void** state) {
  (void)state;
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(g_env, runtime_model("add_relu.onnx"), NULL, &s);
  assert_non_null(st);
  const char* msg = epctx_status_message(st);
  assert_int_equal(epctx_status_code(st), EPCTX_MODEL_REQUIRES_COMPILATION);
  if (!strstr(msg, "node 'add0': op Add") || !strstr(msg, "EPCTX_CPU_OPS"))
    fail_msg("message should name node, op and EPCTX_CPU_OPS: %s", msg);
  assert_null(s);
  epctx_status_release(st);
}

static void unknown_op_is_not_blamed_on_the_op_list(void** state) {
  (void)state;
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(g_env, runtime_model("unknown_op.onnx"), NULL, &s);
  assert_non_null(st);
  const char* msg = epctx_status_message(st);
  assert_int_equal(epctx_status_code(st), EPCTX_MODEL_REQUIRES_COMPILATION);
  if (!strstr(msg, "NoSuchOp") || strstr(msg, "EPCTX_CPU_OPS"))
    fail_msg("message should name NoSuchOp and not the op list: %s", msg);
  epctx_status_release(st);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SMALL_CNN_PACKAGE RUNTIME_MODEL_DIR\n", argv[0]);
    return 2;
  }
  g_small_cnn = argv[1];
  g_models_dir = argv[2];
  epctx_status* st = epctx_env_create(NULL, 0, &g_env);
  if (!st) st = epctx_env_register_builtin_drivers(g_env);
  if (st) {
    fprintf(stderr, "env: %s\n", epctx_status_message(st));
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runs_model_whose_ops_are_all_listed),
      cmocka_unit_test(refuses_left_out_op_at_session_create_naming_it),
      cmocka_unit_test(unknown_op_is_not_blamed_on_the_op_list),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  epctx_env_release(g_env);
  return failed;
}
