// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for vnpu command streams, seeded with the context
// binaries (containers) the host compiler writes: an input the container
// reader accepts goes to the vnpu driver as the runtime hands it over
// (weights segment + graph payloads); every graph is bound (validated) and,
// when the driver accepts it, executed on inputs of the shapes it declares.
// Mutations mostly land in the opaque payloads and weights, i.e. in the
// command streams. A refusal needs a message; an accepted stream must run
// without touching memory outside its tensors, scratch and weights (each an
// exact-size heap block here).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <epctx/epctx.h>
#include <epctx/hal.h>
#include <epctx/vnpu.h>

#include "container/container.h"
#include "core/memory.h"

namespace {

void* Alloc(void*, size_t size, size_t align) {
  void* p = nullptr;
  if (align < sizeof(void*)) align = sizeof(void*);
  return posix_memalign(&p, align, size ? size : 1) == 0 ? p : nullptr;
}
void Free(void*, void* p) { free(p); }

constexpr uint64_t kMaxTensorBytes = 1u << 20;
constexpr uint64_t kMaxScratchBytes = 16u << 20;

bool Bytes(const epctx_hal_tensor_desc& d, uint64_t* out) {
  size_t es = epctx_dtype_size(static_cast<epctx_dtype>(d.dtype));
  if (!es || d.rank > 8) return false;
  uint64_t n = es;
  for (uint32_t i = 0; i < d.rank; ++i) {
    if (d.dims[i] < 0 || __builtin_mul_overflow(n, uint64_t(d.dims[i]), &n)) return false;
  }
  *out = n;
  return n <= kMaxTensorBytes;
}

void RunGraph(const epctx_hal_driver* drv, epctx_hal_context* ctx, const char* name) {
  char msg[512];
  epctx_hal_graph* graph = nullptr;
  epctx_hal_graph_info info;
  memset(&info, 0, sizeof info);
  msg[0] = '\0';
  int rc = drv->get_graph(drv, ctx, name, &graph, &info, msg, sizeof msg);
  if (rc != 0) {
    if (msg[0] == '\0') {
      fprintf(stderr, "fuzz_vnpu: get_graph '%s' failed with %d and no message\n", name, rc);
      abort();
    }
    return;
  }
  std::vector<std::vector<uint8_t>> in(info.num_inputs), out(info.num_outputs);
  std::vector<epctx_hal_tensor> tin(info.num_inputs), tout(info.num_outputs);
  bool runnable = info.scratch_bytes <= kMaxScratchBytes;
  for (uint32_t i = 0; runnable && i < info.num_inputs; ++i) {
    uint64_t n = 0;
    runnable = Bytes(info.inputs[i], &n);
    in[i].assign(n, 0x3c);  // 0x3c3c3c3c: 0.0115f, finite
    tin[i] = {info.inputs[i].dtype, info.inputs[i].rank, info.inputs[i].dims, in[i].data(), n};
  }
  for (uint32_t i = 0; runnable && i < info.num_outputs; ++i) {
    uint64_t n = 0;
    runnable = Bytes(info.outputs[i], &n);
    out[i].assign(n, 0);
    tout[i] = {info.outputs[i].dtype, info.outputs[i].rank, info.outputs[i].dims, out[i].data(), n};
  }
  if (!runnable) return;
  uint32_t align = info.scratch_alignment ? info.scratch_alignment : 64;
  void* scratch = info.scratch_bytes ? Alloc(nullptr, info.scratch_bytes, align) : nullptr;
  msg[0] = '\0';
  rc = drv->execute(drv, graph, tin.data(), info.num_inputs, tout.data(), info.num_outputs, scratch,
                    info.scratch_bytes, msg, sizeof msg);
  if (rc != 0 && msg[0] == '\0') abort();
  free(scratch);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  epctx::Arena arena(epctx::Allocator::Default());
  epctx::ContainerView c;
  if (!epctx::ParseContainer(epctx::Bytes{data, size}, "fuzz.bin", arena, &c).ok()) return 0;
  // Names NUL-terminated as the runtime passes them (they are, in the blob).
  std::vector<epctx_hal_graph_blob> graphs;
  for (uint32_t i = 0; i < c.num_graphs; ++i)
    graphs.push_back({c.graphs[i].name, c.graphs[i].payload.data, c.graphs[i].payload.size});
  const epctx_hal_driver* drv = epctx_vnpu_driver();
  epctx_hal_host host = {sizeof(epctx_hal_host), nullptr, Alloc, Free, nullptr};
  epctx_hal_blob blob = {sizeof(epctx_hal_blob),
                         data,
                         size,
                         1,
                         c.weights.size ? c.weights.data : nullptr,
                         c.weights.size,
                         graphs.data(),
                         c.num_graphs};
  char msg[512];
  msg[0] = '\0';
  epctx_hal_context* ctx = nullptr;
  if (drv->load_context(drv, &blob, &host, &ctx, msg, sizeof msg) != 0) {
    if (msg[0] == '\0') abort();
    return 0;
  }
  for (uint32_t i = 0; i < c.num_graphs && i < 16; ++i) RunGraph(drv, ctx, c.graphs[i].name);
  drv->release_context(drv, ctx);
  return 0;
}
