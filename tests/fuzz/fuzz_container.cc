// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the context-binary container reader: every input
// either parses into views inside it (each graph found again by name) or
// fails with INVALID_CONTAINER / NOT_IMPLEMENTED and a message.
#include <cstdlib>

#include "container/container.h"
#include "core/memory.h"

namespace {
bool Inside(const uint8_t* p, size_t n, const uint8_t* base, size_t size) {
  return n == 0 || (p >= base && n <= size && static_cast<size_t>(p - base) <= size - n);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  epctx::Arena arena(epctx::Allocator::Default());
  epctx::ContainerView c;
  epctx::Status st = epctx::ParseContainer(epctx::Bytes{data, size}, "fuzz.bin", arena, &c);
  if (!st.ok()) {
    if ((st.code() != EPCTX_INVALID_CONTAINER && st.code() != EPCTX_NOT_IMPLEMENTED) ||
        st.message()[0] == '\0')
      abort();
    return 0;
  }
  if (!Inside(c.weights.data, c.weights.size, data, size)) abort();
  for (uint32_t i = 0; i < c.num_graphs; ++i) {
    const epctx::ContainerGraph& g = c.graphs[i];
    if (!Inside(g.payload.data, g.payload.size, data, size)) abort();
    if (!Inside(reinterpret_cast<const uint8_t*>(g.name), g.name_size + 1, data, size)) abort();
    if (c.Find(epctx::StrView{g.name, g.name_size}) != int64_t(i)) abort();
  }
  return 0;
}
