// SPDX-License-Identifier: Apache-2.0
// DepthToSpace (DCR and CRD modes) and SpaceToDepth on NCHW input: each is
// a reshape to 6-D, a transpose, and a reshape back, done as one strided
// copy over the transposed 6-D view.
#include "kernels/data_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

Status ReadBlock(KernelContext& ctx, const TensorRef** x, size_t* es, int64_t* b) {
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", x));
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, **x, "input", es));
  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, **x, "input", 4));
  if (!ctx.node().attr("blocksize"))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute blocksize is missing");
  *b = ctx.AttrInt("blocksize", 0);
  if (*b < 1)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute blocksize is %lld, expected >= 1",
                    static_cast<long long>(*b));
  return Status::Ok();
}

Status Copy6(KernelContext& ctx, const TensorRef& x, size_t es, const int64_t* out_dims,
             const int64_t* walk_dims, const int64_t* walk_strides) {
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, 4, out_dims, es, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x.dtype, 4, out_dims, &y));
  if (y->elements()) StridedCopyBytes(es, 6, walk_dims, walk_strides, x.data, y->data);
  return Status::Ok();
}

}  // namespace

Status DepthToSpace(KernelContext& ctx) {
  const TensorRef* x;
  size_t es;
  int64_t b;
  EPCTX_RETURN_IF_ERROR(ReadBlock(ctx, &x, &es, &b));
  const StrView mode = ctx.AttrString("mode", "DCR");
  const bool crd = mode.eq("CRD");
  if (!crd && !mode.eq("DCR"))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute mode is '%.*s', expected DCR or CRD",
                    mode.len(), mode.data);
  const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
  int64_t bb;
  if (!MulOk(b, b, &bb) || c % bb != 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "channels of input %s must be a multiple of blocksize^2 (blocksize %lld)",
                    ShapeOf(*x).s, static_cast<long long>(b));
  const int64_t cc = c / bb;
  int64_t out[4] = {n, cc, 0, 0};
  if (!MulOk(h, b, &out[2]) || !MulOk(w, b, &out[3]))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output of input %s with blocksize %lld overflows",
                    ShapeOf(*x).s, static_cast<long long>(b));
  // Input strides of the 6-D view: DCR [N, b1, b2, C', H, W], CRD [N, C', b1, b2, H, W].
  const int64_t hw = h * w;
  const int64_t s_c = crd ? bb * hw : hw;
  const int64_t s_b1 = crd ? b * hw : b * cc * hw;
  const int64_t s_b2 = crd ? hw : cc * hw;
  // Output order [N, C', H, b1, W, b2].
  const int64_t dims[6] = {n, cc, h, b, w, b};
  const int64_t strides[6] = {c * hw, s_c, w, s_b1, 1, s_b2};
  return Copy6(ctx, *x, es, out, dims, strides);
}

Status SpaceToDepth(KernelContext& ctx) {
  const TensorRef* x;
  size_t es;
  int64_t b;
  EPCTX_RETURN_IF_ERROR(ReadBlock(ctx, &x, &es, &b));
  const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
  if (h % b != 0 || w % b != 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "height and width of input %s must be multiples of blocksize %lld",
                    ShapeOf(*x).s, static_cast<long long>(b));
  const int64_t hh = h / b, ww = w / b;
  int64_t out[4] = {n, 0, hh, ww};
  int64_t bb;
  if (!MulOk(b, b, &bb) || !MulOk(c, bb, &out[1]))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output channels of input %s overflow", ShapeOf(*x).s);
  // Input view [N, C, H', b1, W', b2], output order [N, b1, b2, C, H', W'].
  const int64_t dims[6] = {n, b, b, c, hh, ww};
  const int64_t strides[6] = {c * h * w, w, 1, h * w, b * w, b};
  return Copy6(ctx, *x, es, out, dims, strides);
}

}  // namespace kern
}  // namespace epctx
