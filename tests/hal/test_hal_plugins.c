/* SPDX-License-Identifier: Apache-2.0 */
/* Drivers as plugins and a HAL that grows (issue 15): loading driver
 * libraries and each way that fails, ABI minor/major rules, alignment
 * validated at registration and honoured up to a page, the optional hooks,
 * and the driver's own code kept as the status cause. Uses the hello_npu
 * sample (hal/samples/hello_npu), linked in and as a library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>
#include <epctx/hal.h>

#include "hello_npu.h"
#include "tqnn_driver.h"

static const char* g_models;    /* gen_hello_models.py output */
static const char* g_hello_lib; /* libepctx_hello_npu.so */
static const char* g_noentry_lib;
static const char* g_refusing_lib;
static const char* g_loading; /* tests/loading's generated models */

static const char* path_in(const char* dir, const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", dir, name);
  return buf;
}

static epctx_env* new_env(void) {
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  return env;
}

/* Expects `st` to fail with code and cause, its message holding `what`. */
static void expect_status(epctx_status* st, int code, int cause, const char* what) {
  assert_non_null(st);
  if (epctx_status_code(st) != code || epctx_status_cause(st) != cause ||
      !strstr(epctx_status_message(st), what))
    fail_msg("expected %s/%s with '%s', got %s/%s: %s", epctx_code_name(code),
             epctx_code_name(cause), what, epctx_code_name(epctx_status_code(st)),
             epctx_code_name(epctx_status_cause(st)), epctx_status_message(st));
  epctx_status_release(st);
}

/* Runs hello_ctx.onnx (y = 2x over 8 floats) and checks y; NULL on success. */
static epctx_status* run_hello(epctx_env* env, const char* model) {
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(env, path_in(g_models, model), NULL, &s);
  if (st) return st;
  float x[8] = {1, -2, 3, -4, 5.5f, 0, 7, 1e3f};
  int64_t dims[1] = {8};
  epctx_tensor* in = NULL;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 1, x, sizeof x, &in));
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {in};
  epctx_tensor* out = NULL;
  st = epctx_session_run(s, names, ins, 1, NULL, &out, 1);
  if (!st) {
    const float* y = (const float*)epctx_tensor_data(out);
    assert_int_equal(epctx_tensor_bytes(out), sizeof x);
    for (int i = 0; i < 8; ++i) assert_true(y[i] == 2 * x[i]);
    epctx_tensor_release(out);
  }
  epctx_tensor_release(in);
  epctx_session_release(s);
  return st;
}

/* ---- loading libraries ---- */

static void test_load_hello_library_and_run(void** state) {
  (void)state;
  epctx_env* env = new_env();
  assert_null(epctx_env_load_driver_library(env, g_hello_lib));
  assert_null(run_hello(env, "hello_ctx.onnx"));
  epctx_env_release(env);
}

static void test_load_missing_library_names_path(void** state) {
  (void)state;
  epctx_env* env = new_env();
  expect_status(epctx_env_load_driver_library(env, "/nonexistent/libepctx_x.so"), EPCTX_NO_SUCHFILE,
                EPCTX_NO_SUCHFILE, "'/nonexistent/libepctx_x.so': no such file");
  epctx_env_release(env);
}

static void test_load_non_library_names_path(void** state) {
  (void)state;
  epctx_env* env = new_env();
  const char* p = path_in(g_models, "hello_ctx.onnx");
  char want[4200];
  snprintf(want, sizeof want, "load driver library '%s'", p);
  expect_status(epctx_env_load_driver_library(env, p), EPCTX_FAIL, EPCTX_FAIL, want);
  epctx_env_release(env);
}

static void test_load_library_without_entry_point(void** state) {
  (void)state;
  epctx_env* env = new_env();
  expect_status(epctx_env_load_driver_library(env, g_noentry_lib), EPCTX_INCOMPATIBLE_DRIVER,
                EPCTX_INCOMPATIBLE_DRIVER, "no entry point " EPCTX_HAL_ENTRY_POINT);
  epctx_env_release(env);
}

static void test_load_library_refusing_this_abi(void** state) {
  (void)state;
  epctx_env* env = new_env();
  expect_status(epctx_env_load_driver_library(env, g_refusing_lib), EPCTX_INCOMPATIBLE_DRIVER,
                EPCTX_INCOMPATIBLE_DRIVER, "returned no driver for HAL ABI 2.");
  /* Nothing was registered: a model for the driver has no one to run it. */
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(env, path_in(g_models, "hello_ctx.onnx"), NULL, &s);
  assert_non_null(st);
  epctx_status_release(st);
  epctx_env_release(env);
}

