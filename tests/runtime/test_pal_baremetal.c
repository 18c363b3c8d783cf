/* SPDX-License-Identifier: Apache-2.0 */
/* The bare-metal PAL (runtime/src/pal/baremetal) on the host: named memory
 * regions, the arena allocator, the RAM counters, and a whole session through
 * it (libepctx_freestanding + this PAL, no POSIX PAL linked).
 * usage: test_pal_baremetal MODELS_DIR (tests/runtime's generated models) */
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
#include <epctx/pal_baremetal.h>

#include "../e2e/test_io.h"

static const char* g_models;
static _Alignas(64) unsigned char g_arena[256 * 1024];
static char g_log[1024];

static void capture(const char* text) { strncat(g_log, text, sizeof g_log - strlen(g_log) - 1); }

static const unsigned char kWeights[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const unsigned char kSig[] = "manifest bytes";
static const epctx_baremetal_file kFiles[] = {
    {"pkg/model_ctx.onnx", kSig, 4},
    {"pkg/model_vnpu.bin", kWeights, sizeof kWeights},
    {"pkg/model_ctx.onnx.sig", kSig, sizeof kSig},
    {"empty.bin", NULL, 0},
};

static void init_platform(const epctx_baremetal_file* files, size_t n) {
  static epctx_baremetal_platform p;
  p = (epctx_baremetal_platform){files, n, g_arena, sizeof g_arena, capture, NULL};
  g_log[0] = '\0';
  assert_int_equal(epctx_pal_baremetal_init(&p), EPCTX_OK);
}

static int setup(void** state) {
  (void)state;
  init_platform(kFiles, sizeof kFiles / sizeof kFiles[0]);
  return 0;
}

static void init_refuses_bad_platforms(void** state) {
  (void)state;
  epctx_baremetal_platform p = {kFiles, 4, g_arena, 100, NULL, NULL};
  assert_int_equal(epctx_pal_baremetal_init(&p), EPCTX_INVALID_ARGUMENT);  // arena < 256
  epctx_baremetal_file nameless = {NULL, kWeights, 1};
  p = (epctx_baremetal_platform){&nameless, 1, g_arena, sizeof g_arena, NULL, NULL};
  assert_int_equal(epctx_pal_baremetal_init(&p), EPCTX_INVALID_ARGUMENT);
  assert_int_equal(epctx_pal_baremetal_init(NULL), EPCTX_INVALID_ARGUMENT);
}

static void map_file_is_a_view_of_the_region(void** state) {
  (void)state;
  epctx_pal_region r;
  char msg[128];
  assert_int_equal(
      epctx_pal_map_file("pkg/model_vnpu.bin", EPCTX_PAL_LOAD_MMAP, &r, msg, sizeof msg), EPCTX_OK);
  assert_ptr_equal(r.data, kWeights);  // zero-copy
  assert_int_equal(r.size, sizeof kWeights);
  epctx_pal_unmap(&r);
  assert_int_equal(epctx_pal_baremetal_heap_used(), 0);
}

static void load_mode_read_copies_into_the_arena(void** state) {
  (void)state;
  epctx_pal_region r;
  char msg[128];
  assert_int_equal(
      epctx_pal_map_file("pkg/model_vnpu.bin", EPCTX_PAL_LOAD_READ, &r, msg, sizeof msg), EPCTX_OK);
  assert_ptr_not_equal(r.data, kWeights);
  assert_true(r.data >= g_arena && r.data < g_arena + sizeof g_arena);
  assert_memory_equal(r.data, kWeights, sizeof kWeights);
  assert_true(epctx_pal_baremetal_heap_used() > 0);
  epctx_pal_unmap(&r);
  assert_int_equal(epctx_pal_baremetal_heap_used(), 0);
}

static void missing_file_is_no_suchfile_naming_it(void** state) {
  (void)state;
  epctx_pal_region r;
  char msg[128];
  assert_int_equal(epctx_pal_map_file("pkg/other.onnx", EPCTX_PAL_LOAD_MMAP, &r, msg, sizeof msg),
                   EPCTX_NO_SUCHFILE);
  assert_non_null(strstr(msg, "pkg/other.onnx"));
  assert_null(r.data);
}

static void read_file_refuses_files_over_the_limit(void** state) {
  (void)state;
  epctx_pal_region r;
  char msg[128];
  assert_int_equal(epctx_pal_read_file("pkg/model_ctx.onnx.sig", 4, &r, msg, sizeof msg),
                   EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(msg, "15 bytes exceed the limit of 4"));
  assert_int_equal(epctx_pal_baremetal_heap_used(), 0);  // refused before allocating
  assert_int_equal(epctx_pal_read_file("pkg/model_ctx.onnx.sig", 64, &r, msg, sizeof msg),
                   EPCTX_OK);
  assert_memory_equal(r.data, kSig, sizeof kSig);
  epctx_pal_unmap(&r);
}

static void empty_file_maps_to_null(void** state) {
  (void)state;
  epctx_pal_region r;
  char msg[128];
  assert_int_equal(epctx_pal_map_file("empty.bin", EPCTX_PAL_LOAD_READ, &r, msg, sizeof msg),
                   EPCTX_OK);
  assert_null(r.data);
  assert_int_equal(r.size, 0);
}

static void beneath_joins_the_folder_and_refuses_escapes(void** state) {
  (void)state;
  epctx_pal_region r;
  char msg[128];
  assert_int_equal(
      epctx_pal_map_file_beneath("pkg", "model_vnpu.bin", EPCTX_PAL_LOAD_MMAP, &r, msg, sizeof msg),
      EPCTX_OK);
  assert_ptr_equal(r.data, kWeights);
  assert_int_equal(
      epctx_pal_map_file_beneath("", "empty.bin", EPCTX_PAL_LOAD_MMAP, &r, msg, sizeof msg),
      EPCTX_OK);
  assert_int_equal(epctx_pal_map_file_beneath("pkg/sub", "../model_vnpu.bin", EPCTX_PAL_LOAD_MMAP,
                                              &r, msg, sizeof msg),
                   EPCTX_PATH_REJECTED);
  assert_non_null(strstr(msg, "../model_vnpu.bin"));
  assert_int_equal(epctx_pal_map_file_beneath("", "/pkg/model_vnpu.bin", EPCTX_PAL_LOAD_MMAP, &r,
                                              msg, sizeof msg),
                   EPCTX_PATH_REJECTED);
  assert_int_equal(epctx_pal_map_file_beneath("pkg", "a/../../empty.bin", EPCTX_PAL_LOAD_MMAP, &r,
                                              msg, sizeof msg),
                   EPCTX_PATH_REJECTED);
  assert_int_equal(epctx_pal_map_file_beneath("pk", "g/model_vnpu.bin", EPCTX_PAL_LOAD_MMAP, &r,
                                              msg, sizeof msg),
                   EPCTX_NO_SUCHFILE);
}

static void file_descriptors_are_not_implemented(void** state) {
  (void)state;
  epctx_pal_region r;
  char msg[160];
  assert_int_equal(epctx_pal_map_fd(3, 0, 16, EPCTX_PAL_LOAD_MMAP, &r, msg, sizeof msg),
                   EPCTX_NOT_IMPLEMENTED);
  assert_null(r.data);
  assert_non_null(strstr(msg, "no file descriptors"));
}

static void file_id_is_the_table_entry(void** state) {
  (void)state;
  epctx_pal_file_id a, b, c;
  char msg[128];
  assert_int_equal(epctx_pal_file_id_beneath("pkg", "model_vnpu.bin", &a, msg, sizeof msg),
                   EPCTX_OK);
  assert_int_equal(epctx_pal_file_id_beneath("", "pkg/model_vnpu.bin", &b, msg, sizeof msg),
                   EPCTX_OK);
  assert_int_equal(epctx_pal_file_id_beneath("pkg", "model_ctx.onnx", &c, msg, sizeof msg),
                   EPCTX_OK);
  assert_true(a.inode == b.inode && a.size == sizeof kWeights);
  assert_true(a.inode != c.inode);
  assert_int_equal(epctx_pal_file_id_beneath("pkg", "../x", &c, msg, sizeof msg),
                   EPCTX_PATH_REJECTED);
}

static void alloc_honours_every_alignment(void** state) {
  (void)state;
  void* p[13];
  for (int i = 0; i < 13; ++i) {
    size_t align = (size_t)1 << i;  // 1 .. 4096
    p[i] = epctx_pal_alloc(100 + i, align);
    assert_non_null(p[i]);
    assert_int_equal((uintptr_t)p[i] % align, 0);
    memset(p[i], 0xab, 100 + i);
  }
  assert_null(epctx_pal_alloc(16, 8192));      // above the PAL's 4096 limit
  assert_null(epctx_pal_alloc(16, 24));        // not a power of two
  assert_null(epctx_pal_alloc(SIZE_MAX, 16));  // no wrap-around in the size checks
  assert_null(epctx_pal_alloc(SIZE_MAX - 8, 4096));
  for (int i = 12; i >= 0; --i) epctx_pal_free(p[i]);
  assert_int_equal(epctx_pal_baremetal_heap_used(), 0);
}

static void freed_blocks_coalesce(void** state) {
  (void)state;
  // Fill the arena with small blocks, free them in an interleaved order: one
  // allocation of nearly the whole arena must fit again.
  enum { kN = 256 };
  void* p[kN];
  for (int i = 0; i < kN; ++i) assert_non_null(p[i] = epctx_pal_alloc(900, 16));
  assert_true(epctx_pal_baremetal_heap_peak() >= kN * 900);
  for (int i = 0; i < kN; i += 2) epctx_pal_free(p[i]);
  for (int i = 1; i < kN; i += 2) epctx_pal_free(p[i]);
  assert_int_equal(epctx_pal_baremetal_heap_used(), 0);
  void* big = epctx_pal_alloc(sizeof g_arena - 256, 16);
  assert_non_null(big);
  assert_null(epctx_pal_alloc(512, 16));  // out of memory is NULL, not a crash
  epctx_pal_free(big);
  epctx_pal_free(NULL);
}

static void counters_live_in_ram_per_store_and_name(void** state) {
  (void)state;
  char a[65], b[65], msg[128];
  memset(a, 'a', 64);
  a[64] = '\0';
  memset(b, 'b', 64);
  b[64] = '\0';
  uint64_t v = 99;
  int found = 1;
  assert_int_equal(epctx_pal_counter_read("otp", a, &v, &found, msg, sizeof msg), EPCTX_OK);
  assert_int_equal(found, 0);
  assert_int_equal(epctx_pal_counter_write("otp", a, 7, msg, sizeof msg), EPCTX_OK);
  assert_int_equal(epctx_pal_counter_write("otp", a, 9, msg, sizeof msg), EPCTX_OK);
  assert_int_equal(epctx_pal_counter_read("otp", a, &v, &found, msg, sizeof msg), EPCTX_OK);
  assert_true(found == 1 && v == 9);
  assert_int_equal(epctx_pal_counter_read("other", a, &v, &found, msg, sizeof msg), EPCTX_OK);
  assert_int_equal(found, 0);
  assert_int_equal(epctx_pal_counter_read("otp", b, &v, &found, msg, sizeof msg), EPCTX_OK);
  assert_int_equal(found, 0);
  assert_int_equal(epctx_pal_counter_read("otp", "abc", &v, &found, msg, sizeof msg),
                   EPCTX_INVALID_ARGUMENT);
  // The table holds 8; the ninth distinct counter is a FAIL, never a silent drop.
  for (int i = 0; i < 7; ++i) {
    b[0] = (char)('0' + i);
    assert_int_equal(epctx_pal_counter_write("otp", b, 1, msg, sizeof msg), EPCTX_OK);
  }
  b[0] = 'z';
  assert_int_equal(epctx_pal_counter_write("otp", b, 1, msg, sizeof msg), EPCTX_FAIL);
  assert_non_null(strstr(msg, "table full"));
}

static void log_goes_to_the_write_hook(void** state) {
  (void)state;
  epctx_pal_log(1, "hello board");
  assert_string_equal(g_log, "epctx warning: hello board\n");
}

/* A whole session through this PAL: the model is a named region read from a
 * generated file, not a path the OS knows. */
/* No loader on bare metal: driver libraries fail with a code that says so,
 * through the C API too. */
static void driver_libraries_are_not_implemented(void** state) {
  (void)state;
  char msg[256];
  void* h = (void*)1;
  assert_int_equal(epctx_pal_library_open("libepctx_acme.so", &h, msg, sizeof msg),
                   EPCTX_NOT_IMPLEMENTED);
  assert_null(h);
  assert_non_null(strstr(msg, "libepctx_acme.so: shared libraries are not supported"));
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  epctx_status* st = epctx_env_load_driver_library(env, "libepctx_acme.so");
  assert_int_equal(epctx_status_code(st), EPCTX_NOT_IMPLEMENTED);
  assert_non_null(strstr(epctx_status_message(st), "load driver library 'libepctx_acme.so'"));
  epctx_status_release(st);
  epctx_env_release(env);
}

#if EPCTX_TEST_HAS_VNPU
static void session_runs_from_named_regions(void** state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/add_relu.onnx", g_models);
  size_t n = 0;
  unsigned char* model = tu_read_file(path, &n);
  assert_non_null(model);
  snprintf(path, sizeof path, "%s/escape.onnx", g_models);
  size_t en = 0;
  unsigned char* escape = tu_read_file(path, &en);
  assert_non_null(escape);
  const epctx_baremetal_file files[] = {{"models/add_relu.onnx", model, n},
                                        {"models/escape.onnx", escape, en},
                                        {"outside.bin", kWeights, sizeof kWeights}};
  init_platform(files, 3);

  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 1, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  epctx_session* s = NULL;
  assert_null(epctx_session_create(env, "models/add_relu.onnx", NULL, &s));
  float x[6] = {-10, -1, 0, 1, 2, -3};
  int64_t dims[2] = {2, 3};
  epctx_tensor* in = NULL;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, &in));
  const char* names[1] = {"x"};
  epctx_tensor* out = NULL;
  assert_null(epctx_session_run(s, names, (const epctx_tensor* const*)&in, 1, NULL, &out, 1));
  const float* y = (const float*)epctx_tensor_data(out);
  const float want[6] = {0, 0, 2, 4, 6, 2};  // relu(x + arange(6))
  for (int i = 0; i < 6; ++i) assert_true(y[i] == want[i]);
  epctx_tensor_release(out);
  epctx_tensor_release(in);
  epctx_session_release(s);

  // "../outside.bin" exists in the table but leaves the model's folder.
  epctx_status* st = epctx_session_create(env, "models/escape.onnx", NULL, &s);
  assert_int_equal(epctx_status_code(st), EPCTX_PATH_REJECTED);
  epctx_status_release(st);
  epctx_env_release(env);
  assert_int_equal(epctx_pal_baremetal_heap_used(), 0);  // everything returned
  free(model);
  free(escape);
}
#endif

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_pal_baremetal MODELS_DIR\n");
    return 2;
  }
  g_models = argv[1];
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(init_refuses_bad_platforms),
    cmocka_unit_test_setup(map_file_is_a_view_of_the_region, setup),
    cmocka_unit_test_setup(load_mode_read_copies_into_the_arena, setup),
    cmocka_unit_test_setup(missing_file_is_no_suchfile_naming_it, setup),
    cmocka_unit_test_setup(read_file_refuses_files_over_the_limit, setup),
    cmocka_unit_test_setup(empty_file_maps_to_null, setup),
    cmocka_unit_test_setup(beneath_joins_the_folder_and_refuses_escapes, setup),
    cmocka_unit_test_setup(file_descriptors_are_not_implemented, setup),
    cmocka_unit_test_setup(file_id_is_the_table_entry, setup),
    cmocka_unit_test_setup(alloc_honours_every_alignment, setup),
    cmocka_unit_test_setup(freed_blocks_coalesce, setup),
    cmocka_unit_test_setup(counters_live_in_ram_per_store_and_name, setup),
    cmocka_unit_test_setup(log_goes_to_the_write_hook, setup),
#if EPCTX_TEST_HAS_VNPU
    cmocka_unit_test(session_runs_from_named_regions),
#endif
    cmocka_unit_test_setup(driver_libraries_are_not_implemented, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
