/* SPDX-License-Identifier: Apache-2.0 */
/* Signed packages through the C API: each item of the bad-input list of
 * issue 6 (security_anchors.md §7) gives its specific error, and a sweep of
 * 1000 random bit flips across a signed package is rejected every time.
 *
 * argv: epctx-compile epctx-sign MODELS_DIR EXT_DIR WORK_DIR
 * Packages: a = conv_basic (vnpu, context file), b = gemm (vnpu), e = CPU
 * model with external data; all signed with 4 KiB chunks so every file has
 * several chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_util.h"
#include "trust_util.h"

static trust_paths g;
static char g_keys[3][512]; /* k1 private, pub1, pub2 */
static char g_k2[512];
static char g_case[512];
static char g_store[512];

static const char* const kFilesA[] = {"m_ctx.onnx", "model_vnpu.bin"};
static const char* const kFilesE[] = {"model.onnx", "weights.bin"};

static void path_of(char* out, size_t cap, const char* dir, const char* name) {
  snprintf(out, cap, "%s/%s", dir, name);
}

static void sign(const char* model, const char* key, const char* counter, const char* id) {
  tr_sign(g.sign, model, key, counter, id, g.work);
}

/* Copies pristine package `pkg` (a, b, e) into g_case; returns the model. */
static const char* stage(const char* pkg, int with_sig) {
  static char model[600];
  char src[600], dst[600], dir[600];
  const char* const* files = pkg[0] == 'e' ? kFilesE : kFilesA;
  snprintf(dir, sizeof dir, "%s/pristine/%s", g.work, pkg);
  assert_int_equal(tu_make_clean_dir(g_case), 0);
  for (int i = 0; i < 3; ++i) {
    char name[128];
    if (i < 2) snprintf(name, sizeof name, "%s", files[i]);
    else if (!with_sig) break;
    else snprintf(name, sizeof name, "%s.sig", files[0]);
    path_of(src, sizeof src, dir, name);
    path_of(dst, sizeof dst, g_case, name);
    tr_copy(src, dst);
  }
  path_of(model, sizeof model, g_case, files[0]);
  return model;
}

static int load(const char* model, const char* policy, char* msg) {
  tr_load_opts o = {policy, NULL, g_keys[1], NULL, NULL, NULL};
  return tr_load(model, &o, msg, 512);
}

