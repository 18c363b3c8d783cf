/* SPDX-License-Identifier: Apache-2.0 */
/* Fault injection over a whole session life (env create, driver
 * registration, session create, run, release) of a CPU-only model and an
 * EPContext package (alone and as two sessions sharing one context):
 * - an allocator that fails the k-th allocation, for every k up to the
 *   number a clean pass makes;
 * - a vnpu driver wrapper that fails its k-th call, for every k.
 * Each failure must come back as a status with a code and a message, leave
 * no allocation behind once everything is released, and a session that did
 * get created must run correctly once the fault is gone.
 * usage: test_fault_inject <package folder with model.onnx and model_ctx.onnx> */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <unistd.h>

#include <epctx/epctx.h>
#include <epctx/hal.h>
#include <epctx/vnpu.h>

static const char* g_dir;
static const char* g_signed_dir;    /* optional: a signed copy, public.pem, counters/ */
static const char* g_encrypted_dir; /* optional: the same encrypted, data.key (id "small") */

/* Trusts the signed package's key in `dir` and keeps counters in its store
 * (fresh each time, so every load reads and writes one); policy required.
 * An encrypted package's data key (dir/data.key) is added too. */
static epctx_status* configure_signed(const char* dir, epctx_env* env, epctx_session_options** o) {
  char key_path[4096], store[4096], key[4096];
  snprintf(key_path, sizeof key_path, "%s/public.pem", dir);
  snprintf(store, sizeof store, "%s/counters", dir);
  DIR* d = opendir(store);
  assert_non_null(d);
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char file[8192];
    snprintf(file, sizeof file, "%s/%s", store, e->d_name);
    unlink(file);
  }
  closedir(d);
  FILE* f = fopen(key_path, "rb");
  assert_non_null(f);
  size_t n = fread(key, 1, sizeof key, f);
  fclose(f);
  epctx_status* st = epctx_env_add_trusted_key(env, key, n);
  if (dir == g_encrypted_dir && !st) {
    snprintf(key_path, sizeof key_path, "%s/data.key", dir);
    f = fopen(key_path, "rb");
    assert_non_null(f);
    n = fread(key, 1, sizeof key, f);
    fclose(f);
    st = epctx_env_add_decryption_key(env, "small", key, n);
  }
  if (!st) st = epctx_env_set_rollback_store(env, store);
  if (!st) st = epctx_session_options_create(o);
  if (!st) st = epctx_session_options_set(*o, "epctx.signature_policy", "required");
  return st;
}

/* ---- the failing allocator ---- */
typedef struct {
  long calls;   /* allocations attempted */
  long fail_at; /* 1-based allocation to fail; 0 = none */
  long live;    /* allocations not yet freed */
} fault_alloc;

static void* fa_alloc(void* user, size_t size, size_t align) {
  fault_alloc* f = user;
  if (++f->calls == f->fail_at) return NULL;
  if (align < sizeof(void*)) align = sizeof(void*);
  void* p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0) return NULL;
  f->live++;
  return p;
}
static void fa_free(void* user, void* p) {
  fault_alloc* f = user;
  if (!p) return;
  f->live--;
  free(p);
}