/* ---- ABI versions ---- */

static epctx_hal_driver g_variant;

static void fail_if_called(const epctx_hal_driver* self, epctx_hal_graph* g) {
  (void)self, (void)g;
  fail_msg("a hook beyond the driver's struct_size was called");
}

static void test_older_minor_gets_defaults(void** state) {
  (void)state;
  g_variant = *epctx_hello_npu_driver();
  g_variant.abi_version = EPCTX_HAL_ABI(EPCTX_HAL_ABI_MAJOR, 0);
  g_variant.struct_size = (uint32_t)offsetof(epctx_hal_driver, prepare_graph);
  /* Past the 2.0 struct: garbage the runtime must not call. */
  g_variant.unprepare_graph = fail_if_called;
  g_variant.prepare_graph = NULL;
  hello_npu_counters before, after;
  hello_npu_get_counters(&before);
  epctx_env* env = new_env();
  assert_null(epctx_env_register_driver(env, &g_variant));
  assert_null(run_hello(env, "hello_ctx.onnx"));
  epctx_env_release(env);
  hello_npu_get_counters(&after);
  assert_int_equal(after.device_syncs, before.device_syncs);
  assert_int_equal(after.cpu_syncs, before.cpu_syncs);
}

static void test_newer_minor_and_other_major_refused(void** state) {
  (void)state;
  epctx_env* env = new_env();
  g_variant = *epctx_hello_npu_driver();
  g_variant.abi_version = EPCTX_HAL_ABI(EPCTX_HAL_ABI_MAJOR, EPCTX_HAL_ABI_MINOR + 1);
  char want[64];
  snprintf(want, sizeof want, "HAL ABI %u.%u, this runtime accepts", EPCTX_HAL_ABI_MAJOR,
           EPCTX_HAL_ABI_MINOR + 1);
  expect_status(epctx_env_register_driver(env, &g_variant), EPCTX_INCOMPATIBLE_DRIVER,
                EPCTX_INCOMPATIBLE_DRIVER, want);
  g_variant.abi_version = 1; /* the ABI before minor versions */
  expect_status(epctx_env_register_driver(env, &g_variant), EPCTX_INCOMPATIBLE_DRIVER,
                EPCTX_INCOMPATIBLE_DRIVER, "HAL ABI 0.1");
  g_variant = *epctx_hello_npu_driver();
  g_variant.struct_size = 16;
  expect_status(epctx_env_register_driver(env, &g_variant), EPCTX_INVALID_ARGUMENT,
                EPCTX_INVALID_ARGUMENT, "struct of 16 bytes");
  epctx_env_release(env);
}

/* ---- alignment ---- */

static uint32_t g_payload_alignment, g_scratch_alignment;

static int info_with_alignment(const epctx_hal_driver* self, epctx_hal_driver_info* out) {
  int rc = epctx_hello_npu_driver()->get_info(self, out);
  out->payload_alignment = g_payload_alignment;
  return rc;
}

static int graph_with_alignment(const epctx_hal_driver* self, epctx_hal_context* c,
                                const char* name, epctx_hal_graph** g, epctx_hal_graph_info* info,
                                char* msg, size_t cap) {
  int rc = epctx_hello_npu_driver()->get_graph(self, c, name, g, info, msg, cap);
  info->scratch_alignment = g_scratch_alignment;
  return rc;
}

static int execute_checking_alignment(const epctx_hal_driver* self, epctx_hal_graph* g,
                                      const epctx_hal_tensor* in, uint32_t nin,
                                      epctx_hal_tensor* out, uint32_t nout, void* scratch,
                                      uint64_t bytes, char* msg, size_t cap) {
  assert_int_equal((uintptr_t)scratch % g_scratch_alignment, 0);
  return epctx_hello_npu_driver()->execute(self, g, in, nin, out, nout, scratch, bytes, msg, cap);
}

static void test_payload_alignment_validated_at_registration(void** state) {
  (void)state;
  epctx_env* env = new_env();
  g_variant = *epctx_hello_npu_driver();
  g_variant.get_info = info_with_alignment;
  g_payload_alignment = 8192;
  expect_status(epctx_env_register_driver(env, &g_variant), EPCTX_INCOMPATIBLE_DRIVER,
                EPCTX_INCOMPATIBLE_DRIVER,
                "register driver 'hello_npu': payload_alignment 8192, expected a power of two "
                "up to 4096");
  g_payload_alignment = 48;
  expect_status(epctx_env_register_driver(env, &g_variant), EPCTX_INCOMPATIBLE_DRIVER,
                EPCTX_INCOMPATIBLE_DRIVER, "payload_alignment 48");
  g_payload_alignment = 4096;
  assert_null(epctx_env_register_driver(env, &g_variant));
  epctx_env_release(env);
}

