/* SPDX-License-Identifier: Apache-2.0 */
#include "trust_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_util.h"

void tr_run_ok(const char* const* argv, const char* scratch) {
  tu_proc p;
  int rc = tu_run(argv, scratch, &p);
  if (rc != 0 || !p.exited || p.exit_code != 0)
    fail_msg("%s %s failed (exit %d): %s", argv[0], argv[1], p.exit_code, p.err ? p.err : "");
  tu_proc_free(&p);
}

void tr_sign(const char* sign_tool, const char* model, const char* key, const char* counter,
             const char* id, const char* scratch) {
  const char* argv[] = {sign_tool,    "sign", "--key",        key,  "--counter", counter,
                        "--model-id", id,     "--chunk-log2", "12", model,       NULL};
  tr_run_ok(argv, scratch);
}

void tr_copy(const char* src, const char* dst) {
  size_t n = 0;
  unsigned char* d = tu_read_file(src, &n);
  if (!d) fail_msg("cannot read %s", src);
  if (tu_write_file(dst, d, n) != 0) fail_msg("cannot write %s", dst);
  free(d);
}

size_t tr_file_size(const char* path) {
  struct stat st;
  if (stat(path, &st) != 0) fail_msg("cannot stat %s", path);
  return (size_t)st.st_size;
}

void tr_xor_byte(const char* path, size_t off, unsigned char mask) {
  FILE* f = fopen(path, "r+b");
  if (!f) fail_msg("cannot open %s", path);
  int c;
  if (fseek(f, (long)off, SEEK_SET) != 0 || (c = fgetc(f)) == EOF)
    fail_msg("%s: offset %zu", path, off);
  fseek(f, (long)off, SEEK_SET);
  fputc(c ^ mask, f);
  fclose(f);
}

void tr_resize(const char* path, long n) {
  size_t size = tr_file_size(path);
  if (n < 0) {
    if (truncate(path, (off_t)(size - (size_t)(-n))) != 0) fail_msg("truncate %s", path);
    return;
  }
  FILE* f = fopen(path, "ab");
  if (!f) fail_msg("cannot open %s", path);
  for (long i = 0; i < n; ++i) fputc(0x5a, f);
  fclose(f);
}

int tr_load(const char* model, const tr_load_opts* o, char* msg, size_t cap) {
  epctx_env* env = NULL;
  epctx_session_options* so = NULL;
  epctx_session* s = NULL;
  epctx_status* st = epctx_env_create(NULL, 0, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  const char* keys[2] = {o->key_path, o->second_key};
  for (int k = 0; k < 2; ++k) {
    if (st || !keys[k]) continue;
    size_t n = 0;
    unsigned char* key = tu_read_file(keys[k], &n);
    if (!key) fail_msg("cannot read %s", keys[k]);
    st = epctx_env_add_trusted_key(env, key, n);
    free(key);
  }
  if (!st && o->store) st = epctx_env_set_rollback_store(env, o->store);
  if (!st) st = epctx_session_options_create(&so);
  if (!st && o->policy) st = epctx_session_options_set(so, "epctx.signature_policy", o->policy);
  if (!st && o->load_mode) st = epctx_session_options_set(so, "epctx.load_mode", o->load_mode);
  if (!st && o->expected_id) st = epctx_session_options_set_expected_model_id(so, o->expected_id);
  if (!st) st = epctx_session_create(env, model, so, &s);
  int code = epctx_status_code(st);
  snprintf(msg, cap, "%s", epctx_status_message(st));
  epctx_status_release(st);
  epctx_session_release(s);
  epctx_session_options_release(so);
  epctx_env_release(env);
  return code;
}

void tr_stage_ext(const char* ext_dir, const char* dir) {
  char from[600], to[600];
  if (tu_make_clean_dir(dir) != 0) fail_msg("cannot make %s", dir);
  const char* files[] = {"model.onnx", "weights.bin"};
  for (int i = 0; i < 2; ++i) {
    snprintf(from, sizeof from, "%s/%s", ext_dir, files[i]);
    snprintf(to, sizeof to, "%s/%s", dir, files[i]);
    tr_copy(from, to);
  }
  static float x[4 * 1024];
  for (int i = 0; i < 4 * 1024; ++i) x[i] = (float)((i % 37) - 18) / 16.0f;
  const int64_t dims[2] = {4, 1024};
  char err[256];
  snprintf(to, sizeof to, "%s/x.npy", dir);
  if (epctx_npy_write(to, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, err, sizeof err) != 0)
    fail_msg("%s: %s", to, err);
}