/* ---- the failing driver: vnpu with every call counted ---- */
static long g_drv_calls, g_drv_fail_at, g_drv_live_contexts;
static const epctx_hal_driver* real(void) { return epctx_vnpu_driver(); }
static int inject(char* msg, size_t cap) {
  if (++g_drv_calls != g_drv_fail_at) return 0;
  if (msg && cap) snprintf(msg, cap, "injected driver failure (call %ld)", g_drv_calls);
  return EPCTX_EP_FAIL;
}
static int w_get_info(const epctx_hal_driver* self, epctx_hal_driver_info* out) {
  (void)self;
  if (inject(NULL, 0)) return EPCTX_EP_FAIL;
  return real()->get_info(real(), out);
}
static int w_check(const epctx_hal_driver* self, const epctx_hal_context_desc* d, char* msg,
                   size_t cap) {
  (void)self;
  int rc = inject(msg, cap);
  return rc ? rc : real()->check_compatibility(real(), d, msg, cap);
}
static int w_load(const epctx_hal_driver* self, const epctx_hal_blob* b, const epctx_hal_host* h,
                  epctx_hal_context** out, char* msg, size_t cap) {
  (void)self;
  int rc = inject(msg, cap);
  if (rc) return rc;
  rc = real()->load_context(real(), b, h, out, msg, cap);
  if (rc == 0) g_drv_live_contexts++;
  return rc;
}
static int w_get_graph(const epctx_hal_driver* self, epctx_hal_context* c, const char* name,
                       epctx_hal_graph** g, epctx_hal_graph_info* info, char* msg, size_t cap) {
  (void)self;
  int rc = inject(msg, cap);
  return rc ? rc : real()->get_graph(real(), c, name, g, info, msg, cap);
}
static int w_execute(const epctx_hal_driver* self, epctx_hal_graph* g, const epctx_hal_tensor* in,
                     uint32_t ni, epctx_hal_tensor* out, uint32_t no, void* scratch, uint64_t sb,
                     char* msg, size_t cap) {
  (void)self;
  int rc = inject(msg, cap);
  return rc ? rc : real()->execute(real(), g, in, ni, out, no, scratch, sb, msg, cap);
}
static void w_release(const epctx_hal_driver* self, epctx_hal_context* c) {
  (void)self;
  g_drv_live_contexts--;
  real()->release_context(real(), c);
}
static epctx_hal_driver g_wrapper;

static void init_wrapper(void) {
  g_wrapper = *real();
  g_wrapper.get_info = w_get_info;
  g_wrapper.check_compatibility = w_check;
  g_wrapper.load_context = w_load;
  g_wrapper.get_graph = w_get_graph;
  g_wrapper.execute = w_execute;
  g_wrapper.release_context = w_release;
}

/* ---- one whole life ---- */
typedef struct {
  int create_failed, run_failed, env_failed;
  float first_output; /* of a successful run */
} life_result;

static void expect_clean(epctx_status* st) {
  assert_non_null(st);
  assert_int_not_equal(epctx_status_code(st), EPCTX_OK);
  assert_true(epctx_status_message(st)[0] != '\0');
}

/* Runs once with every input 0.5; returns the status (NULL = ok). */
static epctx_status* run_once(epctx_env* env, epctx_session* s, float* first) {
  size_t ni = epctx_session_input_count(s), no = epctx_session_output_count(s);
  epctx_tensor* in[8] = {0};
  const char* names[8];
  epctx_tensor* out[8] = {0};
  epctx_status* st = NULL;
  assert_true(ni <= 8 && no <= 8);
  for (size_t i = 0; i < ni && !st; ++i) {
    epctx_io_info info;
    assert_null(epctx_session_input_info(s, i, &info));
    int64_t dims[EPCTX_MAX_RANK];
    for (size_t d = 0; d < info.rank; ++d) dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
    st = epctx_tensor_create(env, info.dtype, dims, info.rank, &in[i]);
    if (st) break;
    float* p = epctx_tensor_data(in[i]);
    for (size_t k = 0; k < epctx_tensor_bytes(in[i]) / 4; ++k) p[k] = 0.5f;
    names[i] = info.name;
  }
  if (!st) st = epctx_session_run(s, names, (const epctx_tensor* const*)in, ni, NULL, out, no);
  if (!st && first) *first = *(const float*)epctx_tensor_data(out[0]);
  for (size_t i = 0; i < 8; ++i) {
    epctx_tensor_release(in[i]);
    epctx_tensor_release(out[i]);
  }
  return st;
}

