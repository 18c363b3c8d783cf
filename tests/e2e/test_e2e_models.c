/* SPDX-License-Identifier: Apache-2.0 */
/* End to end over every generated model (tests/models/generate.py):
 * epctx-compile --ep <ep> --embed-mode {0,1} -> C API session -> run ->
 * every output within |a-b| <= 1e-5 + 1e-4*|b| of the numpy reference.
 *
 * usage: test_e2e_models COMPILE_TOOL MODELS_DIR WORK_DIR EP
 * One cmocka test per case and embed mode, named <case>_<ep>_embed<m>; with
 * EP none (no context binary, embed mode has no effect) embed 0 only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_check.h"
#include "test_util.h"

static const char* g_compile;
static const char* g_models;
static const char* g_work;
static const char* g_ep;
static epctx_env* g_env;

typedef struct case_state {
  const char* name;
  int embed;
} case_state;

static void compiles_and_matches_reference(void** state) {
  const case_state* cs = *state;
  char dir[4096], path[4096], ctx[4096], msg[4096];
  tu_manifest m;
  snprintf(dir, sizeof(dir), "%s/%s", g_models, cs->name);
  snprintf(path, sizeof(path), "%s/manifest.txt", dir);
  if (tu_read_manifest(path, &m, msg, sizeof(msg))) fail_msg("%s", msg);

  char work[4096];
  snprintf(work, sizeof(work), "%s/%s_%s_embed%d", g_work, cs->name, g_ep, cs->embed);
  assert_int_equal(tu_make_clean_dir(work), 0);
  snprintf(path, sizeof(path), "%s/model.onnx", dir);
  snprintf(ctx, sizeof(ctx), "%s/model_ctx.onnx", work);
  /* Nothing for the backend still writes a model, all of it on the CPU. */
  if (mc_compile(g_compile, path, ctx, g_ep, cs->embed, NULL, work, msg, sizeof(msg)))
    fail_msg("%s", msg);

  mc_case_files files;
  mc_io io;
  mc_io_from_manifest(&m, dir, &files, &io);
  io.atol = 1e-5;
  io.rtol = 1e-4;
  epctx_session* s = NULL;
  if (mc_load_run_compare(g_env, ctx, &io, &s, NULL, NULL, msg, sizeof(msg))) fail_msg("%s", msg);

  size_t driver_nodes = epctx_session_driver_node_count(s);
  size_t cpu_nodes = epctx_session_cpu_node_count(s);
  epctx_session_release(s);
  if (!strcmp(g_ep, "none")) {
    /* No backend: the whole graph stays on CPU kernels. */
    assert_int_equal(driver_nodes, 0);
    assert_true(cpu_nodes > 0);
  } else {
    if (m.vnpu_driver_nodes >= 0) assert_int_equal(driver_nodes, m.vnpu_driver_nodes);
    if (m.vnpu_cpu_nodes >= 0) assert_int_equal(cpu_nodes, m.vnpu_cpu_nodes);
    /* A context binary beside the model exactly when embed_mode=0 put the
     * payload outside it. */
    snprintf(path, sizeof(path), "%s/model_vnpu.bin", work);
    if (driver_nodes > 0) assert_int_equal(tu_file_exists(path), cs->embed == 0);
  }
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s COMPILE_TOOL MODELS_DIR WORK_DIR EP\n", argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_models = argv[2];
  g_work = argv[3];
  g_ep = argv[4];
  char path[4096];
  snprintf(path, sizeof(path), "%s/cases.txt", g_models);
  char** names;
  long n = tu_read_lines(path, &names);
  if (n <= 0) {
    fprintf(stderr, "%s: no test cases (run tests/models/generate.py)\n", path);
    return 1;
  }
  epctx_status* st = epctx_env_create(NULL, 0, &g_env);
  if (!st) st = epctx_env_register_builtin_drivers(g_env);
  if (st) {
    fprintf(stderr, "env: %s\n", epctx_status_message(st));
    return 1;
  }
  /* Both embed modes with a backend; with --ep none nothing is embedded, so
   * each case runs once (embed 0). */
  size_t per = strcmp(g_ep, "none") ? 2 : 1;
  size_t count = (size_t)n * per;
  struct CMUnitTest* tests = calloc(count, sizeof(*tests));
  case_state* states = calloc(count, sizeof(*states));
  char(*titles)[256] = calloc(count, sizeof(*titles));
  for (size_t i = 0; i < count; ++i) {
    states[i].name = names[i / per];
    states[i].embed = (int)(i % per);
    snprintf(titles[i], sizeof(titles[i]), "%s_%s_embed%d", names[i / per], g_ep, states[i].embed);
    tests[i].name = titles[i];
    tests[i].test_func = compiles_and_matches_reference;
    tests[i].initial_state = &states[i];
  }
  char group[64];
  snprintf(group, sizeof(group), "e2e_models_%s", g_ep);
  int failed = _cmocka_run_group_tests(group, tests, count, NULL, NULL);
  free(titles);
  free(states);
  free(tests);
  tu_free_lines(names, n);
  epctx_env_release(g_env);
  return failed;
}
