/* SPDX-License-Identifier: Apache-2.0 */
/* A driver library built for another HAL major: its entry point refuses
 * every runtime of ours. */
#include <epctx/hal.h>

__attribute__((visibility("default"))) const epctx_hal_driver* epctx_hal_driver_entry_v2(
    uint32_t runtime_abi) {
  (void)runtime_abi;
  return (const epctx_hal_driver*)0;
}