static void expect_code(int line, int code, const char* code_name, const char* model,
                        const char* policy, const char* needle) {
  char m[512];
  int c = load(model, policy, m);
  if (c != code || (needle && !strstr(m, needle)))
    fail_msg("line %d: expected %s containing '%s', got %s: %s", line, code_name,
             needle ? needle : "", epctx_code_name(c), m);
}
#define EXPECT(code, model, policy, needle) \
  expect_code(__LINE__, code, #code, model, policy, needle)

static int setup(void** state) {
  (void)state;
  char dir[600], cmd_out[600], src[600];
  snprintf(dir, sizeof dir, "%s/keys", g.work);
  tu_make_clean_dir(dir);
  path_of(g_keys[0], sizeof g_keys[0], dir, "k1.pem");
  path_of(g_keys[1], sizeof g_keys[1], dir, "pub1.pem");
  path_of(g_k2, sizeof g_k2, dir, "k2.pem");
  path_of(g_keys[2], sizeof g_keys[2], dir, "pub2.pem");
  const char* kg1[] = {g.sign, "keygen", g_keys[0], g_keys[1], NULL};
  const char* kg2[] = {g.sign, "keygen", g_k2, g_keys[2], NULL};
  tr_run_ok(kg1, g.work);
  tr_run_ok(kg2, g.work);
  const char* cases[2][2] = {{"a", "conv_basic"}, {"b", "gemm"}};
  for (int i = 0; i < 2; ++i) {
    snprintf(dir, sizeof dir, "%s/pristine/%s", g.work, cases[i][0]);
    tu_make_clean_dir(dir);
    snprintf(src, sizeof src, "%s/%s/model.onnx", g.models, cases[i][1]);
    path_of(cmd_out, sizeof cmd_out, dir, "m_ctx.onnx");
    const char* argv[] = {g.compile, src, "-o", cmd_out, "--quiet", "--force", NULL};
    tr_run_ok(argv, g.work);
    sign(cmd_out, g_keys[0], "5", i == 0 ? "pkgA" : "pkgB");
  }
  snprintf(dir, sizeof dir, "%s/pristine/e", g.work);
  tu_make_clean_dir(dir);
  for (int i = 0; i < 2; ++i) {
    path_of(src, sizeof src, g.ext, kFilesE[i]);
    path_of(cmd_out, sizeof cmd_out, dir, kFilesE[i]);
    tr_copy(src, cmd_out);
  }
  path_of(cmd_out, sizeof cmd_out, dir, "model.onnx");
  sign(cmd_out, g_keys[0], "1", "pkgE");
  snprintf(g_case, sizeof g_case, "%s/case", g.work);
  snprintf(g_store, sizeof g_store, "%s/store", g.work);
  return 0;
}

static void signed_packages_load_under_required(void** state) {
  (void)state;
  EXPECT(EPCTX_OK, stage("a", 1), "required", NULL);
  EXPECT(EPCTX_OK, stage("b", 1), "required", NULL);
  EXPECT(EPCTX_OK, stage("e", 1), "required", NULL);
  /* strict mode: private copies are hashed */
  char m[512];
  tr_load_opts o = {"required", "read", g_keys[1], NULL, NULL, NULL};
  assert_int_equal(tr_load(stage("a", 1), &o, m, sizeof m), EPCTX_OK);
  assert_int_equal(tr_load(stage("e", 1), &o, m, sizeof m), EPCTX_OK);
}

static void policy_required_if_signed_off(void** state) {
  (void)state;
  const char* unsigned_model = stage("a", 0);
  EXPECT(EPCTX_SIGNATURE_INVALID, unsigned_model, "required", "not signed");
  EXPECT(EPCTX_OK, unsigned_model, "if_signed", NULL);
  EXPECT(EPCTX_OK, unsigned_model, NULL, NULL); /* default: if_signed */
  EXPECT(EPCTX_OK, unsigned_model, "off", NULL);
  /* a signed package with a broken binary: off ignores the manifest */
  const char* model = stage("a", 1);
  char bin[600];
  path_of(bin, sizeof bin, g_case, "model_vnpu.bin");
  tr_xor_byte(bin, tr_file_size(bin) - 1, 0x01);
  EXPECT(EPCTX_HASH_MISMATCH, model, "if_signed", "model_vnpu.bin");
  EXPECT(EPCTX_OK, model, "off", NULL);
  /* bad option values */
  epctx_session_options* so = NULL;
  assert_null(epctx_session_options_create(&so));
  epctx_status* st = epctx_session_options_set(so, "epctx.signature_policy", "sometimes");
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  epctx_status_release(st);
  epctx_session_options_release(so);
}

/* One byte flipped at the start, middle, end and inside the last chunk of
 * every signed file. */
static void one_byte_flips_in_each_file(void** state) {
  (void)state;
  const char* pkgs[] = {"a", "e"};
  for (int p = 0; p < 2; ++p) {
    const char* const* files = pkgs[p][0] == 'e' ? kFilesE : kFilesA;
    for (int f = 0; f < 2; ++f) {
      char path[600];
      path_of(path, sizeof path, g_case, files[f]);
      const char* model = stage(pkgs[p], 1);
      size_t size = tr_file_size(path);
      size_t last_chunk = ((size - 1) / 4096) * 4096;
      size_t where[] = {0, size / 2, size - 1, last_chunk + (size - last_chunk) / 2};
      for (int w = 0; w < 4; ++w) {
        tr_xor_byte(path, where[w], 0x80);
        EXPECT(EPCTX_HASH_MISMATCH, model, "required", files[f]);
        EXPECT(EPCTX_HASH_MISMATCH, model, "required", "chunk");
        tr_xor_byte(path, where[w], 0x80);
      }
      EXPECT(EPCTX_OK, model, "required", NULL);
    }
  }
  /* the manifest itself: start (magic), middle, end (signature) */
  const char* model = stage("a", 1);
  char sig[600];
  path_of(sig, sizeof sig, g_case, "m_ctx.onnx.sig");
  size_t size = tr_file_size(sig);
  size_t where[] = {0, size / 2, size - 1};
  for (int w = 0; w < 3; ++w) {
    tr_xor_byte(sig, where[w], 0x01);
    char m[512];
    int c = load(model, "required", m);
    if (c != EPCTX_SIGNATURE_INVALID && c != EPCTX_KEY_REJECTED)
      fail_msg("manifest byte %zu flipped: %s: %s", where[w], epctx_code_name(c), m);
    tr_xor_byte(sig, where[w], 0x01);
  }
}

static void files_one_byte_longer_or_shorter(void** state) {
  (void)state;
  const char* pkgs[] = {"a", "e"};
  for (int p = 0; p < 2; ++p) {
    const char* const* files = pkgs[p][0] == 'e' ? kFilesE : kFilesA;
    for (int f = 0; f < 2; ++f) {
      for (long d = -1; d <= 1; d += 2) {
        const char* model = stage(pkgs[p], 1);
        char path[600];
        path_of(path, sizeof path, g_case, files[f]);
        tr_resize(path, d);
        EXPECT(EPCTX_HASH_MISMATCH, model, "required", "the signed manifest says");
      }
    }
  }
}

static void binary_swapped_with_another_package(void** state) {
  (void)state;
  const char* model = stage("a", 1);
  char src[600], dst[600];
  snprintf(src, sizeof src, "%s/pristine/b/model_vnpu.bin", g.work);
  path_of(dst, sizeof dst, g_case, "model_vnpu.bin");
  tr_copy(src, dst);
  EXPECT(EPCTX_HASH_MISMATCH, model, "required", "model_vnpu.bin");
}

static void manifest_from_another_package(void** state) {
  (void)state;
  const char* model = stage("a", 1);
  char src[600], dst[600];
  snprintf(src, sizeof src, "%s/pristine/b/m_ctx.onnx.sig", g.work);
  path_of(dst, sizeof dst, g_case, "m_ctx.onnx.sig");
  tr_copy(src, dst);
  EXPECT(EPCTX_HASH_MISMATCH, model, "required", "model");
}

static void untrusted_key(void** state) {
  (void)state;
  const char* model = stage("a", 0);
  sign(model, g_k2, "5", "pkgA");
  EXPECT(EPCTX_KEY_REJECTED, model, "required", "not among the 1 trusted keys");
  char m[512];
  tr_load_opts none = {"required", NULL, NULL, NULL, NULL, NULL};
  assert_int_equal(tr_load(model, &none, m, sizeof m), EPCTX_KEY_REJECTED);
  tr_load_opts k2 = {"required", NULL, g_keys[2], NULL, NULL, NULL};
  assert_int_equal(tr_load(model, &k2, m, sizeof m), EPCTX_OK);
  /* a key that is not P-256 PEM/DER is refused by the env */
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  epctx_status* st = epctx_env_add_trusted_key(env, "not a key", 9);
  assert_int_equal(epctx_status_code(st), EPCTX_KEY_REJECTED);
  epctx_status_release(st);
  epctx_env_release(env);
}

/* Issue 14 finding 4: the manifest's size limit used to apply after the
 * whole file was read, so a sparse 3 GiB .sig cost 3.1 GB of memory before
 * "exceeds the limit". The limit now comes before any allocation: the peak
 * RSS of this process grows by far less than the file. */
static void huge_sparse_manifest_refused_before_reading(void** state) {
  (void)state;
  const char* model = stage("a", 1);
  char sig[600];
  path_of(sig, sizeof sig, g_case, "m_ctx.onnx.sig");
  assert_int_equal(truncate(sig, 3ll << 30), 0);
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  EXPECT(EPCTX_SIGNATURE_INVALID, model, "required", "exceed the limit of 16777216");
  EXPECT(EPCTX_SIGNATURE_INVALID, model, "if_signed", "exceed the limit");
  getrusage(RUSAGE_SELF, &after);
  assert_true(after.ru_maxrss - before.ru_maxrss < 64 * 1024); /* KiB */
  /* One byte over the limit is refused; at the limit it is parsed. */
  assert_int_equal(truncate(sig, 16777217), 0);
  EXPECT(EPCTX_SIGNATURE_INVALID, model, "required", "16777217 bytes exceed");
  assert_int_equal(truncate(sig, 16777216), 0);
  EXPECT(EPCTX_SIGNATURE_INVALID, model, "required", "trailing bytes");
}

static void trailing_bytes_after_the_signature(void** state) {
  (void)state;
  const char* model = stage("a", 1);
  char sig[600];
  path_of(sig, sizeof sig, g_case, "m_ctx.onnx.sig");
  tr_resize(sig, 1);
  EXPECT(EPCTX_SIGNATURE_INVALID, model, "required", "trailing");
  /* inside the signature TLV: DER plus one byte (mbedtls SIG_LEN_MISMATCH) */
  stage("a", 1);
  size_t n = 0;
  unsigned char* d = tu_read_file(sig, &n);
  assert_non_null(d);
  d = realloc(d, n + 1);
  d[n] = 0;
  /* the signature TLV starts at protected_size (header offset 16) */
  size_t prot = d[16] | (d[17] << 8) | (d[18] << 16) | ((size_t)d[19] << 24);
  d[prot + 4] = (unsigned char)(d[prot + 4] + 1);
  assert_int_equal(tu_write_file(sig, d, n + 1), 0);
  free(d);
  EXPECT(EPCTX_SIGNATURE_INVALID, model, "required", NULL);
  /* truncated at every byte, and empty */
  stage("a", 1);
  d = tu_read_file(sig, &n);
  assert_non_null(d);
  for (size_t len = 0; len < n; ++len) {
    assert_int_equal(tu_write_file(sig, d, len), 0);
    EXPECT(EPCTX_SIGNATURE_INVALID, model, "required", "manifest");
  }
  free(d);
}

static void rollback_counter(void** state) {
  (void)state;
  char m[512];
  tu_make_clean_dir(g_store);
  tr_load_opts o = {"required", NULL, g_keys[1], g_store, NULL, NULL};
  const char* model = stage("a", 1); /* counter 5 */
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_OK);
  sign(model, g_keys[0], "4", "pkgA");
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_ROLLBACK);
  assert_non_null(strstr(m, "security counter 4, below the stored 5"));
  sign(model, g_keys[0], "5", "pkgA");
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_OK);
  /* another model id has its own counter; an application that binds the id
   * refuses the re-signed package (issue 14 finding 6) */
  sign(model, g_keys[0], "1", "otherModel");
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_OK);
  tr_load_opts bound = {"required", NULL, g_keys[1], g_store, "pkgA", NULL};
  assert_int_equal(tr_load(model, &bound, m, sizeof m), EPCTX_SIGNATURE_INVALID);
  assert_non_null(strstr(m, "signed for model id 'otherModel', the application expects 'pkgA'"));
  /* a failed load does not raise the stored value */
  sign(model, g_keys[0], "9", "pkgA");
  char bin[600];
  path_of(bin, sizeof bin, g_case, "model_vnpu.bin");
  tr_xor_byte(bin, 10, 1);
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_HASH_MISMATCH);
  tr_xor_byte(bin, 10, 1);
  sign(model, g_keys[0], "6", "pkgA");
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_OK);
  sign(model, g_keys[0], "5", "pkgA");
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_ROLLBACK);
  sign(model, g_keys[0], "18446744073709551615", "pkgA");
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_OK);
}

