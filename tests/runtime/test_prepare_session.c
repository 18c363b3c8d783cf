/* SPDX-License-Identifier: Apache-2.0 */
/* Prepared CPU kernels through a session: a model whose Conv, Gemm or MatMul
 * weights are constant initializers (packed once at create) gives the same
 * bits as the same model taking those weights as a graph input (never
 * prepared), at 1 and 2 intra-op threads, and the session-created log line
 * counts the packed bytes: more than the weights for the former, none for
 * the latter, and none either with session.disable_prepacking = 1, which
 * gives the same bits. Models: gen_runtime_models.py prepare_models(). Two threads
 * only where threads run (EPCTX_TEST_THREADS: qemu-user hangs creating
 * them, see tests/kernels). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>
#include <epctx/session_config_keys.h>

static const char* g_dir;

static const char* path_of(const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

static void check(epctx_status* st) {
  if (st) fail_msg("%s", epctx_status_message(st));
}

/* The "prepared weights N bytes" of the last session-created line. */
static unsigned long long g_prepared = ~0ull;

static void collect(void* user, int level, const char* message) {
  (void)user;
  (void)level;
  const char* p = strstr(message, "prepared weights ");
  if (p) g_prepared = strtoull(p + strlen("prepared weights "), NULL, 10);
}

typedef struct {
  const char* name; /* prepare_<name>_const.onnx / _input.onnx */
  int64_t x_dims[4];
  size_t x_rank;
  int64_t w_dims[4];
  size_t w_rank;
} op_case;

static size_t count(const int64_t* dims, size_t rank) {
  size_t n = 1;
  for (size_t i = 0; i < rank; ++i) n *= (size_t)dims[i];
  return n;
}

/* Runs one variant; returns the output's floats (malloc'd) and its count. */
static float* run_variant(epctx_env* env, const op_case* c, int constant, const char* threads,
                          int disable_prepacking, size_t* n_out, unsigned long long* prepared) {
  char file[128];
  snprintf(file, sizeof file, "prepare_%s_%s.onnx", c->name, constant ? "const" : "input");
  epctx_session_options* opts = NULL;
  check(epctx_session_options_create(&opts));
  check(epctx_session_options_set(opts, EPCTX_CONFIG_INTRA_OP_NUM_THREADS, threads));
  if (disable_prepacking)
    check(epctx_session_options_set(opts, EPCTX_CONFIG_DISABLE_PREPACKING, "1"));
  epctx_session* s = NULL;
  g_prepared = ~0ull;
  check(epctx_session_create(env, path_of(file), opts, &s));
  *prepared = g_prepared;
  epctx_session_options_release(opts);

  size_t nx = count(c->x_dims, c->x_rank), nw = count(c->w_dims, c->w_rank);
  float* x = malloc(nx * sizeof(float));
  float* w = malloc(nw * sizeof(float));
  for (size_t i = 0; i < nx; ++i) x[i] = (float)((int)((i * 104729u) % 23u) - 11) / 16.0f;
  for (size_t i = 0; i < nw; ++i) w[i] = (float)((int64_t)((i * 7919u) % 17u) - 8) / 8.0f;
  epctx_tensor* in[2] = {NULL, NULL};
  check(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, c->x_dims, c->x_rank, x, nx * sizeof(float),
                          &in[0]));
  check(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, c->w_dims, c->w_rank, w, nw * sizeof(float),
                          &in[1]));
  const char* names[2] = {"x", "w"};
  epctx_tensor* out[1] = {NULL};
  /* Twice: the second Run reads the same prepared state. */
  float* first = NULL;
  for (int run = 0; run < 2; ++run) {
    check(epctx_session_run(s, names, (const epctx_tensor* const*)in, constant ? 1 : 2, NULL, out,
                            1));
    size_t bytes = epctx_tensor_bytes(out[0]);
    if (!first) {
      first = malloc(bytes);
      memcpy(first, epctx_tensor_data(out[0]), bytes);
      *n_out = bytes / sizeof(float);
    } else {
      assert_memory_equal(first, epctx_tensor_data(out[0]), bytes);
    }
    epctx_tensor_release(out[0]);
  }
  epctx_tensor_release(in[0]);
  epctx_tensor_release(in[1]);
  free(x);
  free(w);
  epctx_session_release(s);
  return first;
}

static void constant_weights_are_prepared_and_give_the_same_bits(void** state) {
  (void)state;
  const op_case cases[] = {
      {"conv", {1, 16, 24, 23}, 4, {24, 16, 3, 3}, 4},
      {"gemm", {5, 300}, 2, {400, 300}, 2},
      {"matmul", {3, 33, 200}, 3, {200, 530}, 2},
  };
  epctx_env* env = NULL;
  check(epctx_env_create(NULL, EPCTX_LOG_INFO, &env));
  check(epctx_env_set_log_callback(env, collect, NULL));
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const op_case* c = &cases[k];
    float* want = NULL;
    size_t n_want = 0;
#ifdef EPCTX_TEST_THREADS
    const int thread_counts = 2;
#else
    const int thread_counts = 1;
#endif
    for (int t = 0; t < thread_counts; ++t) {
      const char* threads = t ? "2" : "1";
      size_t n_const = 0, n_input = 0;
      unsigned long long p_const = 0, p_input = 0;
      size_t n_off = 0;
      unsigned long long p_off = 0;
      float* y_const = run_variant(env, c, 1, threads, 0, &n_const, &p_const);
      float* y_input = run_variant(env, c, 0, threads, 0, &n_input, &p_input);
      float* y_off = run_variant(env, c, 1, threads, 1, &n_off, &p_off);
      assert_int_equal(p_off, 0);
      assert_int_equal(n_off, n_const);
      assert_memory_equal(y_off, y_const, n_const * sizeof(float));
      free(y_off);
      /* Packing keeps every weight (padded to the packing grid). */
      assert_true(p_const >= count(c->w_dims, c->w_rank) * sizeof(float));
      assert_true(p_const != ~0ull);
      assert_int_equal(p_input, 0);
      assert_int_equal(n_const, n_input);
      if (memcmp(y_const, y_input, n_const * sizeof(float)) != 0)
        fail_msg("%s at %s threads: prepared and unprepared outputs differ", c->name, threads);
      if (!want) {
        want = y_const;
        n_want = n_const;
      } else {
        assert_int_equal(n_want, n_const);
        assert_memory_equal(want, y_const, n_const * sizeof(float));
        free(y_const);
      }
      free(y_input);
    }
    free(want);
  }
  epctx_env_release(env);
}

int main(int argc, char** argv) {
  g_dir = argc > 1 ? argv[1] : ".";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(constant_weights_are_prepared_and_give_the_same_bits),
  };
  return cmocka_run_group_tests_name("prepare_session", tests, NULL, NULL);
}