static life_result life(const char* model, fault_alloc* fa, int use_wrapper) {
  life_result r = {0, 0, 0, 0.0f};
  epctx_allocator a = {fa, fa_alloc, fa_free};
  epctx_env* env = NULL;
  epctx_status* st = epctx_env_create(&a, 0, &env);
  if (st) {
    expect_clean(st);
    epctx_status_release(st);
    r.env_failed = 1;
    return r;
  }
  st = use_wrapper ? epctx_env_register_driver(env, &g_wrapper)
                   : epctx_env_register_builtin_drivers(env);
  if (st) {
    expect_clean(st);
    epctx_status_release(st);
    epctx_env_release(env);
    r.env_failed = 1;
    return r;
  }
  char path[4096];
  epctx_session_options* o = NULL;
  const int is_encrypted = strcmp(model, "encrypted") == 0;
  const int is_signed = is_encrypted || strcmp(model, "signed") == 0;
  if (is_signed) {
    const char* dir = is_encrypted ? g_encrypted_dir : g_signed_dir;
    snprintf(path, sizeof path, "%s/model_ctx.onnx", dir);
    st = configure_signed(dir, env, &o);
    if (st) {
      expect_clean(st);
      epctx_status_release(st);
      epctx_session_options_release(o);
      epctx_env_release(env);
      r.env_failed = 1;
      return r;
    }
  } else {
    snprintf(path, sizeof path, "%s/%s", g_dir, model);
  }
  epctx_session* s = NULL;
  st = epctx_session_create(env, path, o, &s);
  epctx_session_options_release(o);
  if (st) {
    expect_clean(st);
    epctx_status_release(st);
    r.create_failed = 1;
  } else {
    st = run_once(env, s, &r.first_output);
    if (st) {
      expect_clean(st);
      epctx_status_release(st);
      r.run_failed = 1;
      /* The session outlives a failed run: with the fault gone it runs. */
      long saved = fa->fail_at, saved_drv = g_drv_fail_at;
      fa->fail_at = 0;
      g_drv_fail_at = 0;
      assert_null(run_once(env, s, &r.first_output));
      fa->fail_at = saved;
      g_drv_fail_at = saved_drv;
    }
    epctx_session_release(s);
  }
  epctx_env_release(env);
  return r;
}

/* Two sessions of one package sharing its loaded context through the env's
 * group (ep.share_ep_contexts=1): create both, run both, release. */