static uint32_t g_tqnn_alignment;
static int tqnn_info_with_alignment(const epctx_hal_driver* self, epctx_hal_driver_info* out) {
  int rc = tqnn_driver()->get_info(self, out);
  out->payload_alignment = g_tqnn_alignment;
  return rc;
}

/* A container whose segments are laid out for 64 bytes (another tool's; ours
 * align them to a page) cannot serve a driver that needs a page: refused by
 * name, never handed over misaligned. */
static void test_container_segments_checked_against_payload_alignment(void** state) {
  (void)state;
  const uint32_t aligns[] = {64, 4096};
  for (int k = 0; k < 2; ++k) {
    tqnn_reset();
    epctx_env* env = new_env();
    g_variant = *tqnn_driver();
    g_variant.get_info = tqnn_info_with_alignment;
    g_tqnn_alignment = aligns[k];
    assert_null(epctx_env_register_driver(env, &g_variant));
    epctx_session* s = NULL;
    epctx_status* st =
        epctx_session_create(env, path_in(g_loading, "m/cx_shared_ok.onnx"), NULL, &s);
    if (k == 0) {
      if (st) fail_msg("%s", epctx_status_message(st));
      epctx_session_release(s);
    } else {
      expect_status(st, EPCTX_INVALID_GRAPH, EPCTX_INCOMPATIBLE_DRIVER,
                    "is not aligned to the 4096 bytes driver 'tqnn' requires");
    }
    epctx_env_release(env);
  }
}

static void test_scratch_alignment_honoured_up_to_a_page(void** state) {
  (void)state;
  const uint32_t ok[] = {256, 1024, 4096};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
    epctx_env* env = new_env();
    g_variant = *epctx_hello_npu_driver();
    g_variant.get_graph = graph_with_alignment;
    g_variant.execute = execute_checking_alignment;
    g_scratch_alignment = ok[i];
    assert_null(epctx_env_register_driver(env, &g_variant));
    for (int run = 0; run < 3; ++run) assert_null(run_hello(env, "hello_ctx.onnx"));
    epctx_env_release(env);
  }
  epctx_env* env = new_env();
  g_scratch_alignment = 8192;
  assert_null(epctx_env_register_driver(env, &g_variant));
  expect_status(run_hello(env, "hello_ctx.onnx"), EPCTX_INVALID_GRAPH, EPCTX_INCOMPATIBLE_DRIVER,
                "driver 'hello_npu' asks for scratch_alignment 8192, expected a power of two up "
                "to 4096");
  epctx_env_release(env);
}

static unsigned g_allocs;
static void* counting_alloc(void* user, size_t size, size_t alignment) {
  (void)user;
  void* p = NULL;
  ++g_allocs;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  return posix_memalign(&p, alignment, size ? size : 1) ? NULL : p;
}
static void counting_free(void* user, void* p) {
  (void)user;
  free(p);
}

/* hello_npu's computation without its own 256-byte scratch check. */
static int execute_any_alignment(const epctx_hal_driver* self, epctx_hal_graph* g,
                                 const epctx_hal_tensor* in, uint32_t nin, epctx_hal_tensor* out,
                                 uint32_t nout, void* scratch, uint64_t bytes, char* msg,
                                 size_t cap) {
  (void)self, (void)g, (void)nin, (void)nout, (void)bytes, (void)msg, (void)cap;
  assert_int_equal((uintptr_t)scratch % g_scratch_alignment, 0);
  for (size_t i = 0; i < in[0].bytes / 4; ++i)
    ((float*)out[0].data)[i] = 2 * ((const float*)in[0].data)[i];
  return EPCTX_OK;
}

