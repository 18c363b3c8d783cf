/* SPDX-License-Identifier: Apache-2.0 */
/* Bool tensors from outside hold one byte per element, and kernels load them
 * as C++ bool, for which any byte but 0 and 1 is undefined behaviour (the
 * kernel fuzzer found it: tests/fuzz, EPCTX_FUZZ_RAW_BOOL). They are
 * checked where they enter: initializers at create, caller inputs at run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>

static const char* g_dir;

static const char* path_of(const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

static void bool_initializer_with_byte_2_is_refused_at_create(void** state) {
  (void)state;
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(env, path_of("bool_init_byte2.onnx"), NULL, &s);
  assert_non_null(st);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_GRAPH);
  const char* msg = epctx_status_message(st);
  assert_non_null(strstr(msg, "initializer 'c'"));
  assert_non_null(strstr(msg, "bool element 2 is byte 2"));
  epctx_status_release(st);
  epctx_env_release(env);
}

static epctx_status* run_with_cond(epctx_env* env, epctx_session* s, const uint8_t* cond,
                                   float* out4) {
  int64_t dims[1] = {4};
  float x[4] = {1, 2, 3, 4};
  uint8_t c[4];
  memcpy(c, cond, 4);
  epctx_tensor *tc = NULL, *tx = NULL, *y = NULL;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_BOOL, dims, 1, c, sizeof c, &tc));
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 1, x, sizeof x, &tx));
  const char* names[2] = {"cond", "x"};
  const epctx_tensor* in[2] = {tc, tx};
  epctx_status* st = epctx_session_run(s, names, in, 2, NULL, &y, 1);
  if (!st) memcpy(out4, epctx_tensor_data(y), 16);
  epctx_tensor_release(y);
  epctx_tensor_release(tc);
  epctx_tensor_release(tx);
  return st;
}

static void bool_input_with_byte_2_is_refused_at_run(void** state) {
  (void)state;
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  epctx_session* s = NULL;
  assert_null(epctx_session_create(env, path_of("bool_input.onnx"), NULL, &s));
  float y[4];
  const uint8_t good[4] = {1, 0, 0, 1}, bad[4] = {1, 0, 2, 1};
  assert_null(run_with_cond(env, s, good, y));
  assert_true(y[0] == 1.0f && y[1] == -1.0f && y[2] == -1.0f && y[3] == 4.0f);
  epctx_status* st = run_with_cond(env, s, bad, y);
  assert_non_null(st);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "input 'cond': bool element 2 is byte 2"));
  epctx_status_release(st);
  epctx_session_release(s);
  epctx_env_release(env);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  g_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bool_initializer_with_byte_2_is_refused_at_create),
      cmocka_unit_test(bool_input_with_byte_2_is_refused_at_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
