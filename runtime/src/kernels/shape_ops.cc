// SPDX-License-Identifier: Apache-2.0
// Ops that only change shape metadata and so output a view of their input
// (Reshape, Flatten, Squeeze, Unsqueeze, Identity), plus Shape, Size and
// Constant.
// Views alias the input's memory; the session keeps it alive for the run.
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

Status ViewAs(KernelContext& ctx, const TensorRef& x, uint32_t rank, const int64_t* dims) {
  return ctx.ViewOutput(0, x.dtype, rank, dims, x.data);
}

}  // namespace

Status Reshape(KernelContext& ctx) {
  const TensorRef *x, *shape;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "shape", &shape));
  int64_t dims[kMaxRank];
  uint32_t rank = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *shape, "shape", dims, kMaxRank, &rank));
  const bool allowzero = ctx.AttrInt("allowzero", 0) != 0;
  int64_t infer = -1;
  int64_t known = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 && !allowzero) {
      if (i >= x->rank)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                        "shape[%u] is 0 (copy) but data %s has no dimension %u", i, ShapeOf(*x).s,
                        i);
      dims[i] = x->dims[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "shape %s has more than one -1",
                        ShapeOf(rank, dims).s);
      infer = i;
      continue;
    }
    if (dims[i] < 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "shape[%u] is %lld, expected >= -1", i,
                      static_cast<long long>(dims[i]));
    if (!MulOk(known, dims[i], &known))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "shape %s overflows", ShapeOf(rank, dims).s);
  }
  const int64_t total = static_cast<int64_t>(x->elements());
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "cannot infer the -1 in shape %s for data %s (%lld elements)",
                      ShapeOf(rank, dims).s, ShapeOf(*x).s, static_cast<long long>(total));
    dims[infer] = total / known;
    known = total;
  }
  if (known != total)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "shape %s has %lld elements but data %s has %lld",
                    ShapeOf(rank, dims).s, static_cast<long long>(known), ShapeOf(*x).s,
                    static_cast<long long>(total));
  return ViewAs(ctx, *x, rank, dims);
}

Status Flatten(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  int64_t axis = ctx.AttrInt("axis", 1);
  const int64_t r = x->rank;
  if (axis < -r || axis > r)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "axis %lld is out of range: expected [%lld, %lld] for input %s",
                    static_cast<long long>(axis), static_cast<long long>(-r),
                    static_cast<long long>(r), ShapeOf(*x).s);
  if (axis < 0) axis += r;
  // An empty input's dims on one side of the axis can multiply past int64
  // ([3, 2^62, 0] at axis 2 or 3): refused, never a wrapped or stale shape
  // (which made [1, 1] out of [1, 3, 2^62, 0] at axis 4: one element read
  // from an empty tensor).
  int64_t dims[2] = {1, 1};
  if (!Product(x->dims, 0, static_cast<uint32_t>(axis), &dims[0]) ||
      !Product(x->dims, static_cast<uint32_t>(axis), x->rank, &dims[1]))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "flattening %s at axis %lld gives a dimension past int64", ShapeOf(*x).s,
                    static_cast<long long>(axis));
  return ViewAs(ctx, *x, 2, dims);
}

Status Squeeze(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  int64_t axes[kMaxRank];
  uint32_t n = 0;
  bool present = false;
  EPCTX_RETURN_IF_ERROR(ReadAxes(ctx, 13, axes, &n, &present));
  bool drop[kMaxRank] = {};
  if (n == 0) {
    for (uint32_t i = 0; i < x->rank; ++i) drop[i] = x->dims[i] == 1;
  }
  for (uint32_t i = 0; i < n; ++i) {
    int64_t a;
    EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, axes[i], x->rank, "axes value", &a));
    if (x->dims[a] != 1)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "cannot squeeze axis %lld of %s: expected size 1, found %lld",
                      static_cast<long long>(a), ShapeOf(*x).s, static_cast<long long>(x->dims[a]));
    drop[a] = true;
  }
  int64_t dims[kMaxRank];
  uint32_t rank = 0;
  for (uint32_t i = 0; i < x->rank; ++i)
    if (!drop[i]) dims[rank++] = x->dims[i];
  return ViewAs(ctx, *x, rank, dims);
}

