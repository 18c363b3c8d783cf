/* SPDX-License-Identifier: Apache-2.0 */
/* PAL failures over a whole session life: every file call the runtime makes
 * through the PAL (map, map beneath, identify, read whole, counter read and
 * write) fails in turn, with the OS-error code FAIL. Linked with
 * -Wl,--wrap=<each call>, so the runtime's own calls land here.
 * Each must end in a status with a code and a message, leave no mapping and
 * no allocation behind, and never turn into something weaker (a manifest
 * that cannot be read is not "unsigned").
 * usage: test_fault_pal <package folder with model.onnx and model_ctx.onnx>
 *        [<signed package folder> [<encrypted package folder>]] */
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
#include <epctx/pal.h>

static const char* g_dir;
static const char* g_signed_dir; /* a signed copy of the package, its key and counter store */
/* The same encrypted, then signed, its data key wrapped for device.key (id
 * "device") in model_ctx.onnx.keys: loaded with the device key only. */
static const char* g_wrapped_dir;
static long g_calls, g_fail_at, g_live_regions, g_failed_read_file, g_failed_counter_read;

static int inject(const char* what, char* msg, size_t cap) {
  ++g_calls;
  if (g_fail_at == 0 && getenv("EPCTX_FAULT_PAL_VERBOSE"))
    printf("  PAL call %ld: %s\n", g_calls, what);
  if (g_calls != g_fail_at) return 0;
  if (msg && cap) snprintf(msg, cap, "injected %s failure (PAL call %ld)", what, g_calls);
  return EPCTX_FAIL;
}

int __real_epctx_pal_map_file(const char*, int, epctx_pal_region*, char*, size_t);
int __wrap_epctx_pal_map_file(const char* p, int mode, epctx_pal_region* out, char* msg,
                              size_t cap) {
  int rc = inject("map", msg, cap);
  if (rc) return rc;
  rc = __real_epctx_pal_map_file(p, mode, out, msg, cap);
  if (rc == 0) g_live_regions++;
  return rc;
}
int __real_epctx_pal_read_file(const char*, uint64_t, epctx_pal_region*, char*, size_t);
int __wrap_epctx_pal_read_file(const char* p, uint64_t max, epctx_pal_region* out, char* msg,
                               size_t cap) {
  int rc = inject("read", msg, cap);
  if (rc) {
    g_failed_read_file++;
    return rc;
  }
  rc = __real_epctx_pal_read_file(p, max, out, msg, cap);
  if (rc == 0) g_live_regions++;
  return rc;
}
int __real_epctx_pal_map_file_beneath(const char*, const char*, int, epctx_pal_region*, char*,
                                      size_t);
int __wrap_epctx_pal_map_file_beneath(const char* b, const char* r, int mode, epctx_pal_region* out,
                                      char* msg, size_t cap) {
  int rc = inject("map beneath", msg, cap);
  if (rc) return rc;
  rc = __real_epctx_pal_map_file_beneath(b, r, mode, out, msg, cap);
  if (rc == 0) g_live_regions++;
  return rc;
}
int __real_epctx_pal_file_id_beneath(const char*, const char*, epctx_pal_file_id*, char*, size_t);
int __wrap_epctx_pal_file_id_beneath(const char* b, const char* r, epctx_pal_file_id* out,
                                     char* msg, size_t cap) {
  int rc = inject("identify", msg, cap);
  return rc ? rc : __real_epctx_pal_file_id_beneath(b, r, out, msg, cap);
}
int __real_epctx_pal_counter_read(const char*, const char*, uint64_t*, int*, char*, size_t);
int __wrap_epctx_pal_counter_read(const char* s, const char* n, uint64_t* v, int* found, char* msg,
                                  size_t cap) {
  int rc = inject("counter read", msg, cap);
  if (rc) g_failed_counter_read++;
  return rc ? rc : __real_epctx_pal_counter_read(s, n, v, found, msg, cap);
}
int __real_epctx_pal_counter_write(const char*, const char*, uint64_t, char*, size_t);
int __wrap_epctx_pal_counter_write(const char* s, const char* n, uint64_t v, char* msg,
                                   size_t cap) {
  int rc = inject("counter write", msg, cap);
  return rc ? rc : __real_epctx_pal_counter_write(s, n, v, msg, cap);
}
void __real_epctx_pal_unmap(epctx_pal_region*);
void __wrap_epctx_pal_unmap(epctx_pal_region* r) {
  if (r && (r->data || r->handle)) g_live_regions--;
  __real_epctx_pal_unmap(r);
}

/* Counts allocations so a leak shows as a non-zero balance. */
static long g_live_allocs;
static void* count_alloc(void* u, size_t size, size_t align) {
  (void)u;
  void* p = NULL;
  if (align < sizeof(void*)) align = sizeof(void*);
  if (posix_memalign(&p, align, size ? size : 1) != 0) return NULL;
  g_live_allocs++;
  return p;
}
static void count_free(void* u, void* p) {
  (void)u;
  if (p) g_live_allocs--;
  free(p);
}

static int under(const char* model, const char* dir) {
  return dir && strncmp(model, dir, strlen(dir)) == 0;
}

/* Reads the file `name` of `dir` into key (at most cap bytes); its size. */
static size_t read_key(const char* dir, const char* name, char* key, size_t cap) {
  char key_path[4096];
  snprintf(key_path, sizeof key_path, "%s/%s", dir, name);
  FILE* f = fopen(key_path, "rb");
  assert_non_null(f);
  size_t n = fread(key, 1, cap, f);
  fclose(f);
  return n;
}

