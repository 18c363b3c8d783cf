// SPDX-License-Identifier: Apache-2.0
// Pad: constant, edge, reflect (and wrap from opset 19) padding.
//
// Pads come from the `pads` attribute (opset 2-10, with a float `value`) or
// input 1 (11+, with an optional constant_value input 2 and, from opset 18,
// an optional axes input 3). Negative pads crop. Each output element maps
// back to an input coordinate per axis (or to the constant), so cropping
// and padding share one loop. Reflect needs pads smaller than the axis, as
// the ONNX reference (numpy) yields for one reflection; edge, reflect and
// wrap cannot pad an empty axis.
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Mode { kConstant, kEdge, kReflect, kWrap };

// Input coordinate of output coordinate i - begin on an axis of size d, or
// -1 for the constant.
inline int64_t MapCoord(Mode m, int64_t i, int64_t d) {
  if (i >= 0 && i < d) return i;
  switch (m) {
    case Mode::kConstant: return -1;
    case Mode::kEdge: return i < 0 ? 0 : d - 1;
    case Mode::kReflect: {
      if (d == 1) return 0;
      const int64_t p = 2 * (d - 1);
      int64_t k = i % p;
      if (k < 0) k += p;
      return k < d ? k : p - k;
    }
    case Mode::kWrap: {
      int64_t k = i % d;
      return k < 0 ? k + d : k;
    }
  }
  return -1;
}

// The constant as the bytes of x's dtype.
Status ReadConstant(KernelContext& ctx, const TensorRef& x, size_t es, uint64_t* bits) {
  *bits = 0;
  if (ctx.opset() < 11) {
    const float v = ctx.AttrFloat("value", 0.0f);
    const bool ok = Dispatch<kFloats>(x.dtype, [&](auto tag) {
      using T = decltype(tag);
      const T t = Store<T>(static_cast<Compute<T>>(v));
      memcpy(bits, &t, sizeof(T));
    });
    if (!ok) return UnsupportedDtype(ctx, "data", x.dtype);
    return Status::Ok();
  }
  const TensorRef* c = ctx.input(2);
  if (!c) return Status::Ok();
  if (c->dtype != x.dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "constant_value is %s, expected %s like data",
                    dtype_name(c->dtype), dtype_name(x.dtype));
  const uint64_t n = c->elements();
  if (c->rank > 1 || n > 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "constant_value must be a scalar, found shape %s",
                    ShapeOf(*c).s);
  if (n == 1) memcpy(bits, c->data, es);
  return Status::Ok();
}

}  // namespace

Status Pad(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "data", &es));
  const uint32_t r = x->rank;
  const StrView ms = ctx.AttrString("mode", "constant");
  Mode mode;
  if (ms.eq("constant")) mode = Mode::kConstant;
  else if (ms.eq("edge")) mode = Mode::kEdge;
  else if (ms.eq("reflect")) mode = Mode::kReflect;
  else if (ms.eq("wrap") && ctx.opset() >= 19) mode = Mode::kWrap;
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "attribute mode is '%.*s', expected constant, edge, reflect or wrap "
                    "(opset >= 19)",
                    ms.len(), ms.data);
  int64_t pads[2 * kMaxRank];
  uint32_t np = 0;
  int64_t axes[kMaxRank];
  uint32_t na = r;
  for (uint32_t i = 0; i < r; ++i) axes[i] = i;
  if (ctx.opset() < 11) {
    const int64_t* pv = nullptr;
    if (!ctx.AttrInts("pads", &pv, &np))
      return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute pads is missing");
    if (np > 2 * static_cast<uint32_t>(kMaxRank))
      return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute pads has %u values, at most %d allowed", np,
                      2 * kMaxRank);
    for (uint32_t i = 0; i < np; ++i) pads[i] = pv[i];
  } else {
    const TensorRef* pt;
    EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "pads", &pt));
    EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *pt, "pads", pads, 2 * kMaxRank, &np));
    const TensorRef* at = ctx.opset() >= 18 ? ctx.input(3) : nullptr;
    if (at) {
      EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *at, "axes", axes, kMaxRank, &na));
      bool seen[kMaxRank] = {};
      for (uint32_t i = 0; i < na; ++i) {
        EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, axes[i], r, "axes value", &axes[i]));
        if (seen[axes[i]])
          return ctx.Fail(EPCTX_INVALID_ARGUMENT, "axis %lld is listed twice",
                          static_cast<long long>(axes[i]));
        seen[axes[i]] = true;
      }
    }
  }
  if (np != 2 * na)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "pads has %u values, expected %u (2 per axis)", np,
                    2 * na);
  uint64_t constant = 0;
  if (mode == Mode::kConstant) EPCTX_RETURN_IF_ERROR(ReadConstant(ctx, *x, es, &constant));
  int64_t begin[kMaxRank] = {}, dims[kMaxRank];
  for (uint32_t i = 0; i < r; ++i) dims[i] = x->dims[i];
  for (uint32_t i = 0; i < na; ++i) {
    const uint32_t a = static_cast<uint32_t>(axes[i]);
    const int64_t b = pads[i], e = pads[i + na], d = x->dims[a];
    int64_t out;
    if (__builtin_add_overflow(d, b, &out) || __builtin_add_overflow(out, e, &out) || out < 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "pads %lld and %lld on axis %u of data %s give a negative or huge size",
                      static_cast<long long>(b), static_cast<long long>(e), a, ShapeOf(*x).s);
    if (mode != Mode::kConstant && d == 0 && out > 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "cannot %.*s-pad the empty axis %u of data %s",
                      ms.len(), ms.data, a, ShapeOf(*x).s);
    if (mode == Mode::kReflect && (b >= d || e >= d) && out > 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "reflect pads %lld and %lld on axis %u must be smaller than its size %lld",
                      static_cast<long long>(b), static_cast<long long>(e), a,
                      static_cast<long long>(d));
    begin[a] = b;
    dims[a] = out;
  }
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, r, dims, es, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, dims, &y));
  const uint64_t total = y->elements();
  if (total == 0) return Status::Ok();
  int64_t xs[kMaxRank];
  Strides(r, x->dims, xs);
  const int64_t inner = r ? dims[r - 1] : 1;
  const int64_t rows = static_cast<int64_t>(total) / inner;
  const int64_t d_in = r ? x->dims[r - 1] : 1, b_in = r ? begin[r - 1] : 0;
  int64_t idx[kMaxRank] = {};
  DispatchSize(es, [&](auto tag) {
    using U = decltype(tag);
    U value;
    memcpy(&value, &constant, sizeof(U));
    const U* src = static_cast<const U*>(x->data);
    U* out = static_cast<U*>(y->data);
    for (int64_t row = 0; row < rows; ++row, out += inner) {
      // Source row of the outer coordinates, or none (constant row).
      int64_t off = 0;
      bool inside = true;
      for (uint32_t a = 0; a + 1 < r && inside; ++a) {
        const int64_t c = MapCoord(mode, idx[a] - begin[a], x->dims[a]);
        inside = c >= 0;
        off += c * xs[a];
      }
      if (!inside) {
        for (int64_t j = 0; j < inner; ++j) out[j] = value;
      } else {
        for (int64_t j = 0; j < inner; ++j) {
          const int64_t c = MapCoord(mode, j - b_in, d_in);
          out[j] = c >= 0 ? src[off + c] : value;
        }
      }
      for (uint32_t a = OuterRank(r); a-- > 0;) {
        if (++idx[a] < dims[a]) break;
        idx[a] = 0;
      }
    }
  });
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
