/* SPDX-License-Identifier: Apache-2.0 */
/* Real models from npm packages (openWakeWord, PaddleOCR; fetched and run
 * through ONNX Runtime by the real_models_fetch fixture) compiled with
 * epctx-compile for vnpu and for CPU only, run through the C API and compared
 * with ONNX Runtime's outputs.
 *
 * Tolerance, per element: |a - b| <= 1e-4 * max|b| + 1e-4 * |b|
 * (rtol 1e-4; atol 1e-4 scaled by the output's largest magnitude). A fixed
 * atol would be meaningless across outputs whose scales differ by 10^4: the
 * log-mel spectrogram is ~80 dB where a float32 ULP is 8e-6 and the Log of a
 * sum of squares differs from ORT's in the last bits; the detector's sigmoid
 * map is in [0, 1]. Accumulation order differs from ORT's (no fused or
 * Winograd kernels), which float32 allows. A quantised model of the zoo
 * has its own absolute tolerance in atol.txt (tests/bench/zoo/README.md).
 *
 * usage: test_real_models COMPILE_TOOL CACHE_DIR WORK_DIR [CASES_FILE]
 * CASES_FILE (default CACHE_DIR/ref/cases.txt) names the models, one a line;
 * the model zoo's quick subset runs as CACHE_DIR = the zoo, CASES_FILE its
 * ref/quick.txt (tests/bench/zoo). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_check.h"
#include "npy.h"
#include "test_util.h"

#define RTOL 1e-4
#define ATOL_SCALE 1e-4

static const char* g_compile;
static const char* g_cache;
static const char* g_work;
static epctx_env* g_env;

typedef struct model_state {
  const char* name;
  const char* ep;
  int embed;
} model_state;

/* The scaled atol: ATOL_SCALE * largest |expected| over the outputs. */
static double scaled_atol(const mc_io* io) {
  double scale = 0;
  for (size_t i = 0; i < io->num_outputs; ++i) {
    epctx_npy e;
    char err[512];
    if (epctx_npy_read(io->expected_files[i], &e, err, sizeof(err))) fail_msg("%s", err);
    if (e.dtype != EPCTX_DTYPE_FLOAT) fail_msg("%s: expected float32", io->expected_files[i]);
    double max_abs, max_ref;
    tu_max_errors(e.data, e.data, e.bytes / 4, &max_abs, &max_ref);
    if (max_ref > scale) scale = max_ref;
    epctx_npy_free(&e);
  }
  return ATOL_SCALE * scale;
}

