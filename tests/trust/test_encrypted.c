/* SPDX-License-Identifier: Apache-2.0 */
/* Encrypted packages end to end: epctx-sign keygen-data, epctx-compile
 * --encrypt-key (both algorithms), epctx-sign encrypt, epctx-run
 * --decryption-key. An encrypted package computes the plain package's
 * bytes in both load modes; no key, a wrong key, a changed byte, and a
 * context binary moved under another name are refused with their own code;
 * encrypt-then-sign checks the ciphertext before decrypting; the file
 * shows none of the plaintext weights; the CLIs' errors are one line.
 * The model itself and its external data (--encrypt-model), also with an
 * embedded context, signed after encryption.
 * argv: epctx-compile epctx-sign epctx-run MODELS_DIR EXT_DIR WORK_DIR
 * (EXT_DIR: gen_trust_models.py's CPU model with external weights) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npy.h"
#include "test_util.h"
#include "trust_util.h"

static const char *g_compile, *g_sign, *g_run, *g_models, *g_ext, *g_work;
static char g_key[600], g_key2[600], g_src[600], g_src2[600], g_in[600];

static void path(char* out, const char* a, const char* b) { snprintf(out, 600, "%s/%s", a, b); }

static tu_proc run(const char* const* argv) {
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  return p;
}

/* Runs epctx-run on model with the key (id "v1", NULL: none) and extra
 * option (NULL: none), writing outputs to out_dir; its process. */
static tu_proc run_model(const char* model, const char* key, const char* option,
                         const char* out_dir) {
  char input[700], keyarg[700];
  snprintf(input, sizeof input, "x=%s", g_in);
  snprintf(keyarg, sizeof keyarg, "v1=%s", key ? key : "");
  const char* argv[16];
  int n = 0;
  argv[n++] = g_run;
  argv[n++] = model;
  argv[n++] = "-i";
  argv[n++] = input;
  argv[n++] = "-n";
  argv[n++] = "1";
  argv[n++] = "-q";
  argv[n++] = "-o";
  argv[n++] = out_dir;
  if (key) argv[n++] = "--decryption-key", argv[n++] = keyarg;
  if (option) argv[n++] = "-C", argv[n++] = option;
  argv[n] = NULL;
  return run(argv);
}

/* epctx-run fails with one line naming `code` and containing `needle`. */
static void expect_run_error(const char* model, const char* key, const char* code,
                             const char* needle) {
  char out[600];
  path(out, g_work, "out_err");
  tu_proc p = run_model(model, key, NULL, out);
  if (p.exit_code == 0 || !strstr(p.err, code) || !strstr(p.err, needle))
    fail_msg("%s: exit %d, stderr: %s (wanted %s, '%s')", model, p.exit_code, p.err, code, needle);
  assert_int_equal(tu_count_lines(p.err), 1);
  tu_proc_free(&p);
}

static void compile(const char* src, const char* out, const char* alg, int encrypt) {
  const char* argv[16];
  int n = 0;
  argv[n++] = g_compile;
  argv[n++] = src;
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n++] = "--quiet";
  argv[n++] = "--force";
  if (encrypt) {
    argv[n++] = "--encrypt-key", argv[n++] = g_key, argv[n++] = "--key-id", argv[n++] = "v1";
    if (alg) argv[n++] = "--encrypt-alg", argv[n++] = alg;
  }
  argv[n] = NULL;
  tr_run_ok(argv, g_work);
}

static unsigned char* slurp(const char* file, size_t* n) {
  unsigned char* b = tu_read_file(file, n);
  if (!b) fail_msg("cannot read %s", file);
  return b;
}

static void same_file(const char* a, const char* b) {
  size_t na = 0, nb = 0;
  unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
  if (na != nb || memcmp(x, y, na) != 0) fail_msg("%s and %s differ", a, b);
  free(x);
  free(y);
}