/* Allocator calls of one steady-state run with the given scratch alignment. */
static unsigned allocs_per_run(uint32_t alignment) {
  epctx_allocator a = {NULL, counting_alloc, counting_free};
  epctx_env* env = NULL;
  assert_null(epctx_env_create(&a, 0, &env));
  g_variant = *epctx_hello_npu_driver();
  g_variant.get_graph = graph_with_alignment;
  g_variant.execute = execute_any_alignment;
  g_variant.alloc_io = NULL, g_variant.free_io = NULL, g_variant.is_device_visible = NULL;
  g_scratch_alignment = alignment;
  assert_null(epctx_env_register_driver(env, &g_variant));
  epctx_session* s = NULL;
  assert_null(epctx_session_create(env, path_in(g_models, "hello_ctx.onnx"), NULL, &s));
  float x[8] = {0};
  int64_t dims[1] = {8};
  epctx_tensor *in = NULL, *out = NULL;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 1, x, sizeof x, &in));
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {in};
  unsigned before = 0;
  for (int i = 0; i < 5; ++i) {
    if (i == 1) before = g_allocs; /* the first run sizes the run memory */
    assert_null(epctx_session_run(s, names, ins, 1, NULL, &out, 1));
    epctx_tensor_release(out);
  }
  unsigned n = g_allocs - before;
  epctx_tensor_release(in);
  epctx_session_release(s);
  epctx_env_release(env);
  return n;
}

/* A driver asking for page-aligned scratch costs no allocation per run more
 * than one asking for 16 bytes: run memory is reused, not reallocated. */
static void test_aligned_scratch_reused_across_runs(void** state) {
  (void)state;
  assert_int_equal(allocs_per_run(4096), allocs_per_run(16));
}

/* ---- hooks and causes ---- */

static void test_hooks_called_around_execute_and_bind(void** state) {
  (void)state;
  epctx_env* env = new_env();
  assert_null(epctx_env_register_driver(env, epctx_hello_npu_driver()));
  hello_npu_counters c0, c1, c2;
  hello_npu_get_counters(&c0);
  epctx_session* s = NULL;
  assert_null(epctx_session_create(env, path_in(g_models, "hello_ctx.onnx"), NULL, &s));
  hello_npu_get_counters(&c1);
  assert_int_equal(c1.prepared, c0.prepared + 1);
  epctx_session_release(s);
  hello_npu_get_counters(&c2);
  assert_int_equal(c2.prepared, c0.prepared);
  for (int i = 0; i < 3; ++i) assert_null(run_hello(env, "hello_ctx.onnx"));
  hello_npu_get_counters(&c2);
  assert_int_equal(c2.device_syncs, c0.device_syncs + 3);
  assert_int_equal(c2.cpu_syncs, c0.cpu_syncs + 3);
  assert_int_equal(c2.prepared, c0.prepared);
  /* hello_npu reaches only its own buffers: x and y staged on every run
   * (run_hello checks y), none left behind. */
  assert_int_equal(c2.io_allocs, c0.io_allocs + 6);
  assert_int_equal(c2.io_live, 0);
  epctx_env_release(env);
}

/* The driver's device-visible buffers handed to the application
 * (epctx_session_create_io_tensor): bound as input and output, a run stages
 * nothing (no alloc_io call) and still computes y = 2x; releasing them
 * returns them to the driver. An unknown name is refused naming it. */
static void test_driver_io_buffers_handed_to_the_app(void** state) {
  (void)state;
  epctx_env* env = new_env();
  assert_null(epctx_env_register_driver(env, epctx_hello_npu_driver()));
  epctx_session* s = NULL;
  assert_null(epctx_session_create(env, path_in(g_models, "hello_ctx.onnx"), NULL, &s));
  hello_npu_counters c0, c1, c2;
  hello_npu_get_counters(&c0);
  epctx_tensor *x = NULL, *y = NULL, *t = NULL;
  assert_null(epctx_session_create_io_tensor(s, "x", &x));
  assert_null(epctx_session_create_io_tensor(s, "y", &y));
  assert_int_equal(epctx_tensor_is_device_io(x), 1);
  assert_int_equal(epctx_tensor_is_device_io(y), 1);
  assert_int_equal(epctx_tensor_bytes(x), 8 * sizeof(float));
  assert_int_equal(epctx_tensor_rank(y), 1);
  assert_int_equal(epctx_tensor_dims(y)[0], 8);
  hello_npu_get_counters(&c1);
  assert_int_equal(c1.io_allocs, c0.io_allocs + 2);
  float* xd = (float*)epctx_tensor_data(x);
  for (int i = 0; i < 8; ++i) xd[i] = (float)(i - 3);
  const char* names[1] = {"x"};
  const epctx_tensor* ins[1] = {x};
  for (int r = 0; r < 3; ++r) {
    epctx_run_args a = {names, ins, 1, NULL, &y, 1, NULL, 0, NULL};
    assert_null(epctx_session_run_with(s, &a));
    const float* yd = (const float*)epctx_tensor_data(y);
    for (int i = 0; i < 8; ++i) assert_true(yd[i] == 2.0f * (float)(i - 3));
  }
  hello_npu_get_counters(&c2);
  assert_int_equal(c2.io_allocs, c1.io_allocs); /* nothing staged */
  assert_int_equal(c2.device_syncs, c1.device_syncs + 3);
  expect_status(epctx_session_create_io_tensor(s, "nope", &t), EPCTX_INVALID_ARGUMENT,
                EPCTX_INVALID_ARGUMENT, "no input or output named 'nope'");
  assert_null(t);
  epctx_tensor_release(x);
  epctx_tensor_release(y);
  hello_npu_get_counters(&c2);
  assert_int_equal(c2.io_live, c0.io_live);
  epctx_session_release(s);
  epctx_env_release(env);
}

