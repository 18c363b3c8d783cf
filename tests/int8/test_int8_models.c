/* SPDX-License-Identifier: Apache-2.0 */
/* The quantised models of gen_int8_models.py (static QDQ models with
 * uint8 and int8 activations, a dynamically quantised one, QLinearConv /
 * QLinearMatMul) compiled for vnpu: every node and at least 90%
 * of the MACs go to vnpu's int8 level, the outputs match ONNX Runtime 1.30
 * (ort_int8.js) within one quantisation step of each output (atol.txt), and
 * a vnpu without the int8 level (configured as hardware vnpu-1.0 / SDK
 * 1.0.0) refuses the package by the version rules.
 *
 * usage: test_int8_models COMPILE_TOOL WORK_DIR */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/vnpu.h>

#include "model_check.h"
#include "test_util.h"

static const char* g_compile;
static const char* g_work;

/* One quantisation step: the smallest of the outputs' steps in atol.txt. */
static double one_step(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/atol.txt", dir);
  char** lines;
  long n = tu_read_lines(path, &lines);
  if (n <= 0) fail_msg("%s: no tolerances", path);
  double step = atof(lines[0]);
  for (long i = 1; i < n; ++i)
    if (atof(lines[i]) < step) step = atof(lines[i]);
  tu_free_lines(lines, n);
  return step;
}