static int setup(void** state) {
  (void)state;
  path(g_key, g_work, "data.key");
  path(g_key2, g_work, "other.key");
  snprintf(g_src, sizeof g_src, "%s/conv_basic/model.onnx", g_models);
  snprintf(g_src2, sizeof g_src2, "%s/gemm/model.onnx", g_models);
  snprintf(g_in, sizeof g_in, "%s/conv_basic/input_0.npy", g_models);
  const char* kg[] = {g_sign, "keygen-data", g_key, NULL};
  tr_run_ok(kg, g_work);
  const char* kg2[] = {g_sign, "keygen-data", g_key2, NULL};
  tr_run_ok(kg2, g_work);
  return 0;
}

/* Both algorithms, both load modes: the plain package's output bytes. */
static void encrypted_packages_compute_the_plain_bytes(void** state) {
  (void)state;
  char plain[600], plain_out[600], plain_y[600];
  path(plain, g_work, "plain/m_ctx.onnx");
  path(plain_out, g_work, "plain_out");
  path(plain_y, g_work, "plain_out/y.npy");
  compile(g_src, plain, NULL, 0);
  tu_proc p = run_model(plain, NULL, NULL, plain_out);
  assert_int_equal(p.exit_code, 0);
  tu_proc_free(&p);
  const char* algs[] = {"chacha20-poly1305", "aes-256-gcm"};
  for (int a = 0; a < 2; ++a) {
    char dir[600], model[600], bin[600], out[600], y[600];
    snprintf(dir, sizeof dir, "%s/enc_%d", g_work, a);
    path(model, dir, "m_ctx.onnx");
    path(bin, dir, "model_vnpu.bin");
    path(out, dir, "out");
    path(y, dir, "out/y.npy");
    compile(g_src, model, algs[a], 1);
    for (int mode = 0; mode < 2; ++mode) {
      p = run_model(model, g_key, mode ? "epctx.load_mode=read" : NULL, out);
      if (p.exit_code != 0) fail_msg("%s: %s", model, p.err);
      tu_proc_free(&p);
      same_file(y, plain_y);
    }
    /* No 32-byte run of the plain context binary's weights is in the file. */
    char plain_bin[600];
    path(plain_bin, g_work, "plain/model_vnpu.bin");
    size_t np = 0, ne = 0;
    unsigned char *pb = slurp(plain_bin, &np), *eb = slurp(bin, &ne);
    assert_true(np > 4096 + 64);
    for (size_t at = 4096; at + 32 <= np; at += 32) {
      int zero = 1;
      for (size_t i = 0; i < 32; ++i) zero = zero && pb[at + i] == 0;
      if (zero) continue;
      for (size_t i = 0; i + 32 <= ne; ++i) assert_true(memcmp(eb + i, pb + at, 32) != 0);
    }
    free(pb);
    free(eb);
  }
}

static void keys_and_changes_are_refused_with_their_codes(void** state) {
  (void)state;
  char model[600], bin[600], saved[600], out[600];
  path(model, g_work, "enc_0/m_ctx.onnx");
  path(bin, g_work, "enc_0/model_vnpu.bin");
  path(saved, g_work, "saved.bin");
  path(out, g_work, "out_ok");
  tr_copy(bin, saved);
  expect_run_error(model, NULL, "KEY_MISSING", "did not provide");
  expect_run_error(model, g_key2, "DECRYPTION_FAILED", "does not verify");
  tr_xor_byte(bin, 96 + 200, 1);
  expect_run_error(model, g_key, "DECRYPTION_FAILED", "does not verify");
  tr_copy(saved, bin);
  tr_resize(bin, -1);
  expect_run_error(model, g_key, "INVALID_CONTAINER", "truncated or extended");
  tr_copy(saved, bin);
  tr_resize(bin, 16);
  expect_run_error(model, g_key, "INVALID_CONTAINER", "truncated or extended");
  tr_copy(saved, bin);
  /* The context binary of another model under this one's name: its key was
   * derived for another name, so nothing decrypts. */
  char other_src[600], other[600], other_bin[600];
  path(other_src, g_work, "g.onnx");
  path(other, g_work, "other/g_ctx.onnx");
  path(other_bin, g_work, "other/g_vnpu.bin");
  tr_copy(g_src2, other_src);
  compile(other_src, other, NULL, 1);
  tr_copy(other_bin, bin);
  expect_run_error(model, g_key, "DECRYPTION_FAILED", "does not verify");
  tr_copy(saved, bin);
  tu_proc p = run_model(model, g_key, NULL, out);
  assert_int_equal(p.exit_code, 0);
  tu_proc_free(&p);
}

