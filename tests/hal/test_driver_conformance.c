/* SPDX-License-Identifier: Apache-2.0 */
/* Driver conformance: what every HAL driver library must do, checked on
 * any driver (hal/PORTING.md, "Conformance"):
 *   test_driver_conformance LIBRARY [MODEL [threads]]
 * - ABI: one entry point, refusing other majors; a struct of this major, a
 *   minor no newer than the header's, the six required functions.
 * - Info: a name, source keys, alignment a power of two up to a page, and
 *   nothing written past the struct_size the runtime passes.
 * - Errors: every failure returns a code and a NUL-terminated message that
 *   fits msg_cap (0 included) and names something; hostile blobs fail
 *   cleanly.
 * - Context memory (ABI 2.3, when offered): both hooks, memory aligned as
 *   asked.
 * - With MODEL (an EPContext model for this driver): it loads through
 *   epctx_env_load_driver_library and runs; with "threads", runs from 4
 *   threads at once give the single-threaded outputs bit for bit. */
#include <dlfcn.h>
#include <pthread.h>
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

static const char* g_lib;
static const char* g_model;
static int g_threads;
static void* g_handle;
static const epctx_hal_driver* g_drv;

static int pow2(uint64_t a) { return a && !(a & (a - 1)); }

/* msg holds a NUL within cap and nothing was written past cap. */
static void check_message(const char* msg, size_t cap, size_t buf_size, int must_say) {
  size_t n = 0;
  while (n < cap && msg[n]) ++n;
  if (cap) assert_true(n < cap);
  if (must_say && cap > 1) assert_true(n > 0);
  for (size_t i = cap; i < buf_size; ++i) assert_int_equal((unsigned char)msg[i], 0xA5);
}

static void test_entry_point_and_abi(void** state) {
  (void)state;
  epctx_hal_entry_fn entry;
  void* sym = dlsym(g_handle, EPCTX_HAL_ENTRY_POINT);
  assert_non_null(sym);
  memcpy(&entry, &sym, sizeof entry);
  assert_null(entry(EPCTX_HAL_ABI(EPCTX_HAL_ABI_MAJOR + 1, 0)));
  assert_null(entry(EPCTX_HAL_ABI(EPCTX_HAL_ABI_MAJOR - 1, 9)));
  g_drv = entry(EPCTX_HAL_ABI_VERSION);
  assert_non_null(g_drv);
  assert_ptr_equal(entry(EPCTX_HAL_ABI_VERSION), g_drv);
  assert_int_equal(EPCTX_HAL_ABI_MAJOR_OF(g_drv->abi_version), EPCTX_HAL_ABI_MAJOR);
  assert_true(EPCTX_HAL_ABI_MINOR_OF(g_drv->abi_version) <= EPCTX_HAL_ABI_MINOR);
  assert_true(g_drv->struct_size >= offsetof(epctx_hal_driver, release_context) + sizeof(void*));
  assert_true(g_drv->struct_size <= sizeof(epctx_hal_driver) ||
              EPCTX_HAL_ABI_MINOR_OF(g_drv->abi_version) > EPCTX_HAL_ABI_MINOR);
  assert_non_null(g_drv->get_info);
  assert_non_null(g_drv->check_compatibility);
  assert_non_null(g_drv->load_context);
  assert_non_null(g_drv->get_graph);
  assert_non_null(g_drv->execute);
  assert_non_null(g_drv->release_context);
}

static void test_info(void** state) {
  (void)state;
  struct {
    epctx_hal_driver_info info;
    unsigned char canary[64];
  } b;
  memset(&b, 0, sizeof b.info);
  memset(b.canary, 0xA5, sizeof b.canary);
  b.info.struct_size = sizeof b.info;
  assert_int_equal(g_drv->get_info(g_drv, &b.info), EPCTX_OK);
  for (size_t i = 0; i < sizeof b.canary; ++i) assert_int_equal(b.canary[i], 0xA5);
  assert_non_null(b.info.name);
  assert_true(b.info.name[0] != '\0');
  assert_non_null(b.info.hardware_architecture);
  assert_true(b.info.num_source_keys >= 1);
  assert_non_null(b.info.source_keys);
  for (uint32_t k = 0; k < b.info.num_source_keys; ++k) assert_non_null(b.info.source_keys[k]);
  assert_true(
      b.info.payload_alignment == 0 ||
      (pow2(b.info.payload_alignment) && b.info.payload_alignment <= EPCTX_HAL_MAX_ALIGNMENT));
}

