/* SPDX-License-Identifier: Apache-2.0 */
/* epctx-bench's allocation and thread report, and the counting allocator it
 * reports through.
 *
 * usage: test_epctx_bench EPCTX_BENCH EPCTX_COMPILE TINY_DIR WORK_DIR
 * TINY_DIR is what gen_tiny_model.py wrote (tiny3.onnx: Add, Mul, Relu on
 * [1, 16] float). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "counting_allocator.h"
#include "model_check.h"
#include "test_util.h"

static const char* g_bench;
static const char* g_compile;
static const char* g_tiny;
static const char* g_work;

static void counting_allocator_counts_calls_bytes_and_peak(void** state) {
  (void)state;
  epctx_counting_allocator c;
  epctx_counting_allocator_init(&c);
  epctx_allocator* a = &c.allocator;
  void* p = a->alloc(a->user, 100, 64);
  void* q = a->alloc(a->user, 50, 4096);
  assert_non_null(p);
  assert_non_null(q);
  assert_int_equal((uintptr_t)p % 64, 0);
  assert_int_equal((uintptr_t)q % 4096, 0);
  memset(p, 1, 100);
  memset(q, 2, 50);
  a->free(a->user, p);
  epctx_alloc_counts r = epctx_counting_allocator_read(&c);
  assert_int_equal(r.allocs, 2);
  assert_int_equal(r.frees, 1);
  assert_int_equal(r.bytes, 150);
  assert_int_equal(r.live, 50);
  assert_int_equal(r.peak, 150);

  /* A mark starts the peak again from what is live. */
  epctx_alloc_counts m = epctx_counting_allocator_mark(&c);
  assert_int_equal(m.peak, 50);
  void* s = a->alloc(a->user, 10, 1);
  a->free(a->user, s);
  a->free(a->user, q);
  a->free(a->user, NULL);
  r = epctx_counting_allocator_read(&c);
  assert_int_equal(r.peak, 60);
  assert_int_equal(r.live, 0);
  assert_int_equal(r.frees, 3);
}

static long long json_int(const char* json, const char* key) {
  char k[128];
  snprintf(k, sizeof k, "\"%s\": ", key);
  const char* p = strstr(json, k);
  if (!p) fail_msg("epctx-bench --json has no %s: %s", key, json);
  char* end;
  long long v = strtoll(p + strlen(k), &end, 10);
  if (end == p + strlen(k)) fail_msg("%s is not an integer: %.40s", key, p);
  return v;
}

static void bench_reports_threads_and_allocations_per_run(void** state) {
  (void)state;
  char model[4096], ctx[4096], input[4096], arg[4096], msg[4096];
  assert_int_equal(tu_make_clean_dir(g_work), 0);
  snprintf(model, sizeof model, "%s/tiny3.onnx", g_tiny);
  snprintf(ctx, sizeof ctx, "%s/tiny3_ctx.onnx", g_work);
  snprintf(input, sizeof input, "%s/tiny3/input_0.npy", g_tiny);
  if (mc_compile(g_compile, model, ctx, "none", 1, NULL, g_work, msg, sizeof msg))
    fail_msg("%s", msg);
  snprintf(arg, sizeof arg, "x=%s", input);
  const char* argv[] = {g_bench, ctx, "--input", arg, "--repeat", "5", "--json", NULL};
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  if (!p.exited || p.exit_code != 0) fail_msg("epctx-bench failed: %s", p.err);

  /* Three CPU nodes: the session holds their plan, each run at least
   * allocates its [1, 16] float output (64 bytes), which is live at the end. */
  assert_true(json_int(p.out, "create_allocs") >= 1);
  assert_true(json_int(p.out, "create_held_bytes") > 0);
  long long per_run = json_int(p.out, "allocs_per_run");
  assert_true(per_run >= 1);
  assert_true(json_int(p.out, "first_run_allocs") >= per_run);
  assert_true(json_int(p.out, "alloc_bytes_per_run") >= 64);
  assert_true(json_int(p.out, "run_peak_bytes") >= 64);
  assert_true(json_int(p.out, "run_peak_bytes") <= json_int(p.out, "alloc_bytes_per_run"));
  assert_true(json_int(p.out, "page_faults_per_run") >= 0);
  assert_int_equal(json_int(p.out, "threads"), 1);
  /* The session's own count: the cores by default, at least the caller. */
  assert_true(json_int(p.out, "intra_op_threads") >= 1);
  tu_proc_free(&p);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s EPCTX_BENCH EPCTX_COMPILE TINY_DIR WORK_DIR\n", argv[0]);
    return 2;
  }
  g_bench = argv[1];
  g_compile = argv[2];
  g_tiny = argv[3];
  g_work = argv[4];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(counting_allocator_counts_calls_bytes_and_peak),
      cmocka_unit_test(bench_reports_threads_and_allocations_per_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
