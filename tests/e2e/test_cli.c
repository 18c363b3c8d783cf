/* SPDX-License-Identifier: Apache-2.0 */
/* The two CLIs as a user meets them: epctx-run on a compiled model writes the
 * right .npy and prints its timings; bad input to either tool gives a
 * non-zero exit (never a crash) and exactly one stderr line that names the
 * file or node.
 *
 * epctx-run --driver-library runs a package for a driver it loads (the
 * hello_npu sample library) and names a library it cannot load.
 *
 * usage: test_cli COMPILE_TOOL RUN_TOOL MODELS_DIR WORK_DIR HELLO_LIB HELLO_MODELS
 *        NOENTRY_LIB */
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
static const char* g_run;
static const char* g_models;
static char g_work[4096];
static const char* g_hello_lib;    /* libepctx_hello_npu.so: y = 2x */
static const char* g_hello_models; /* tests/hal's hello_ctx.onnx */
static const char* g_noentry_lib;  /* a library without the HAL entry point */

/* small_cnn compiled once (vnpu, embedded) for the epctx-run tests. */
static char g_cnn_ctx[4096];
static char g_cnn_input[4096];

static int setup_group(void** state) {
  (void)state;
  char model[4096], msg[4096];
  if (tu_make_clean_dir(g_work)) return -1;
  snprintf(model, sizeof(model), "%s/small_cnn/model.onnx", g_models);
  snprintf(g_cnn_ctx, sizeof(g_cnn_ctx), "%s/small_cnn_ctx.onnx", g_work);
  snprintf(g_cnn_input, sizeof(g_cnn_input), "x=%s/small_cnn/input_0.npy", g_models);
  if (mc_compile(g_compile, model, g_cnn_ctx, "vnpu", 1, NULL, g_work, msg, sizeof(msg))) {
    fprintf(stderr, "%s\n", msg);
    return -1;
  }
  return 0;
}

/* Runs argv and asserts the failure contract: exited (not signalled) with a
 * non-zero code, stderr one line "<tool>: error: ..." containing `names`. */
static void expect_one_line_error(const char* const* argv, const char* tool, const char* names) {
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  if (!p.exited) fail_msg("%s was killed by signal %d; stderr: %s", tool, p.signal, p.err);
  if (p.exit_code == 0) fail_msg("%s exited 0; stderr: %s", tool, p.err);
  if (tu_count_lines(p.err) != 1)
    fail_msg("%s: expected one stderr line, got %zu: %s", tool, tu_count_lines(p.err), p.err);
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "%s: error: ", tool);
  if (strncmp(p.err, prefix, strlen(prefix)) != 0)
    fail_msg("%s: stderr does not start with '%s': %s", tool, prefix, p.err);
  if (!strstr(p.err, names)) fail_msg("%s: stderr does not name '%s': %s", tool, names, p.err);
  tu_proc_free(&p);
}

static void run_writes_outputs_and_timings(void** state) {
  (void)state;
  char out_dir[4096], file[4096], expected[4096], msg[1024];
  snprintf(out_dir, sizeof(out_dir), "%s/run_out", g_work);
  assert_int_equal(tu_make_clean_dir(out_dir), 0);
  const char* argv[] = {g_run,   g_cnn_ctx,  "--input", g_cnn_input, "--output-dir",
                        out_dir, "--repeat", "3",       NULL};
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  if (!p.exited || p.exit_code != 0) fail_msg("epctx-run failed: %s", p.err);
  assert_non_null(strstr(p.out, "output 'probs': float32 [1,10] = ["));
  assert_non_null(strstr(p.out, "session create: "));
  assert_non_null(strstr(p.out, "median run (3): "));
  assert_non_null(strstr(p.out, "{\"model\": "));
  assert_non_null(strstr(p.out, "\"session_create_ms\": "));
  assert_string_equal(p.err, "");
  tu_proc_free(&p);

  epctx_npy got, want;
  snprintf(file, sizeof(file), "%s/probs.npy", out_dir);
  snprintf(expected, sizeof(expected), "%s/small_cnn/expected_0.npy", g_models);
  assert_int_equal(epctx_npy_read(file, &got, msg, sizeof(msg)), 0);
  assert_int_equal(epctx_npy_read(expected, &want, msg, sizeof(msg)), 0);
  assert_int_equal(got.dtype, EPCTX_DTYPE_FLOAT);
  assert_int_equal(got.rank, 2);
  assert_int_equal(got.dims[1], 10);
  assert_int_equal(got.bytes, want.bytes);
  double max_abs, max_ref;
  tu_max_errors(got.data, want.data, want.bytes / 4, &max_abs, &max_ref);
  assert_true(max_abs <= 1e-5 + 1e-4 * max_ref);
  epctx_npy_free(&got);
  epctx_npy_free(&want);
}

