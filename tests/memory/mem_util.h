/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the memory and threading tests: sessions on a generated
 * package (model_ctx.onnx + model_vnpu.bin, input [1, W] float), one run
 * with a deterministic input, and failing on any status. */
#ifndef EPCTX_TESTS_MEM_UTIL_H
#define EPCTX_TESTS_MEM_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epctx/epctx.h>

#define MEM_MAX_OUT 4096

static void mem_check(epctx_status* st, const char* what) {
  if (!st) return;
  fprintf(stderr, "%s: %s (%s)\n", what, epctx_status_message(st),
          epctx_code_name(epctx_status_code(st)));
  abort();
}

/* key/value pairs, NULL-terminated; group may be NULL. Returns NULL and the
 * status in *err when err is given and creation fails. */
static epctx_session* mem_create(epctx_env* env, const char* model, epctx_context_group* group,
                                 const char* const* kv, epctx_status** err) {
  epctx_session_options* o = NULL;
  mem_check(epctx_session_options_create(&o), "options");
  for (; kv && kv[0]; kv += 2) mem_check(epctx_session_options_set(o, kv[0], kv[1]), kv[0]);
  if (group) mem_check(epctx_session_options_set_context_group(o, group), "group");
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(env, model, o, &s);
  epctx_session_options_release(o);
  if (err) {
    *err = st;
    return s;
  }
  mem_check(st, model);
  return s;
}

/* Runs with input x[i] = f(i, seed); copies the output to out (returns its
 * float count). */
static size_t mem_run(epctx_env* env, epctx_session* s, int seed, float* out) {
  epctx_io_info info;
  mem_check(epctx_session_input_info(s, 0, &info), "input info");
  int64_t dims[EPCTX_MAX_RANK];
  size_t n = 1;
  for (size_t d = 0; d < info.rank; ++d) {
    dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
    n *= (size_t)dims[d];
  }
  float x[4096];
  if (n > 4096) abort();
  for (size_t i = 0; i < n; ++i)
    x[i] = (float)((int)((i * 31 + (size_t)seed * 17) % 101) - 50) / 25.0f;
  epctx_tensor* in = NULL;
  mem_check(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, info.rank, x, n * 4, &in), "wrap");
  epctx_tensor* y = NULL;
  const char* names[1] = {info.name};
  mem_check(epctx_session_run(s, names, (const epctx_tensor* const*)&in, 1, NULL, &y, 1), "run");
  size_t bytes = epctx_tensor_bytes(y);
  if (bytes > MEM_MAX_OUT * 4) abort();
  memcpy(out, epctx_tensor_data(y), bytes);
  epctx_tensor_release(y);
  epctx_tensor_release(in);
  return bytes / 4;
}

#endif
