/* SPDX-License-Identifier: Apache-2.0 */
/* ORT accepts our output. Runs ort_accepts.sh once (it compiles every
 * tests/models case with embed 0, embed 1 + prefix and --ep none, collects
 * the ctx models the gen_* tests wrote, and hands them to the onnx checker
 * and to ONNX Runtime 1.30 through ort_accepts.js), then asserts each of its
 * verdicts as its own case.
 * argv: SCRIPT EPCTX_COMPILE MODELS_DIR WORK_DIR CACHE_DIR NODE PYTHON */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

static char** g_argv;
static tu_proc g_run;
static char g_work[4096];

/* The number after `prefix` in the script's stdout, or -1. */
static long number_after(const char* prefix) {
  const char* p = strstr(g_run.out ? g_run.out : "", prefix);
  return p ? strtol(p + strlen(prefix), NULL, 10) : -1;
}

static int run_script(void** state) {
  (void)state;
  const char* argv[] = {"/bin/bash", g_argv[1], g_argv[2], g_argv[3], g_argv[4],
                        g_argv[5],   g_argv[6], g_argv[7], NULL};
  snprintf(g_work, sizeof g_work, "%s/ort-accepts-run", g_argv[4]);
  if (tu_make_clean_dir(g_work) != 0) return -1;
  if (tu_run(argv, g_work, &g_run) != 0) return -1;
  printf("%s%s", g_run.out, g_run.err);
  return 0;
}

static int free_run(void** state) {
  (void)state;
  tu_proc_free(&g_run);
  return 0;
}

static void script_completes(void** state) {
  (void)state;
  assert_true(g_run.exited);
  if (g_run.exit_code != 0) fail_msg("ort_accepts.sh exited %d: %s", g_run.exit_code, g_run.err);
}

static void onnx_checker_passes_every_generated_model(void** state) {
  (void)state;
  long n = number_after("checker passed ");
  if (n < 100) fail_msg("expected the checker to pass >= 100 models, got %ld", n);
}

static void ort_schema_accepts_every_model_and_rejects_the_control(void** state) {
  (void)state;
  const char* p = strstr(g_run.out ? g_run.out : "", "ort_accepts: ");
  long ok = -1, total = -2;
  while (p && sscanf(p, "ort_accepts: %ld/%ld models as expected", &ok, &total) != 2)
    p = strstr(p + 1, "ort_accepts: ");
  if (!p || ok != total || total < 130)
    fail_msg("expected N/N models as expected (N >= 130), got %ld/%ld", ok, total);
  assert_null(strstr(g_run.out, "FAIL "));
}

static void cpu_only_outputs_run_in_ort_like_their_sources(void** state) {
  (void)state;
  char list[4200];
  snprintf(list, sizeof list, "%s/ort/list.txt", g_argv[4]);
  FILE* f = fopen(list, "r");
  assert_non_null(f);
  char line[8192];
  int same = 0;
  while (fgets(line, sizeof line, f)) same += strncmp(line, "same ", 5) == 0;
  fclose(f);
  if (same < 30) fail_msg("expected >= 30 --ep none models compared in ORT, found %d", same);
  assert_null(strstr(g_run.out, "FAIL same"));
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: test_ort_accepts SCRIPT COMPILE MODELS WORK CACHE NODE PYTHON\n");
    return 2;
  }
  g_argv = argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(script_completes),
      cmocka_unit_test(onnx_checker_passes_every_generated_model),
      cmocka_unit_test(ort_schema_accepts_every_model_and_rejects_the_control),
      cmocka_unit_test(cpu_only_outputs_run_in_ort_like_their_sources),
  };
  return cmocka_run_group_tests(tests, run_script, free_run);
}
