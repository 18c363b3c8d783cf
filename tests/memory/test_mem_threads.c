/* SPDX-License-Identifier: Apache-2.0 */
/* One session Run from many threads, and sessions created and released from
 * many threads with sharing on. CI runs this program under ThreadSanitizer
 * too (preset host-tsan).
 * usage: test_mem_threads PACKAGE_DIR [cpu | intra | intra-vnpu]
 *   PACKAGE_DIR holds model_ctx.onnx; with `cpu` the runs use its source
 *   model.onnx (no EPContext nodes), exercising the CPU kernels, not vnpu;
 *   with `intra`, model.onnx again, on sessions with intra-op threads: the
 *   concurrent runs share one pool and must match a one-thread session;
 *   with `intra-vnpu`, the same on model_ctx.onnx: the vnpu driver splits
 *   its work over the pool (HAL 2.2 execute_parallel). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mem_util.h"

#define THREADS 8
#define RUNS 1000
#define SEEDS 4

static char g_model[4096];
static int g_cpu;        /* the package runs on CPU kernels only */
static int g_vnpu_intra; /* intra-op threads on the vnpu package */
static int g_runs;       /* runs per thread */
static epctx_env* g_env;
static float g_ref[SEEDS][MEM_MAX_OUT];
static size_t g_ref_n;

typedef struct job {
  epctx_session* s;
  int index;
  int mismatches;
  epctx_session_options* group_options; /* hold a reference to the group */
  pthread_barrier_t* ready;
} job;

static void* run_many(void* arg) {
  job* j = arg;
  static __thread float out[MEM_MAX_OUT];
  for (int r = 0; r < g_runs; ++r) {
    int seed = (r + j->index) % SEEDS;
    size_t n = mem_run(g_env, j->s, seed, out);
    if (n != g_ref_n || memcmp(out, g_ref[seed], n * 4) != 0) j->mismatches++;
  }
  return NULL;
}

static void references(epctx_session* s) {
  for (int seed = 0; seed < SEEDS; ++seed) g_ref_n = mem_run(g_env, s, seed, g_ref[seed]);
  assert_true(g_ref_n > 0);
}

static void eight_threads_thousand_runs_are_bit_identical(void** state) {
  (void)state;
  epctx_session* s = mem_create(g_env, g_model, NULL, NULL, NULL);
  if (g_cpu) {
    assert_int_equal(epctx_session_driver_node_count(s), 0);
    assert_true(epctx_session_cpu_node_count(s) > 0);
  } else {
    assert_true(epctx_session_driver_node_count(s) > 0);
  }
  references(s);
  pthread_t t[THREADS];
  job jobs[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    jobs[i] = (job){s, i, 0, NULL, NULL};
    assert_int_equal(pthread_create(&t[i], NULL, run_many, &jobs[i]), 0);
  }
  int bad = 0;
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(t[i], NULL);
    bad += jobs[i].mismatches;
  }
  assert_int_equal(bad, 0);
  epctx_session_release(s);
}

/* Each thread creates, runs and releases sessions that share contexts (the
 * env's workspace, or an explicit group released before its sessions). */
static void* create_many(void* arg) {
  job* j = arg;
  static const char* const kShare[] = {"ep.share_ep_contexts", "1", NULL};
  static __thread float out[MEM_MAX_OUT];
  for (int r = 0; r < 25; ++r) {
    epctx_session* a = mem_create(g_env, g_model, NULL, kShare, NULL);
    epctx_session* b = NULL;
    mem_check(epctx_session_create(g_env, g_model, j->group_options, &b), "create in group");
    /* After every thread's first pair exists, the handle goes (see below). */
    if (r == 0) pthread_barrier_wait(j->ready);
    int seed = r % SEEDS;
    size_t n = mem_run(g_env, a, seed, out);
    if (n != g_ref_n || memcmp(out, g_ref[seed], n * 4) != 0) j->mismatches++;
    n = mem_run(g_env, b, seed, out);
    if (n != g_ref_n || memcmp(out, g_ref[seed], n * 4) != 0) j->mismatches++;
    /* Alternate the release order. */
    if (r & 1) {
      epctx_session_release(a);
      epctx_session_release(b);
    } else {
      epctx_session_release(b);
      epctx_session_release(a);
    }
  }
  epctx_session_options_release(j->group_options);
  return NULL;
}

