/* SPDX-License-Identifier: Apache-2.0 */
/* npy_compare A.npy B.npy: exit 0 when both are float32 arrays of the same
 * shape with |a-b| <= 1e-5 + 1e-4*|b| everywhere; prints how many elements are outside. */
#include <math.h>
#include <stdio.h>

#include "npy.h"

static int compare(const epctx_npy* pa, const epctx_npy* pb);

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  epctx_npy a, b;
  char err[256];
  if (epctx_npy_read(argv[1], &a, err, sizeof err) != 0) {
    fprintf(stderr, "npy_compare: %s\n", err);
    return 1;
  }
  if (epctx_npy_read(argv[2], &b, err, sizeof err) != 0) {
    fprintf(stderr, "npy_compare: %s\n", err);
    epctx_npy_free(&a);
    return 1;
  }
  int rc = compare(&a, &b);
  epctx_npy_free(&a);
  epctx_npy_free(&b);
  return rc;
}

static int compare(const epctx_npy* pa, const epctx_npy* pb) {
  const epctx_npy a = *pa, b = *pb;
  if (a.dtype != b.dtype || a.dtype != EPCTX_DTYPE_FLOAT || a.rank != b.rank ||
      a.bytes != b.bytes) {
    fprintf(stderr, "npy_compare: type or shape differs\n");
    return 1;
  }
  for (size_t i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i]) {
      fprintf(stderr, "npy_compare: dim %zu differs\n", i);
      return 1;
    }
  const float* x = (const float*)a.data;
  const float* y = (const float*)b.data;
  size_t n = a.bytes / 4, bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (!(fabsf(x[i] - y[i]) <= 1e-5f + 1e-4f * fabsf(y[i]))) ++bad;
  printf("npy_compare: %zu of %zu elements outside tolerance\n", bad, n);
  return bad ? 1 : 0;
}
