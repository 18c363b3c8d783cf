/* SPDX-License-Identifier: Apache-2.0 */
/* An application built against an installed epctx SDK, as a user writes one:
 * only <epctx/epctx.h> and the installed library. Loads a compiled model,
 * feeds its first input from a float32 .npy file, runs it and compares its
 * first output with an expected float32 .npy file.
 *   usage: epctx_example model_ctx.onnx input.npy expected.npy
 * Prints "epctx_example: PASS ..." and exits 0 when every element is within
 * 1e-4 (relative) of the expected value. */
#include <epctx/epctx.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  float* data;
  size_t count;
  int64_t dims[EPCTX_MAX_RANK];
  size_t rank;
} npy_f32;

/* Just enough of the .npy format for little-endian float32 C-order arrays. */
static int read_npy_f32(const char* path, npy_f32* out) {
  FILE* f = fopen(path, "rb");
  if (!f) return fprintf(stderr, "epctx_example: cannot open %s\n", path), 0;
  unsigned char head[12];
  size_t got = fread(head, 1, sizeof head, f);
  size_t header_len = 0, skip = 0;
  if (got >= 10 && memcmp(head, "\x93NUMPY", 6) == 0) {
    if (head[6] == 1) header_len = head[8] | (size_t)head[9] << 8, skip = 10;
    else if (got == 12)
      header_len = head[8] | (size_t)head[9] << 8 | (size_t)head[10] << 16, skip = 12;
  }
  char header[4096];
  if (!skip || header_len >= sizeof header || fseek(f, (long)skip, SEEK_SET) != 0 ||
      fread(header, 1, header_len, f) != header_len) {
    fclose(f);
    return fprintf(stderr, "epctx_example: %s: not a .npy file\n", path), 0;
  }
  header[header_len] = '\0';
  const char* shape = strstr(header, "'shape': (");
  if (!strstr(header, "'descr': '<f4'") || strstr(header, "'fortran_order': True") || !shape) {
    fclose(f);
    return fprintf(stderr, "epctx_example: %s: expected a C-order float32 array\n", path), 0;
  }
  out->rank = 0;
  out->count = 1;
  for (const char* p = shape + 10; *p && *p != ')';) {
    char* end;
    long long d = strtoll(p, &end, 10);
    if (end == p) {
      ++p;
      continue;
    }
    if (out->rank == EPCTX_MAX_RANK || d < 0) {
      fclose(f);
      return 0;
    }
    out->dims[out->rank++] = d;
    out->count *= (size_t)d;
    p = end;
  }
  out->data = malloc(out->count * sizeof(float) + 1);
  int ok = out->data && fread(out->data, sizeof(float), out->count, f) == out->count;
  fclose(f);
  if (!ok) fprintf(stderr, "epctx_example: %s: short data\n", path);
  return ok;
}

static int failed(epctx_status* s, const char* what) {
  if (!s) return 0;
  fprintf(stderr, "epctx_example: %s: %s\n", what, epctx_status_message(s));
  epctx_status_release(s);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: epctx_example model_ctx.onnx input.npy expected.npy\n");
    return 2;
  }
  npy_f32 input, expected;
  if (!read_npy_f32(argv[2], &input) || !read_npy_f32(argv[3], &expected)) return 1;

  epctx_env* env = NULL;
  epctx_session* session = NULL;
  epctx_tensor* in = NULL;
  epctx_tensor* out = NULL;
  epctx_io_info in_info;
  int rc = 1;
  if (failed(epctx_env_create(NULL, 1, &env), "env") ||
      failed(epctx_env_register_builtin_drivers(env), "drivers") ||
      failed(epctx_session_create(env, argv[1], NULL, &session), argv[1]) ||
      failed(epctx_session_input_info(session, 0, &in_info), "input 0") ||
      failed(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, input.dims, input.rank, input.data,
                               input.count * sizeof(float), &in),
             "input tensor") ||
      failed(epctx_session_run(session, &in_info.name, (const epctx_tensor* const*)&in, 1, NULL,
                               &out, 1),
             "run"))
    goto done;
  if (epctx_tensor_dtype(out) != EPCTX_DTYPE_FLOAT ||
      epctx_tensor_bytes(out) != expected.count * sizeof(float)) {
    fprintf(stderr, "epctx_example: output 0 has %zu bytes, expected %zu float32 values\n",
            epctx_tensor_bytes(out), expected.count);
    goto done;
  }
  const float* got = (const float*)epctx_tensor_data(out);
  double worst = 0;
  for (size_t i = 0; i < expected.count; ++i) {
    double diff = fabs((double)got[i] - expected.data[i]) / (1.0 + fabs(expected.data[i]));
    if (!(diff <= worst)) worst = diff; /* NaN counts as the worst */
  }
  rc = worst <= 1e-4 ? 0 : 1;
  printf("epctx_example: %s %zu values, %zu driver and %zu CPU nodes, max relative diff %.3g\n",
         rc == 0 ? "PASS" : "FAIL", expected.count, epctx_session_driver_node_count(session),
         epctx_session_cpu_node_count(session), worst);
done:
  epctx_tensor_release(out);
  epctx_tensor_release(in);
  epctx_session_release(session);
  epctx_env_release(env);
  free(input.data);
  free(expected.data);
  return rc;
}
