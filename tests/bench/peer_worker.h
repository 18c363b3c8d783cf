/* SPDX-License-Identifier: Apache-2.0 */
/* The half both peer-benchmark workers share: argument parsing, the .npy
 * inputs, and the request loop the driver (peer_bench.py) talks to.
 *
 * A worker owns one session of one runtime (epctx or ONNX Runtime), created
 * once; the driver then asks it for rounds of runs, alternating between
 * workers, so both runtimes see the same machine state in one sitting.
 *
 * Protocol, one line each way, over the worker's stdin/stdout:
 *   worker: "ready create_ms=<ms> threads=<n|caller>"   after create + one run
 *   driver: "run <max_runs> <budget_ms>"
 *   worker: "times <us> <us> ..."   1..max_runs runs, stopping once the budget
 *                                   is spent; each run timed on its own
 *   driver: "quit" (or EOF)          the worker exits 0
 * Any failure: one line "<worker>: error: ..." on stderr, exit status 1. */
#ifndef EPCTX_PEER_WORKER_H
#define EPCTX_PEER_WORKER_H

#include <stddef.h>

#include "npy.h"

#define PEER_MAX_INPUTS 16
#define PEER_MAX_OPTIONS 16

typedef struct peer_args {
  const char* model;
  int threads; /* 0: not given (the runtime's default) */
  size_t num_inputs;
  const char* input_names[PEER_MAX_INPUTS];
  epctx_npy inputs[PEER_MAX_INPUTS]; /* read by peer_parse_args */
  size_t num_options;                /* -C key=value, split in place */
  const char* option_keys[PEER_MAX_OPTIONS];
  const char* option_values[PEER_MAX_OPTIONS];
  const char* library; /* --lib PATH (the ORT worker's libonnxruntime) */
} peer_args;

/* Sets the worker's name used in error lines. */
void peer_set_name(const char* name);
/* Prints "<name>: error: ..." to stderr and exits 1. */
void peer_die(const char* fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
double peer_now_ms(void);

/* usage: WORKER MODEL --input NAME=FILE.npy... [--threads N] [-C KEY=VALUE]...
 *                     [--lib PATH]
 * Reads every input file; dies with one line on any bad argument. */
void peer_parse_args(int argc, char** argv, peer_args* out);
void peer_free_args(peer_args* a);

/* One timed run. Returns 0, or non-zero after writing why into err. */
typedef int (*peer_run_fn)(void* state, char* err, size_t err_size);

/* Runs once untimed (warm-up: first-run costs are not what rounds measure),
 * prints the ready line, then answers the driver until quit or EOF.
 * threads: the intra-op threads the session uses, 0 for "the caller's". */
int peer_serve(peer_run_fn run, void* state, double create_ms, int threads);

#endif
