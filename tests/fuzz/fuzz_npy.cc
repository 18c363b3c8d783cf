// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the .npy reader: every input is refused with a code
// and a message, or yields dims whose product times the item size is
// exactly the data size.
#include <cstdlib>
#include <cstring>

#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  epctx_npy a;
  char err[256];
  err[0] = '\0';
  int rc = epctx_npy_parse(data, size, "fuzz.npy", &a, err, sizeof err);
  if (rc != 0) {
    if (err[0] == '\0' || strlen(err) >= sizeof err) abort();
    return 0;
  }
  size_t n = 1;
  for (size_t i = 0; i < a.rank; ++i) {
    if (a.dims[i] < 0) abort();
    n *= static_cast<size_t>(a.dims[i]);
  }
  if (a.rank > EPCTX_MAX_RANK || n * epctx_npy_item_size(a.dtype) != a.bytes) abort();
  if (a.bytes && !a.data) abort();
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < a.bytes; ++i) sink ^= static_cast<uint8_t*>(a.data)[i];
  (void)sink;
  epctx_npy_free(&a);
  return 0;
}
