/* SPDX-License-Identifier: Apache-2.0 */
/* The run memory plan through the C API: intermediates planned at create
 * from declared shapes (or after the first run when the model declares
 * none), steady runs without allocator calls, outputs bound in place and
 * the caller's arena.
 * usage: test_run_memory PACKAGE_DIR
 *   PACKAGE_DIR holds model.onnx (no value_info: planned after the first
 *   run) and model_cpu_ctx.onnx (epctx-compile --ep none: shapes declared). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mem_util.h"

static char g_declared[4096], g_source[4096];
static long g_allocs;

static void* count_alloc(void* user, size_t size, size_t alignment) {
  (void)user;
  ++g_allocs;
  void* p = NULL;
  return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size) ? NULL : p;
}
static void count_free(void* user, void* p) {
  (void)user;
  free(p);
}

typedef struct fixture {
  epctx_env* env;
  epctx_session* s;
  float x[64];
  epctx_tensor* in;
  const char* in_name;
} fixture;

static void setup(fixture* f, const char* model) {
  static const epctx_allocator a = {NULL, count_alloc, count_free};
  mem_check(epctx_env_create(&a, 1, &f->env), "env");
  mem_check(epctx_env_register_builtin_drivers(f->env), "drivers");
  f->s = mem_create(f->env, model, NULL, NULL, NULL);
  epctx_io_info info;
  mem_check(epctx_session_input_info(f->s, 0, &info), "input info");
  assert_int_equal(info.rank, 2);
  int64_t dims[2] = {1, 64};
  for (int i = 0; i < 64; ++i) f->x[i] = (float)((i * 37) % 23 - 11) / 7.0f;
  mem_check(epctx_tensor_wrap(f->env, EPCTX_DTYPE_FLOAT, dims, 2, f->x, sizeof f->x, &f->in),
            "wrap");
  f->in_name = info.name;
}

static void teardown(fixture* f) {
  epctx_tensor_release(f->in);
  epctx_session_release(f->s);
  epctx_env_release(f->env);
}

static epctx_status* run(fixture* f, epctx_tensor** out, void* arena, size_t arena_size) {
  epctx_run_args a = {0};
  a.input_names = &f->in_name;
  a.inputs = (const epctx_tensor* const*)&f->in;
  a.input_count = 1;
  a.outputs = out;
  a.output_count = 1;
  a.arena = arena;
  a.arena_size = arena_size;
  return epctx_session_run_with(f->s, &a);
}

static void plans_declared_intermediates_at_create(void** state) {
  (void)state;
  fixture f;
  setup(&f, g_declared);
  /* 3 x (MatMul, Relu) on [1, 64] floats: 6 values of 256 bytes, of which at
   * most two live at once. */
  assert_int_equal(epctx_session_planned_value_count(f.s), 6);
  assert_int_equal(epctx_session_arena_size(f.s), 512);
  teardown(&f);
}

static void plans_undeclared_intermediates_after_the_first_run(void** state) {
  (void)state;
  fixture f;
  setup(&f, g_source);
  assert_int_equal(epctx_session_planned_value_count(f.s), 1); /* the declared output */
  epctx_tensor* y = NULL;
  mem_check(run(&f, &y, NULL, 0), "run");
  epctx_tensor_release(y);
  assert_int_equal(epctx_session_planned_value_count(f.s), 6);
  assert_int_equal(epctx_session_arena_size(f.s), 512);
  teardown(&f);
}

/* Runs after the first make no allocator call: bound output, pooled arena. */
static void steady_runs_make_no_allocator_call(void** state) {
  (void)state;
  const char* models[2] = {g_declared, g_source};
  for (int m = 0; m < 2; ++m) {
    fixture f;
    setup(&f, models[m]);
    float y_data[64];
    int64_t dims[2] = {1, 64};
    epctx_tensor* y = NULL;
    mem_check(epctx_tensor_wrap(f.env, EPCTX_DTYPE_FLOAT, dims, 2, y_data, sizeof y_data, &y),
              "wrap");
    mem_check(run(&f, &y, NULL, 0), "first run");
    long before = g_allocs;
    for (int r = 0; r < 10; ++r) mem_check(run(&f, &y, NULL, 0), "run");
    assert_int_equal(g_allocs - before, 0);
    epctx_tensor_release(y);
    teardown(&f);
  }
}

