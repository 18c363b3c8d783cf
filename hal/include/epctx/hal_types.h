/* SPDX-License-Identifier: Apache-2.0 */
/* The value types the HAL ABI shares with the runtime's C API: status codes,
 * element types and the maximum rank. The HAL owns them (a driver includes
 * nothing of the runtime); <epctx/status.h> and <epctx/epctx.h> re-export
 * them. Never renumber: these values cross the driver ABI.
 *
 * Codes 1..14 carry ONNX Runtime's OrtErrorCode names and values so that
 * applications porting from ORT keep their error handling; codes from 100 up
 * are epctx's own (trust and path containment). */
#ifndef EPCTX_HAL_TYPES_H
#define EPCTX_HAL_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum epctx_code {
  EPCTX_OK = 0,
  EPCTX_FAIL = 1,
  EPCTX_INVALID_ARGUMENT = 2,
  EPCTX_NO_SUCHFILE = 3,
  EPCTX_NO_MODEL = 4,
  EPCTX_ENGINE_ERROR = 5,
  EPCTX_RUNTIME_EXCEPTION = 6,
  EPCTX_INVALID_PROTOBUF = 7,
  EPCTX_MODEL_LOADED = 8,
  EPCTX_NOT_IMPLEMENTED = 9,
  EPCTX_INVALID_GRAPH = 10,
  EPCTX_EP_FAIL = 11,
  EPCTX_MODEL_LOAD_CANCELED = 12,
  EPCTX_MODEL_REQUIRES_COMPILATION = 13,
  EPCTX_NOT_FOUND = 14,
  /* epctx's own */
  EPCTX_OUT_OF_MEMORY = 100,
  EPCTX_PATH_REJECTED = 101,
  EPCTX_INVALID_CONTAINER = 102,
  EPCTX_INCOMPATIBLE_DRIVER = 110,
  EPCTX_INCOMPATIBLE_SDK = 111,
  EPCTX_INCOMPATIBLE_HARDWARE = 112,
  EPCTX_SIGNATURE_INVALID = 120,
  EPCTX_KEY_REJECTED = 121,
  EPCTX_HASH_MISMATCH = 122,
  EPCTX_ROLLBACK = 123,
  /* encrypted assets (runtime/schema/sealed_format.h) */
  EPCTX_KEY_MISSING = 124,           /* no data key for the asset's key id */
  EPCTX_DECRYPTION_FAILED = 125,     /* wrong key, or the ciphertext was changed */
  EPCTX_UNSUPPORTED_ALGORITHM = 126, /* a cipher this build does not have */
  /* a run stopped between two steps (epctx_run_options) */
  EPCTX_RUN_TERMINATED = 130,
  EPCTX_RUN_DEADLINE_EXCEEDED = 131
} epctx_code;

/* Element types: ONNX TensorProto.DataType values. */
typedef enum epctx_dtype {
  EPCTX_DTYPE_UNDEFINED = 0,
  EPCTX_DTYPE_FLOAT = 1,
  EPCTX_DTYPE_UINT8 = 2,
  EPCTX_DTYPE_INT8 = 3,
  EPCTX_DTYPE_UINT16 = 4,
  EPCTX_DTYPE_INT16 = 5,
  EPCTX_DTYPE_INT32 = 6,
  EPCTX_DTYPE_INT64 = 7,
  EPCTX_DTYPE_STRING = 8,
  EPCTX_DTYPE_BOOL = 9,
  EPCTX_DTYPE_FLOAT16 = 10,
  EPCTX_DTYPE_DOUBLE = 11,
  EPCTX_DTYPE_UINT32 = 12,
  EPCTX_DTYPE_UINT64 = 13,
  EPCTX_DTYPE_BFLOAT16 = 16
} epctx_dtype;

#define EPCTX_MAX_RANK 8

#ifdef __cplusplus
}
#endif
#endif
