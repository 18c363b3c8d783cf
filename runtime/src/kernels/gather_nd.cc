// SPDX-License-Identifier: Apache-2.0
// GatherElements and GatherND: gathers driven by index tensors (int32 or
// int64, negative values count from the end). Every index is checked
// against its axis before it is used; element movement is by size, so any
// fixed-size dtype works.
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status GatherElements(KernelContext& ctx) {
  const TensorRef *x, *ind;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  EPCTX_RETURN_IF_ERROR(IndexInput(ctx, 1, "indices", &ind));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "data", &es));
  AxisIndexing ai;
  EPCTX_RETURN_IF_ERROR(CheckAxisIndexing(ctx, *x, *ind, &ai));
  const uint32_t r = x->rank;
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, ind->dims, &y));
  const uint64_t n = ind->elements();
  if (n == 0) return Status::Ok();
  int64_t idx[kMaxRank] = {};
  const int64_t dim = ai.dim, as = ai.axis_stride;
  const int64_t* walk = ai.walk;
  DispatchSize(es, [&](auto tag) {
    using U = decltype(tag);
    const U* src = static_cast<const U*>(x->data);
    U* out = static_cast<U*>(y->data);
    int64_t off = 0;
    for (uint64_t i = 0; i < n; ++i) {
      int64_t v = IndexAt(*ind, i);
      if (v < 0) v += dim;
      out[i] = src[off + v * as];
      NextIndex(r, ind->dims, idx, walk, &off);
    }
  });
  return Status::Ok();
}

Status GatherND(KernelContext& ctx) {
  const TensorRef *x, *ind;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  EPCTX_RETURN_IF_ERROR(IndexInput(ctx, 1, "indices", &ind));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "data", &es));
  const uint32_t r = x->rank, q = ind->rank;
  if (r == 0 || q == 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "data %s and indices %s must both have rank >= 1",
                    ShapeOf(*x).s, ShapeOf(*ind).s);
  const int64_t bd = ctx.opset() >= 12 ? ctx.AttrInt("batch_dims", 0) : 0;
  if (bd < 0 || bd >= static_cast<int64_t>(q) || bd >= static_cast<int64_t>(r))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "batch_dims %lld is out of range: expected [0, %u) for data rank %u and "
                    "indices rank %u",
                    static_cast<long long>(bd), r < q ? r : q, r, q);
  const uint32_t b = static_cast<uint32_t>(bd);
  const int64_t k = ind->dims[q - 1];
  if (k < 1 || k > static_cast<int64_t>(r - b))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "indices %s: the last dimension must be in [1, %u] (data rank %u minus "
                    "batch_dims %u)",
                    ShapeOf(*ind).s, r - b, r, b);
  for (uint32_t d = 0; d < b; ++d)
    if (ind->dims[d] != x->dims[d])
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "indices %s and data %s differ on batch dimension %u",
                      ShapeOf(*ind).s, ShapeOf(*x).s, d);
  const uint32_t kk = static_cast<uint32_t>(k);
  const uint32_t out_rank = q - 1 + r - b - kk;
  if (out_rank > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "output rank %u exceeds %d", out_rank, kMaxRank);
  int64_t dims[kMaxRank];
  uint32_t o = 0;
  for (uint32_t d = 0; d + 1 < q; ++d) dims[o++] = ind->dims[d];
  for (uint32_t d = b + kk; d < r; ++d) dims[o++] = x->dims[d];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, out_rank, dims, es, "output"));
  int64_t batches = 1, lookups = 1, slice = 1, batch_stride = 1;
  Product(x->dims, 0, b, &batches);
  Product(ind->dims, b, q - 1, &lookups);
  Product(x->dims, b + kk, r, &slice);
  Product(x->dims, b, r, &batch_stride);
  int64_t xs[kMaxRank];
  Strides(r, x->dims, xs);
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, out_rank, dims, &y));
  const uint8_t* src = static_cast<const uint8_t*>(x->data);
  uint8_t* out = static_cast<uint8_t*>(y->data);
  const size_t slice_bytes = static_cast<size_t>(slice) * es;
  uint64_t t = 0;  // position in indices
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t li = 0; li < lookups; ++li) {
      int64_t off = bi * batch_stride;
      for (uint32_t j = 0; j < kk; ++j, ++t) {
        const int64_t dim = x->dims[b + j];
        int64_t v = IndexAt(*ind, t);
        if (v < -dim || v >= dim)
          return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                          "indices[%llu] = %lld is out of range: expected [%lld, %lld] for "
                          "axis %u of data %s",
                          static_cast<unsigned long long>(t), static_cast<long long>(v),
                          static_cast<long long>(-dim), static_cast<long long>(dim - 1), b + j,
                          ShapeOf(*x).s);
        if (v < 0) v += dim;
        off += v * xs[b + j];
      }
      if (slice_bytes) memcpy(out, src + off * static_cast<int64_t>(es), slice_bytes);
      out += slice_bytes;
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
