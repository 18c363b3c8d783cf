/* SPDX-License-Identifier: Apache-2.0 */
/* hello_npu: the sample driver of hal/PORTING.md. Its "NPU" multiplies a
 * float vector by a constant; everything else is what a real driver does. */
#ifndef EPCTX_HELLO_NPU_H
#define EPCTX_HELLO_NPU_H

#include <epctx/hal.h>

#ifdef __cplusplus
extern "C" {
#endif

const epctx_hal_driver* epctx_hello_npu_driver(void);

/* Calls the runtime made to the optional hooks, for tests. */
typedef struct hello_npu_counters {
  uint32_t prepared;     /* prepare_graph minus unprepare_graph */
  uint32_t device_syncs; /* sync_for_device */
  uint32_t cpu_syncs;    /* sync_for_cpu */
  uint32_t io_allocs;    /* alloc_io */
  uint32_t io_live;      /* alloc_io minus free_io */
} hello_npu_counters;
void hello_npu_get_counters(hello_npu_counters* out);

#ifdef __cplusplus
}
#endif
#endif
