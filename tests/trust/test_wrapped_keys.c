/* SPDX-License-Identifier: Apache-2.0 */
/* Data keys wrapped for devices, end to end: epctx-compile --encrypt-key,
 * epctx-sign sign, then epctx-sign wrap-key per device (after signing:
 * re-keying needs no signing key), epctx-run with only a device key. Each
 * device's key computes the plain package's bytes and the signature still
 * verifies; a wrong device key, no usable entry and a damaged key-wrap
 * file are refused with their own code in one line; epctx.keys_path finds
 * the file for a model loaded from a buffer; an encrypted _ctx.onnx and
 * its encrypted external data open with a device key too; wrap-key's
 * errors.
 * argv: epctx-compile epctx-sign epctx-run MODELS_DIR EXT_DIR WORK_DIR */
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
static char g_data[600], g_other[600], g_dev_a[600], g_dev_b[600], g_priv[600], g_pub[600];
static char g_src[600], g_in[600], g_plain_y[600], g_dir[600], g_model[600], g_keys[600];

static void path(char* out, const char* a, const char* b) { snprintf(out, 600, "%s/%s", a, b); }

static tu_proc run(const char* const* argv) {
  tu_proc p;
  assert_int_equal(tu_run(argv, g_work, &p), 0);
  return p;
}

/* epctx-run on the signed package (policy required) with the key
 * "ID=FILE" (NULL: none) and an extra -C option (NULL: none), outputs to
 * WORK/out; its process. */
static tu_proc run_package(const char* key, const char* option) {
  char input[700], out[600];
  snprintf(input, sizeof input, "x=%s", g_in);
  path(out, g_work, "out");
  const char* argv[20];
  int n = 0;
  argv[n++] = g_run;
  argv[n++] = g_model;
  argv[n++] = "-i";
  argv[n++] = input;
  argv[n++] = "-n";
  argv[n++] = "1";
  argv[n++] = "-q";
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n++] = "--trusted-key";
  argv[n++] = g_pub;
  argv[n++] = "-C";
  argv[n++] = "epctx.signature_policy=required";
  if (key) argv[n++] = "--decryption-key", argv[n++] = key;
  if (option) argv[n++] = "-C", argv[n++] = option;
  argv[n] = NULL;
  return run(argv);
}

/* The package runs with `key` and computes the plain package's bytes. */
static void runs_as_plain(const char* key, const char* option) {
  tu_proc p = run_package(key, option);
  if (p.exit_code != 0) fail_msg("%s: exit %d: %s", key, p.exit_code, p.err);
  tu_proc_free(&p);
  char y[600];
  path(y, g_work, "out/y.npy");
  size_t na = 0, nb = 0;
  unsigned char *a = tu_read_file(y, &na), *b = tu_read_file(g_plain_y, &nb);
  assert_non_null(a);
  assert_non_null(b);
  if (na != nb || memcmp(a, b, na) != 0) fail_msg("%s: outputs differ from the plain package", key);
  free(a);
  free(b);
}

/* The package fails with one line naming `code` and containing `needle`. */
static void refused(const char* key, const char* code, const char* needle) {
  tu_proc p = run_package(key, NULL);
  if (p.exit_code == 0 || !strstr(p.err, code) || !strstr(p.err, needle))
    fail_msg("%s: exit %d, stderr: %s (wanted %s, '%s')", key ? key : "no key", p.exit_code, p.err,
             code, needle);
  assert_int_equal(tu_count_lines(p.err), 1);
  tu_proc_free(&p);
}

/* epctx-sign wrap-key with the data key file `data`, data key id "v1", the
 * device key file `dev` under `dev_id`; its process. */
static tu_proc wrap(const char* data, const char* dev, const char* dev_id, const char* model) {
  const char* argv[] = {g_sign,         "wrap-key", "--data-key",      data,   "--key-id", "v1",
                        "--device-key", dev,        "--device-key-id", dev_id, model,      NULL};
  return run(argv);
}

static void wrap_ok(const char* dev, const char* dev_id, const char* expect) {
  tu_proc p = wrap(g_data, dev, dev_id, g_model);
  if (p.exit_code != 0 || !strstr(p.out, expect))
    fail_msg("wrap-key %s: exit %d, out: %s err: %s", dev_id, p.exit_code, p.out, p.err);
  tu_proc_free(&p);
}

