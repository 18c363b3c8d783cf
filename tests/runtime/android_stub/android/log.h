/* SPDX-License-Identifier: Apache-2.0 */
/* Stand-in for the NDK's <android/log.h> (same names and priority values),
 * so the Android code of the PAL compiles and runs on the host:
 * test_pal_android.c defines __android_log_print and records its calls. */
#ifndef EPCTX_TEST_ANDROID_LOG_H
#define EPCTX_TEST_ANDROID_LOG_H
#ifdef __cplusplus
extern "C" {
#endif
/* The NDK's names, reserved identifier included. NOLINTBEGIN */
typedef enum android_LogPriority {
  ANDROID_LOG_UNKNOWN = 0,
  ANDROID_LOG_DEFAULT,
  ANDROID_LOG_VERBOSE,
  ANDROID_LOG_DEBUG,
  ANDROID_LOG_INFO,
  ANDROID_LOG_WARN,
  ANDROID_LOG_ERROR,
  ANDROID_LOG_FATAL,
  ANDROID_LOG_SILENT
} android_LogPriority;
int __android_log_print(int prio, const char* tag, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* NOLINTEND */
#ifdef __cplusplus
}
#endif
#endif
