// SPDX-License-Identifier: Apache-2.0
// The entry point of libepctx_vnpu.so (only there: a runtime that links
// vnpu in registers it with epctx_env_register_builtin_drivers).
#include <epctx/vnpu.h>

EPCTX_HAL_DEFINE_ENTRY(epctx_vnpu_driver())