static void matches_onnxruntime(void** state) {
  const model_state* ms = *state;
  char dir[4096], path[4096], model[4096], ctx[4096], work[4096], msg[4096];
  tu_manifest m;
  snprintf(dir, sizeof(dir), "%s/ref/%s", g_cache, ms->name);
  snprintf(path, sizeof(path), "%s/manifest.txt", dir);
  if (tu_read_manifest(path, &m, msg, sizeof(msg))) fail_msg("%s", msg);

  snprintf(work, sizeof(work), "%s/%s_%s", g_work, ms->name, ms->ep);
  assert_int_equal(tu_make_clean_dir(work), 0);
  snprintf(model, sizeof(model), "%s/models/%s.onnx", g_cache, ms->name);
  snprintf(ctx, sizeof(ctx), "%s/%s_ctx.onnx", work, ms->name);
  const char* extra[2 * TU_MAX_IO + 1];
  size_t n = 0;
  for (size_t i = 0; i < m.num_input_shapes; ++i) {
    extra[n++] = "--input-shape";
    extra[n++] = m.input_shapes[i];
  }
  extra[n] = NULL;
  double t0 = mc_now_ms();
  char summary[4096];
  if (mc_compile_summary(g_compile, model, ctx, ms->ep, ms->embed, extra, work, msg, sizeof(msg),
                         summary, sizeof(summary)))
    fail_msg("%s", msg);
  /* "..., N MACs, P% on vnpu; ..." from the summary line. */
  double share = -1;
  const char* macs = strstr(summary, " MACs, ");
  if (macs) share = atof(macs + 7);
  /* "...; N partitions; ..." or "...; N partitions (K per run); ...": the
   * EPContext nodes one run executes at most (an If's larger branch). */
  long partitions = -1;
  const char* parts = strstr(summary, " per run);");
  if (!parts) parts = strstr(summary, " partitions;");
  if (parts) {
    while (parts > summary && parts[-1] >= '0' && parts[-1] <= '9') --parts;
    partitions = atol(parts);
  }
  double compile_ms = mc_now_ms() - t0;

  mc_case_files files;
  mc_io io;
  mc_io_from_manifest(&m, dir, &files, &io);
  io.rtol = RTOL;
  io.atol = scaled_atol(&io);
  /* A quantised model's tolerance, written by ort_reference.js from the
   * zoo's atol_steps or atol (tests/bench/zoo/README.md says why). */
  snprintf(path, sizeof(path), "%s/atol.txt", dir);
  FILE* af = fopen(path, "r");
  if (af) {
    double atol = 0;
    int ok = fscanf(af, "%lf", &atol) == 1 && atol > 0;
    fclose(af);
    if (!ok) fail_msg("%s: expected a positive tolerance", path);
    io.atol = atol;
    io.rtol = 0;
  }

  epctx_session* s = NULL;
  double create_ms = 0, run_ms = 0;
  /* A case the CPU kernels cannot run yet (tests/exporters: float16 Conv)
   * names the error it expects in cpu_error.txt: the CPU-only model must
   * fail with it, and passes nothing by being skipped. */
  char cpu_error[256] = "";
  snprintf(path, sizeof(path), "%s/cpu_error.txt", dir);
  FILE* ce = strcmp(ms->ep, "none") ? NULL : fopen(path, "r");
  if (ce) {
    if (!fgets(cpu_error, sizeof(cpu_error), ce)) cpu_error[0] = '\0';
    fclose(ce);
    cpu_error[strcspn(cpu_error, "\n")] = '\0';
    int rc = mc_load_run_compare(g_env, ctx, &io, &s, &create_ms, &run_ms, msg, sizeof(msg));
    if (s) epctx_session_release(s);
    if (rc == 0 || !cpu_error[0] || !strstr(msg, cpu_error))
      fail_msg("%s --ep none: expected the error '%s', got '%s'", ms->name, cpu_error,
               rc ? msg : "success");
    printf("  %-16s --ep none fails as expected: %s\n", ms->name, cpu_error);
    return;
  }
  if (mc_load_run_compare(g_env, ctx, &io, &s, &create_ms, &run_ms, msg, sizeof(msg)))
    fail_msg("%s (atol %.3g, rtol %g)", msg, io.atol, io.rtol);
  size_t driver_nodes = epctx_session_driver_node_count(s);
  size_t cpu_nodes = epctx_session_cpu_node_count(s);
  epctx_session_release(s);
  printf("  %-16s --ep %-4s compile %8.1f ms, session create %7.2f ms, first run %8.2f ms"
         " (%zu EPContext + %zu CPU nodes; %.1f%% of MACs on %s)\n",
         ms->name, ms->ep, compile_ms, create_ms, run_ms, driver_nodes, cpu_nodes, share, ms->ep);
  if (!strcmp(ms->ep, "none")) assert_int_equal(driver_nodes, 0);
  /* Issue 11's goal: at least 90% of every real model's MACs on vnpu; a
   * case whose ops do not allow it says its floor in min_vnpu_share.txt
   * (tests/exporters). */
  double floor_share = 90.0;
  snprintf(path, sizeof(path), "%s/min_vnpu_share.txt", dir);
  FILE* f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%lf", &floor_share) != 1) fail_msg("%s: expected a percentage", path);
    fclose(f);
  }
  if (!strcmp(ms->ep, "vnpu") && share < floor_share)
    fail_msg("%s: %.1f%% of MACs on vnpu, expected at least %.1f%%", ms->name, share, floor_share);
  /* Issue 27's goal: at most 3 partitions a run (each a round trip to the
   * NPU). */
  if (!strcmp(ms->ep, "vnpu") && (partitions < 0 || partitions > 3))
    fail_msg("%s: %ld vnpu partitions, expected 1 to 3 (summary: %s)", ms->name, partitions,
             summary);
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s COMPILE_TOOL CACHE_DIR WORK_DIR [CASES_FILE]\n", argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_cache = argv[2];
  g_work = argv[3];
  char path[4096];
  if (argc == 5) snprintf(path, sizeof(path), "%s", argv[4]);
  else snprintf(path, sizeof(path), "%s/ref/cases.txt", g_cache);
  char** names;
  long n = tu_read_lines(path, &names);
  if (n <= 0) {
    /* The fixture failed or never ran: this is a failure, not a skip. */
    fprintf(stderr, "%s: no reference cases (tests/real/fetch_models.sh + ort_reference.js)\n",
            path);
    return 1;
  }
  epctx_status* st = epctx_env_create(NULL, 0, &g_env);
  if (!st) st = epctx_env_register_builtin_drivers(g_env);
  if (st) {
    fprintf(stderr, "env: %s\n", epctx_status_message(st));
    return 1;
  }
  static const char* const eps[] = {"vnpu", "none"};
  size_t count = (size_t)n * 2;
  struct CMUnitTest* tests = calloc(count, sizeof(*tests));
  model_state* states = calloc(count, sizeof(*states));
  char(*titles)[128] = calloc(count, sizeof(*titles));
  for (size_t i = 0; i < count; ++i) {
    states[i].name = names[i / 2];
    states[i].ep = eps[i % 2];
    /* vnpu with its binary beside the model, CPU-only embedded. */
    states[i].embed = i % 2;
    snprintf(titles[i], sizeof(titles[i]), "%s_%s", names[i / 2], eps[i % 2]);
    tests[i].name = titles[i];
    tests[i].test_func = matches_onnxruntime;
    tests[i].initial_state = &states[i];
  }
  int failed = _cmocka_run_group_tests("real_models", tests, count, NULL, NULL);
  free(titles);
  free(states);
  free(tests);
  tu_free_lines(names, n);
  epctx_env_release(g_env);
  return failed;
}
