/* SPDX-License-Identifier: Apache-2.0 */
/* Whole-file reads and writes for tests: C stdio (plus stat), no child
 * processes, so every build has them, cross builds included (the library
 * epctx_test_io, defined in tests/CMakeLists.txt).
 *
 * tu_read_file's buffer is malloc'd and owned by the caller (free()). */
#ifndef EPCTX_TESTS_TEST_IO_H
#define EPCTX_TESTS_TEST_IO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a whole file; NULL on error. *size (if size is not NULL) receives its
 * length; the buffer has one extra NUL byte after the data, so text files can
 * be used as C strings. */
unsigned char* tu_read_file(const char* path, size_t* size);
/* Writes size bytes to path (created or truncated). Returns 0 or -1. */
int tu_write_file(const char* path, const void* data, size_t size);
/* 1 when path names an existing file or directory. */
int tu_file_exists(const char* path);

#ifdef __cplusplus
}
#endif
#endif
