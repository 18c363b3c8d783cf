/* SPDX-License-Identifier: Apache-2.0 */
/* epctx-sign as a command: keygen, sign, verify, and its error contract
 * (one line "epctx-sign: error: ..." and a non-zero exit; 2 for usage).
 * argv: epctx-compile epctx-sign MODELS_DIR WORK_DIR */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"
#include "trust_util.h"

static const char *g_compile, *g_sign, *g_models, *g_work;
static char g_k1[600], g_p1[600], g_k2[600], g_p2[600], g_model[600], g_bin[600];

static tu_proc run(const char* const* argv) {
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  return p;
}

static void expect_error(const char* const* argv, int exit_code, const char* needle) {
  tu_proc p = run(argv);
  if (!p.exited || p.exit_code != exit_code || !strstr(p.err, "epctx-sign: error: ") ||
      (needle && !strstr(p.err, needle)))
    fail_msg("%s %s: exit %d, stderr: %s (wanted exit %d and '%s')", argv[0], argv[1], p.exit_code,
             p.err, exit_code, needle ? needle : "");
  if (exit_code == 1) assert_int_equal(tu_count_lines(p.err), 1);
  tu_proc_free(&p);
}

static void keygen_sign_verify(void** state) {
  (void)state;
  const char* kg[] = {g_sign, "keygen", g_k1, g_p1, NULL};
  tr_run_ok(kg, g_work);
  const char* kg2[] = {g_sign, "keygen", g_k2, g_p2, NULL};
  tr_run_ok(kg2, g_work);
  expect_error(kg, 1, "not overwriting");
  char src[600];
  snprintf(src, sizeof src, "%s/conv_basic/model.onnx", g_models);
  const char* comp[] = {g_compile, src, "-o", g_model, "--quiet", "--force", NULL};
  tr_run_ok(comp, g_work);
  const char* sign[] = {g_sign, "sign",       "--key", g_k1,    "--counter",
                        "7",    "--model-id", "m_ctx", g_model, NULL};
  tr_run_ok(sign, g_work);
  const char* verify[] = {g_sign, "verify", "--pub", g_p1, g_model, NULL};
  tu_proc p = run(verify);
  assert_int_equal(p.exit_code, 0);
  assert_non_null(strstr(p.out, "OK: model 'm_ctx' counter 7, 2 files"));
  tu_proc_free(&p);
}

static void verify_failures(void** state) {
  (void)state;
  const char* wrong_key[] = {g_sign, "verify", "--pub", g_p2, g_model, NULL};
  expect_error(wrong_key, 1, "signed with another key");
  tr_xor_byte(g_bin, 100, 4);
  const char* verify[] = {g_sign, "verify", "--pub", g_p1, g_model, NULL};
  expect_error(verify, 1, "chunk 0 of 1 does not match");
  tr_xor_byte(g_bin, 100, 4);
  tu_proc p = run(verify);
  assert_int_equal(p.exit_code, 0);
  tu_proc_free(&p);
}

/* epctx-compile --sign-key signs what it writes: the package verifies with
 * epctx-sign and carries the id and counter given. */
static void compile_signs_as_it_writes(void** state) {
  (void)state;
  char src[600], out[600];
  snprintf(src, sizeof src, "%s/gemm/model.onnx", g_models);
  snprintf(out, sizeof out, "%s/signed/g_ctx.onnx", g_work);
  const char* comp[] = {g_compile,
                        src,
                        "-o",
                        out,
                        "--quiet",
                        "--force",
                        "--sign-key",
                        g_k1,
                        "--model-id",
                        "gemm-demo",
                        "--security-counter",
                        "3",
                        NULL};
  tu_proc p = run(comp);
  if (p.exit_code != 0) fail_msg("epctx-compile --sign-key: %s", p.err);
  assert_non_null(strstr(p.out, "signed: "));
  tu_proc_free(&p);
  const char* verify[] = {g_sign, "verify", "--pub", g_p1, out, NULL};
  p = run(verify);
  if (p.exit_code != 0) fail_msg("verify: %s", p.err);
  assert_non_null(strstr(p.out, "OK: model 'gemm-demo' counter 3, 2 files"));
  tu_proc_free(&p);
  /* errors: one line, exit 1 for a bad key file, 2 for usage */
  const char* badkey[] = {g_compile,    src,       "-o",         out,
                          "--quiet",    "--force", "--sign-key", "/nonexistent.pem",
                          "--model-id", "g",       NULL};
  p = run(badkey);
  assert_int_equal(p.exit_code, 1);
  assert_non_null(strstr(p.err, "epctx-compile: error: signing: "));
  assert_non_null(strstr(p.err, "/nonexistent.pem"));
  assert_int_equal(tu_count_lines(p.err), 1);
  tu_proc_free(&p);
  const char* noid[] = {g_compile, src, "-o", out, "--sign-key", g_k1, NULL};
  p = run(noid);
  assert_int_equal(p.exit_code, 2);
  assert_non_null(strstr(p.err, "--sign-key needs --model-id with one id per model (1 model)"));
  tu_proc_free(&p);
  const char* nokey[] = {g_compile, src, "-o", out, "--model-id", "x", NULL};
  p = run(nokey);
  assert_int_equal(p.exit_code, 2);
  assert_non_null(strstr(p.err, "need --sign-key"));
  tu_proc_free(&p);
}

static void usage_and_input_errors(void** state) {
  (void)state;
  const char* none[] = {g_sign, NULL};
  expect_error(none, 2, "missing command");
  const char* bad[] = {g_sign, "frobnicate", NULL};
  expect_error(bad, 2, "unknown command");
  const char* nokey[] = {g_sign, "sign", g_model, NULL};
  expect_error(nokey, 2, "needs --key");
  /* no id from the file name: the id is what applications bind (issue 14) */
  const char* noid[] = {g_sign, "sign", "--key", g_k1, g_model, NULL};
  expect_error(noid, 2, "sign needs --model-id");
  const char* counter[] = {g_sign, "sign", "--key", g_k1, "--counter", "-1", g_model, NULL};
  expect_error(counter, 2, "non-negative integer");
  const char* missing_key[] = {g_sign,       "sign", "--key", "/nonexistent.pem",
                               "--model-id", "x",    g_model, NULL};
  expect_error(missing_key, 1, "/nonexistent.pem");
  const char* pub_as_priv[] = {g_sign, "sign", "--key", g_p1, "--model-id", "x", g_model, NULL};
  expect_error(pub_as_priv, 1, "private key");
  const char* missing_model[] = {
      g_sign, "sign", "--key", g_k1, "--model-id", "x", "/nonexistent_ctx.onnx", NULL};
  expect_error(missing_model, 1, "/nonexistent_ctx.onnx");
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  g_compile = argv[1];
  g_sign = argv[2];
  g_models = argv[3];
  g_work = argv[4];
  tu_make_clean_dir(g_work);
  snprintf(g_k1, sizeof g_k1, "%s/k1.pem", g_work);
  snprintf(g_p1, sizeof g_p1, "%s/p1.pem", g_work);
  snprintf(g_k2, sizeof g_k2, "%s/k2.pem", g_work);
  snprintf(g_p2, sizeof g_p2, "%s/p2.pem", g_work);
  snprintf(g_model, sizeof g_model, "%s/m_ctx.onnx", g_work);
  snprintf(g_bin, sizeof g_bin, "%s/model_vnpu.bin", g_work);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keygen_sign_verify),
      cmocka_unit_test(verify_failures),
      cmocka_unit_test(compile_signs_as_it_writes),
      cmocka_unit_test(usage_and_input_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