static void bound_output_is_written_in_place(void** state) {
  (void)state;
  fixture f;
  setup(&f, g_declared);
  epctx_tensor* fresh = NULL;
  mem_check(run(&f, &fresh, NULL, 0), "run");
  assert_int_equal(epctx_tensor_bytes(fresh), 256);
  float y_data[64];
  memset(y_data, 0, sizeof y_data);
  int64_t dims[2] = {1, 64};
  epctx_tensor* y = NULL;
  mem_check(epctx_tensor_wrap(f.env, EPCTX_DTYPE_FLOAT, dims, 2, y_data, sizeof y_data, &y),
            "wrap");
  epctx_tensor* bound = y;
  mem_check(run(&f, &bound, NULL, 0), "bound run");
  assert_ptr_equal(bound, y);
  assert_ptr_equal(epctx_tensor_data(y), y_data);
  assert_memory_equal(y_data, epctx_tensor_data(fresh), sizeof y_data);
  epctx_tensor_release(fresh);
  epctx_tensor_release(y);
  teardown(&f);
}

static void bound_output_of_another_shape_is_invalid_argument(void** state) {
  (void)state;
  fixture f;
  setup(&f, g_declared);
  float y_data[32];
  int64_t dims[2] = {1, 32};
  epctx_tensor* y = NULL;
  mem_check(epctx_tensor_wrap(f.env, EPCTX_DTYPE_FLOAT, dims, 2, y_data, sizeof y_data, &y),
            "wrap");
  epctx_tensor* bound = y;
  epctx_status* st = run(&f, &bound, NULL, 0);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "output 'y'"));
  assert_non_null(strstr(epctx_status_message(st), "float[1,32]"));
  assert_non_null(strstr(epctx_status_message(st), "float[1,64]"));
  assert_ptr_equal(bound, y); /* the caller's tensor stays the caller's */
  epctx_status_release(st);
  epctx_tensor_release(y);
  teardown(&f);
}

static void caller_arena_holds_the_intermediates(void** state) {
  (void)state;
  fixture f;
  setup(&f, g_declared);
  size_t need = epctx_session_arena_size(f.s);
  uint8_t* arena = NULL;
  assert_int_equal(posix_memalign((void**)&arena, EPCTX_ARENA_ALIGNMENT, need + 64), 0);
  memset(arena, 0xAB, need + 64);
  epctx_tensor* want = NULL;
  mem_check(run(&f, &want, NULL, 0), "run");
  epctx_tensor* got = NULL;
  mem_check(run(&f, &got, arena, need), "arena run");
  assert_memory_equal(epctx_tensor_data(got), epctx_tensor_data(want), 256);
  int touched = 0;
  for (size_t i = 0; i < need; ++i) touched |= arena[i] != 0xAB;
  assert_true(touched);
  for (size_t i = need; i < need + 64; ++i) assert_int_equal(arena[i], 0xAB);
  epctx_tensor_release(got);
  got = NULL;

  epctx_status* st = run(&f, &got, arena, need - 1);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "the memory plan needs 512"));
  assert_null(got);
  epctx_status_release(st);
  st = run(&f, &got, arena + 8, need);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "aligned to 64"));
  epctx_status_release(st);
  epctx_tensor_release(want);
  free(arena);
  teardown(&f);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_run_memory PACKAGE_DIR\n");
    return 2;
  }
  (void)mem_run;
  snprintf(g_declared, sizeof g_declared, "%s/model_cpu_ctx.onnx", argv[1]);
  snprintf(g_source, sizeof g_source, "%s/model.onnx", argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plans_declared_intermediates_at_create),
      cmocka_unit_test(plans_undeclared_intermediates_after_the_first_run),
      cmocka_unit_test(steady_runs_make_no_allocator_call),
      cmocka_unit_test(bound_output_is_written_in_place),
      cmocka_unit_test(bound_output_of_another_shape_is_invalid_argument),
      cmocka_unit_test(caller_arena_holds_the_intermediates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