static void run_quiet_prints_only_json(void** state) {
  (void)state;
  const char* argv[] = {g_run, g_cnn_ctx, "--input", g_cnn_input, "--repeat", "0", "--quiet", NULL};
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  assert_true(p.exited && p.exit_code == 0);
  assert_int_equal(tu_count_lines(p.out), 1);
  assert_non_null(strstr(p.out, "\"median_run_ms\": null}"));
  tu_proc_free(&p);
}

static void run_names_missing_input(void** state) {
  (void)state;
  const char* argv[] = {g_run, g_cnn_ctx, NULL};
  expect_one_line_error(argv, "epctx-run", "input 'x'");
}

static void run_rejects_unknown_input_name(void** state) {
  (void)state;
  char spec[4200];
  snprintf(spec, sizeof(spec), "nope=%s", strchr(g_cnn_input, '=') + 1);
  const char* argv[] = {g_run, g_cnn_ctx, "--input", g_cnn_input, "--input", spec, NULL};
  expect_one_line_error(argv, "epctx-run", "'nope'");
}

static void run_rejects_wrong_input_shape(void** state) {
  (void)state;
  char spec[4200];
  snprintf(spec, sizeof(spec), "x=%s/conv_basic/input_0.npy", g_models);
  const char* argv[] = {g_run, g_cnn_ctx, "--input", spec, NULL};
  expect_one_line_error(argv, "epctx-run", "expected shape [1,3,16,16]");
}

static void both_tools_name_missing_file(void** state) {
  (void)state;
  char missing[4096];
  snprintf(missing, sizeof(missing), "%s/does_not_exist.onnx", g_work);
  const char* run[] = {g_run, missing, NULL};
  expect_one_line_error(run, "epctx-run", "does_not_exist.onnx");
  const char* compile[] = {g_compile, missing, NULL};
  expect_one_line_error(compile, "epctx-compile", "does_not_exist.onnx");
}

static void both_tools_reject_non_onnx_file(void** state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof(path), "%s/not_a_model.onnx", g_work);
  /* 'n' (0x6e) is a tag with wire type 6, which no protobuf reader accepts. */
  const char text[] = "not an onnx model, just text\n";
  assert_int_equal(tu_write_file(path, text, sizeof(text) - 1), 0);
  const char* run[] = {g_run, path, NULL};
  expect_one_line_error(run, "epctx-run", "not_a_model.onnx");
  const char* compile[] = {g_compile, path, NULL};
  expect_one_line_error(compile, "epctx-compile", "not_a_model.onnx");
}

/* First half of a real file: a length-delimited field runs past the end. */
static void write_first_half(const char* from, const char* to) {
  size_t size;
  unsigned char* data = tu_read_file(from, &size);
  assert_non_null(data);
  assert_int_equal(tu_write_file(to, data, size / 2), 0);
  free(data);
}

static void both_tools_reject_truncated_model(void** state) {
  (void)state;
  char from[4096], half_model[4096], half_ctx[4096];
  snprintf(from, sizeof(from), "%s/small_cnn/model.onnx", g_models);
  snprintf(half_model, sizeof(half_model), "%s/truncated_model.onnx", g_work);
  snprintf(half_ctx, sizeof(half_ctx), "%s/truncated_ctx.onnx", g_work);
  write_first_half(from, half_model);
  write_first_half(g_cnn_ctx, half_ctx);
  const char* compile[] = {g_compile, half_model, NULL};
  expect_one_line_error(compile, "epctx-compile", "truncated_model.onnx");
  const char* run[] = {g_run, half_ctx, "--input", g_cnn_input, NULL};
  expect_one_line_error(run, "epctx-run", "truncated_ctx.onnx");
}

static void run_names_node_of_unknown_source(void** state) {
  (void)state;
  char model[4096], input[4200];
  snprintf(model, sizeof(model), "%s/bad/no_such_npu_ctx.onnx", g_models);
  snprintf(input, sizeof(input), "x=%s/bad/x.npy", g_models);
  const char* run[] = {g_run, model, "--input", input, NULL};
  expect_one_line_error(run, "epctx-run", "no_such_npu_node");
}