static life_result shared_life(const char* model, fault_alloc* fa) {
  life_result r = {0, 0, 0, 0.0f};
  epctx_allocator a = {fa, fa_alloc, fa_free};
  epctx_env* env = NULL;
  epctx_status* st = epctx_env_create(&a, 0, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  epctx_session_options* opt = NULL;
  if (!st) st = epctx_session_options_create(&opt);
  if (!st) st = epctx_session_options_set(opt, "ep.share_ep_contexts", "1");
  if (st) {
    expect_clean(st);
    epctx_status_release(st);
    epctx_session_options_release(opt);
    epctx_env_release(env);
    r.env_failed = 1;
    return r;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_dir, model);
  epctx_session* s[2] = {NULL, NULL};
  for (int i = 0; i < 2; ++i) {
    st = epctx_session_create(env, path, opt, &s[i]);
    if (st) {
      expect_clean(st);
      epctx_status_release(st);
      r.create_failed = 1;
      s[i] = NULL;
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (!s[i]) continue;
    st = run_once(env, s[i], &r.first_output);
    if (st) {
      expect_clean(st);
      epctx_status_release(st);
      r.run_failed = 1;
    }
  }
  /* Release in creation order: the second session keeps the shared context. */
  epctx_session_release(s[0]);
  if (s[1]) {
    long saved = fa->fail_at;
    fa->fail_at = 0;
    if (!r.create_failed) assert_null(run_once(env, s[1], &r.first_output));
    fa->fail_at = saved;
  }
  epctx_session_release(s[1]);
  epctx_session_options_release(opt);
  epctx_env_release(env);
  return r;
}

static void shared_group_survives_each_failed_allocation(void** state) {
  (void)state;
  fault_alloc clean = {0, 0, 0};
  life_result ref = shared_life("model_ctx.onnx", &clean);
  assert_false(ref.env_failed || ref.create_failed || ref.run_failed);
  assert_int_equal(clean.live, 0);
  long n = clean.calls;
  for (long k = 1; k <= n; ++k) {
    fault_alloc fa = {0, k, 0};
    life_result r = shared_life("model_ctx.onnx", &fa);
    if (fa.live != 0)
      fail_msg("shared group: allocation %ld of %ld leaks %ld blocks", k, n, fa.live);
    if (!r.env_failed && !r.create_failed) assert_true(r.first_output == ref.first_output);
  }
  printf("shared group: %ld allocations, each failed in turn\n", n);
}

static void every_allocation_fails_in_turn(const char* model) {
  fault_alloc clean = {0, 0, 0};
  life_result ref = life(model, &clean, 0);
  assert_false(ref.env_failed || ref.create_failed || ref.run_failed);
  assert_int_equal(clean.live, 0);
  long n = clean.calls;
  assert_true(n > 3);
  long failed_create = 0, failed_run = 0;
  for (long k = 1; k <= n; ++k) {
    fault_alloc fa = {0, k, 0};
    life_result r = life(model, &fa, 0);
    if (fa.live != 0)
      fail_msg("%s: failing allocation %ld of %ld leaks %ld blocks", model, k, n, fa.live);
    failed_create += r.create_failed;
    failed_run += r.run_failed;
    if (!r.env_failed && !r.create_failed && r.first_output != ref.first_output)
      fail_msg("%s: allocation %ld failed: output %g, expected %g", model, k, r.first_output,
               ref.first_output);
  }
  printf("%s: %ld allocations, each failed in turn: %ld failed create, %ld failed run\n", model, n,
         failed_create, failed_run);
}

static void cpu_model_survives_each_failed_allocation(void** state) {
  (void)state;
  every_allocation_fails_in_turn("model.onnx");
}

static void epcontext_package_survives_each_failed_allocation(void** state) {
  (void)state;
  every_allocation_fails_in_turn("model_ctx.onnx");
}

/* Signed (manifest parse, key, hashes, counter): every allocation too. */
static void signed_package_survives_each_failed_allocation(void** state) {
  (void)state;
  every_allocation_fails_in_turn("signed");
}

/* Encrypted, then signed: the data key, the sealed header, the asset key,
 * the plaintext buffer and the decryption state, every allocation too. */
static void encrypted_package_survives_each_failed_allocation(void** state) {
  (void)state;
  every_allocation_fails_in_turn("encrypted");
}

static void epcontext_package_survives_each_failed_driver_call(void** state) {
  (void)state;
  init_wrapper();
  fault_alloc clean = {0, 0, 0};
  g_drv_calls = 0;
  g_drv_fail_at = 0;
  g_drv_live_contexts = 0;
  life_result ref = life("model_ctx.onnx", &clean, 1);
  assert_false(ref.env_failed || ref.create_failed || ref.run_failed);
  long n = g_drv_calls;
  assert_true(n >= 4); /* info, compatibility, load, graph, execute */
  for (long k = 1; k <= n; ++k) {
    fault_alloc fa = {0, 0, 0};
    g_drv_calls = 0;
    g_drv_fail_at = k;
    g_drv_live_contexts = 0;
    life_result r = life("model_ctx.onnx", &fa, 1);
    if (fa.live != 0) fail_msg("driver call %ld of %ld failed: %ld blocks leak", k, n, fa.live);
    if (g_drv_live_contexts != 0)
      fail_msg("driver call %ld of %ld failed: %ld driver contexts never released", k, n,
               g_drv_live_contexts);
    if (!r.env_failed && !r.create_failed) assert_true(r.first_output == ref.first_output);
  }
  g_drv_fail_at = 0;
  printf("vnpu: %ld driver calls, each failed in turn\n", n);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s <package folder> [<signed package folder> [<encrypted package folder>]]\n",
            argv[0]);
    return 2;
  }
  g_dir = argv[1];
  g_signed_dir = argc > 2 ? argv[2] : NULL;
  g_encrypted_dir = argc > 3 ? argv[3] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_model_survives_each_failed_allocation),
      cmocka_unit_test(epcontext_package_survives_each_failed_allocation),
      cmocka_unit_test(epcontext_package_survives_each_failed_driver_call),
      cmocka_unit_test(shared_group_survives_each_failed_allocation),
      cmocka_unit_test(signed_package_survives_each_failed_allocation),
      cmocka_unit_test(encrypted_package_survives_each_failed_allocation),
  };
  /* Without a signed folder (no epctx-sign in this build) the last two are
   * left out, without an encrypted one the last. */
  const size_t n = g_encrypted_dir ? 6 : g_signed_dir ? 5 : 4;
  return _cmocka_run_group_tests("test_fault_inject", tests, n, NULL, NULL);
}
