/* SPDX-License-Identifier: Apache-2.0 */
/* Driver memory for decrypted context binaries (HAL ABI 2.3,
 * alloc_context_memory / free_context_memory; issue 24). vnpu wrapped in a
 * driver that records the hooks and serves them from its own memory, never
 * the application's allocator, which here tracks every block it hands out:
 * - an encrypted context is decrypted into the hook's memory (the blob
 *   load_context gets lies in it, aligned as asked), computes the plain
 *   package's bytes, and goes back through free_context_memory with the
 *   same pointer and size after release_context, never through the
 *   application's allocator;
 * - a plain context never calls the hooks;
 * - sessions sharing one context free it once, with the last of them;
 * - a refused allocation is OUT_OF_MEMORY naming the driver and leaks
 *   nothing, misaligned memory is refused and given back, and one hook
 *   without the other is refused at registration;
 * - a driver of ABI 2.2 (no hooks) gets the plaintext in the application's
 *   memory, wiped before it is freed; vnpu's own hooks take the host
 *   allocator's memory and wipe it too.
 * argv: epctx-compile epctx-sign MODELS_DIR WORK_DIR */
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
#include <epctx/vnpu.h>

#include "test_util.h"
#include "trust_util.h"

static const char *g_compile, *g_sign, *g_models, *g_work;
static char g_plain[600], g_enc[600];
static unsigned char g_key[32];

/* ---- the application's allocator: every live block and its size ---- */
#define MAX_BLOCKS 4096
typedef struct {
  void* p;
  size_t size;
} block;
static struct {
  block live[MAX_BLOCKS];
  long count;            /* live blocks */
  const void* watch;     /* a block that must be all zeros when freed */
  int watch_freed_wiped; /* 1 wiped, -1 not wiped, 0 not freed yet */
  const void* forbidden; /* never to be freed here (the driver's memory) */
  int forbidden_freed;
} g_app;

static void* app_alloc(void* user, size_t size, size_t align) {
  (void)user;
  if (align < sizeof(void*)) align = sizeof(void*);
  void* p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0) return NULL;
  for (int i = 0; i < MAX_BLOCKS; ++i)
    if (!g_app.live[i].p) {
      g_app.live[i].p = p;
      g_app.live[i].size = size;
      g_app.count++;
      return p;
    }
  fail_msg("more than %d live blocks", MAX_BLOCKS);
  return NULL;
}

static void app_free(void* user, void* p) {
  (void)user;
  if (!p) return;
  if (p == g_app.forbidden) g_app.forbidden_freed = 1;
  for (int i = 0; i < MAX_BLOCKS; ++i) {
    if (g_app.live[i].p != p) continue;
    if (p == g_app.watch) {
      const unsigned char* b = p;
      size_t nonzero = 0;
      for (size_t k = 0; k < g_app.live[i].size; ++k) nonzero += b[k] != 0;
      g_app.watch_freed_wiped = nonzero ? -1 : 1;
    }
    g_app.live[i].p = NULL;
    g_app.count--;
    free(p);
    return;
  }
  fail_msg("freeing %p, which this allocator did not hand out", p);
}

/* The live block holding [p, p + n), or NULL. */
static const block* app_block_of(const void* p, size_t n) {
  const char* c = p;
  for (int i = 0; i < MAX_BLOCKS; ++i) {
    const char* b = g_app.live[i].p;
    if (b && c >= b && n <= g_app.live[i].size && (size_t)(c - b) <= g_app.live[i].size - n)
      return &g_app.live[i];
  }
  return NULL;
}

/* ---- the recording driver: vnpu, plus hooks from its own memory ---- */
typedef enum { HOOKS_OWN, HOOKS_VNPU, HOOKS_REFUSE, HOOKS_MISALIGN } hook_mode;
static struct {
  hook_mode mode;
  int allocs, frees, loads, releases, live_contexts;
  void* ptr;  /* what alloc_context_memory returned */
  void* base; /* the block behind it (HOOKS_MISALIGN returns base + 16) */
  uint64_t bytes;
  uint32_t alignment;
  void* freed_ptr;
  uint64_t freed_bytes;
  int contexts_at_free; /* live driver contexts when free_context_memory ran */
  const uint8_t* blob;  /* what load_context was given */
  uint64_t blob_size;
  const uint8_t* weights;
  uint64_t weights_size;
} g_rec;