/* ---- --driver-library ---- */

/* hello_ctx.onnx's input, written once as a .npy; its path in `spec` as
 * "x=FILE". */
static const float kHelloX[8] = {1, -2, 3, -4, 5.5f, 0, 7, 1e3f};
static void hello_input(char* spec, size_t size) {
  char path[4096], err[256];
  snprintf(path, sizeof path, "%s/hello_x.npy", g_work);
  const int64_t dims[1] = {8};
  assert_int_equal(
      epctx_npy_write(path, EPCTX_DTYPE_FLOAT, dims, 1, kHelloX, sizeof kHelloX, err, sizeof err),
      0);
  snprintf(spec, size, "x=%s", path);
}

static void run_loads_driver_library(void** state) {
  (void)state;
  char model[4096], spec[4200], out_dir[4096], file[4200], msg[256];
  snprintf(model, sizeof model, "%s/hello_ctx.onnx", g_hello_models);
  snprintf(out_dir, sizeof out_dir, "%s/hello_out", g_work);
  assert_int_equal(tu_make_clean_dir(out_dir), 0);
  hello_input(spec, sizeof spec);
  const char* argv[] = {g_run,          model,   "--driver-library", g_hello_lib, "--input", spec,
                        "--output-dir", out_dir, "--repeat",         "0",         NULL};
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  if (!p.exited || p.exit_code != 0) fail_msg("epctx-run failed: %s", p.err);
  tu_proc_free(&p);
  epctx_npy y;
  snprintf(file, sizeof file, "%s/y.npy", out_dir);
  assert_int_equal(epctx_npy_read(file, &y, msg, sizeof msg), 0);
  assert_int_equal(y.bytes, sizeof kHelloX);
  for (int i = 0; i < 8; ++i) assert_true(((const float*)y.data)[i] == 2 * kHelloX[i]);
  epctx_npy_free(&y);
}

static void run_without_driver_library_names_source(void** state) {
  (void)state;
  char model[4096], spec[4200];
  snprintf(model, sizeof model, "%s/hello_ctx.onnx", g_hello_models);
  hello_input(spec, sizeof spec);
  const char* argv[] = {g_run, model, "--input", spec, NULL};
  expect_one_line_error(argv, "epctx-run", "hello_npu");
}

static void run_names_driver_library_it_cannot_load(void** state) {
  (void)state;
  char model[4096], spec[4200];
  snprintf(model, sizeof model, "%s/hello_ctx.onnx", g_hello_models);
  hello_input(spec, sizeof spec);
  const char* missing[] = {
      g_run, model, "--driver-library", "/nonexistent/libepctx_x.so", "--input", spec, NULL};
  expect_one_line_error(missing, "epctx-run",
                        "NO_SUCHFILE: load driver library '/nonexistent/libepctx_x.so'");
  const char* noentry[] = {g_run, model, "--driver-library", g_noentry_lib, "--input", spec, NULL};
  expect_one_line_error(noentry, "epctx-run", g_noentry_lib);
  expect_one_line_error(noentry, "epctx-run", "INCOMPATIBLE_DRIVER");
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr,
            "usage: %s COMPILE_TOOL RUN_TOOL MODELS_DIR WORK_DIR HELLO_LIB HELLO_MODELS "
            "NOENTRY_LIB\n",
            argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_run = argv[2];
  g_models = argv[3];
  snprintf(g_work, sizeof(g_work), "%s", argv[4]);
  g_hello_lib = argv[5];
  g_hello_models = argv[6];
  g_noentry_lib = argv[7];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(run_writes_outputs_and_timings),
      cmocka_unit_test(run_quiet_prints_only_json),
      cmocka_unit_test(run_names_missing_input),
      cmocka_unit_test(run_rejects_unknown_input_name),
      cmocka_unit_test(run_rejects_wrong_input_shape),
      cmocka_unit_test(both_tools_name_missing_file),
      cmocka_unit_test(both_tools_reject_non_onnx_file),
      cmocka_unit_test(both_tools_reject_truncated_model),
      cmocka_unit_test(run_names_node_of_unknown_source),
      cmocka_unit_test(run_loads_driver_library),
      cmocka_unit_test(run_without_driver_library_names_source),
      cmocka_unit_test(run_names_driver_library_it_cannot_load),
  };
  return cmocka_run_group_tests(tests, setup_group, NULL);
}
