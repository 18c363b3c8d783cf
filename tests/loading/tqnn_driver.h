/* SPDX-License-Identifier: Apache-2.0 */
/* tqnn: a test driver posing as a QNN backend (source "QNNExecutionProvider",
 * alias "QNN") that records exactly what the runtime hands it, so loading
 * tests can assert the bytes, not just "no error".
 *
 * Blob format (gen_loading_models.py): "TQNN\n" then one line per graph,
 * "<name> <inputs> <outputs> <dtype> <dim>"; every tensor has shape [1, dim].
 * In an epctx container each graph payload holds such a text and the graph
 * takes the container's name. execute: float graphs write the sum of their
 * inputs, others copy input 0; zero-input graphs write bytes 0x07. */
#ifndef TQNN_DRIVER_H
#define TQNN_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/hal.h>

#define TQNN_MAX_LOADS 8
#define TQNN_MAX_ASKS 16

typedef struct tqnn_record {
  int loads;                                /* load_context calls */
  const uint8_t* blob_data[TQNN_MAX_LOADS]; /* the pointers handed over */
  uint64_t blob_size[TQNN_MAX_LOADS];
  uint8_t blob_copy[TQNN_MAX_LOADS][256]; /* first 256 bytes */
  int is_container[TQNN_MAX_LOADS];
  uint64_t weights_size[TQNN_MAX_LOADS];
  int asks;                      /* get_graph calls */
  char asked[TQNN_MAX_ASKS][64]; /* names asked */
  char bound[TQNN_MAX_ASKS][64]; /* graph returned ("" if none) */
  int checks;                    /* check_compatibility calls */
  int releases;
} tqnn_record;

typedef struct tqnn_config {
  epctx_hal_version driver_version; /* default 1.5.0 */
  epctx_hal_version sdk_version;    /* default 2.3.1 */
  char hardware_architecture[32];   /* default "tq-1.2" */
  uint32_t flags;                   /* EPCTX_HAL_FLAG_* (default 0) */
  int veto;                         /* check_compatibility returns this when != 0 */
  char refuse_graph[64];            /* get_graph of this name fails (INVALID_GRAPH) */
} tqnn_config;

/* The driver, configured by tqnn_config() (reset by tqnn_reset()). */
const epctx_hal_driver* tqnn_driver(void);
tqnn_config* tqnn_config_get(void);
tqnn_record* tqnn_record_get(void);
/* Defaults and an empty record. */
void tqnn_reset(void);

#endif