/* Encrypt, then sign: the manifest covers the ciphertext and is checked
 * before anything is decrypted. */
static void encrypt_then_sign(void** state) {
  (void)state;
  char dir[600], model[600], bin[600], priv[600], pub[600];
  path(dir, g_work, "signed");
  path(model, dir, "m_ctx.onnx");
  path(bin, dir, "model_vnpu.bin");
  path(priv, g_work, "s.pem");
  path(pub, g_work, "s.pub");
  const char* kg[] = {g_sign, "keygen", priv, pub, NULL};
  tr_run_ok(kg, g_work);
  compile(g_src, model, NULL, 1);
  tr_sign(g_sign, model, priv, "1", "m", g_work);
  tr_load_opts o = {0};
  o.policy = "required";
  o.key_path = pub;
  char msg[1024];
  /* tr_load has no data key: the manifest verifies, then the key is missing. */
  assert_int_equal(tr_load(model, &o, msg, sizeof msg), EPCTX_KEY_MISSING);
  tr_xor_byte(bin, 96 + 10, 2);
  assert_int_equal(tr_load(model, &o, msg, sizeof msg), EPCTX_HASH_MISMATCH);
  tr_xor_byte(bin, 96 + 10, 2);
}

/* epctx-sign encrypt on a plain package, once; the CLIs' usage errors. */
static void sign_tool_encrypts_and_cli_errors(void** state) {
  (void)state;
  char model[600], out[600], short_key[600];
  path(model, g_work, "later/m_ctx.onnx");
  path(out, g_work, "later/out");
  compile(g_src, model, NULL, 0);
  const char* enc[] = {g_sign, "encrypt", "--data-key", g_key, "--key-id", "v1", model, NULL};
  tu_proc p = run(enc);
  assert_int_equal(p.exit_code, 0);
  assert_non_null(strstr(p.out, "encrypted"));
  tu_proc_free(&p);
  p = run(enc);
  assert_int_equal(p.exit_code, 0);
  assert_non_null(strstr(p.out, "nothing to encrypt"));
  tu_proc_free(&p);
  p = run_model(model, g_key, NULL, out);
  assert_int_equal(p.exit_code, 0);
  tu_proc_free(&p);
  /* epctx-compile: --encrypt-key alone, a key of 31 bytes, embedded
   * contexts, an unknown algorithm. */
  path(short_key, g_work, "short.key");
  FILE* f = fopen(short_key, "wb");
  assert_non_null(f);
  fwrite("0123456789012345678901234567890", 1, 31, f);
  fclose(f);
  char dst[600];
  path(dst, g_work, "bad/m_ctx.onnx");
  const char* no_id[] = {g_compile, g_src, "-o", dst, "--encrypt-key", g_key, NULL};
  const char* short_k[] = {g_compile, g_src,      "-o", dst, "--encrypt-key",
                           short_key, "--key-id", "v1", NULL};
  const char* embedded[] = {g_compile,       g_src, "-o",       dst,
                            "--encrypt-key", g_key, "--key-id", "v1",
                            "--embed-mode",  "1",   NULL};
  const char* alg[] = {g_compile, g_src,           "-o",    dst, "--encrypt-key", g_key, "--key-id",
                       "v1",      "--encrypt-alg", "rot13", NULL};
  const char* bad_id[] = {g_compile, g_src,      "-o",        dst, "--encrypt-key",
                          g_key,     "--key-id", "no spaces", NULL};
  const struct {
    const char* const* argv;
    int exit_code;
    const char* needle;
  } cases[] = {{no_id, 2, "go together"},
               {short_k, 1, "32 raw bytes"},
               {embedded, 2, "needs --encrypt-model"},
               {alg, 2, "rot13"},
               {bad_id, 1, "key id"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    p = run(cases[i].argv);
    if (p.exit_code != cases[i].exit_code || !strstr(p.err, cases[i].needle))
      fail_msg("case %zu: exit %d, stderr: %s", i, p.exit_code, p.err);
    assert_false(tu_file_exists(dst));
    tu_proc_free(&p);
  }
}

/* epctx-run MODEL -i x=INPUT with optional data key and -C option; fails
 * the test unless the exit code is `want`; its process. */
static tu_proc run_in(const char* model, const char* input, const char* key, const char* option,
                      const char* pub, const char* out_dir, int want) {
  char in[700], keyarg[700];
  snprintf(in, sizeof in, "x=%s", input);
  snprintf(keyarg, sizeof keyarg, "v1=%s", key ? key : "");
  const char* argv[20];
  int n = 0;
  argv[n++] = g_run, argv[n++] = model, argv[n++] = "-i", argv[n++] = in;
  argv[n++] = "-n", argv[n++] = "1", argv[n++] = "-q", argv[n++] = "-o", argv[n++] = out_dir;
  if (key) argv[n++] = "--decryption-key", argv[n++] = keyarg;
  if (option) argv[n++] = "-C", argv[n++] = option;
  if (pub) argv[n++] = "--trusted-key", argv[n++] = pub;
  argv[n] = NULL;
  tu_proc p = run(argv);
  if (p.exit_code != want) fail_msg("%s: exit %d (wanted %d): %s", model, p.exit_code, want, p.err);
  return p;
}

static int starts_sealed(const char* file) {
  size_t n = 0;
  unsigned char* b = slurp(file, &n);
  int sealed = n >= 8 && memcmp(b, "EPCTXENC", 8) == 0;
  free(b);
  return sealed;
}

/* No 32-byte run of `plain_file` from `from` on (all-zero runs aside) is
 * in `file`. */
static void shows_none_of(const char* file, const char* plain_file, size_t from) {
  size_t np = 0, ne = 0;
  unsigned char *pb = slurp(plain_file, &np), *eb = slurp(file, &ne);
  for (size_t at = from; at + 32 <= np; at += 32) {
    int zero = 1;
    for (size_t i = 0; i < 32; ++i) zero = zero && pb[at + i] == 0;
    if (zero) continue;
    for (size_t i = 0; i + 32 <= ne; ++i)
      if (memcmp(eb + i, pb + at, 32) == 0)
        fail_msg("%s shows bytes %zu.. of %s", file, at, plain_file);
  }
  free(pb);
  free(eb);
}

/* A CPU model with external weights, encrypted whole (epctx-sign encrypt
 * --encrypt-model: the weights file, then the model), then signed with the
 * data key at hand: it computes the plain bytes, signed or not; no key is
 * KEY_MISSING; a changed weights byte is HASH_MISMATCH when signed,
 * DECRYPTION_FAILED when not. And a compiled package with its context
 * embedded in the encrypted model (epctx-compile --embed-mode 1
 * --encrypt-model). */
static void encrypted_model_and_external_data(void** state) {
  (void)state;
  char dir[600], model[600], weights[600], src[600], in[600], out[600], y[600], plain_y[600];
  path(dir, g_work, "ext_enc");
  tr_stage_ext(g_ext, dir);
  path(model, dir, "model.onnx");
  path(weights, dir, "weights.bin");
  path(in, dir, "x.npy");
  path(out, g_work, "ext_out");
  path(y, g_work, "ext_out/y.npy");
  path(plain_y, g_work, "ext_plain_y.npy");
  tu_proc p = run_in(model, in, NULL, NULL, NULL, out, 0);
  tu_proc_free(&p);
  tr_copy(y, plain_y);

  const char* enc[] = {g_sign, "encrypt",         "--data-key", g_key, "--key-id",
                       "v1",   "--encrypt-model", model,        NULL};
  p = run(enc);
  if (p.exit_code != 0 || !strstr(p.out, "weights.bin") || !strstr(p.out, "model.onnx"))
    fail_msg("encrypt: exit %d: %s%s", p.exit_code, p.out, p.err);
  tu_proc_free(&p);
  assert_true(starts_sealed(model));
  assert_true(starts_sealed(weights));
  path(src, g_ext, "weights.bin");
  shows_none_of(weights, src, 0);
  p = run_in(model, in, g_key, NULL, NULL, out, 0);
  tu_proc_free(&p);
  same_file(y, plain_y);
  p = run_in(model, in, g_key, "epctx.load_mode=read", NULL, out, 0);
  tu_proc_free(&p);
  same_file(y, plain_y);
  p = run_in(model, in, NULL, NULL, NULL, out, 1);
  assert_non_null(strstr(p.err, "KEY_MISSING"));
  assert_non_null(strstr(p.err, "encrypted model"));
  tu_proc_free(&p);

  /* Signing lists the files the model references: it needs the data key. */
  char priv[600], pub[600];
  path(priv, g_work, "ext_s.pem");
  path(pub, g_work, "ext_s.pub");
  const char* kg[] = {g_sign, "keygen", priv, pub, NULL};
  tr_run_ok(kg, g_work);
  const char* sign_nokey[] = {g_sign, "sign", "--key", priv, "--model-id", "ext", model, NULL};
  p = run(sign_nokey);
  assert_int_equal(p.exit_code, 1);
  assert_non_null(strstr(p.err, "is encrypted"));
  assert_int_equal(tu_count_lines(p.err), 1);
  tu_proc_free(&p);
  const char* sign[] = {g_sign,         "sign", "--key",      priv,  "--model-id", "ext",
                        "--chunk-log2", "12",   "--data-key", g_key, model,        NULL};
  tr_run_ok(sign, g_work);
  const char* verify[] = {g_sign, "verify", "--pub", pub, "--data-key", g_key, model, NULL};
  p = run(verify);
  if (p.exit_code != 0 || !strstr(p.out, "2 files")) fail_msg("verify: %s%s", p.out, p.err);
  tu_proc_free(&p);
  p = run_in(model, in, g_key, "epctx.signature_policy=required", pub, out, 0);
  tu_proc_free(&p);
  same_file(y, plain_y);
  tr_xor_byte(weights, 96 + 10, 4);
  p = run_in(model, in, g_key, "epctx.signature_policy=required", pub, out, 1);
  if (!strstr(p.err, "HASH_MISMATCH") || !strstr(p.err, "weights.bin"))
    fail_msg("tampered weights, signed: %s", p.err);
  tu_proc_free(&p);
  p = run_in(model, in, g_key, "epctx.signature_policy=off", NULL, out, 1);
  if (!strstr(p.err, "DECRYPTION_FAILED") || !strstr(p.err, "weights.bin"))
    fail_msg("tampered weights, unsigned: %s", p.err);
  tu_proc_free(&p);

  /* An embedded context, encrypted with the model. */
  char emb[600], plain_conv_y[600], conv_out[600], conv_y[600];
  path(emb, g_work, "emb_enc/m_ctx.onnx");
  path(plain_conv_y, g_work, "plain_out/y.npy");
  path(conv_out, g_work, "emb_out");
  path(conv_y, g_work, "emb_out/y.npy");
  const char* comp[] = {
      g_compile, g_src,           "-o",  emb,        "--quiet", "--force",         "--embed-mode",
      "1",       "--encrypt-key", g_key, "--key-id", "v1",      "--encrypt-model", NULL};
  tr_run_ok(comp, g_work);
  assert_true(starts_sealed(emb));
  p = run_in(emb, g_in, g_key, NULL, NULL, conv_out, 0);
  tu_proc_free(&p);
  same_file(conv_y, plain_conv_y);
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s epctx-compile epctx-sign epctx-run MODELS_DIR EXT_DIR WORK_DIR\n",
            argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_sign = argv[2];
  g_run = argv[3];
  g_models = argv[4];
  g_ext = argv[5];
  g_work = argv[6];
  if (tu_make_clean_dir(g_work) != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encrypted_packages_compute_the_plain_bytes),
      cmocka_unit_test(keys_and_changes_are_refused_with_their_codes),
      cmocka_unit_test(encrypt_then_sign),
      cmocka_unit_test(sign_tool_encrypts_and_cli_errors),
      cmocka_unit_test(encrypted_model_and_external_data),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
