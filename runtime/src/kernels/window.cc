// SPDX-License-Identifier: Apache-2.0
#include "kernels/window.h"

#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {

Status ReadWindowInts(KernelContext& ctx, const char* name, uint32_t n, int64_t min_value,
                      int64_t* out) {
  const int64_t* v = nullptr;
  uint32_t count = 0;
  if (!ctx.AttrInts(name, &v, &count)) return Status::Ok();
  if (count != n)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute %s has %u values, expected %u", name, count, n);
  for (uint32_t i = 0; i < n; ++i) {
    if (v[i] < min_value || v[i] > kMaxWindowValue)
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "attribute %s[%u] is %lld, expected a value in [%lld, %lld]", name, i,
                      static_cast<long long>(v[i]), static_cast<long long>(min_value),
                      static_cast<long long>(kMaxWindowValue));
    out[i] = v[i];
  }
  return Status::Ok();
}

Status ReadWindowAttrs(KernelContext& ctx, uint32_t spatial, const int64_t* in,
                       const int64_t* kernel, Window* w, AutoPad* auto_pad) {
  if (spatial < 1 || spatial > kMaxSpatial)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED,
                    "%u spatial dimensions; only 1-D, 2-D and 3-D are supported", spatial);
  int64_t k[kMaxSpatial] = {0, 0, 0}, s[kMaxSpatial] = {1, 1, 1}, d[kMaxSpatial] = {1, 1, 1};
  int64_t p[2 * kMaxSpatial] = {0, 0, 0, 0, 0, 0};
  if (kernel) {
    for (uint32_t i = 0; i < spatial; ++i) k[i] = kernel[i];
    int64_t attr_k[kMaxSpatial] = {k[0], k[1], k[2]};
    EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "kernel_shape", spatial, 1, attr_k));
    for (uint32_t i = 0; i < spatial; ++i)
      if (attr_k[i] != k[i])
        return ctx.Fail(EPCTX_INVALID_GRAPH, "kernel_shape[%u] is %lld but the weights have %lld",
                        i, static_cast<long long>(attr_k[i]), static_cast<long long>(k[i]));
  } else {
    const int64_t* v = nullptr;
    uint32_t count = 0;
    if (!ctx.AttrInts("kernel_shape", &v, &count))
      return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute kernel_shape is missing");
    EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "kernel_shape", spatial, 1, k));
  }
  for (uint32_t i = 0; i < spatial; ++i) {
    if (k[i] < 1 || k[i] > kMaxWindowValue)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "kernel size %lld on axis %u is invalid",
                      static_cast<long long>(k[i]), i);
    if (in[i] < 0 || in[i] > kMaxWindowValue)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input size %lld on spatial axis %u is invalid",
                      static_cast<long long>(in[i]), i);
  }
  int64_t in_total = 0;
  if (!Product(in, 0, spatial, &in_total))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "the spatial input sizes %s are too large",
                    ShapeOf(spatial, in).s);
  EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "strides", spatial, 1, s));
  EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "dilations", spatial, 1, d));
  EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "pads", 2 * spatial, 0, p));

  StrView mode = ctx.AttrString("auto_pad", "NOTSET");
  if (mode.eq("NOTSET")) {
    *auto_pad = AutoPad::kNotSet;
  } else if (mode.eq("SAME_UPPER")) {
    *auto_pad = AutoPad::kSameUpper;
  } else if (mode.eq("SAME_LOWER")) {
    *auto_pad = AutoPad::kSameLower;
  } else if (mode.eq("VALID")) {
    *auto_pad = AutoPad::kValid;
  } else {
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "auto_pad is '%.*s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                    mode.len(), mode.data);
  }

  const uint32_t base = WindowBase(spatial);
  for (uint32_t a = 0; a < kMaxSpatial; ++a) {
    w->in[a] = 1;
    w->kernel[a] = 1;
    w->stride[a] = 1;
    w->dilation[a] = 1;
    w->pad_begin[a] = 0;
    w->pad_end[a] = 0;
    w->out[a] = 1;
  }
  for (uint32_t i = 0; i < spatial; ++i) {
    const uint32_t a = base + i;
    w->in[a] = in[i];
    w->kernel[a] = k[i];
    w->stride[a] = s[i];
    w->dilation[a] = d[i];
    w->pad_begin[a] = p[i];
    w->pad_end[a] = p[spatial + i];
  }
  return Status::Ok();
}

Status ComputeWindow(KernelContext& ctx, uint32_t spatial, const int64_t* in, const int64_t* kernel,
                     bool ceil_mode, Window* w) {
  AutoPad auto_pad;
  EPCTX_RETURN_IF_ERROR(ReadWindowAttrs(ctx, spatial, in, kernel, w, &auto_pad));
  const uint32_t base = WindowBase(spatial);
  for (uint32_t i = 0; i < spatial; ++i) {
    const uint32_t a = base + i;
    const int64_t s = w->stride[a];
    const int64_t span = (w->kernel[a] - 1) * w->dilation[a] + 1;  // < 2^60
    int64_t pb = w->pad_begin[a], pe = w->pad_end[a];
    if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
      const int64_t out = (in[i] + s - 1) / s;
      int64_t total = (out - 1) * s + span - in[i];
      if (total < 0) total = 0;
      pb = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (auto_pad == AutoPad::kValid) {
      pb = pe = 0;
    }
    const int64_t padded = in[i] + pb + pe;
    if (padded < span)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "kernel extent %lld on spatial axis %u is larger than the "
                      "padded input %lld (input %lld, pads %lld+%lld)",
                      static_cast<long long>(span), i, static_cast<long long>(padded),
                      static_cast<long long>(in[i]), static_cast<long long>(pb),
                      static_cast<long long>(pe));
    int64_t out = (padded - span) / s + 1;
    if (ceil_mode && (padded - span) % s != 0) {
      ++out;
      // A window starting in the end padding covers no input: drop it.
      if ((out - 1) * s >= in[i] + pb) --out;
    }
    w->pad_begin[a] = pb;
    w->pad_end[a] = pe;
    w->out[a] = out;
  }
  return CheckWindowOut(ctx, *w);
}

Status CheckWindowOut(KernelContext& ctx, const Window& w) {
  int64_t total = 0;
  if (!Product(w.out, 0, kMaxSpatial, &total))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "the spatial output sizes %s are too large",
                    ShapeOf(kMaxSpatial, w.out).s);
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
