/* SPDX-License-Identifier: Apache-2.0 */
/* vnpu: the reference virtual NPU driver (architecture "vnpu-1.0").
 *
 * The driver is one static epctx_hal_driver; register it with the runtime.
 * It owns no memory until load_context, and everything it allocates there
 * comes from the host allocator and is freed by release_context. The spec of
 * the architecture it runs is hal/drivers/vnpu/README.md. */
#ifndef EPCTX_VNPU_H
#define EPCTX_VNPU_H

#include <epctx/hal.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The driver's function table; valid for the life of the program. */
const epctx_hal_driver* epctx_vnpu_driver(void);

/* Makes the driver report other versions, to impersonate older or newer
 * hardware in tests. Keys: "driver_version", "sdk_version" ("M.m.p") and
 * "hardware_architecture" ("vnpu-M.m"). value NULL restores the default.
 * Not thread-safe: call before the driver is registered. Returns EPCTX_OK or
 * EPCTX_INVALID_ARGUMENT for an unknown key or a malformed value. */
int epctx_vnpu_configure(const char* key, const char* value);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
