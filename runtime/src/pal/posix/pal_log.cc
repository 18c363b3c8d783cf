// SPDX-License-Identifier: Apache-2.0
// epctx_pal_log for the POSIX PAL. Android apps never show stderr, so there
// the messages go to the system log (logcat, tag "epctx") at the matching
// priority; elsewhere to stderr as "epctx <level>: <message>".
// tests/runtime/test_pal_android.c compiles this file on the host with
// __ANDROID__ defined against a recording stand-in for <android/log.h>.
#include <epctx/pal.h>

#if defined(__ANDROID__)
#include <android/log.h>
#else
#include <stdio.h>
#endif

extern "C" void epctx_pal_log(int level, const char* message) {
  bool known = level >= 0 && level <= 3;
#if defined(__ANDROID__)
  static const int kPriorities[] = {ANDROID_LOG_ERROR, ANDROID_LOG_WARN, ANDROID_LOG_INFO,
                                    ANDROID_LOG_VERBOSE};
  __android_log_print(known ? kPriorities[level] : ANDROID_LOG_INFO, "epctx", "%s", message);
#else
  static const char* const kNames[] = {"error", "warning", "info", "verbose"};
  fprintf(stderr, "epctx %s: %s\n", known ? kNames[level] : "log", message);
#endif
}
