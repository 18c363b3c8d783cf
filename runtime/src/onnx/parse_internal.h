/* SPDX-License-Identifier: Apache-2.0 */
// Shared between the ONNX message parsers (model.cc, tensor.cc); not an
// interface for other code.
#ifndef EPCTX_ONNX_PARSE_INTERNAL_H
#define EPCTX_ONNX_PARSE_INTERNAL_H

#include <cstdint>
#include <new>

#include "core/memory.h"
#include "core/status.h"
#include "onnx/model.h"
#include "onnx/wire.h"

namespace epctx {
namespace onnx {
namespace detail {

// Allocates n default-constructed T in the arena (*out = nullptr for n = 0).
// n has already been bounded by the bytes of the message it was counted in;
// the uint32 limit keeps it within the views' count fields.
template <typename T>
Status AllocViews(Arena& arena, uint64_t n, const char* what, T** out) {
  *out = nullptr;
  if (n == 0) return Status::Ok();
  if (n > 0xffffffffu)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "too many %s: %llu", what,
                         static_cast<unsigned long long>(n));
  if (n > SIZE_MAX / sizeof(T))
    return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for %llu %s",
                         static_cast<unsigned long long>(n), what);
  void* mem = arena.Alloc(static_cast<size_t>(n) * sizeof(T), alignof(T));
  if (!mem)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for %llu %s",
                         static_cast<unsigned long long>(n), what);
  T* arr = static_cast<T*>(mem);
  for (uint64_t i = 0; i < n; ++i) new (&arr[i]) T();
  *out = arr;
  return Status::Ok();
}

// TensorProto's field names, for readers of its messages.
extern const wire::MsgInfo kTensorInfo;

// Parses the TensorProto `msg`, which lies inside `file` (for offsets).
Status ParseTensorAt(const uint8_t* file, Bytes msg, Arena& arena, TensorView* out);

}  // namespace detail
}  // namespace onnx
}  // namespace epctx

#endif
