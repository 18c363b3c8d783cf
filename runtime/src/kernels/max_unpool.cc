// SPDX-License-Identifier: Apache-2.0
// MaxUnpool (opsets 9..21), as ONNX Runtime does it: Y starts at zero and
// every X[i] lands at Y's flat offset I[i] (offsets over the whole tensor,
// as MaxPool's Indices output numbers them). Y has the shape MaxPool's
// geometry inverts to, (in - 1) * stride - pads + kernel per spatial axis,
// or the output_shape input when given (at least as many elements).
//
// Deviation from the ONNX reference (matches ORT and PyTorch): with an
// output_shape larger than the inferred one, offsets stay offsets into the
// given shape; the reference re-bases them onto the inferred shape.
#include <cstring>

#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/window.h"

namespace epctx {
namespace kern {

Status MaxUnpool(KernelContext& ctx) {
  const TensorRef *x, *ind;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "I", &ind));
  const size_t es = dtype_size(x->dtype);
  if (!InMask(x->dtype, kFloats)) return UnsupportedDtype(ctx, "X", x->dtype);
  if (ind->dtype != EPCTX_DTYPE_INT64) return UnsupportedDtype(ctx, "I", ind->dtype);
  if (x->rank < 3 || x->rank > 2 + kMaxSpatial)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X must have rank 3, 4 or 5, found shape %s",
                    ShapeOf(*x).s);
  bool same = ind->rank == x->rank;
  for (uint32_t i = 0; same && i < x->rank; ++i) same = ind->dims[i] == x->dims[i];
  if (!same)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "I has shape %s, expected X's shape %s",
                    ShapeOf(*ind).s, ShapeOf(*x).s);
  const uint32_t spatial = x->rank - 2;
  int64_t k[kMaxSpatial] = {0, 0, 0}, s[kMaxSpatial] = {1, 1, 1};
  int64_t p[2 * kMaxSpatial] = {0, 0, 0, 0, 0, 0};
  const int64_t* kv = nullptr;
  uint32_t kn = 0;
  if (!ctx.AttrInts("kernel_shape", &kv, &kn))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute kernel_shape is missing");
  EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "kernel_shape", spatial, 1, k));
  EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "strides", spatial, 1, s));
  EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "pads", 2 * spatial, 0, p));
  int64_t ydims[2 + kMaxSpatial] = {x->dims[0], x->dims[1]};
  for (uint32_t i = 0; i < spatial; ++i) {
    const int64_t in = x->dims[2 + i];
    if (in > kMaxWindowValue)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X %s is too large", ShapeOf(*x).s);
    ydims[2 + i] = (in - 1) * s[i] - (p[i] + p[spatial + i]) + k[i];
    if (ydims[2 + i] <= 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "the output size on spatial axis %u is %lld; check kernel_shape, "
                      "strides and pads",
                      i, static_cast<long long>(ydims[2 + i]));
  }
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, x->rank, ydims, es, "output Y"));
  if (const TensorRef* os = ctx.input(2)) {
    int64_t given[kMaxRank];
    uint32_t n = 0;
    EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *os, "output_shape", given, kMaxRank, &n));
    if (n != x->rank)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output_shape has %u values, expected rank %u", n,
                      x->rank);
    for (uint32_t i = 0; i < n; ++i)
      if (given[i] < 0)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output_shape[%u] is %lld", i,
                        static_cast<long long>(given[i]));
    EPCTX_RETURN_IF_ERROR(CheckShape(ctx, n, given, es, "output_shape"));
    int64_t inferred = 1, want = 1;
    Product(ydims, 0, x->rank, &inferred);
    Product(given, 0, n, &want);
    if (want < inferred)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "output_shape %s has fewer elements than the inferred shape %s",
                      ShapeOf(n, given).s, ShapeOf(x->rank, ydims).s);
    for (uint32_t i = 0; i < n; ++i) ydims[i] = given[i];
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, ydims, &y));
  const uint64_t total = y->elements();
  memset(y->data, 0, total * es);
  const int64_t* I = static_cast<const int64_t*>(ind->data);
  const uint8_t* X = static_cast<const uint8_t*>(x->data);
  uint8_t* Y = static_cast<uint8_t*>(y->data);
  const uint64_t n = x->elements();
  for (uint64_t i = 0; i < n; ++i) {
    if (I[i] < 0 || static_cast<uint64_t>(I[i]) >= total)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "I[%llu] is %lld, expected an offset in [0, %llu)",
                      static_cast<unsigned long long>(i), static_cast<long long>(I[i]),
                      static_cast<unsigned long long>(total));
    memcpy(Y + static_cast<uint64_t>(I[i]) * es, X + i * es, es);
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