static int setup(void** state) {
  (void)state;
  path(g_data, g_work, "data.key");
  path(g_other, g_work, "other.key");
  path(g_dev_a, g_work, "dev_a.key");
  path(g_dev_b, g_work, "dev_b.key");
  path(g_priv, g_work, "s.pem");
  path(g_pub, g_work, "s.pub");
  const char* keys[] = {g_data, g_other, g_dev_a, g_dev_b};
  for (int i = 0; i < 4; ++i) {
    const char* kg[] = {g_sign, "keygen-data", keys[i], NULL};
    tr_run_ok(kg, g_work);
  }
  const char* kg[] = {g_sign, "keygen", g_priv, g_pub, NULL};
  tr_run_ok(kg, g_work);
  snprintf(g_src, sizeof g_src, "%s/conv_basic/model.onnx", g_models);
  snprintf(g_in, sizeof g_in, "%s/conv_basic/input_0.npy", g_models);
  /* The plain package's output, the reference. */
  char plain[600], out[600], input[700];
  path(plain, g_work, "plain/m_ctx.onnx");
  path(out, g_work, "plain_out");
  path(g_plain_y, g_work, "plain_out/y.npy");
  const char* cp[] = {g_compile, g_src, "-o", plain, "--quiet", "--force", NULL};
  tr_run_ok(cp, g_work);
  snprintf(input, sizeof input, "x=%s", g_in);
  const char* rp[] = {g_run, plain, "-i", input, "-n", "1", "-q", "-o", out, NULL};
  tr_run_ok(rp, g_work);
  /* Encrypted with the data key, signed, then wrapped for device a. */
  path(g_dir, g_work, "wrapped");
  path(g_model, g_dir, "m_ctx.onnx");
  path(g_keys, g_dir, "m_ctx.onnx.keys");
  const char* ce[] = {g_compile,       g_src,  "-o",       g_model, "--quiet", "--force",
                      "--encrypt-key", g_data, "--key-id", "v1",    NULL};
  tr_run_ok(ce, g_work);
  remove(g_keys); /* a previous run's (tu_make_clean_dir keeps folders) */
  tr_sign(g_sign, g_model, g_priv, "1", "m", g_work);
  return 0;
}

/* A device key alone decrypts; a second device added after signing works
 * too, the first still does, and the signature still verifies. */
static void device_keys_alone_run_a_signed_package(void** state) {
  (void)state;
  char dev_a[700], dev_b[700], data[700];
  snprintf(dev_a, sizeof dev_a, "dev-a=%s", g_dev_a);
  snprintf(dev_b, sizeof dev_b, "dev-b=%s", g_dev_b);
  snprintf(data, sizeof data, "v1=%s", g_data);
  refused(dev_a, "KEY_MISSING", "did not provide");  // no key-wrap file yet
  wrap_ok(g_dev_a, "dev-a", "added the entry of key id v1 for device key id dev-a");
  assert_int_equal(tr_file_size(g_keys), 32 + 128);
  runs_as_plain(dev_a, NULL);
  runs_as_plain(dev_a, "epctx.load_mode=read");
  wrap_ok(g_dev_b, "dev-b", "(entries now: 2;");
  runs_as_plain(dev_b, NULL);
  runs_as_plain(dev_a, NULL);
  runs_as_plain(data, NULL);  // the data key itself, as before
  /* Wrapping again replaces the entry, and the manifest never saw it. */
  wrap_ok(g_dev_a, "dev-a", "replaced the entry");
  assert_int_equal(tr_file_size(g_keys), 32 + 2 * 128);
  runs_as_plain(dev_a, NULL);
  const char* verify[] = {g_sign, "verify", "--pub", g_pub, g_model, NULL};
  tr_run_ok(verify, g_work);
}

static void wrong_or_missing_device_keys_are_refused(void** state) {
  (void)state;
  char wrong[700], unknown[700];
  snprintf(wrong, sizeof wrong, "dev-a=%s", g_dev_b);
  snprintf(unknown, sizeof unknown, "dev-c=%s", g_dev_a);
  refused(wrong, "DECRYPTION_FAILED",
          "m_ctx.onnx.keys: entry 0 (data key id 'v1', device key id "
          "'dev-a') does not verify");
  refused(unknown, "KEY_MISSING", "(tried 'dev-a', 'dev-b')");
  refused(NULL, "KEY_MISSING", "did not provide");
}

/* A damaged key-wrap file fails the load even when it is not needed: the
 * application's data key does not hide it. */
