/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps the peer benchmark working: runs peer_bench.py once in --quick mode
 * on the build's workers and checks the table and JSON it prints (their
 * shape and that every number is positive, never a speed), plus the
 * worker's and the driver's one-line errors.
 *
 * usage: test_peer_bench PYTHON PEER_BENCH_PY BUILD_DIR WORK_DIR */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

static const char* g_python;
static const char* g_script;
static const char* g_build;
static const char* g_work;
static tu_proc g_quick; /* the one --quick run every test reads */
static char g_json[4096];

/* CI's quick subset (peer_bench.py --models quick): tiny3, ocr_cls and the
 * zoo.json entries marked quick, in table order. */
static const char* const kModels[] = {
    "tiny3",        "ocr_cls",    "mobilenet_v3_small", "squeezenet1_1",
    "bert_encoder", "speech_rnn", "gemm_197x768x768",   "gemm_1x512x1000"};
enum { kNumModels = sizeof kModels / sizeof kModels[0] };

static int run_quick(void** state) {
  (void)state;
  snprintf(g_json, sizeof g_json, "%s/peer.json", g_work);
  const char* argv[] = {g_python,   g_script, "--build",    g_build, "--quick",
                        "--models", "quick",  "--json-out", g_json,  NULL};
  return tu_run_timeout(argv, g_work, 800, &g_quick);
}

static int free_quick(void** state) {
  (void)state;
  tu_proc_free(&g_quick);
  return 0;
}

static void quick_run_exits_zero(void** state) {
  (void)state;
  if (!g_quick.exited || g_quick.exit_code != 0)
    fail_msg("peer_bench.py --quick failed: %s", g_quick.err);
}

/* Header "model GFLOP parts npu% ..." with vnpu, none and ORT times and the
 * two ratios at 1 and at 2 threads, a rule, then one row per model: name,
 * GFLOP ("-" for tiny3), the vnpu package's partitions and share of MACs
 * ("-" where the model has none), then the ten numbers, each positive. */
static void table_has_one_row_per_model_with_both_eps_and_thread_counts(void** state) {
  (void)state;
  const char* out = g_quick.out;
  assert_true(strncmp(out, "model", 5) == 0);
  const char* eol = strchr(out, '\n');
  assert_non_null(eol);
  char head[1024];
  snprintf(head, sizeof head, "%.*s", (int)(eol - out), out);
  static const char* const kHead[] = {"GFLOP",      "parts",     "npu%",        "vnpu 1t ms",
                                      "none 1t ms", "ORT 1t ms", "vnpu/ORT 1t", "none/ORT 1t",
                                      "vnpu 2t ms", "ORT 2t ms", "none/ORT 2t"};
  for (size_t i = 0; i < sizeof kHead / sizeof kHead[0]; ++i)
    if (!strstr(head, kHead[i])) fail_msg("header lacks '%s': %s", kHead[i], head);
  for (int m = 0; m < kNumModels; ++m) {
    char needle[64];
    snprintf(needle, sizeof needle, "\n%s ", kModels[m]);
    const char* row = strstr(out, needle);
    if (!row) fail_msg("no table row for %s:\n%s", kModels[m], out);
    char line[512];
    const char* end = strchr(row + 1, '\n');
    snprintf(line, sizeof line, "%.*s", end ? (int)(end - row - 1) : 400, row + 1);
    char* cells[20];
    int n = 0;
    for (char* t = strtok(line, " "); t && n < 20; t = strtok(NULL, " ")) cells[n++] = t;
    if (n != 14) fail_msg("%s: %d cells, expected 14", kModels[m], n);
    assert_int_equal(strcmp(cells[1], "-") == 0, m == 0);
    if (m > 0 && !(strtod(cells[2], NULL) >= 1)) fail_msg("%s: parts '%s'", kModels[m], cells[2]);
    for (int c = 4; c < 14; ++c)
      if (!(strtod(cells[c], NULL) > 0)) fail_msg("%s: cell %d is '%s'", kModels[m], c, cells[c]);
  }
  /* The summary: median and worst per ep and thread count, models apart
   * from GEMM shapes. */
  assert_non_null(strstr(out, "\nvnpu/ORT 1t over 5 models: median "));
  assert_non_null(strstr(out, "\nnone/ORT 2t over 5 models: median "));
  assert_non_null(strstr(out, "\nvnpu/ORT 1t over 2 GEMM shapes: median "));
}

/* The JSON document names the benchmark, says it was quick, lists the
 * models in order with positive medians for every contender, and the
 * summary. */
static void json_file_has_every_model_and_positive_medians(void** state) {
  (void)state;
  size_t n = 0;
  char* doc = (char*)tu_read_file(g_json, &n);
  assert_non_null(doc);
  doc = realloc(doc, n + 1);
  doc[n] = '\0';
  assert_non_null(strstr(doc, "\"benchmark\": \"epctx-peer\""));
  assert_non_null(strstr(doc, "\"quick\": true"));
  const char* at = doc;
  for (int m = 0; m < kNumModels; ++m) {
    char needle[64];
    snprintf(needle, sizeof needle, "\"model\": \"%s\"", kModels[m]);
    const char* p = strstr(at, needle);
    if (!p) fail_msg("JSON lacks %s after the previous model", kModels[m]);
    at = p + 1;
  }
  int medians = 0;
  for (const char* key = strstr(doc, "\"median_ms\": "); key;
       key = strstr(key + 1, "\"median_ms\": ")) {
    assert_true(strtod(key + strlen("\"median_ms\": "), NULL) > 0);
    ++medians;
  }
  /* vnpu and none at 1 and 2 threads for every model */
  assert_int_equal(medians, 4 * kNumModels);
  assert_non_null(strstr(doc, "\"summary\": {"));
  for (const char* key = strstr(doc, "\"ort_median_ms\": "); key;
       key = strstr(key + 1, "\"ort_median_ms\": "))
    assert_true(strtod(key + strlen("\"ort_median_ms\": "), NULL) > 0);
  /* stdout ends with the same document */
  assert_non_null(strstr(g_quick.out, "\"benchmark\": \"epctx-peer\""));
  free(doc);
}

static void driver_names_a_missing_cache_in_one_line(void** state) {
  (void)state;
  const char* argv[] = {g_python,   g_script,  "--build", g_build, "--cache", "/nonexistent/cache",
                        "--models", "ocr_cls", NULL};
  tu_proc p;
  assert_int_equal(tu_run_timeout(argv, g_work, 60, &p), 0);
  assert_int_equal(p.exit_code, 1);
  assert_string_equal(p.out, "");
  assert_int_equal(tu_count_lines(p.err), 1);
  assert_true(strncmp(p.err, "peer_bench.py: error: ", 22) == 0);
  assert_non_null(strstr(p.err, "/nonexistent/cache"));
  tu_proc_free(&p);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: test_peer_bench PYTHON PEER_BENCH_PY BUILD_DIR WORK_DIR\n");
    return 2;
  }
  g_python = argv[1];
  g_script = argv[2];
  g_build = argv[3];
  g_work = argv[4];
  if (tu_make_clean_dir(g_work) != 0) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quick_run_exits_zero),
      cmocka_unit_test(table_has_one_row_per_model_with_both_eps_and_thread_counts),
      cmocka_unit_test(json_file_has_every_model_and_positive_medians),
      cmocka_unit_test(driver_names_a_missing_cache_in_one_line),
  };
  return cmocka_run_group_tests(tests, run_quick, free_quick);
}
