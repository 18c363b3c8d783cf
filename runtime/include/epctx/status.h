/* SPDX-License-Identifier: Apache-2.0 */
/* epctx status codes, shared by the C API, the PAL and the HAL. The codes
 * themselves are part of the driver ABI and live in <epctx/hal_types.h>. */
#ifndef EPCTX_STATUS_H
#define EPCTX_STATUS_H

#include <epctx/hal_types.h> /* the codes: epctx_code */

#ifdef __cplusplus
extern "C" {
#endif

/* Name of a code, e.g. "INVALID_GRAPH"; "UNKNOWN" for values not listed. */
#pragma GCC visibility push(default)
const char* epctx_code_name(int code);
#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