/* Issue 14 finding 6: the application binds what it expects. A validly
 * signed package of another model is refused under this model's name; the
 * binding needs a signed package; and the rollback counter is kept per
 * signing key as well as per id, so one key's counter is not another's. */
static void expected_model_id_binds_the_package(void** state) {
  (void)state;
  char m[512];
  const char* model = stage("a", 1);
  sign(model, g_keys[0], "5", "camera-detector");
  tr_load_opts o = {"required", NULL, g_keys[1], NULL, "camera-detector", NULL};
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_OK);
  o.expected_id = "door-lock";
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_SIGNATURE_INVALID);
  assert_non_null(strstr(m, "signed for model id 'camera-detector', the application expects "
                            "'door-lock' (session option 'epctx.expected_model_id')"));
  /* if_signed would load an unsigned package: not with a bound id */
  o.policy = "if_signed";
  o.expected_id = "camera-detector";
  model = stage("a", 0);
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_SIGNATURE_INVALID);
  assert_non_null(strstr(m, "= 'camera-detector', but the package is not signed"));
  o.policy = "off";
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(m, "needs signature checks"));
  o.expected_id = "";
  assert_int_equal(tr_load(model, &o, m, sizeof m), EPCTX_INVALID_ARGUMENT);
  /* counters per (key, id): k2's counter 3 is not below k1's 5 */
  tu_make_clean_dir(g_store);
  model = stage("a", 1);
  tr_load_opts r = {"required", NULL, g_keys[1], g_store, "cam", g_keys[2]};
  sign(model, g_keys[0], "5", "cam");
  assert_int_equal(tr_load(model, &r, m, sizeof m), EPCTX_OK);
  sign(model, g_k2, "3", "cam");
  assert_int_equal(tr_load(model, &r, m, sizeof m), EPCTX_OK);
  sign(model, g_keys[0], "4", "cam");
  assert_int_equal(tr_load(model, &r, m, sizeof m), EPCTX_ROLLBACK);
  sign(model, g_k2, "2", "cam");
  assert_int_equal(tr_load(model, &r, m, sizeof m), EPCTX_ROLLBACK);
}

