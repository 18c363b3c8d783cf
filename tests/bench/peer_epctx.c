/* SPDX-License-Identifier: Apache-2.0 */
/* peer-bench-epctx: the epctx side of the peer benchmark (peer_worker.h has
 * the protocol; peer_bench.py drives it).
 *
 * usage: peer-bench-epctx MODEL_ctx.onnx --input NAME=FILE.npy...
 *                         [--threads N] [-C KEY=VALUE]...
 * Registers the built-in drivers, creates one session and runs it through the
 * public C API the way an application does: inputs wrap the .npy data (no
 * copy), outputs are allocated by the runtime and released after each run.
 * --threads N sets session.intra_op_num_threads; a runtime that does not know
 * the key yet runs on the caller's thread and says "threads=caller". */
#include <epctx/epctx.h>

#include <stdio.h>
#include <string.h>

#include "peer_worker.h"

#define MAX_OUTPUTS 64

typedef struct state {
  epctx_session* session;
  size_t num_inputs, num_outputs;
  const char* names[PEER_MAX_INPUTS];
  epctx_tensor* inputs[PEER_MAX_INPUTS];
} state;

static void check(epctx_status* st, const char* what) {
  if (!st) return;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", epctx_status_message(st));
  int code = epctx_status_code(st);
  epctx_status_release(st);
  peer_die("%s: %s: %s", what, epctx_code_name(code), msg);
}

static int run(void* p, char* err, size_t err_size) {
  state* s = p;
  epctx_tensor* outs[MAX_OUTPUTS];
  epctx_status* st = epctx_session_run(s->session, s->names, (const epctx_tensor* const*)s->inputs,
                                       s->num_inputs, NULL, outs, s->num_outputs);
  if (st) {
    snprintf(err, err_size, "%s: %s", epctx_code_name(epctx_status_code(st)),
             epctx_status_message(st));
    epctx_status_release(st);
    return 1;
  }
  for (size_t i = 0; i < s->num_outputs; ++i) epctx_tensor_release(outs[i]);
  return 0;
}

/* 1: the runtime took the key; 0: it does not know it (runs on the caller). */
static int set_threads(epctx_session_options* o, int threads) {
  char value[16];
  snprintf(value, sizeof value, "%d", threads);
  epctx_status* st = epctx_session_options_set(o, "session.intra_op_num_threads", value);
  if (st && epctx_status_code(st) == EPCTX_INVALID_ARGUMENT &&
      strstr(epctx_status_message(st), "unknown key")) {
    epctx_status_release(st);
    return 0;
  }
  check(st, "session.intra_op_num_threads");
  return 1;
}

int main(int argc, char** argv) {
  peer_set_name("peer-bench-epctx");
  peer_args a;
  peer_parse_args(argc, argv, &a);
  if (a.library) peer_die("--lib is for the ONNX Runtime worker");

  epctx_env* env = NULL;
  check(epctx_env_create(NULL, 0, &env), "env");
  check(epctx_env_register_builtin_drivers(env), "drivers");
  epctx_session_options* o = NULL;
  check(epctx_session_options_create(&o), "options");
  int threads = a.threads > 0 && set_threads(o, a.threads) ? a.threads : 0;
  for (size_t i = 0; i < a.num_options; ++i)
    check(epctx_session_options_set(o, a.option_keys[i], a.option_values[i]), a.option_keys[i]);

  state s;
  memset(&s, 0, sizeof s);
  double t0 = peer_now_ms();
  check(epctx_session_create(env, a.model, o, &s.session), a.model);
  double create_ms = peer_now_ms() - t0;
  epctx_session_options_release(o);
  s.num_outputs = epctx_session_output_count(s.session);
  if (s.num_outputs > MAX_OUTPUTS) peer_die("%s: more than %d outputs", a.model, MAX_OUTPUTS);
  s.num_inputs = a.num_inputs;
  for (size_t i = 0; i < a.num_inputs; ++i) {
    epctx_npy* n = &a.inputs[i];
    s.names[i] = a.input_names[i];
    check(epctx_tensor_wrap(env, n->dtype, n->dims, n->rank, n->data, n->bytes, &s.inputs[i]),
          a.input_names[i]);
  }

  int rc = peer_serve(run, &s, create_ms, threads);
  for (size_t i = 0; i < s.num_inputs; ++i) epctx_tensor_release(s.inputs[i]);
  epctx_session_release(s.session);
  epctx_env_release(env);
  peer_free_args(&a);
  return rc;
}