static void damaged_key_wrap_files_are_refused(void** state) {
  (void)state;
  char saved[600], data[700], dev_a[700];
  path(saved, g_work, "saved.keys");
  snprintf(data, sizeof data, "v1=%s", g_data);
  snprintf(dev_a, sizeof dev_a, "dev-a=%s", g_dev_a);
  tr_copy(g_keys, saved);
  tr_xor_byte(g_keys, 16, 1); /* entry_size */
  refused(data, "INVALID_CONTAINER", "entry_size 129");
  tr_copy(saved, g_keys);
  tr_resize(g_keys, -1);
  refused(dev_a, "INVALID_CONTAINER", "truncated or extended");
  tr_copy(saved, g_keys);
  tr_resize(g_keys, 128);
  refused(dev_a, "INVALID_CONTAINER", "truncated or extended");
  tr_copy(saved, g_keys);
  tr_xor_byte(g_keys, 32 + 100, 4); /* entry 0's wrapped key */
  refused(dev_a, "DECRYPTION_FAILED", "does not verify");
  tr_copy(saved, g_keys);
  tr_xor_byte(g_keys, 32 + 32 + 5, 0x40); /* entry 0's device key id: a pad byte */
  refused(dev_a, "INVALID_CONTAINER", "entry 0 of 2: wrap_key_id byte 5 is 0x40");
  tr_copy(saved, g_keys);
  runs_as_plain(dev_a, NULL);
}

/* A model from a buffer finds its key-wrap file through
 * ep.context_file_path, or epctx.keys_path; a named file that is missing
 * is NO_SUCHFILE. */
