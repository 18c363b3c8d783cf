/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the end-to-end and real-model tests: running the CLIs as
 * child processes, reading files and manifests, comparing tensors.
 *
 * Everything returned through out-parameters is malloc'd and owned by the
 * caller (free with free() or the matching *_free). Functions that can fail
 * return 0 on success and fill a message buffer otherwise; tests turn that
 * into a cmocka failure with the message. */
#ifndef EPCTX_TESTS_TEST_UTIL_H
#define EPCTX_TESTS_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <epctx/epctx.h>

#include "npy.h"
#include "test_io.h" /* tu_read_file, tu_write_file, tu_file_exists */

#ifdef __cplusplus
extern "C" {
#endif

/* The result of a child process. */
typedef struct tu_proc {
  int exited; /* 1: exited normally (exit_code valid); 0: signalled */
  int exit_code;
  int signal;    /* the signal when !exited */
  int timed_out; /* 1: killed (SIGKILL) by tu_run_timeout's limit */
  char* out;     /* everything written to stdout (NUL-terminated) */
  char* err;     /* everything written to stderr */
} tu_proc;

/* Runs argv[0] with argv (NULL-terminated) and waits. stdout and stderr go
 * through files in `scratch_dir`. Returns 0, or -1 when the child could not
 * be started (message in p->err). */
int tu_run(const char* const* argv, const char* scratch_dir, tu_proc* p);
/* tu_run, killing the child after `seconds` (0: no limit). SIGCHLD is
 * blocked in the caller while it waits (the child gets the caller's mask). */
int tu_run_timeout(const char* const* argv, const char* scratch_dir, double seconds, tu_proc* p);
void tu_proc_free(tu_proc* p);

/* Number of lines in s ("a\n" is 1, "a\nb" is 2, "" is 0). */
size_t tu_count_lines(const char* s);

/* mkdir -p; then removes the regular files inside `dir` (not recursive). */
int tu_make_clean_dir(const char* dir);

/* manifest.txt of a generated case (see tests/models/generate.py). */
#define TU_MAX_IO 16
typedef struct tu_manifest {
  char name[128];
  size_t num_inputs, num_outputs;
  char inputs[TU_MAX_IO][128];
  char outputs[TU_MAX_IO][128];
  long vnpu_driver_nodes; /* -1 when the manifest does not say */
  long vnpu_cpu_nodes;
  size_t num_input_shapes; /* "name:1,3,224,224" for epctx-compile */
  char input_shapes[TU_MAX_IO][160];
  char op[64]; /* "op <type>": the op a conformance case is about; "" if none */
  char input_dtypes[TU_MAX_IO][16]; /* "input_dtypes float32 ...", if given */
  char output_dtypes[TU_MAX_IO][16];
} tu_manifest;
int tu_read_manifest(const char* path, tu_manifest* m, char* err, size_t size);

/* Reads a list file: one non-empty line per entry. Returns the count; fills
 * *lines (free with tu_free_lines). -1 on error. */
long tu_read_lines(const char* path, char*** lines);
void tu_free_lines(char** lines, long count);

/* Compares an output tensor with an expected array: same dtype and shape,
 * and for floating-point dtypes (float32, float64, float16, bfloat16) every
 * element equal or |a - b| <= atol + rtol * |b|, NaN matching NaN; other
 * dtypes must be equal bit for bit. Returns 0 or writes why not (first bad
 * index, values, max error) into msg. */
int tu_compare(const epctx_tensor* actual, const epctx_npy* expected, double atol, double rtol,
               char* msg, size_t size);
/* The same for an array read from a .npy file (epctx-run's outputs). */
int tu_compare_npy(const epctx_npy* actual, const epctx_npy* expected, double atol, double rtol,
                   char* msg, size_t size);
/* Only the dtype and shape parts of tu_compare_npy. */
int tu_same_type_and_shape(const epctx_npy* actual, const epctx_npy* expected, char* msg,
                           size_t size);
/* Element i of a float32/float64/float16/bfloat16/integer/bool array as a
 * double (0 for other dtypes). */
double tu_element(epctx_dtype dtype, const void* data, size_t i);

/* Largest |a - b| over the arrays and largest |b| (both float32). */
void tu_max_errors(const float* a, const float* b, size_t n, double* max_abs, double* max_ref);

#ifdef __cplusplus
}
#endif
#endif
