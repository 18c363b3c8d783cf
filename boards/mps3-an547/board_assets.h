/* SPDX-License-Identifier: Apache-2.0 */
/* What the image embeds (written by embed.py at build time into
 * board_assets.c/.S): the signed package as named memory regions in the QSPI
 * flash, the trusted public key, the reference tensors. All read-only. */
#ifndef EPCTX_BOARD_ASSETS_H
#define EPCTX_BOARD_ASSETS_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/pal_baremetal.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct board_tensor {
  const char* name;
  int dtype; /* epctx_dtype */
  size_t rank;
  int64_t dims[8];
  const void* data;
  size_t bytes;
} board_tensor;

extern const epctx_baremetal_file board_files[];
extern const size_t board_num_files;
extern const char board_model_path[];               /* the `_ctx.onnx`, a name in board_files */
extern const char board_model_id[];                 /* what it was signed for (--model-id) */
extern const unsigned char* const board_public_key; /* PEM */
extern const size_t board_public_key_size;
/* The board's data key for encrypted packages (0 bytes: none): a stand-in
 * for a key an OTP fuse or a TrustZone key store holds (README.md). */
extern const unsigned char* const board_data_key;
extern const size_t board_data_key_size;
extern const char board_data_key_id[];
extern const board_tensor board_inputs[];
extern const size_t board_num_inputs;
extern const board_tensor board_expected[]; /* one per graph output, in order */
extern const size_t board_num_expected;

#ifdef __cplusplus
}
#endif
#endif
