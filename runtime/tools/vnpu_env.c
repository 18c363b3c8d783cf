/* SPDX-License-Identifier: Apache-2.0 */
#include "vnpu_env.h"

#include <stdio.h>
#include <stdlib.h>

#if EPCTX_TOOL_HAS_VNPU
#include <epctx/vnpu.h>
#endif

int epctx_tool_vnpu_from_env(char* err, size_t cap) {
  static const char* const vars[3][2] = {
      {"EPCTX_VNPU_DRIVER_VERSION", "driver_version"},
      {"EPCTX_VNPU_SDK_VERSION", "sdk_version"},
      {"EPCTX_VNPU_HARDWARE_ARCHITECTURE", "hardware_architecture"}};
  for (int i = 0; i < 3; ++i) {
    const char* v = getenv(vars[i][0]);
    if (!v) continue;
#if !EPCTX_TOOL_HAS_VNPU
    snprintf(err, cap, "%s is set but this build has no vnpu driver (EPCTX_DRIVERS)", vars[i][0]);
    return 1;
#else
    if (epctx_vnpu_configure(vars[i][1], v) != 0) {
      snprintf(err, cap, "%s='%s' is not %s", vars[i][0], v,
               i == 2 ? "<family>-<major>.<minor>" : "<major>.<minor>.<patch>");
      return 1;
    }
#endif
  }
  return 0;
}