static const epctx_hal_driver* vnpu(void) { return epctx_vnpu_driver(); }

static int r_get_info(const epctx_hal_driver* self, epctx_hal_driver_info* out) {
  (void)self;
  int rc = vnpu()->get_info(vnpu(), out);
  out->name = "tee_vnpu";
  out->payload_alignment = 256; /* above the runtime's 64 */
  return rc;
}

static int r_load(const epctx_hal_driver* self, const epctx_hal_blob* b, const epctx_hal_host* h,
                  epctx_hal_context** out, char* msg, size_t cap) {
  (void)self;
  g_rec.loads++;
  g_rec.blob = b->data;
  g_rec.blob_size = b->size;
  g_rec.weights = b->weights;
  g_rec.weights_size = b->weights_size;
  int rc = vnpu()->load_context(vnpu(), b, h, out, msg, cap);
  if (rc == EPCTX_OK) g_rec.live_contexts++;
  return rc;
}

static void r_release(const epctx_hal_driver* self, epctx_hal_context* c) {
  (void)self;
  g_rec.releases++;
  g_rec.live_contexts--;
  vnpu()->release_context(vnpu(), c);
}

static void* r_alloc(const epctx_hal_driver* self, const epctx_hal_host* host, uint64_t bytes,
                     uint32_t alignment) {
  g_rec.allocs++;
  g_rec.bytes = bytes;
  g_rec.alignment = alignment;
  void* p = NULL;
  switch (g_rec.mode) {
    case HOOKS_REFUSE: return NULL;
    case HOOKS_VNPU: p = vnpu()->alloc_context_memory(self, host, bytes, alignment); break;
    case HOOKS_OWN:
      if (posix_memalign(&p, alignment, (size_t)bytes) != 0) p = NULL;
      g_rec.base = p;
      break;
    case HOOKS_MISALIGN:
      if (posix_memalign(&g_rec.base, alignment, (size_t)bytes + 16) != 0) return NULL;
      p = (char*)g_rec.base + 16;
      break;
  }
  g_rec.ptr = p;
  return p;
}

static void r_free(const epctx_hal_driver* self, const epctx_hal_host* host, void* p,
                   uint64_t bytes) {
  g_rec.frees++;
  g_rec.freed_ptr = p;
  g_rec.freed_bytes = bytes;
  g_rec.contexts_at_free = g_rec.live_contexts;
  if (g_rec.mode == HOOKS_VNPU) {
    vnpu()->free_context_memory(self, host, p, bytes);
    return;
  }
  memset(p, 0, (size_t)bytes);
  free(g_rec.base);
}

static void* alloc_past_struct_size(const epctx_hal_driver* self, const epctx_hal_host* host,
                                    uint64_t bytes, uint32_t alignment) {
  (void)self, (void)host, (void)bytes, (void)alignment;
  fail_msg("alloc_context_memory lies past the driver's struct_size");
  return NULL;
}
static void free_past_struct_size(const epctx_hal_driver* self, const epctx_hal_host* host, void* p,
                                  uint64_t bytes) {
  (void)self, (void)host, (void)p, (void)bytes;
  fail_msg("free_context_memory lies past the driver's struct_size");
}

static epctx_hal_driver g_drv;

/* vnpu with the recording wrappers and the hooks in `mode`. */
static const epctx_hal_driver* recording_driver(hook_mode mode) {
  memset(&g_rec, 0, sizeof g_rec);
  g_rec.mode = mode;
  g_drv = *vnpu();
  g_drv.get_info = r_get_info;
  g_drv.load_context = r_load;
  g_drv.release_context = r_release;
  g_drv.alloc_context_memory = r_alloc;
  g_drv.free_context_memory = r_free;
  return &g_drv;
}

/* ---- sessions ---- */
static epctx_env* new_env(const epctx_hal_driver* drv) {
  memset(&g_app, 0, sizeof g_app);
  static const epctx_allocator a = {NULL, app_alloc, app_free};
  epctx_env* env = NULL;
  assert_null(epctx_env_create(&a, 0, &env));
  assert_null(epctx_env_register_driver(env, drv));
  assert_null(epctx_env_add_decryption_key(env, "v1", g_key, sizeof g_key));
  return env;
}

