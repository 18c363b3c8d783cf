/* SPDX-License-Identifier: Apache-2.0 */
/* Compile -> load -> run -> compare, through the CLIs and the public C API. */
#include "model_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "npy.h"
#include "test_util.h"

double mc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void mc_io_from_manifest(const tu_manifest* m, const char* dir, mc_case_files* files, mc_io* io) {
  memset(io, 0, sizeof(*io));
  io->num_inputs = m->num_inputs;
  io->num_outputs = m->num_outputs;
  for (size_t i = 0; i < m->num_inputs; ++i) {
    snprintf(files->inputs[i], sizeof(files->inputs[i]), "%s/input_%zu.npy", dir, i);
    io->input_names[i] = m->inputs[i];
    io->input_files[i] = files->inputs[i];
  }
  for (size_t i = 0; i < m->num_outputs; ++i) {
    snprintf(files->expected[i], sizeof(files->expected[i]), "%s/expected_%zu.npy", dir, i);
    io->output_names[i] = m->outputs[i];
    io->expected_files[i] = files->expected[i];
  }
}

int mc_compile(const char* compile_tool, const char* model, const char* out_ctx, const char* ep,
               int embed, const char* const* extra, const char* scratch_dir, char* msg,
               size_t size) {
  return mc_compile_summary(compile_tool, model, out_ctx, ep, embed, extra, scratch_dir, msg, size,
                            NULL, 0);
}

int mc_compile_summary(const char* compile_tool, const char* model, const char* out_ctx,
                       const char* ep, int embed, const char* const* extra, const char* scratch_dir,
                       char* msg, size_t size, char* summary, size_t summary_size) {
  const char* argv[64];
  size_t n = 0;
  argv[n++] = compile_tool;
  argv[n++] = model;
  argv[n++] = "-o";
  argv[n++] = out_ctx;
  argv[n++] = "--ep";
  argv[n++] = ep;
  argv[n++] = "--embed-mode";
  argv[n++] = embed ? "1" : "0";
  argv[n++] = "--force";
  argv[n++] = "--quiet";
  for (size_t i = 0; extra && extra[i] && n < 63; ++i) argv[n++] = extra[i];
  argv[n] = NULL;
  tu_proc p;
  if (tu_run(argv, scratch_dir, &p) != 0) {
    snprintf(msg, size, "%s", p.err ? p.err : "cannot start epctx-compile");
    tu_proc_free(&p);
    return -1;
  }
  int ok = p.exited && p.exit_code == 0;
  if (summary && summary_size) snprintf(summary, summary_size, "%s", p.out ? p.out : "");
  if (!ok)
    snprintf(msg, size, "epctx-compile %s --ep %s --embed-mode %d: %s %d; stderr: %s", model, ep,
             embed, p.exited ? "exit" : "signal", p.exited ? p.exit_code : p.signal, p.err);
  if (ok && !tu_file_exists(out_ctx)) {
    /* Even with nothing for the backend the tool writes a CPU-only model. */
    snprintf(msg, size, "epctx-compile exited 0 but wrote no %s", out_ctx);
    ok = 0;
  }
  tu_proc_free(&p);
  return ok ? 0 : -1;
}

static int fail_status(epctx_status* st, const char* what, const char* path, char* msg,
                       size_t size) {
  snprintf(msg, size, "%s %s: %s: %s", what, path, epctx_code_name(epctx_status_code(st)),
           epctx_status_message(st));
  epctx_status_release(st);
  return -1;
}

int mc_load_run_compare(epctx_env* env, const char* ctx_path, const mc_io* io,
                        epctx_session** session_out, double* create_ms, double* run_ms, char* msg,
                        size_t size) {
  int rc = -1;
  epctx_session* s = NULL;
  epctx_npy inputs[TU_MAX_IO], expected[TU_MAX_IO];
  epctx_tensor* in_tensors[TU_MAX_IO] = {0};
  epctx_tensor* outs[TU_MAX_IO] = {0};
  size_t loaded_in = 0, loaded_exp = 0;
  memset(inputs, 0, sizeof(inputs));
  memset(expected, 0, sizeof(expected));

  double t0 = mc_now_ms();
  epctx_status* st = epctx_session_create(env, ctx_path, NULL, &s);
  if (st) return fail_status(st, "session create", ctx_path, msg, size);
  if (create_ms) *create_ms = mc_now_ms() - t0;

  if (epctx_session_input_count(s) != io->num_inputs ||
      epctx_session_output_count(s) != io->num_outputs) {
    snprintf(msg, size, "%s: %zu inputs / %zu outputs, expected %zu / %zu", ctx_path,
             epctx_session_input_count(s), epctx_session_output_count(s), io->num_inputs,
             io->num_outputs);
    goto done;
  }
  for (size_t i = 0; i < io->num_outputs; ++i) {
    epctx_io_info info;
    st = epctx_session_output_info(s, i, &info);
    if (st) {
      fail_status(st, "output info", ctx_path, msg, size);
      goto done;
    }
    if (strcmp(info.name, io->output_names[i]) != 0) {
      snprintf(msg, size, "%s: output %zu is '%s', expected '%s'", ctx_path, i, info.name,
               io->output_names[i]);
      goto done;
    }
  }
  for (; loaded_in < io->num_inputs; ++loaded_in) {
    char err[512];
    epctx_npy* a = &inputs[loaded_in];
    if (epctx_npy_read(io->input_files[loaded_in], a, err, sizeof(err))) {
      snprintf(msg, size, "%s", err);
      goto done;
    }
    st = epctx_tensor_wrap(env, a->dtype, a->dims, a->rank, a->data, a->bytes,
                           &in_tensors[loaded_in]);
    if (st) {
      ++loaded_in;
      fail_status(st, "tensor wrap", io->input_files[loaded_in - 1], msg, size);
      goto done;
    }
  }
  for (; loaded_exp < io->num_outputs; ++loaded_exp) {
    char err[512];
    if (epctx_npy_read(io->expected_files[loaded_exp], &expected[loaded_exp], err, sizeof(err))) {
      snprintf(msg, size, "%s", err);
      goto done;
    }
  }
  t0 = mc_now_ms();
  st = epctx_session_run(s, io->input_names, (const epctx_tensor* const*)in_tensors, io->num_inputs,
                         NULL, outs, io->num_outputs);
  if (st) {
    fail_status(st, "run", ctx_path, msg, size);
    goto done;
  }
  if (run_ms) *run_ms = mc_now_ms() - t0;
  for (size_t i = 0; i < io->num_outputs; ++i) {
    char why[1024];
    if (tu_compare(outs[i], &expected[i], io->atol, io->rtol, why, sizeof(why))) {
      snprintf(msg, size, "%s: output '%s': %s", ctx_path, io->output_names[i], why);
      goto done;
    }
  }
  rc = 0;

done:
  for (size_t i = 0; i < io->num_outputs; ++i)
    if (outs[i]) epctx_tensor_release(outs[i]);
  for (size_t i = 0; i < loaded_in; ++i) {
    if (in_tensors[i]) epctx_tensor_release(in_tensors[i]);
    epctx_npy_free(&inputs[i]);
  }
  for (size_t i = 0; i < loaded_exp; ++i) epctx_npy_free(&expected[i]);
  if (rc == 0 && session_out) *session_out = s;
  else epctx_session_release(s);
  return rc;
}
