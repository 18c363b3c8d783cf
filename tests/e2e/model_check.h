/* SPDX-License-Identifier: Apache-2.0 */
/* The end-to-end check shared by the generated-model and real-model tests:
 * compile a model with epctx-compile (a child process), load the context
 * model through the public C API, run it on .npy inputs, compare each output
 * with an expected .npy.
 *
 * Messages: every function that can fail returns 0 or fills msg (one paragraph naming the
 * model, the step, and the tool's stderr when a tool failed). */
#ifndef EPCTX_TESTS_MODEL_CHECK_H
#define EPCTX_TESTS_MODEL_CHECK_H

#include <stddef.h>

#include <epctx/epctx.h>

#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `compile_tool model -o out_ctx --ep ep --embed-mode embed --force
 * --quiet [extra...]` (extra NULL-terminated, may be NULL). The tool must
 * exit 0 and write out_ctx (with every node on the CPU when none can run on
 * the backend). scratch_dir holds the captured stdout/stderr. Returns 0, or
 * -1 on failure. */
int mc_compile(const char* compile_tool, const char* model, const char* out_ctx, const char* ep,
               int embed, const char* const* extra, const char* scratch_dir, char* msg,
               size_t size);
/* The same; when summary is not NULL it receives the tool's stdout (the
 * summary line: nodes, partitions, MACs and the backend's share). */
int mc_compile_summary(const char* compile_tool, const char* model, const char* out_ctx,
                       const char* ep, int embed, const char* const* extra, const char* scratch_dir,
                       char* msg, size_t size, char* summary, size_t summary_size);

typedef struct mc_io {
  size_t num_inputs, num_outputs;
  const char* input_names[TU_MAX_IO];
  const char* input_files[TU_MAX_IO];
  const char* output_names[TU_MAX_IO]; /* expected graph outputs, in order */
  const char* expected_files[TU_MAX_IO];
  double atol, rtol;
} mc_io;

/* Storage for the file names an mc_io points to: a case directory's
 * input_<i>.npy and expected_<i>.npy. */
typedef struct mc_case_files {
  char inputs[TU_MAX_IO][4096];
  char expected[TU_MAX_IO][4096];
} mc_case_files;

/* Fills io (zeroed first; atol and rtol are left 0 for the caller) from a
 * case's manifest: its input and output names, and the files dir/input_<i>.npy
 * and dir/expected_<i>.npy, whose names are kept in *files; io points into m
 * and *files, which must outlive it. */
void mc_io_from_manifest(const tu_manifest* m, const char* dir, mc_case_files* files, mc_io* io);

/* Milliseconds on the monotonic clock. */
double mc_now_ms(void);

/* Creates a session on ctx_path (env must have its drivers registered),
 * checks its input/output names against io, runs once, compares. On success
 * *session (if not NULL) receives the open session for further checks, to be
 * released by the caller; create_ms and run_ms (if not NULL) the timings. */
int mc_load_run_compare(epctx_env* env, const char* ctx_path, const mc_io* io,
                        epctx_session** session, double* create_ms, double* run_ms, char* msg,
                        size_t size);

#ifdef __cplusplus
}
#endif
#endif