static int load_buffer(const char* option, const char* value, char* msg, size_t cap) {
  size_t n = 0;
  unsigned char* model = tu_read_file(g_model, &n);
  assert_non_null(model);
  size_t kn = 0;
  unsigned char* key = tu_read_file(g_dev_b, &kn);
  assert_non_null(key);
  epctx_env* env = NULL;
  epctx_session_options* so = NULL;
  epctx_session* s = NULL;
  epctx_status* st = epctx_env_create(NULL, 0, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  if (!st) st = epctx_env_add_decryption_key(env, "dev-b", key, kn);
  if (!st) st = epctx_session_options_create(&so);
  if (!st) st = epctx_session_options_set(so, "epctx.signature_policy", "off");
  if (!st) st = epctx_session_options_set(so, "ep.context_file_path", g_model);
  if (!st && option) st = epctx_session_options_set(so, option, value);
  if (!st) st = epctx_session_create_from_buffer(env, model, n, so, &s);
  const int code = epctx_status_code(st);
  snprintf(msg, cap, "%s", epctx_status_message(st));
  epctx_status_release(st);
  epctx_session_release(s);
  epctx_session_options_release(so);
  epctx_env_release(env);
  free(key);
  free(model);
  return code;
}

static void keys_path_serves_models_from_buffers(void** state) {
  (void)state;
  char msg[1024], moved[600], missing[600];
  path(moved, g_work, "elsewhere.keys");
  path(missing, g_work, "missing.keys");
  assert_int_equal(load_buffer(NULL, NULL, msg, sizeof msg), EPCTX_OK);
  tr_copy(g_keys, moved);
  assert_int_equal(load_buffer("epctx.keys_path", moved, msg, sizeof msg), EPCTX_OK);
  assert_int_equal(load_buffer("epctx.keys_path", missing, msg, sizeof msg), EPCTX_NO_SUCHFILE);
  assert_non_null(strstr(msg, "epctx.keys_path"));
  assert_int_equal(load_buffer("epctx.keys_path", "", msg, sizeof msg), EPCTX_INVALID_ARGUMENT);
}

static void wrap_key_cli_errors(void** state) {
  (void)state;
  char plain[600], keys_copy[600];
  path(plain, g_work, "plain/m_ctx.onnx");
  path(keys_copy, g_work, "keys_before");
  tr_copy(g_keys, keys_copy);
  const char* no_dev[] = {g_sign,     "wrap-key", "--data-key", g_data,
                          "--key-id", "v1",       g_model,      NULL};
  tu_proc p = run(no_dev);
  assert_int_equal(p.exit_code, 2);
  assert_non_null(strstr(p.err, "wrap-key needs --data-key, --key-id, --device-key"));
  tu_proc_free(&p);
  const struct {
    const char* data;
    const char* dev_id;
    const char* model;
    const char* needle;
  } cases[] = {{g_other, "dev-c", g_model, "the data key does not decrypt it"},
               {g_data, "v1", g_model, "is the data key id"},
               {g_data, "bad id", g_model, "key id 'bad id'"},
               {g_data, "dev-c", plain, "none is encrypted"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    p = wrap(cases[i].data, g_dev_a, cases[i].dev_id, cases[i].model);
    if (p.exit_code != 1 || !strstr(p.err, cases[i].needle) || tu_count_lines(p.err) != 1)
      fail_msg("case %zu: exit %d, stderr: %s", i, p.exit_code, p.err);
    tu_proc_free(&p);
  }
  /* Another key id than the package's. */
  const char* other_id[] = {
      g_sign,         "wrap-key", "--data-key",      g_data,  "--key-id", "v2",
      "--device-key", g_dev_a,    "--device-key-id", "dev-a", g_model,    NULL};
  p = run(other_id);
  assert_int_equal(p.exit_code, 1);
  assert_non_null(strstr(p.err, "encrypted with key id 'v2' (found 'v1')"));
  tu_proc_free(&p);
  /* A malformed key-wrap file is left as it is. */
  tr_xor_byte(g_keys, 0, 1);
  p = wrap(g_data, g_dev_a, "dev-c", g_model);
  assert_int_equal(p.exit_code, 1);
  assert_non_null(strstr(p.err, "the file is not rewritten"));
  tu_proc_free(&p);
  tr_xor_byte(g_keys, 0, 1);
  size_t na = 0, nb = 0;
  unsigned char *a = tu_read_file(g_keys, &na), *b = tu_read_file(keys_copy, &nb);
  assert_true(na == nb && memcmp(a, b, na) == 0);
  free(a);
  free(b);
}

/* The model itself and its external data encrypted (--encrypt-model),
 * signed, then wrapped for a device: wrap-key checks both files, and the
 * device key alone decrypts both. */
static void an_encrypted_model_and_its_data_open_with_a_device_key(void** state) {
  (void)state;
  char dir[600], model[600], src[600], in[700], out[600], y[600], plain_y[600], input[800];
  path(dir, g_work, "ext");
  tr_stage_ext(g_ext, dir);
  path(model, dir, "model.onnx");
  path(src, dir, "weights.bin");
  path(in, dir, "x.npy");
  path(out, g_work, "ext_out");
  path(y, g_work, "ext_out/y.npy");
  path(plain_y, g_work, "ext_plain_y.npy");
  snprintf(input, sizeof input, "x=%s", in);
  const char* plain_run[] = {g_run, model, "-i", input, "-n", "1", "-q", "-o", out, NULL};
  tr_run_ok(plain_run, g_work);
  tr_copy(y, plain_y);
  const char* enc[] = {g_sign, "encrypt",         "--data-key", g_data, "--key-id",
                       "v1",   "--encrypt-model", model,        NULL};
  tr_run_ok(enc, g_work);
  const char* sign[] = {g_sign,         "sign", "--key",      g_priv, "--model-id", "ext",
                        "--chunk-log2", "12",   "--data-key", g_data, model,        NULL};
  tr_run_ok(sign, g_work);
  tu_proc p = wrap(g_data, g_dev_a, "dev-a", model);
  if (p.exit_code != 0 || !strstr(p.out, "the data key decrypts 2 encrypted files"))
    fail_msg("wrap-key: exit %d: %s%s", p.exit_code, p.out, p.err);
  tu_proc_free(&p);
  char dev_a[700];
  snprintf(dev_a, sizeof dev_a, "dev-a=%s", g_dev_a);
  const char* dev_run[] = {g_run,
                           model,
                           "-i",
                           input,
                           "-n",
                           "1",
                           "-q",
                           "-o",
                           out,
                           "--trusted-key",
                           g_pub,
                           "-C",
                           "epctx.signature_policy=required",
                           "--decryption-key",
                           dev_a,
                           NULL};
  tr_run_ok(dev_run, g_work);
  size_t na = 0, nb = 0;
  unsigned char *a = tu_read_file(y, &na), *b = tu_read_file(plain_y, &nb);
  assert_true(a && b && na == nb && memcmp(a, b, na) == 0);
  free(a);
  free(b);
  /* The model is encrypted under v1: another data key id lists nothing. */
  const char* v2[] = {g_sign,         "wrap-key", "--data-key",      g_data,  "--key-id", "v2",
                      "--device-key", g_dev_a,    "--device-key-id", "dev-a", model,      NULL};
  p = run(v2);
  if (p.exit_code != 1 || !strstr(p.err, "the model is encrypted with key id 'v1', not 'v2'"))
    fail_msg("wrap-key v2: exit %d: %s", p.exit_code, p.err);
  tu_proc_free(&p);
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
      cmocka_unit_test(device_keys_alone_run_a_signed_package),
      cmocka_unit_test(wrong_or_missing_device_keys_are_refused),
      cmocka_unit_test(damaged_key_wrap_files_are_refused),
      cmocka_unit_test(keys_path_serves_models_from_buffers),
      cmocka_unit_test(wrap_key_cli_errors),
      cmocka_unit_test(an_encrypted_model_and_its_data_open_with_a_device_key),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
