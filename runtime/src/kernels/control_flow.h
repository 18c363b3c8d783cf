/* SPDX-License-Identifier: Apache-2.0 */
// Helpers shared by the control-flow kernels (control_flow.cc: If, Loop;
// scan.cc: Scan): state carried from one subgraph run to the next, and
// copying a subgraph's output into a node output.
//
// A subgraph's outputs are valid only while the sink that receives them runs
// (KernelHost::run_subgraph), so whatever outlives that call is copied into
// the kernel's scratch. Scratch is freed only when the step ends, so a
// buffer that must grow is replaced by one at least twice its size: the
// garbage stays below twice the largest value held.
#ifndef EPCTX_KERNELS_CONTROL_FLOW_H
#define EPCTX_KERNELS_CONTROL_FLOW_H

#include <cstdint>
#include <cstring>

#include "kernels/kernel.h"

namespace epctx {
namespace kern {

// A tensor value one run hands to the next (a loop-carried value, a scan
// state). It starts as a view of the node's input; Set copies into one of
// two buffers, never the one the current value lies in, because the new
// value may be a view of the old one (an Identity in the body).
struct Carried {
  TensorRef t;
  uint8_t* buf[2] = {nullptr, nullptr};
  uint64_t cap[2] = {0, 0};
  int cur = -1;  // buffer t lies in; -1: a view of an input

  Status Set(KernelContext& ctx, const TensorRef& v, const char* what) {
    int next = cur == 0 ? 1 : 0;
    if (v.bytes > cap[next]) {
      uint64_t want = cap[next] > UINT64_MAX / 4 ? v.bytes : 2 * cap[next];
      if (want < v.bytes) want = v.bytes;
      void* p = ctx.Scratch(want, 64);
      if (!p)
        return ctx.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for %llu bytes of %s",
                        static_cast<unsigned long long>(v.bytes), what);
      buf[next] = static_cast<uint8_t*>(p);
      cap[next] = want;
    }
    if (v.bytes) memcpy(buf[next], v.data, v.bytes);
    t = v;
    t.data = buf[next];
    cur = next;
    return Status::Ok();
  }
};

// Copies `v` into a new node output `index`.
inline Status CopyToOutput(KernelContext& ctx, uint32_t index, const TensorRef& v) {
  TensorRef* out = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(index, v.dtype, v.rank, v.dims, &out));
  if (v.bytes != out->bytes)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output %u: a value of %llu bytes for %llu", index,
                    static_cast<unsigned long long>(v.bytes),
                    static_cast<unsigned long long>(out->bytes));
  if (v.bytes) memcpy(out->data, v.data, v.bytes);
  return Status::Ok();
}

inline bool SameShape(const TensorRef& a, const TensorRef& b) {
  if (a.dtype != b.dtype || a.rank != b.rank) return false;
  for (uint32_t i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  return true;
}

// Allocates node output `index` for a scan output no iteration produced:
// `lead` dims (the batch and/or the zero iteration count) inserted at `axis`
// of the subgraph output's declared shape, unknown dims as 0 (as ORT does);
// the declared element type. INVALID_GRAPH when the type is not declared.
Status AllocEmptyScanOutput(KernelContext& ctx, uint32_t index, const onnx::ValueInfoView& decl,
                            const int64_t* lead, uint32_t num_lead, uint32_t axis);

}  // namespace kern
}  // namespace epctx

#endif
