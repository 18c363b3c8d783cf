/* SPDX-License-Identifier: Apache-2.0 */
/* NumPy .npy files for the device-side CLIs and the tests.
 *
 * Reads and writes format versions 1 and 2 (version 3 only differs in the
 * header's text encoding and is read too): little-endian or byte-order-free
 * dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, and V2 for bfloat16 (numpy has
 * no bfloat16: the raw bits as 2-byte void, written '|V2'), C order, rank up
 * to EPCTX_MAX_RANK. Anything else (big-endian, Fortran order, structured,
 * string or object dtypes, truncated data) is refused with a one-line message
 * naming the file. The host must be little-endian (every epctx target is).
 *
 * Ownership: epctx_npy_read fills an epctx_npy whose data is malloc'd and
 * owned by it until epctx_npy_free. Plain C + libc: usable from the CLIs
 * (which use only the public API) and from C tests. */
#ifndef EPCTX_TOOLS_NPY_H
#define EPCTX_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/epctx.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct epctx_npy {
  epctx_dtype dtype;
  size_t rank;
  int64_t dims[EPCTX_MAX_RANK];
  void* data;   /* malloc'd; NULL only when bytes == 0 */
  size_t bytes; /* product(dims) * element size */
} epctx_npy;

/* Reads `path`. Returns 0 and fills *out, or returns the epctx_code of the
 * failure (NO_SUCHFILE, INVALID_ARGUMENT, OUT_OF_MEMORY) and writes a message
 * naming the file into err (always NUL-terminated when err_size > 0). */
int epctx_npy_read(const char* path, epctx_npy* out, char* err, size_t err_size);

/* Parses an in-memory .npy image; `name` only labels error messages. The
 * data is copied into out->data. Same return convention as epctx_npy_read. */
int epctx_npy_parse(const void* file, size_t size, const char* name, epctx_npy* out, char* err,
                    size_t err_size);

/* Writes a version-1 .npy (rank <= 8 always fits its header). Returns 0 or an
 * epctx_code (INVALID_ARGUMENT for an unsupported dtype or a size that does
 * not match dims, FAIL for an I/O error) with a message in err. */
int epctx_npy_write(const char* path, epctx_dtype dtype, const int64_t* dims, size_t rank,
                    const void* data, size_t bytes, char* err, size_t err_size);

void epctx_npy_free(epctx_npy* array);

/* "f4", "i8", "V2" (bfloat16), ... for a dtype npy supports, NULL otherwise. */
const char* epctx_npy_descr(epctx_dtype dtype);
/* Element size in bytes of a supported dtype, 0 otherwise. */
size_t epctx_npy_item_size(epctx_dtype dtype);
/* Human name of a dtype: "float32", "int64", ...; "dtype(<n>)" style names
 * are not produced: unknown values give "unknown". */
const char* epctx_npy_dtype_name(epctx_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