static epctx_env* new_env(void) {
  epctx_env* env = NULL;
  epctx_status* st = epctx_env_create(NULL, 0, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  if (st) fail_msg("env: %s", epctx_status_message(st));
  return env;
}

/* Compiles case `name` for vnpu into WORK/<name>_vnpu; returns the MAC share. */
static double compile_case(const char* name, char* ctx, size_t ctx_size, tu_manifest* m) {
  char dir[4096], path[4096], model[4096], work[4096], msg[4096], summary[4096];
  snprintf(dir, sizeof(dir), "%s/%s", g_work, name);
  snprintf(path, sizeof(path), "%s/manifest.txt", dir);
  if (tu_read_manifest(path, m, msg, sizeof(msg))) fail_msg("%s", msg);
  snprintf(work, sizeof(work), "%s/%s_vnpu", g_work, name);
  assert_int_equal(tu_make_clean_dir(work), 0);
  snprintf(model, sizeof(model), "%s/model.onnx", dir);
  snprintf(ctx, ctx_size, "%s/%s_ctx.onnx", work, name);
  const char* extra[1] = {NULL};
  if (mc_compile_summary(g_compile, model, ctx, "vnpu", 0, extra, work, msg, sizeof(msg), summary,
                         sizeof(summary)))
    fail_msg("%s", msg);
  const char* macs = strstr(summary, " MACs, ");
  return macs ? atof(macs + 7) : -1;
}

static void matches_onnxruntime(void** state) {
  const char* name = *state;
  char ctx[4096], dir[4096], msg[4096];
  tu_manifest m;
  double share = compile_case(name, ctx, sizeof(ctx), &m);
  snprintf(dir, sizeof(dir), "%s/%s", g_work, name);
  mc_case_files files;
  mc_io io;
  mc_io_from_manifest(&m, dir, &files, &io);
  io.rtol = 0;
  io.atol = one_step(dir) * 1.0001; /* one step, plus float rounding of the step itself */
  epctx_env* env = new_env();
  epctx_session* s = NULL;
  double create_ms = 0, run_ms = 0;
  if (mc_load_run_compare(env, ctx, &io, &s, &create_ms, &run_ms, msg, sizeof(msg)))
    fail_msg("%s (atol %.3g = one quantisation step)", msg, io.atol);
  size_t driver_nodes = epctx_session_driver_node_count(s);
  size_t cpu_nodes = epctx_session_cpu_node_count(s);
  epctx_session_release(s);
  epctx_env_release(env);
  printf("  %-12s --ep vnpu: %zu EPContext + %zu CPU nodes, %.1f%% of MACs on vnpu, first run "
         "%.3f ms\n",
         name, driver_nodes, cpu_nodes, share, run_ms);
  assert_int_equal(cpu_nodes, 0);
  assert_true(share >= 90.0);
}

/* A device whose vnpu lacks the int8 level refuses the package from the
 * EPContext node's version strings (check_compatibility reads no payload). */
static void vnpu_without_int8_refuses(void** state) {
  const char* name = *state;
  char ctx[4096];
  tu_manifest m;
  compile_case(name, ctx, sizeof(ctx), &m);
  const char* keys[2][2] = {{"sdk_version", "1.0.0"}, {"hardware_architecture", "vnpu-1.0"}};
  const int codes[2] = {EPCTX_INCOMPATIBLE_SDK, EPCTX_INCOMPATIBLE_HARDWARE};
  const char* needles[2] = {"SDK 1.1.0", "'vnpu-1.1'"};
  for (int k = 0; k < 2; ++k) {
    assert_int_equal(epctx_vnpu_configure(keys[k][0], keys[k][1]), EPCTX_OK);
    epctx_env* env = new_env(); /* versions are read at registration */
    epctx_session* s = NULL;
    epctx_status* st = epctx_session_create(env, ctx, NULL, &s);
    assert_int_equal(epctx_vnpu_configure(keys[k][0], NULL), EPCTX_OK);
    if (!st) fail_msg("%s=%s: the int8 package loaded", keys[k][0], keys[k][1]);
    const char* msg = epctx_status_message(st);
    if (epctx_status_cause(st) != codes[k] || !strstr(msg, needles[k]))
      fail_msg("%s=%s: expected %s naming %s, got %s/%s: %s", keys[k][0], keys[k][1],
               epctx_code_name(codes[k]), needles[k], epctx_code_name(epctx_status_code(st)),
               epctx_code_name(epctx_status_cause(st)), msg);
    epctx_status_release(st);
    epctx_env_release(env);
  }
}

/* A weight-sharing group (one comma list) shares one container header, so
 * its versions must suit every model: listed after a float model already
 * written for vnpu-1.0, an int8 model is refused with a clear message;
 * listed first, the whole group is SDK 1.1 and every model loads. */
static void weight_sharing_group_versions(void** state) {
  (void)state;
  char dir[4096], cmd[16384], log[4096];
  snprintf(dir, sizeof(dir), "%s/group", g_work);
  assert_int_equal(tu_make_clean_dir(dir), 0);
  snprintf(log, sizeof(log), "%s/log", dir);
  const char* order[2][2] = {{"float_conv", "qdq_static"}, {"qdq_static", "float_conv"}};
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < 2; ++i) {
      snprintf(cmd, sizeof(cmd), "cp '%s/%s/model.onnx' '%s/%s.onnx'", g_work, order[k][i], dir,
               order[k][i]);
      assert_int_equal(system(cmd), 0);
    }
    snprintf(cmd, sizeof(cmd), "'%s' --quiet --force -e vnpu '%s/%s.onnx,%s/%s.onnx' >'%s' 2>&1",
             g_compile, dir, order[k][0], dir, order[k][1], log);
    int rc = system(cmd);
    char text[4096] = "";
    FILE* f = fopen(log, "r");
    if (f) {
      size_t n = fread(text, 1, sizeof(text) - 1, f);
      text[n] = '\0';
      fclose(f);
    }
    if (k == 0) {
      if (rc == 0 || !strstr(text, "list the quantised models first"))
        fail_msg("float model first: expected a refusal, got rc %d: %s", rc, text);
      continue;
    }
    if (rc != 0) fail_msg("int8 model first: %s", text);
    epctx_env* env = new_env();
    for (int i = 0; i < 2; ++i) {
      char ctx[4096];
      snprintf(ctx, sizeof(ctx), "%s/%s_ctx.onnx", dir, order[k][i]);
      epctx_session* s = NULL;
      epctx_status* st = epctx_session_create(env, ctx, NULL, &s);
      if (st) fail_msg("%s: %s", ctx, epctx_status_message(st));
      epctx_session_release(s);
    }
    epctx_env_release(env);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s COMPILE_TOOL WORK_DIR\n", argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_work = argv[2];
  static const char* qdq = "qdq_static";
  static const char* dyn = "dyn_quant";
  static const char* qlinear = "qlinear";
  static const char* mixed = "qdq_mixed";
  static const char* swish = "qdq_swish";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(matches_onnxruntime, (void*)qdq),
      cmocka_unit_test_prestate(matches_onnxruntime, (void*)dyn),
      cmocka_unit_test_prestate(matches_onnxruntime, (void*)qlinear),
      cmocka_unit_test_prestate(matches_onnxruntime, (void*)mixed),
      cmocka_unit_test_prestate(matches_onnxruntime, (void*)swish),
      cmocka_unit_test_prestate(vnpu_without_int8_refuses, (void*)qdq),
      cmocka_unit_test_prestate(vnpu_without_int8_refuses, (void*)dyn),
      cmocka_unit_test(weight_sharing_group_versions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
