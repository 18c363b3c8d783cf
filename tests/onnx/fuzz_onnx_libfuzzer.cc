// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the ONNX reader (built only with clang):
//   fuzz_onnx_libfuzzer <corpus dir with the generated *.onnx>
#include <cstdlib>

#include "onnx_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t sink = 0;
  if (!epctx_test::ParseAndTouch(data, size, &sink)) abort();
  return 0;
}