static void buffer_loaded_model_finds_its_manifest(void** state) {
  (void)state;
  const char* model = stage("a", 1);
  size_t n = 0;
  unsigned char* d = tu_read_file(model, &n);
  assert_non_null(d);
  epctx_env* env = NULL;
  epctx_session_options* so = NULL;
  epctx_session* s = NULL;
  size_t kn = 0;
  unsigned char* key = tu_read_file(g_keys[1], &kn);
  assert_null(epctx_env_create(NULL, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  assert_null(epctx_env_add_trusted_key(env, key, kn));
  assert_null(epctx_session_options_create(&so));
  assert_null(epctx_session_options_set(so, "epctx.signature_policy", "required"));
  /* no way to find the manifest */
  epctx_status* st = epctx_session_create_from_buffer(env, d, n, so, &s);
  assert_int_equal(epctx_status_code(st), EPCTX_SIGNATURE_INVALID);
  epctx_status_release(st);
  assert_null(epctx_session_options_set(so, "ep.context_file_path", model));
  st = epctx_session_create_from_buffer(env, d, n, so, &s);
  assert_null(st);
  epctx_session_release(s);
  s = NULL;
  d[n / 2] ^= 1;
  st = epctx_session_create_from_buffer(env, d, n, so, &s);
  assert_int_equal(epctx_status_code(st), EPCTX_HASH_MISMATCH);
  epctx_status_release(st);
  d[n / 2] ^= 1;
  /* an explicit manifest path (another package's) wins */
  char other[600];
  snprintf(other, sizeof other, "%s/pristine/b/m_ctx.onnx.sig", g.work);
  assert_null(epctx_session_options_set(so, "epctx.signature_path", other));
  st = epctx_session_create_from_buffer(env, d, n, so, &s);
  assert_int_equal(epctx_status_code(st), EPCTX_HASH_MISMATCH);
  epctx_status_release(st);
  epctx_session_options_release(so);
  epctx_env_release(env);
  free(key);
  free(d);
}

/* 1000 random single-bit flips over every file of package a (model,
 * context binary, manifest): each one must be rejected. */
/* A context shared through a group was loaded by another session: a session
 * that requires signatures still checks the shared bytes against its own
 * manifest. Here the binary is tampered with before a policy-off session
 * loads it into the group; the required session must not take it. */
static void shared_context_is_checked_against_each_manifest(void** state) {
  (void)state;
  const char* model = stage("a", 1);
  char bin[600];
  path_of(bin, sizeof bin, g_case, "model_vnpu.bin");
  tr_xor_byte(bin, tr_file_size(bin) / 2, 0x04);
  epctx_env* env = NULL;
  epctx_context_group* group = NULL;
  epctx_session_options *off = NULL, *req = NULL;
  epctx_session *a = NULL, *b = NULL;
  size_t n = 0;
  unsigned char* key = tu_read_file(g_keys[1], &n);
  assert_non_null(key);
  assert_null(epctx_env_create(NULL, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  assert_null(epctx_env_add_trusted_key(env, key, n));
  free(key);
  assert_null(epctx_context_group_create(env, &group));
  assert_null(epctx_session_options_create(&off));
  assert_null(epctx_session_options_create(&req));
  assert_null(epctx_session_options_set(off, "epctx.signature_policy", "off"));
  assert_null(epctx_session_options_set(req, "epctx.signature_policy", "required"));
  assert_null(epctx_session_options_set_context_group(off, group));
  assert_null(epctx_session_options_set_context_group(req, group));
  assert_null(epctx_session_create(env, model, off, &a));
  assert_int_equal(epctx_context_group_loaded_count(group), 1);
  epctx_status* st = epctx_session_create(env, model, req, &b);
  assert_int_equal(epctx_status_code(st), EPCTX_HASH_MISMATCH);
  assert_non_null(strstr(epctx_status_message(st), "model_vnpu.bin"));
  assert_null(b);
  epctx_status_release(st);
  /* Untampered again (same inode, mtime changes): a fresh load verifies. */
  tr_xor_byte(bin, tr_file_size(bin) / 2, 0x04);
  assert_null(epctx_session_create(env, model, req, &b));
  epctx_session_release(b);
  epctx_session_release(a);
  epctx_session_options_release(off);
  epctx_session_options_release(req);
  epctx_context_group_release(group);
  epctx_env_release(env);
}

static void sweep_1000_random_bit_flips(void** state) {
  (void)state;
  const char* model = stage("a", 1);
  const char* names[] = {"m_ctx.onnx", "model_vnpu.bin", "m_ctx.onnx.sig"};
  char paths[3][600];
  size_t sizes[3], total = 0;
  for (int i = 0; i < 3; ++i) {
    path_of(paths[i], sizeof paths[i], g_case, names[i]);
    sizes[i] = tr_file_size(paths[i]);
    total += sizes[i];
  }
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  int by_code[256] = {0};
  for (int k = 0; k < 1000; ++k) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    size_t at = (size_t)((rng >> 16) % (total * 8));
    size_t byte = at / 8;
    int f = 0;
    while (byte >= sizes[f]) byte -= sizes[f++];
    unsigned char mask = (unsigned char)(1u << (at % 8));
    tr_xor_byte(paths[f], byte, mask);
    char m[512];
    int c = load(model, "required", m);
    tr_xor_byte(paths[f], byte, mask);
    if (c == EPCTX_OK)
      fail_msg("flip %d: %s byte %zu bit %zu was accepted", k, names[f], byte, at % 8);
    by_code[c & 255]++;
  }
  printf("sweep: 1000 flips over %zu bytes: HASH_MISMATCH %d, SIGNATURE_INVALID %d, "
         "KEY_REJECTED %d\n",
         total, by_code[EPCTX_HASH_MISMATCH], by_code[EPCTX_SIGNATURE_INVALID],
         by_code[EPCTX_KEY_REJECTED]);
  EXPECT(EPCTX_OK, model, "required", NULL);
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s epctx-compile epctx-sign MODELS_DIR EXT_DIR WORK_DIR\n", argv[0]);
    return 2;
  }
  g.compile = argv[1];
  g.sign = argv[2];
  g.models = argv[3];
  g.ext = argv[4];
  g.work = argv[5];
  tu_make_clean_dir(g.work);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(signed_packages_load_under_required),
      cmocka_unit_test(policy_required_if_signed_off),
      cmocka_unit_test(one_byte_flips_in_each_file),
      cmocka_unit_test(files_one_byte_longer_or_shorter),
      cmocka_unit_test(binary_swapped_with_another_package),
      cmocka_unit_test(manifest_from_another_package),
      cmocka_unit_test(untrusted_key),
      cmocka_unit_test(trailing_bytes_after_the_signature),
      cmocka_unit_test(huge_sparse_manifest_refused_before_reading),
      cmocka_unit_test(rollback_counter),
      cmocka_unit_test(expected_model_id_binds_the_package),
      cmocka_unit_test(buffer_loaded_model_finds_its_manifest),
      cmocka_unit_test(shared_context_is_checked_against_each_manifest),
      cmocka_unit_test(sweep_1000_random_bit_flips),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
