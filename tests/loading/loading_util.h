/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the loading tests: model paths under the generated
 * folder (argv[1]), an env with the tqnn test driver, and session creation
 * that keeps the status for assertions. Header-only; each test program
 * includes it once. */
#ifndef LOADING_UTIL_H
#define LOADING_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>
#if EPCTX_TEST_HAS_VNPU
#include <epctx/vnpu.h>
#endif

#include "test_io.h"
#include "tqnn_driver.h"

static const char* g_dir; /* OUTDIR of gen_loading_models.py */

/* main() of a loading test program: argv[1] is OUTDIR; runs `tests` (a
 * CMUnitTest array at file scope). */
#define LOADING_MAIN(tests)                               \
  int main(int argc, char** argv) {                       \
    if (argc < 2) {                                       \
      fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]); \
      return 2;                                           \
    }                                                     \
    g_dir = argv[1];                                      \
    return cmocka_run_group_tests(tests, NULL, NULL);     \
  }

/* OUTDIR/m/<name> in a static buffer (valid until the next call). */
static inline const char* model_path(const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/m/%s", g_dir, name);
  return buf;
}

/* The whole file (malloc'd, the caller frees); fails the test when it cannot
 * be read. */
static inline void* read_all(const char* path, size_t* size) {
  void* p = tu_read_file(path, size);
  assert_non_null(p);
  return p;
}

/* An env holding tqnn (after tqnn_reset and any config the caller set), and
 * vnpu too when with_vnpu. */
static inline epctx_env* env_with(int with_tqnn, int with_vnpu) {
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  if (with_tqnn) assert_null(epctx_env_register_driver(env, tqnn_driver()));
#if EPCTX_TEST_HAS_VNPU
  if (with_vnpu) assert_null(epctx_env_register_driver(env, epctx_vnpu_driver()));
#else
  if (with_vnpu) fail_msg("vnpu is not in this build (EPCTX_DRIVERS)");
#endif
  return env;
}

/* Options from "key", "value", ..., NULL pairs (NULL when none given). */
static inline epctx_session_options* opts(const char* key, ...) {
  if (!key) return NULL;
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  va_list ap;
  va_start(ap, key);
  for (const char* k = key; k; k = va_arg(ap, const char*)) {
    const char* v = va_arg(ap, const char*);
    epctx_status* st = epctx_session_options_set(o, k, v);
    if (st) fail_msg("option %s=%s: %s", k, v, epctx_status_message(st));
  }
  va_end(ap);
  return o;
}

/* Creates a session from OUTDIR/m/<name>; returns the status (caller frees). */
static inline epctx_status* load(epctx_env* env, const char* name, epctx_session_options* o,
                                 epctx_session** out) {
  *out = NULL;
  return epctx_session_create(env, model_path(name), o, out);
}

/* Asserts st has code/cause and that every NULL-terminated needle is in its
 * message; releases st. */
static inline void expect(epctx_status* st, int code, int cause, ...) {
  if (!st) fail_msg("expected %s, got success", epctx_code_name(code));
  const char* m = epctx_status_message(st);
  if (epctx_status_code(st) != code || epctx_status_cause(st) != cause)
    fail_msg("expected %s/%s, got %s/%s: %s", epctx_code_name(code), epctx_code_name(cause),
             epctx_code_name(epctx_status_code(st)), epctx_code_name(epctx_status_cause(st)), m);
  va_list ap;
  va_start(ap, cause);
  for (const char* n = va_arg(ap, const char*); n; n = va_arg(ap, const char*))
    if (!strstr(m, n)) fail_msg("message lacks \"%s\": %s", n, m);
  va_end(ap);
  epctx_status_release(st);
}

static inline void ok(epctx_status* st) {
  if (st)
    fail_msg("unexpected failure %s: %s", epctx_code_name(epctx_status_code(st)),
             epctx_status_message(st));
}

#define LOAD_FAILED "Failed to load from EpContext model."

#endif
