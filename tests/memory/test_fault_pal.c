/* SPDX-License-Identifier: Apache-2.0 */
/* PAL failures over a whole session life: every file call the runtime makes
 * through the PAL (map, map beneath, identify, read whole, counter read and
 * write) fails in turn, with the OS-error code FAIL. Linked with
 * -Wl,--wrap=<each call>, so the runtime's own calls land here.
 * Each must end in a status with a code and a message, leave no mapping and
 * no allocation behind, and never turn into something weaker (a manifest
 * that cannot be read is not "unsigned").
 * usage: test_fault_pal <package folder with model.onnx and model_ctx.onnx> */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>
#include <epctx/pal.h>

static const char* g_dir;
static long g_calls, g_fail_at, g_live_regions, g_failed_read_file;

static int inject(const char* what, char* msg, size_t cap) {
  if (++g_calls != g_fail_at) return 0;
  if (msg && cap) snprintf(msg, cap, "injected %s failure (PAL call %ld)", what, g_calls);
  return EPCTX_FAIL;
}

int __real_epctx_pal_map_file(const char*, int, epctx_pal_region*, char*, size_t);
int __wrap_epctx_pal_map_file(const char* p, int mode, epctx_pal_region* out, char* msg, size_t cap) {
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
int __wrap_epctx_pal_file_id_beneath(const char* b, const char* r, epctx_pal_file_id* out, char* msg,
                                     size_t cap) {
  int rc = inject("identify", msg, cap);
  return rc ? rc : __real_epctx_pal_file_id_beneath(b, r, out, msg, cap);
}
int __real_epctx_pal_counter_read(const char*, const char*, uint64_t*, int*, char*, size_t);
int __wrap_epctx_pal_counter_read(const char* s, const char* n, uint64_t* v, int* found, char* msg,
                                  size_t cap) {
  int rc = inject("counter read", msg, cap);
  return rc ? rc : __real_epctx_pal_counter_read(s, n, v, found, msg, cap);
}
int __real_epctx_pal_counter_write(const char*, const char*, uint64_t, char*, size_t);
int __wrap_epctx_pal_counter_write(const char* s, const char* n, uint64_t v, char* msg, size_t cap) {
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

/* create + run + release; returns 1 when every step succeeded. */
static int life(const char* model) {
  epctx_allocator a = {NULL, count_alloc, count_free};
  epctx_env* env = NULL;
  assert_null(epctx_env_create(&a, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_dir, model);
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(env, path, NULL, &s);
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
    int ok = life(model);
    if (g_live_regions != 0) fail_msg("%s: PAL call %ld of %ld failed: %ld regions never unmapped", model, k, n, g_live_regions);
    if (g_live_allocs != 0) fail_msg("%s: PAL call %ld of %ld failed: %ld allocations leak", model, k, n, g_live_allocs);
    /* A manifest read that failed (not "no such file") must not load. */
    if (g_failed_read_file && ok) fail_msg("%s: a failed manifest read (PAL call %ld) still loaded", model, k);
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

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <package folder>\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_model_survives_each_failed_pal_call),
      cmocka_unit_test(epcontext_package_survives_each_failed_pal_call),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