static void test_compatibility_errors_are_messages(void** state) {
  (void)state;
  epctx_hal_driver_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(g_drv->get_info(g_drv, &info), EPCTX_OK);
  const char* descs[][2] = {{"999.0.0", ""}, {"", "no-such-arch-99.0"}};
  const size_t caps[] = {256, 8, 1, 0};
  for (size_t d = 0; d < 2; ++d) {
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; ++c) {
      epctx_hal_context_desc desc = {sizeof desc, info.source_keys[0], descs[d][0], descs[d][1],
                                     "conformance_node"};
      char msg[300];
      memset(msg, 0xA5, sizeof msg);
      int rc = g_drv->check_compatibility(g_drv, &desc, msg, caps[c]);
      assert_int_not_equal(rc, EPCTX_OK);
      check_message(msg, caps[c], sizeof msg, 1);
    }
  }
}

static void* host_alloc(void* user, size_t size, size_t alignment) {
  (void)user;
  void* p = NULL;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  return posix_memalign(&p, alignment, size ? size : 1) ? NULL : p;
}
static void host_free(void* user, void* p) {
  (void)user;
  free(p);
}

static void test_hostile_blobs_fail_cleanly(void** state) {
  (void)state;
  epctx_hal_host host = {sizeof host, NULL, host_alloc, host_free, NULL};
  static uint8_t bytes[4096] __attribute__((aligned(4096)));
  uint32_t seed = 12345;
  for (size_t i = 0; i < sizeof bytes; ++i) {
    seed = seed * 1103515245u + 12345u;
    bytes[i] = (uint8_t)(seed >> 24);
  }
  const uint64_t sizes[] = {0, 1, 7, 20, 64, 4096};
  const size_t caps[] = {256, 5, 0};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; ++c) {
      epctx_hal_graph_blob gb = {"g", bytes, sizes[s]};
      epctx_hal_blob blob;
      memset(&blob, 0, sizeof blob);
      blob.struct_size = sizeof blob;
      blob.data = sizes[s] ? bytes : NULL;
      blob.size = sizes[s];
      blob.graphs = &gb;
      blob.num_graphs = 1;
      char msg[300];
      memset(msg, 0xA5, sizeof msg);
      epctx_hal_context* ctx = NULL;
      int rc = g_drv->load_context(g_drv, &blob, &host, &ctx, msg, caps[c]);
      if (rc == EPCTX_OK) {
        /* A lazy driver may accept here and refuse in get_graph. */
        epctx_hal_graph* g = NULL;
        epctx_hal_graph_info gi;
        memset(&gi, 0, sizeof gi);
        gi.struct_size = sizeof gi;
        rc = g_drv->get_graph(g_drv, ctx, "g", &g, &gi, msg, caps[c]);
        g_drv->release_context(g_drv, ctx);
        if (rc == EPCTX_OK)
          fail_msg("random bytes of size %llu bound as a graph", (unsigned long long)sizes[s]);
      }
      check_message(msg, caps[c], sizeof msg, 1);
    }
  }
}

/* ABI 2.3's context memory, when the driver offers it: both hooks or
 * neither; memory aligned as asked, writable to its last byte, taken back
 * (and wiped) by free_context_memory. */
static void test_context_memory_pair(void** state) {
  (void)state;
  const size_t end = offsetof(epctx_hal_driver, free_context_memory) + sizeof(void*);
  if (g_drv->struct_size < end) return; /* an older minor: no hooks */
  assert_int_equal(!g_drv->alloc_context_memory, !g_drv->free_context_memory);
  if (!g_drv->alloc_context_memory) return;
  epctx_hal_host host = {sizeof host, NULL, host_alloc, host_free, NULL};
  const uint32_t aligns[] = {64, 256, EPCTX_HAL_MAX_ALIGNMENT};
  const uint64_t sizes[] = {1, 100, 1u << 20};
  for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; ++a) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
      uint8_t* p = g_drv->alloc_context_memory(g_drv, &host, sizes[s], aligns[a]);
      assert_non_null(p);
      assert_int_equal((uintptr_t)p % aligns[a], 0);
      memset(p, 0xAB, (size_t)sizes[s]);
      g_drv->free_context_memory(g_drv, &host, p, sizes[s]);
    }
  }
}

/* ---- with a model ---- */

typedef struct run_io {
  epctx_env* env;
  epctx_session* s;
  size_t nin, nout;
  epctx_tensor* in[16];
  const char* names[16];
  void* ref[16];
  size_t ref_bytes[16];
  int failures;
} run_io;

