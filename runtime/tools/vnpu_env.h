/* SPDX-License-Identifier: Apache-2.0 */
/* Tools only: lets epctx-run and epctx-inspect impersonate other vnpu
 * hardware from the environment (the freestanding library never reads the
 * environment). EPCTX_VNPU_DRIVER_VERSION, EPCTX_VNPU_SDK_VERSION ("M.m.p")
 * and EPCTX_VNPU_HARDWARE_ARCHITECTURE ("vnpu-M.m") map to
 * epctx_vnpu_configure; call before registering drivers. */
#ifndef EPCTX_TOOLS_VNPU_ENV_H
#define EPCTX_TOOLS_VNPU_ENV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 on success; otherwise writes "VAR='value' is not ..." into err. */
int epctx_tool_vnpu_from_env(char* err, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