static epctx_status* create(epctx_env* env, const char* model, int shared, epctx_session** s) {
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  if (shared) assert_null(epctx_session_options_set(o, "ep.share_ep_contexts", "1"));
  epctx_status* st = epctx_session_create(env, model, o, s);
  epctx_session_options_release(o);
  return st;
}

/* Runs s once with every input 0.5; copies its first output's bytes to
 * out (returns their count). */
static size_t run_once(epctx_env* env, epctx_session* s, unsigned char* out, size_t cap) {
  size_t ni = epctx_session_input_count(s);
  assert_true(ni <= 4 && epctx_session_output_count(s) == 1);
  epctx_tensor* in[4] = {0};
  const char* names[4];
  for (size_t i = 0; i < ni; ++i) {
    epctx_io_info info;
    assert_null(epctx_session_input_info(s, i, &info));
    int64_t dims[EPCTX_MAX_RANK];
    for (size_t d = 0; d < info.rank; ++d) dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
    assert_null(epctx_tensor_create(env, info.dtype, dims, info.rank, &in[i]));
    float* p = epctx_tensor_data(in[i]);
    for (size_t k = 0; k < epctx_tensor_bytes(in[i]) / 4; ++k) p[k] = 0.5f;
    names[i] = info.name;
  }
  epctx_tensor* y = NULL;
  epctx_status* st = epctx_session_run(s, names, (const epctx_tensor* const*)in, ni, NULL, &y, 1);
  if (st) fail_msg("run: %s", epctx_status_message(st));
  size_t n = epctx_tensor_bytes(y);
  assert_true(n <= cap);
  memcpy(out, epctx_tensor_data(y), n);
  epctx_tensor_release(y);
  for (size_t i = 0; i < ni; ++i) epctx_tensor_release(in[i]);
  return n;
}

static unsigned char g_want[1 << 16];
static size_t g_want_n;

/* The session computes the plain package's bytes. */
static void computes_plain_bytes(epctx_env* env, epctx_session* s) {
  static unsigned char got[sizeof g_want];
  size_t n = run_once(env, s, got, sizeof got);
  assert_int_equal(n, g_want_n);
  assert_memory_equal(got, g_want, n);
}

static int setup(void** state) {
  (void)state;
  char key[600], src[600];
  snprintf(key, sizeof key, "%s/data.key", g_work);
  snprintf(src, sizeof src, "%s/conv_basic/model.onnx", g_models);
  snprintf(g_plain, sizeof g_plain, "%s/plain/m_ctx.onnx", g_work);
  snprintf(g_enc, sizeof g_enc, "%s/enc/m_ctx.onnx", g_work);
  const char* kg[] = {g_sign, "keygen-data", key, NULL};
  tr_run_ok(kg, g_work);
  const char* plain[] = {g_compile, src, "-o", g_plain, "--quiet", "--force", NULL};
  tr_run_ok(plain, g_work);
  const char* enc[] = {g_compile,       src, "-o",       g_enc, "--quiet", "--force",
                       "--encrypt-key", key, "--key-id", "v1",  NULL};
  tr_run_ok(enc, g_work);
  size_t n = 0;
  unsigned char* k = tu_read_file(key, &n);
  assert_non_null(k);
  assert_int_equal(n, sizeof g_key);
  memcpy(g_key, k, n);
  free(k);
  /* The reference: the plain package on vnpu itself. */
  epctx_env* env = new_env(vnpu());
  epctx_session* s = NULL;
  assert_null(create(env, g_plain, 0, &s));
  g_want_n = run_once(env, s, g_want, sizeof g_want);
  epctx_session_release(s);
  epctx_env_release(env);
  return 0;
}

