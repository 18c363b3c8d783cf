/* SPDX-License-Identifier: Apache-2.0 */
/* The POSIX PAL's Android code, checked on the host (no NDK here): pal_log.cc
 * is compiled with __ANDROID__ defined against android_stub/android/log.h,
 * and this file stands in for liblog's __android_log_print. */
#include <epctx/pal.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <android/log.h>

static int g_calls;
static int g_prio;
static char g_tag[32];
static char g_text[256];

int __android_log_print(int prio, const char* tag, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ++g_calls;
  g_prio = prio;
  snprintf(g_tag, sizeof g_tag, "%s", tag);
  vsnprintf(g_text, sizeof g_text, fmt, ap);
  va_end(ap);
  return 1;
}

static void logs_each_level_to_logcat_at_its_priority(void** state) {
  (void)state;
  static const int expected[] = {ANDROID_LOG_ERROR, ANDROID_LOG_WARN, ANDROID_LOG_INFO,
                                 ANDROID_LOG_VERBOSE};
  for (int level = 0; level < 4; ++level) {
    g_calls = 0;
    epctx_pal_log(level, "model_ctx.onnx: loaded");
    assert_int_equal(g_calls, 1);
    assert_int_equal(g_prio, expected[level]);
    assert_string_equal(g_tag, "epctx");
    assert_string_equal(g_text, "model_ctx.onnx: loaded");
  }
}

static void message_is_never_a_format_string(void** state) {
  (void)state;
  epctx_pal_log(0, "node %s of 100% evil");
  assert_string_equal(g_text, "node %s of 100% evil");
}

static void unknown_level_logs_as_info(void** state) {
  (void)state;
  epctx_pal_log(7, "x");
  assert_int_equal(g_prio, ANDROID_LOG_INFO);
  epctx_pal_log(-1, "y");
  assert_int_equal(g_prio, ANDROID_LOG_INFO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(logs_each_level_to_logcat_at_its_priority),
      cmocka_unit_test(message_is_never_a_format_string),
      cmocka_unit_test(unknown_level_logs_as_info),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