static int execute_device_fault(const epctx_hal_driver* self, epctx_hal_graph* g,
                                const epctx_hal_tensor* in, uint32_t nin, epctx_hal_tensor* out,
                                uint32_t nout, void* scratch, uint64_t bytes, char* msg,
                                size_t cap) {
  (void)self, (void)g, (void)in, (void)nin, (void)out, (void)nout, (void)scratch, (void)bytes;
  snprintf(msg, cap, "device reset (watchdog)");
  return EPCTX_ENGINE_ERROR;
}

static void* refuse_io(const epctx_hal_driver* self, epctx_hal_graph* g, uint64_t bytes,
                       uint32_t alignment) {
  (void)self, (void)g, (void)bytes, (void)alignment;
  return NULL;
}

static void test_io_staging_refused_is_out_of_memory(void** state) {
  (void)state;
  epctx_env* env = new_env();
  g_variant = *epctx_hello_npu_driver();
  g_variant.alloc_io = refuse_io;
  assert_null(epctx_env_register_driver(env, &g_variant));
  expect_status(run_hello(env, "hello_ctx.onnx"), EPCTX_OUT_OF_MEMORY, EPCTX_OUT_OF_MEMORY,
                "on driver 'hello_npu': alloc_io refused a device-visible buffer");
  g_variant.free_io = NULL;
  expect_status(epctx_env_register_driver(env, &g_variant), EPCTX_INVALID_ARGUMENT,
                EPCTX_INVALID_ARGUMENT, "alloc_io and free_io come together");
  epctx_env_release(env);
}

static void test_driver_code_survives_as_cause(void** state) {
  (void)state;
  epctx_env* env = new_env();
  g_variant = *epctx_hello_npu_driver();
  g_variant.execute = execute_device_fault;
  assert_null(epctx_env_register_driver(env, &g_variant));
  expect_status(run_hello(env, "hello_ctx.onnx"), EPCTX_EP_FAIL, EPCTX_ENGINE_ERROR,
                "EPContext node 'hello0' on driver 'hello_npu': device reset (watchdog)");
  epctx_env_release(env);
}

static void test_bad_blob_names_field(void** state) {
  (void)state;
  epctx_env* env = new_env();
  assert_null(epctx_env_load_driver_library(env, g_hello_lib));
  expect_status(run_hello(env, "hello_bad_ctx.onnx"), EPCTX_INVALID_GRAPH, EPCTX_INVALID_GRAPH,
                "hello_npu: context of 19 bytes, expected 20");
  epctx_env_release(env);
}

int main(int argc, char** argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s MODEL_DIR HELLO_LIB NOENTRY_LIB REFUSING_LIB LOADING_DIR\n",
            argv[0]);
    return 2;
  }
  g_models = argv[1];
  g_hello_lib = argv[2];
  g_noentry_lib = argv[3];
  g_refusing_lib = argv[4];
  g_loading = argv[5];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_hello_library_and_run),
      cmocka_unit_test(test_load_missing_library_names_path),
      cmocka_unit_test(test_load_non_library_names_path),
      cmocka_unit_test(test_load_library_without_entry_point),
      cmocka_unit_test(test_load_library_refusing_this_abi),
      cmocka_unit_test(test_older_minor_gets_defaults),
      cmocka_unit_test(test_newer_minor_and_other_major_refused),
      cmocka_unit_test(test_payload_alignment_validated_at_registration),
      cmocka_unit_test(test_scratch_alignment_honoured_up_to_a_page),
      cmocka_unit_test(test_container_segments_checked_against_payload_alignment),
      cmocka_unit_test(test_aligned_scratch_reused_across_runs),
      cmocka_unit_test(test_hooks_called_around_execute_and_bind),
      cmocka_unit_test(test_driver_io_buffers_handed_to_the_app),
      cmocka_unit_test(test_io_staging_refused_is_out_of_memory),
      cmocka_unit_test(test_driver_code_survives_as_cause),
      cmocka_unit_test(test_bad_blob_names_field),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