static void encrypted_context_decrypts_into_driver_memory(void** state) {
  (void)state;
  epctx_env* env = new_env(recording_driver(HOOKS_OWN));
  epctx_session* s = NULL;
  epctx_status* st = create(env, g_enc, 0, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  assert_int_equal(g_rec.allocs, 1);
  assert_int_equal(g_rec.loads, 1);
  /* At least the driver's payload_alignment (256) and 64. */
  assert_int_equal(g_rec.alignment, 256);
  assert_int_equal((uintptr_t)g_rec.ptr % 256, 0);
  /* The whole plaintext container is the blob, in the hook's memory. */
  assert_ptr_equal(g_rec.blob, g_rec.ptr);
  assert_int_equal(g_rec.blob_size, g_rec.bytes);
  assert_memory_equal(g_rec.blob, "EPCTXBIN", 8);
  assert_true(g_rec.weights >= g_rec.blob &&
              g_rec.weights + g_rec.weights_size <= g_rec.blob + g_rec.blob_size);
  assert_null(app_block_of(g_rec.ptr, 1));
  g_app.forbidden = g_rec.ptr;
  computes_plain_bytes(env, s);
  assert_int_equal(g_rec.frees, 0);
  epctx_session_release(s);
  /* Once, the same pointer and size, after release_context. */
  assert_int_equal(g_rec.frees, 1);
  assert_int_equal(g_rec.releases, 1);
  assert_ptr_equal(g_rec.freed_ptr, g_rec.ptr);
  assert_int_equal(g_rec.freed_bytes, g_rec.bytes);
  assert_int_equal(g_rec.contexts_at_free, 0);
  assert_false(g_app.forbidden_freed);
  epctx_env_release(env);
  assert_int_equal(g_app.count, 0);
}

static void plain_context_never_calls_the_hooks(void** state) {
  (void)state;
  epctx_env* env = new_env(recording_driver(HOOKS_OWN));
  epctx_session* s = NULL;
  assert_null(create(env, g_plain, 0, &s));
  assert_int_equal(g_rec.loads, 1);
  computes_plain_bytes(env, s);
  epctx_session_release(s);
  epctx_env_release(env);
  assert_int_equal(g_rec.allocs, 0);
  assert_int_equal(g_rec.frees, 0);
  assert_int_equal(g_app.count, 0);
}

/* ep.share_ep_contexts: one decryption, freed once the last user goes. */
static void shared_context_freed_once_by_its_last_session(void** state) {
  (void)state;
  epctx_env* env = new_env(recording_driver(HOOKS_OWN));
  epctx_session *a = NULL, *b = NULL;
  assert_null(create(env, g_enc, 1, &a));
  assert_null(create(env, g_enc, 1, &b));
  assert_int_equal(g_rec.allocs, 1);
  assert_int_equal(g_rec.loads, 1);
  g_app.forbidden = g_rec.ptr;
  epctx_session_release(a);
  assert_int_equal(g_rec.frees, 0);
  computes_plain_bytes(env, b);
  epctx_session_release(b);
  assert_int_equal(g_rec.frees, 1);
  assert_ptr_equal(g_rec.freed_ptr, g_rec.ptr);
  assert_int_equal(g_rec.freed_bytes, g_rec.bytes);
  assert_int_equal(g_rec.contexts_at_free, 0);
  assert_false(g_app.forbidden_freed);
  epctx_env_release(env);
  assert_int_equal(g_app.count, 0);
}

static void refused_context_memory_is_out_of_memory_naming_the_driver(void** state) {
  (void)state;
  for (int shared = 0; shared < 2; ++shared) {
    epctx_env* env = new_env(recording_driver(HOOKS_REFUSE));
    epctx_session* s = NULL;
    epctx_status* st = create(env, g_enc, shared, &s);
    assert_non_null(st);
    assert_null(s);
    assert_int_equal(epctx_status_code(st), EPCTX_OUT_OF_MEMORY);
    const char* m = epctx_status_message(st);
    if (!strstr(m, "driver 'tee_vnpu' is out of context memory") ||
        !strstr(m, "alloc_context_memory returned NULL") || !strstr(m, "model_vnpu.bin"))
      fail_msg("message: %s", m);
    epctx_status_release(st);
    assert_int_equal(g_rec.allocs, 1);
    assert_int_equal(g_rec.loads, 0);
    assert_int_equal(g_rec.frees, 0);
    epctx_env_release(env);
    assert_int_equal(g_app.count, 0);
  }
}

static void misaligned_context_memory_is_refused_and_given_back(void** state) {
  (void)state;
  epctx_env* env = new_env(recording_driver(HOOKS_MISALIGN));
  epctx_session* s = NULL;
  epctx_status* st = create(env, g_enc, 0, &s);
  assert_non_null(st);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_GRAPH);
  assert_int_equal(epctx_status_cause(st), EPCTX_INCOMPATIBLE_DRIVER);
  if (!strstr(epctx_status_message(st), "driver 'tee_vnpu' alloc_context_memory returned memory "
                                        "aligned to 16 bytes, expected 256"))
    fail_msg("message: %s", epctx_status_message(st));
  epctx_status_release(st);
  assert_int_equal(g_rec.loads, 0);
  assert_int_equal(g_rec.frees, 1);
  assert_ptr_equal(g_rec.freed_ptr, g_rec.ptr);
  epctx_env_release(env);
  assert_int_equal(g_app.count, 0);
}

