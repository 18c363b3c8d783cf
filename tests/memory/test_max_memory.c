/* SPDX-License-Identifier: Apache-2.0 */
/* epctx.max_memory_bytes (issue 14, finding 9): a session's metadata and run
 * memory stay under the limit, and a request beyond it is refused with
 * OUT_OF_MEMORY naming the limit before the env's allocator sees it. The
 * original input (as a 67-byte model): one whose Gemm of [23170,0] x [0,23170]
 * initializers makes a 2 GiB output (4.2 GB with its copy to the caller). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>

static const unsigned char kGemmEmptyK[] = {
    0x08, 0x08, 0x3a, 0x39, 0x0a, 0x0f, 0x0a, 0x01, 0x41, 0x0a, 0x01, 0x42, 0x12, 0x01,
    0x59, 0x22, 0x04, 0x47, 0x65, 0x6d, 0x6d, 0x12, 0x01, 0x67, 0x2a, 0x0b, 0x08, 0x82,
    0xb5, 0x01, 0x08, 0x00, 0x10, 0x01, 0x42, 0x01, 0x41, 0x2a, 0x0b, 0x08, 0x00, 0x08,
    0x82, 0xb5, 0x01, 0x10, 0x01, 0x42, 0x01, 0x42, 0x62, 0x09, 0x0a, 0x01, 0x59, 0x12,
    0x04, 0x0a, 0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d};

/* The env's allocator: counts bytes live and the largest request seen. */
typedef struct {
  size_t live, largest;
} counter;

static void* count_alloc(void* user, size_t size, size_t alignment) {
  counter* c = user;
  if (size > c->largest) c->largest = size;
  if (alignment < sizeof(size_t) * 2) alignment = sizeof(size_t) * 2;
  unsigned char* base =
      aligned_alloc(alignment, (alignment + size + alignment - 1) / alignment * alignment);
  if (!base) return NULL;
  memcpy(base, &size, sizeof size);
  memcpy(base + sizeof size, &alignment, sizeof alignment);
  unsigned char* p = base + alignment;
  memcpy(p - sizeof(void*), &base, sizeof base);
  c->live += size;
  return p;
}

static void count_free(void* user, void* ptr) {
  if (!ptr) return;
  counter* c = user;
  unsigned char* base;
  memcpy(&base, (unsigned char*)ptr - sizeof(void*), sizeof base);
  size_t size;
  memcpy(&size, base, sizeof size);
  c->live -= size;
  free(base);
}

static epctx_env* counted_env(counter* c) {
  epctx_allocator a = {c, count_alloc, count_free};
  epctx_env* env = NULL;
  assert_null(epctx_env_create(&a, 0, &env));
  return env;
}

static epctx_session* create(epctx_env* env, const char* limit, epctx_status** st) {
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  if (limit) assert_null(epctx_session_options_set(o, "epctx.max_memory_bytes", limit));
  epctx_session* s = NULL;
  *st = epctx_session_create_from_buffer(env, kGemmEmptyK, sizeof kGemmEmptyK, o, &s);
  epctx_session_options_release(o);
  return s;
}

static void expect_message(epctx_status* st, int code, const char* fragment) {
  assert_non_null(st);
  if (epctx_status_code(st) != code || !strstr(epctx_status_message(st), fragment))
    fail_msg("expected %s with \"%s\", got %s: %s", epctx_code_name(code), fragment,
             epctx_code_name(epctx_status_code(st)), epctx_status_message(st));
  epctx_status_release(st);
}

static void gemm_of_empty_k_is_refused_before_allocating_its_2gib_output(void** state) {
  (void)state;
  counter c = {0, 0};
  epctx_env* env = counted_env(&c);
  epctx_status* st = NULL;
  epctx_session* s = create(env, "64M", &st);
  assert_null(st);
  epctx_tensor* y = NULL;
  const char* out = "Y";
  st = epctx_session_run(s, NULL, NULL, 0, &out, &y, 1);
  expect_message(st, EPCTX_OUT_OF_MEMORY, "epctx.max_memory_bytes=67108864 refused");
  assert_null(y);
  assert_true(c.largest < (size_t)64 << 20); /* the 2 GiB never reached the allocator */
  epctx_session_release(s);
  epctx_env_release(env);
  assert_int_equal(c.live, 0);
}

static void limit_below_the_metadata_fails_create_cleanly(void** state) {
  (void)state;
  counter c = {0, 0};
  epctx_env* env = counted_env(&c);
  size_t before = c.live;
  epctx_status* st = NULL;
  epctx_session* s = create(env, "1K", &st);
  assert_null(s);
  expect_message(st, EPCTX_OUT_OF_MEMORY, "epctx.max_memory_bytes=1024 refused");
  assert_int_equal(c.live, before);
  epctx_env_release(env);
  assert_int_equal(c.live, 0);
}

static void limit_values_are_checked_when_set(void** state) {
  (void)state;
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  const char* bad[] = {"0", "", "-5", "12T", "1.5G", "18446744073709551616", "17179869184G"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
    expect_message(epctx_session_options_set(o, "epctx.max_memory_bytes", bad[i]),
                   EPCTX_INVALID_ARGUMENT, "expected a positive byte count");
  expect_message(epctx_session_options_set_max_memory_bytes(o, 0), EPCTX_INVALID_ARGUMENT,
                 "epctx.max_memory_bytes");
  assert_null(epctx_session_options_set(o, "epctx.max_memory_bytes", "4G"));
  assert_null(epctx_session_options_set_max_memory_bytes(o, 123456789));
  epctx_session_options_release(o);
}

/* Under a limit that fits, the model runs and its output is right. */
static void model_within_the_limit_runs(void** state) {
  (void)state;
  static const unsigned char small[] = {
      0x08, 0x08, 0x3a, 0x35, 0x0a, 0x0f, 0x0a, 0x01, 0x41, 0x0a, 0x01, 0x42, 0x12,
      0x01, 0x59, 0x22, 0x04, 0x47, 0x65, 0x6d, 0x6d, 0x12, 0x01, 0x67, 0x2a, 0x09,
      0x08, 0x03, 0x08, 0x00, 0x10, 0x01, 0x42, 0x01, 0x41, 0x2a, 0x09, 0x08, 0x00,
      0x08, 0x02, 0x10, 0x01, 0x42, 0x01, 0x42, 0x62, 0x09, 0x0a, 0x01, 0x59, 0x12,
      0x04, 0x0a, 0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d};
  counter c = {0, 0};
  epctx_env* env = counted_env(&c);
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  assert_null(epctx_session_options_set_max_memory_bytes(o, 1 << 20));
  epctx_session* s = NULL;
  assert_null(epctx_session_create_from_buffer(env, small, sizeof small, o, &s));
  epctx_session_options_release(o);
  epctx_tensor* y = NULL;
  const char* out = "Y";
  assert_null(epctx_session_run(s, NULL, NULL, 0, &out, &y, 1));
  assert_int_equal(epctx_tensor_bytes(y), 3 * 2 * 4);
  const float* v = epctx_tensor_data(y);
  for (int i = 0; i < 6; ++i) assert_true(v[i] == 0.0f); /* K = 0: all zeros */
  epctx_tensor_release(y);
  epctx_session_release(s);
  epctx_env_release(env);
  assert_int_equal(c.live, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gemm_of_empty_k_is_refused_before_allocating_its_2gib_output),
      cmocka_unit_test(limit_below_the_metadata_fails_create_cleanly),
      cmocka_unit_test(limit_values_are_checked_when_set),
      cmocka_unit_test(model_within_the_limit_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