Status Unsqueeze(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  int64_t axes[kMaxRank];
  uint32_t n = 0;
  bool present = false;
  EPCTX_RETURN_IF_ERROR(ReadAxes(ctx, 13, axes, &n, &present));
  if (!present || n == 0)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "axes are required and must not be empty");
  const uint32_t out_rank = x->rank + n;
  if (out_rank > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "output rank %u exceeds %d", out_rank, kMaxRank);
  bool inserted[kMaxRank] = {};
  for (uint32_t i = 0; i < n; ++i) {
    int64_t a;
    EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, axes[i], out_rank, "axes value", &a));
    if (inserted[a])
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "axis %lld is listed twice",
                      static_cast<long long>(a));
    inserted[a] = true;
  }
  int64_t dims[kMaxRank];
  uint32_t src = 0;
  for (uint32_t i = 0; i < out_rank; ++i) dims[i] = inserted[i] ? 1 : x->dims[src++];
  return ViewAs(ctx, *x, out_rank, dims);
}

Status Identity(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  return ViewAs(ctx, *x, x->rank, x->dims);
}

Status Shape(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  const int64_t r = x->rank;
  int64_t start = 0, end = r;
  if (ctx.opset() >= 15) {
    // start/end are clamped to [0, rank] after adding rank to negatives.
    start = ctx.AttrInt("start", 0);
    end = ctx.AttrInt("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : (start > r ? r : start);
    end = end < 0 ? 0 : (end > r ? r : end);
  }
  const int64_t n = end > start ? end - start : 0;
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_INT64, 1, &n, &y));
  int64_t* out = static_cast<int64_t*>(y->data);
  for (int64_t i = 0; i < n; ++i) out[i] = x->dims[start + i];
  return Status::Ok();
}

Status Size(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_INT64, 0, nullptr, &y));
  *static_cast<int64_t*>(y->data) = static_cast<int64_t>(x->elements());
  return Status::Ok();
}

Status Constant(KernelContext& ctx) {
  const onnx::NodeView& node = ctx.node();
  for (uint32_t i = 0; i < node.num_attrs; ++i) {
    const onnx::AttributeView& a = node.attrs[i];
    if (a.name.eq("value")) {
      const onnx::TensorView* t = a.type == onnx::AttrType::kTensor ? a.t : nullptr;
      if (!t) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute value is not a tensor");
      if (t->storage == onnx::Storage::kExternal)
        return ctx.Fail(EPCTX_NOT_IMPLEMENTED,
                        "attribute value uses external data, which Constant does not load");
      const size_t es = dtype_size(t->dtype);
      if (es == 0) return UnsupportedDtype(ctx, "attribute value", t->dtype);
      uint64_t n = 0;
      if (!shape_elements(t->dims, t->rank, &n) || n > UINT64_MAX / es ||
          (n > 0 && (!t->data || t->bytes < n * es)))
        return ctx.Fail(EPCTX_INVALID_GRAPH,
                        "attribute value has shape %s but %llu bytes of %s data",
                        ShapeOf(t->rank, t->dims).s, static_cast<unsigned long long>(t->bytes),
                        dtype_name(t->dtype));
      return ctx.ViewOutput(0, t->dtype, t->rank, t->dims, t->data);
    }
    if (a.name.eq("value_float") && a.type == onnx::AttrType::kFloat)
      return ctx.ViewOutput(0, EPCTX_DTYPE_FLOAT, 0, nullptr, &a.f);
    if (a.name.eq("value_int") && a.type == onnx::AttrType::kInt)
      return ctx.ViewOutput(0, EPCTX_DTYPE_INT64, 0, nullptr, &a.i);
    if (a.name.eq("value_floats") && a.type == onnx::AttrType::kFloats) {
      const int64_t n = a.count;
      return ctx.ViewOutput(0, EPCTX_DTYPE_FLOAT, 1, &n, a.floats);
    }
    if (a.name.eq("value_ints") && a.type == onnx::AttrType::kInts) {
      const int64_t n = a.count;
      return ctx.ViewOutput(0, EPCTX_DTYPE_INT64, 1, &n, a.ints);
    }
    if (a.name.eq("sparse_value") || a.name.eq("value_string") || a.name.eq("value_strings"))
      return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "attribute %.*s is not supported", a.name.len(),
                      a.name.data);
  }
  return ctx.Fail(EPCTX_INVALID_GRAPH, "no value attribute (value, value_float(s), value_int(s))");
}

}  // namespace kern
}  // namespace epctx