static run_io g_io;

static int run_once(run_io* io, int compare) {
  epctx_tensor* out[16] = {0};
  epctx_status* st = epctx_session_run(io->s, io->names, (const epctx_tensor* const*)io->in,
                                       io->nin, NULL, out, io->nout);
  if (st) {
    fprintf(stderr, "run: %s\n", epctx_status_message(st));
    epctx_status_release(st);
    return 1;
  }
  int bad = 0;
  for (size_t o = 0; o < io->nout; ++o) {
    size_t b = epctx_tensor_bytes(out[o]);
    if (!compare) {
      io->ref[o] = malloc(b ? b : 1);
      memcpy(io->ref[o], epctx_tensor_data(out[o]), b);
      io->ref_bytes[o] = b;
    } else if (b != io->ref_bytes[o] || memcmp(io->ref[o], epctx_tensor_data(out[o]), b)) {
      bad = 1;
    }
    epctx_tensor_release(out[o]);
  }
  return bad;
}

static void* thread_main(void* arg) {
  run_io* io = (run_io*)arg;
  int bad = 0;
  for (int i = 0; i < 25; ++i) bad |= run_once(io, 1);
  return (void*)(intptr_t)bad;
}

static void test_model_runs_through_the_library(void** state) {
  (void)state;
  if (!g_model) {
    /* No model for this driver: the checks above are the whole suite. */
    return;
  }
  run_io* io = &g_io;
  assert_null(epctx_env_create(NULL, 0, &io->env));
  assert_null(epctx_env_load_driver_library(io->env, g_lib));
  epctx_status* st = epctx_session_create(io->env, g_model, NULL, &io->s);
  if (st) fail_msg("create: %s", epctx_status_message(st));
  assert_true(epctx_session_driver_node_count(io->s) >= 1);
  io->nin = epctx_session_input_count(io->s);
  io->nout = epctx_session_output_count(io->s);
  assert_true(io->nin <= 16 && io->nout <= 16);
  for (size_t i = 0; i < io->nin; ++i) {
    epctx_io_info info;
    assert_null(epctx_session_input_info(io->s, i, &info));
    int64_t dims[EPCTX_MAX_RANK];
    for (size_t d = 0; d < info.rank; ++d) dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
    assert_null(epctx_tensor_create(io->env, info.dtype, dims, info.rank, &io->in[i]));
    uint8_t* p = (uint8_t*)epctx_tensor_data(io->in[i]);
    size_t n = epctx_tensor_bytes(io->in[i]);
    if (info.dtype == EPCTX_DTYPE_FLOAT) {
      for (size_t k = 0; k < n / 4; ++k) ((float*)p)[k] = (float)((int)(k % 17) - 8) / 8.0f;
    } else {
      for (size_t k = 0; k < n; ++k)
        p[k] = (uint8_t)(info.dtype == EPCTX_DTYPE_BOOL ? k & 1 : k % 7);
    }
    io->names[i] = info.name;
  }
  assert_int_equal(run_once(io, 0), 0);
  assert_int_equal(run_once(io, 1), 0);
  if (g_threads) {
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) assert_int_equal(pthread_create(&t[i], NULL, thread_main, io), 0);
    int bad = 0;
    for (int i = 0; i < 4; ++i) {
      void* r = NULL;
      pthread_join(t[i], &r);
      bad |= (int)(intptr_t)r;
    }
    assert_int_equal(bad, 0);
  }
  for (size_t i = 0; i < io->nin; ++i) epctx_tensor_release(io->in[i]);
  for (size_t o = 0; o < io->nout; ++o) free(io->ref[o]);
  epctx_session_release(io->s);
  epctx_env_release(io->env);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DRIVER_LIBRARY [MODEL [threads]]\n", argv[0]);
    return 2;
  }
  g_lib = argv[1];
  g_model = argc > 2 ? argv[2] : NULL;
  g_threads = argc > 3 && !strcmp(argv[3], "threads");
  g_handle = dlopen(g_lib, RTLD_NOW | RTLD_LOCAL);
  if (!g_handle) {
    fprintf(stderr, "%s: %s\n", g_lib, dlerror());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_entry_point_and_abi),
      cmocka_unit_test(test_info),
      cmocka_unit_test(test_compatibility_errors_are_messages),
      cmocka_unit_test(test_hostile_blobs_fail_cleanly),
      cmocka_unit_test(test_context_memory_pair),
      cmocka_unit_test(test_model_runs_through_the_library),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  dlclose(g_handle);
  return rc;
}