/* create + release; returns 1 when it succeeded. A model under the signed
 * or encrypted folder loads with its key trusted, a rollback store and
 * policy required (and the encrypted one with its device key). */
static int life(const char* model) {
  epctx_allocator a = {NULL, count_alloc, count_free};
  epctx_env* env = NULL;
  assert_null(epctx_env_create(&a, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  const char* dir = under(model, g_signed_dir)    ? g_signed_dir
                    : under(model, g_wrapped_dir) ? g_wrapped_dir
                                                  : NULL;
  const int is_signed = dir != NULL;
  char path[4096];
  if (is_signed) snprintf(path, sizeof path, "%s", model);
  else snprintf(path, sizeof path, "%s/%s", g_dir, model);
  epctx_session_options* o = NULL;
  if (is_signed) {
    char store[4096], key[4096];
    snprintf(store, sizeof store, "%s/counters", dir);
    size_t n = read_key(dir, "public.pem", key, sizeof key);
    assert_null(epctx_env_add_trusted_key(env, key, n));
    if (dir == g_wrapped_dir) {
      n = read_key(dir, "device.key", key, sizeof key);
      assert_null(epctx_env_add_decryption_key(env, "device", key, n));
    }
    /* An empty store each time, so every load reads and then writes a counter. */
    DIR* d = opendir(store);
    assert_non_null(d);
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
      if (e->d_name[0] == '.') continue;
      char file[8192];
      snprintf(file, sizeof file, "%s/%s", store, e->d_name);
      unlink(file);
    }
    closedir(d);
    assert_null(epctx_env_set_rollback_store(env, store));
    assert_null(epctx_session_options_create(&o));
    assert_null(epctx_session_options_set(o, "epctx.signature_policy", "required"));
  }
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(env, path, o, &s);
  epctx_session_options_release(o);
  int ok = st == NULL;
  if (st) {
    assert_int_not_equal(epctx_status_code(st), EPCTX_OK);
    assert_true(epctx_status_message(st)[0] != '\0');
    epctx_status_release(st);
  } else {
    epctx_session_release(s);
  }
  epctx_env_release(env);
  return ok;
}

static void each_pal_call_fails_in_turn(const char* model) {
  g_calls = 0;
  g_fail_at = 0;
  g_live_regions = 0;
  g_live_allocs = 0;
  assert_true(life(model));
  assert_int_equal(g_live_regions, 0);
  long n = g_calls;
  assert_true(n >= 1);
  for (long k = 1; k <= n; ++k) {
    g_calls = 0;
    g_fail_at = k;
    g_live_regions = 0;
    g_live_allocs = 0;
    g_failed_read_file = 0;
    g_failed_counter_read = 0;
    int ok = life(model);
    if (g_live_regions != 0)
      fail_msg("%s: PAL call %ld of %ld failed: %ld regions never unmapped", model, k, n,
               g_live_regions);
    if (g_live_allocs != 0)
      fail_msg("%s: PAL call %ld of %ld failed: %ld allocations leak", model, k, n, g_live_allocs);
    /* A manifest or key-wrap file read that failed (not "no such file")
     * must not load. */
    if (g_failed_read_file && ok)
      fail_msg("%s: a failed manifest or key-wrap file read (PAL call %ld) still loaded", model, k);
    /* Nor a rollback counter that could not be read (it is not "no counter"). */
    if (g_failed_counter_read && ok)
      fail_msg("%s: a failed counter read (PAL call %ld) still loaded", model, k);
  }
  g_fail_at = 0;
  printf("%s: %ld PAL calls, each failed in turn\n", model, n);
}

static void cpu_model_survives_each_failed_pal_call(void** state) {
  (void)state;
  each_pal_call_fails_in_turn("model.onnx");
}
static void epcontext_package_survives_each_failed_pal_call(void** state) {
  (void)state;
  each_pal_call_fails_in_turn("model_ctx.onnx");
}

/* Signed: the manifest read, the counter read and the counter write after
 * the load are PAL calls too; each failing leaves nothing behind. */
static void signed_package_survives_each_failed_pal_call(void** state) {
  (void)state;
  char model[4096];
  snprintf(model, sizeof model, "%s/model_ctx.onnx", g_signed_dir);
  each_pal_call_fails_in_turn(model);
}

/* Encrypted and signed, decrypted with a device key: the key-wrap file's
 * read is one more PAL call. */
static void wrapped_package_survives_each_failed_pal_call(void** state) {
  (void)state;
  char model[4096];
  snprintf(model, sizeof model, "%s/model_ctx.onnx", g_wrapped_dir);
  each_pal_call_fails_in_turn(model);
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
  g_wrapped_dir = argc > 3 ? argv[3] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_model_survives_each_failed_pal_call),
      cmocka_unit_test(epcontext_package_survives_each_failed_pal_call),
      cmocka_unit_test(signed_package_survives_each_failed_pal_call),
      cmocka_unit_test(wrapped_package_survives_each_failed_pal_call),
  };
  /* Without a signed folder (no epctx-sign in this build) the last two are
   * left out, without an encrypted one the last. */
  const size_t n = g_wrapped_dir ? 4 : g_signed_dir ? 3 : 2;
  return _cmocka_run_group_tests("test_fault_pal", tests, n, NULL, NULL);
}