static void sessions_created_concurrently_with_sharing(void** state) {
  (void)state;
  epctx_session* s = mem_create(g_env, g_model, NULL, NULL, NULL);
  references(s);
  epctx_session_release(s);
  epctx_context_group* group = NULL;
  mem_check(epctx_context_group_create(g_env, &group), "group");
  pthread_t t[THREADS];
  job jobs[THREADS];
  pthread_barrier_t ready;
  pthread_barrier_init(&ready, NULL, THREADS + 1);
  for (int i = 0; i < THREADS; ++i) {
    jobs[i] = (job){NULL, i, 0, NULL, &ready};
    mem_check(epctx_session_options_create(&jobs[i].group_options), "options");
    mem_check(epctx_session_options_set_context_group(jobs[i].group_options, group), "group");
    assert_int_equal(pthread_create(&t[i], NULL, create_many, &jobs[i]), 0);
  }
  /* Released while sessions (and options) still use it: they hold
   * references, the last of which frees it. */
  pthread_barrier_wait(&ready);
  epctx_context_group_release(group);
  int bad = 0;
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(t[i], NULL);
    bad += jobs[i].mismatches;
  }
  assert_int_equal(bad, 0);
  pthread_barrier_destroy(&ready);
}

/* The model's products are large enough to be cut over threads; runs from
 * THREADS callers find the pool busy or free in every interleaving. */
static void intra_op_threads_match_one_thread_under_concurrent_runs(void** state) {
  (void)state;
  static const char* const kOne[] = {"session.intra_op_num_threads", "1", NULL};
  static const char* const kThree[] = {"session.intra_op_num_threads", "3", NULL};
  epctx_session* one = mem_create(g_env, g_model, NULL, kOne, NULL);
  assert_int_equal(epctx_session_intra_op_thread_count(one), 1);
  references(one);
  epctx_session_release(one);
  epctx_session* s = mem_create(g_env, g_model, NULL, kThree, NULL);
  /* every node on vnpu: the pool is there for the driver alone */
  if (g_vnpu_intra) assert_int_equal(epctx_session_cpu_node_count(s), 0);
  assert_int_equal(epctx_session_intra_op_thread_count(s), 3);
  static float out[MEM_MAX_OUT];
  for (int seed = 0; seed < SEEDS; ++seed) {
    assert_int_equal(mem_run(g_env, s, seed, out), g_ref_n);
    assert_memory_equal(out, g_ref[seed], g_ref_n * 4);
  }
  pthread_t t[THREADS];
  job jobs[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    jobs[i] = (job){s, i, 0, NULL, NULL};
    assert_int_equal(pthread_create(&t[i], NULL, run_many, &jobs[i]), 0);
  }
  int bad = 0;
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(t[i], NULL);
    bad += jobs[i].mismatches;
  }
  assert_int_equal(bad, 0);
  epctx_session_release(s);
}

int main(int argc, char** argv) {
  g_vnpu_intra = argc == 3 && strcmp(argv[2], "intra-vnpu") == 0;
  int intra = g_vnpu_intra || (argc == 3 && strcmp(argv[2], "intra") == 0);
  if (argc != 2 && !(argc == 3 && (strcmp(argv[2], "cpu") == 0 || intra))) {
    fprintf(stderr, "usage: test_mem_threads PACKAGE_DIR [cpu | intra | intra-vnpu]\n");
    return 2;
  }
  g_cpu = argc == 3 && !g_vnpu_intra;
  g_runs = intra ? 50 : RUNS;
  snprintf(g_model, sizeof g_model, "%s/%s", argv[1], g_cpu ? "model.onnx" : "model_ctx.onnx");
  mem_check(epctx_env_create(NULL, 1, &g_env), "env");
  mem_check(epctx_env_register_builtin_drivers(g_env), "drivers");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eight_threads_thousand_runs_are_bit_identical),
      cmocka_unit_test(sessions_created_concurrently_with_sharing),
  };
  const struct CMUnitTest intra_tests[] = {
      cmocka_unit_test(intra_op_threads_match_one_thread_under_concurrent_runs),
  };
  int rc = intra ? cmocka_run_group_tests(intra_tests, NULL, NULL)
                 : cmocka_run_group_tests(tests, NULL, NULL);
  epctx_env_release(g_env);
  return rc;
}
