// SPDX-License-Identifier: Apache-2.0
// Expand and Tile: outputs that repeat the input, written as one strided
// copy whose input strides are 0 along repeated axes. Tile walks 2 * rank
// dimensions (repeat, then the input axis, per axis).
#include "kernels/broadcast.h"
#include "kernels/data_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Expand(KernelContext& ctx) {
  const TensorRef *x, *shape;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "shape", &shape));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "input", &es));
  int64_t want[kMaxRank];
  uint32_t wn = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *shape, "shape", want, kMaxRank, &wn));
  for (uint32_t i = 0; i < wn; ++i)
    if (want[i] < 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "shape[%u] is %lld, expected >= 0", i,
                      static_cast<long long>(want[i]));
  uint32_t r = 0;
  int64_t dims[kMaxRank];
  EPCTX_RETURN_IF_ERROR(BroadcastShape(ctx, x->rank, x->dims, wn, want, &r, dims));
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, r, dims, es, "output"));
  int64_t xs[kMaxRank], strides[kMaxRank];
  Strides(x->rank, x->dims, xs);
  const uint32_t lead = r - x->rank;
  for (uint32_t i = 0; i < r; ++i)
    strides[i] = i < lead || x->dims[i - lead] == 1 ? 0 : xs[i - lead];
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, dims, &y));
  if (y->elements()) StridedCopyBytes(es, r, dims, strides, x->data, y->data);
  return Status::Ok();
}

Status Tile(KernelContext& ctx) {
  const TensorRef *x, *rep;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "repeats", &rep));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "input", &es));
  int64_t reps[kMaxRank];
  uint32_t n = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *rep, "repeats", reps, kMaxRank, &n));
  const uint32_t r = x->rank;
  if (n != r)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "repeats has %u values, expected %u for input %s", n, r,
                    ShapeOf(*x).s);
  int64_t dims[kMaxRank], xs[kMaxRank];
  int64_t walk_dims[kMaxWalkRank], walk_strides[kMaxWalkRank];
  Strides(r, x->dims, xs);
  for (uint32_t i = 0; i < r; ++i) {
    if (reps[i] < 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "repeats[%u] is %lld, expected >= 0", i,
                      static_cast<long long>(reps[i]));
    if (!MulOk(x->dims[i], reps[i], &dims[i]))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output axis %u overflows", i);
    walk_dims[2 * i] = reps[i];
    walk_strides[2 * i] = 0;
    walk_dims[2 * i + 1] = x->dims[i];
    walk_strides[2 * i + 1] = xs[i];
  }
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, r, dims, es, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, dims, &y));
  if (y->elements()) StridedCopyBytes(es, 2 * r, walk_dims, walk_strides, x->data, y->data);
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