static void one_hook_without_the_other_is_refused(void** state) {
  (void)state;
  const epctx_hal_driver* drv = recording_driver(HOOKS_OWN);
  g_drv.free_context_memory = NULL;
  static const epctx_allocator a = {NULL, app_alloc, app_free};
  epctx_env* env = NULL;
  assert_null(epctx_env_create(&a, 0, &env));
  epctx_status* st = epctx_env_register_driver(env, drv);
  assert_non_null(st);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st),
                         "alloc_context_memory and free_context_memory come together"));
  epctx_status_release(st);
  epctx_env_release(env);
}

/* A driver built for 2.2 has no hooks: what lies past its struct_size is
 * never called, the plaintext lives in the application's memory and is
 * wiped before it is freed. */
static void abi_2_2_driver_gets_wiped_application_memory(void** state) {
  (void)state;
  const epctx_hal_driver* drv = recording_driver(HOOKS_OWN);
  g_drv.abi_version = EPCTX_HAL_ABI(2, 2);
  g_drv.struct_size = (uint32_t)offsetof(epctx_hal_driver, alloc_context_memory);
  g_drv.alloc_context_memory = alloc_past_struct_size;
  g_drv.free_context_memory = free_past_struct_size;
  epctx_env* env = new_env(drv);
  epctx_session* s = NULL;
  epctx_status* st = create(env, g_enc, 0, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  const block* b = app_block_of(g_rec.blob, (size_t)g_rec.blob_size);
  assert_non_null(b);
  assert_ptr_equal(b->p, g_rec.blob);
  g_app.watch = g_rec.blob;
  computes_plain_bytes(env, s);
  epctx_session_release(s);
  assert_int_equal(g_app.watch_freed_wiped, 1);
  epctx_env_release(env);
  assert_int_equal(g_app.count, 0);
}

/* vnpu's own pair: the host allocator's memory (the application's here),
 * wiped when it goes back. */
static void vnpu_hooks_use_the_host_and_wipe(void** state) {
  (void)state;
  epctx_env* env = new_env(recording_driver(HOOKS_VNPU));
  epctx_session* s = NULL;
  epctx_status* st = create(env, g_enc, 0, &s);
  if (st) fail_msg("%s", epctx_status_message(st));
  assert_int_equal(g_rec.allocs, 1);
  const block* b = app_block_of(g_rec.ptr, (size_t)g_rec.bytes);
  assert_non_null(b);
  assert_ptr_equal(g_rec.blob, g_rec.ptr);
  g_app.watch = g_rec.ptr;
  computes_plain_bytes(env, s);
  epctx_session_release(s);
  assert_int_equal(g_rec.frees, 1);
  assert_int_equal(g_rec.contexts_at_free, 0);
  assert_int_equal(g_app.watch_freed_wiped, 1);
  epctx_env_release(env);
  assert_int_equal(g_app.count, 0);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s epctx-compile epctx-sign MODELS_DIR WORK_DIR\n", argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_sign = argv[2];
  g_models = argv[3];
  g_work = argv[4];
  if (tu_make_clean_dir(g_work) != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encrypted_context_decrypts_into_driver_memory),
      cmocka_unit_test(plain_context_never_calls_the_hooks),
      cmocka_unit_test(shared_context_freed_once_by_its_last_session),
      cmocka_unit_test(refused_context_memory_is_out_of_memory_naming_the_driver),
      cmocka_unit_test(misaligned_context_memory_is_refused_and_given_back),
      cmocka_unit_test(one_hook_without_the_other_is_refused),
      cmocka_unit_test(abi_2_2_driver_gets_wiped_application_memory),
      cmocka_unit_test(vnpu_hooks_use_the_host_and_wipe),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
