/* SPDX-License-Identifier: Apache-2.0 */
/* Encrypted packages on every target: built by the host's CLIs
 * (epctx-compile --encrypt-key, with and without --encrypt-model, each
 * algorithm, signed after encrypting), loaded and run by this build's
 * runtime (cross builds: under qemu) against the numpy reference. A wrong
 * key, a changed byte, a truncated file and a missing key are refused with
 * their own codes on this target too.
 * argv: epctx-compile epctx-sign MODELS_DIR WORK_DIR */
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
#include "trust_util.h"

static const char *g_compile, *g_sign, *g_models, *g_work;
static char g_key[600], g_other[600], g_priv[600], g_pub[600];

static void path(char* out, const char* a, const char* b) { snprintf(out, 600, "%s/%s", a, b); }

static int setup(void** state) {
  (void)state;
  path(g_key, g_work, "data.key");
  path(g_other, g_work, "other.key");
  path(g_priv, g_work, "s.pem");
  path(g_pub, g_work, "s.pub");
  const char* kd[] = {g_sign, "keygen-data", g_key, NULL};
  const char* ko[] = {g_sign, "keygen-data", g_other, NULL};
  const char* ks[] = {g_sign, "keygen", g_priv, g_pub, NULL};
  tr_run_ok(kd, g_work);
  tr_run_ok(ko, g_work);
  tr_run_ok(ks, g_work);
  return 0;
}

/* An env with the builtin drivers, the signing key trusted and (unless
 * NULL) `key` as data key "v1". */
static epctx_env* make_env(const char* key) {
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  size_t n = 0;
  unsigned char* pub = tu_read_file(g_pub, &n);
  assert_non_null(pub);
  assert_null(epctx_env_add_trusted_key(env, pub, n));
  free(pub);
  if (key) {
    unsigned char* k = tu_read_file(key, &n);
    assert_non_null(k);
    assert_null(epctx_env_add_decryption_key(env, "v1", k, n));
    free(k);
  }
  return env;
}

/* Loads and runs `ctx` against conv_basic's reference; the status code,
 * its message in msg. */
static int load_run(const char* ctx, const char* key, char* msg, size_t cap) {
  char dir[600], man[600];
  path(dir, g_models, "conv_basic");
  path(man, dir, "manifest.txt");
  tu_manifest m;
  if (tu_read_manifest(man, &m, msg, cap)) fail_msg("%s", msg);
  mc_case_files files;
  mc_io io;
  mc_io_from_manifest(&m, dir, &files, &io);
  io.atol = 1e-5;
  io.rtol = 1e-4;
  epctx_env* env = make_env(key);
  msg[0] = '\0';
  int rc = mc_load_run_compare(env, ctx, &io, NULL, NULL, NULL, msg, cap);
  epctx_env_release(env);
  return rc;
}

static int starts_with(const char* file, const char* magic) {
  size_t n = 0;
  unsigned char* b = tu_read_file(file, &n);
  assert_non_null(b);
  int yes = n >= strlen(magic) && memcmp(b, magic, strlen(magic)) == 0;
  free(b);
  return yes;
}

static void expect_refused(const char* ctx, const char* key, const char* code) {
  char msg[4096];
  if (load_run(ctx, key, msg, sizeof msg) == 0 || !strstr(msg, code))
    fail_msg("%s: expected %s, got: %s", ctx, code, msg);
}

/* Each algorithm, the context binary alone or the model and its embedded
 * context too; signed after encrypting (policy if_signed verifies it). */
static void round_trips_on_this_target(void** state) {
  (void)state;
  const char* algs[] = {"chacha20-poly1305", "aes-256-gcm"};
  for (int a = 0; a < 2; ++a)
    for (int whole = 0; whole < 2; ++whole) {
      char dir[600], ctx[600], bin[600], src[600], msg[4096];
      snprintf(dir, sizeof dir, "%s/%s_%s", g_work, algs[a], whole ? "model" : "context");
      assert_int_equal(tu_make_clean_dir(dir), 0);
      path(ctx, dir, "m_ctx.onnx");
      path(bin, dir, "model_vnpu.bin");
      snprintf(src, sizeof src, "%s/conv_basic/model.onnx", g_models);
      const char* argv[] = {g_compile,
                            src,
                            "-o",
                            ctx,
                            "--quiet",
                            "--encrypt-key",
                            g_key,
                            "--key-id",
                            "v1",
                            "--encrypt-alg",
                            algs[a],
                            "--sign-key",
                            g_priv,
                            "--model-id",
                            "rt",
                            "--embed-mode",
                            whole ? "1" : "0",
                            whole ? "--encrypt-model" : NULL,
                            NULL};
      tr_run_ok(argv, g_work);
      assert_int_equal(starts_with(whole ? ctx : bin, "EPCTXENC"), 1);
      if (load_run(ctx, g_key, msg, sizeof msg)) fail_msg("%s: %s", ctx, msg);
      expect_refused(ctx, NULL, "KEY_MISSING");
      const char* file = whole ? ctx : bin;
      char saved[600];
      path(saved, dir, "saved");
      tr_copy(file, saved);
      /* A wrong key with a matching manifest: the tag fails. */
      expect_refused(ctx, g_other, "DECRYPTION_FAILED");
      tr_xor_byte(file, 96 + 300, 0x20);
      expect_refused(ctx, g_key, "HASH_MISMATCH");
      tr_copy(saved, file);
      tr_resize(file, -1);
      expect_refused(ctx, g_key, "HASH_MISMATCH"); /* the manifest's size */
      tr_copy(saved, file);
      /* Unsigned, the format itself refuses the same changes. */
      char sig[600];
      snprintf(sig, sizeof sig, "%s.sig", ctx);
      assert_int_equal(remove(sig), 0);
      tr_xor_byte(file, 96 + 300, 0x20);
      expect_refused(ctx, g_key, "DECRYPTION_FAILED");
      tr_copy(saved, file);
      tr_resize(file, 16);
      expect_refused(ctx, g_key, "INVALID_CONTAINER");
      tr_copy(saved, file);
      if (load_run(ctx, g_key, msg, sizeof msg)) fail_msg("%s unsigned: %s", ctx, msg);
    }
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s epctx-compile epctx-sign MODELS_DIR WORK_DIR\n", argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_sign = argv[2];
  g_models = argv[3];
  g_work = argv[4];
  if (tu_make_clean_dir(g_work) != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trips_on_this_target),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
