// SPDX-License-Identifier: Apache-2.0
// Scatter (opset 9-10, the deprecated name of ScatterElements),
// ScatterElements and ScatterND: the output is a copy of data with the
// updates written at the indexed positions, in index order (a later
// duplicate wins for reduction "none"). Reductions add and mul come with
// opset 16, max and min with 18; they run in Compute<T> (float for float16
// and bfloat16), integers wrap through unsigned. Every index is checked
// before anything is written.
#include <cstring>
#include <type_traits>

#include "kernels/data_util.h"
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Status ReadReduction(KernelContext& ctx, Reduction* out) {
  const StrView s = ctx.AttrString("reduction", "none");
  *out = Reduction::kNone;
  if (s.eq("none")) return Status::Ok();
  if (ctx.opset() >= 16 && s.eq("add")) *out = Reduction::kAdd;
  else if (ctx.opset() >= 16 && s.eq("mul")) *out = Reduction::kMul;
  else if (ctx.opset() >= 18 && s.eq("max")) *out = Reduction::kMax;
  else if (ctx.opset() >= 18 && s.eq("min")) *out = Reduction::kMin;
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "attribute reduction is '%.*s', expected none, add, mul (opset >= 16) or "
                    "max, min (opset >= 18) at opset %lld",
                    s.len(), s.data, static_cast<long long>(ctx.opset()));
  return Status::Ok();
}

template <typename T>
T Combine(Reduction r, T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    const Compute<T> x = Load(a), y = Load(b);
    switch (r) {
      case Reduction::kAdd: return Store<T>(x + y);
      case Reduction::kMul: return Store<T>(x * y);
      case Reduction::kMax: return x < y ? b : a;
      case Reduction::kMin: return y < x ? b : a;
      default: return b;
    }
  } else {
    // Modular arithmetic in uint64, truncated back to T (no signed overflow).
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (r) {
      case Reduction::kAdd: return static_cast<T>(x + y);
      case Reduction::kMul: return static_cast<T>(x * y);
      case Reduction::kMax: return a < b ? b : a;
      case Reduction::kMin: return b < a ? b : a;
      default: return b;
    }
  }
}

// Copies data into a new output 0 and calls apply(U* out) or, with a
// reduction, apply typed on T; f(out, upd, out_index, upd_index) pairs.
// `visit(fn)` must call fn(out_off, upd_off, count) for each run of
// contiguous elements to update.
template <typename Visit>
Status ScatterInto(KernelContext& ctx, const TensorRef& data, const TensorRef& upd, Reduction red,
                   Visit visit) {
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, data, "data", &es));
  if (upd.dtype != data.dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "updates is %s, expected %s like data",
                    dtype_name(upd.dtype), dtype_name(data.dtype));
  if (red != Reduction::kNone && !Dispatch<kNumeric>(data.dtype, [](auto) {}))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "reduction on data of dtype %s is not supported",
                    dtype_name(data.dtype));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, data.dtype, data.rank, data.dims, &y));
  const uint64_t n = data.elements();
  if (n) memcpy(y->data, data.data, static_cast<size_t>(n * es));
  if (red == Reduction::kNone) {
    DispatchSize(es, [&](auto tag) {
      using U = decltype(tag);
      U* out = static_cast<U*>(y->data);
      const U* u = static_cast<const U*>(upd.data);
      visit([&](int64_t o, int64_t s, int64_t count) {
        for (int64_t i = 0; i < count; ++i) out[o + i] = u[s + i];
      });
    });
    return Status::Ok();
  }
  Dispatch<kNumeric>(data.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(y->data);
    const T* u = static_cast<const T*>(upd.data);
    visit([&](int64_t o, int64_t s, int64_t count) {
      for (int64_t i = 0; i < count; ++i) out[o + i] = Combine(red, out[o + i], u[s + i]);
    });
  });
  return Status::Ok();
}

Status ScatterElementsImpl(KernelContext& ctx, bool reductions) {
  const TensorRef *x, *ind, *upd;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  EPCTX_RETURN_IF_ERROR(IndexInput(ctx, 1, "indices", &ind));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "updates", &upd));
  Reduction red = Reduction::kNone;
  if (reductions) EPCTX_RETURN_IF_ERROR(ReadReduction(ctx, &red));
  AxisIndexing ai;
  EPCTX_RETURN_IF_ERROR(CheckAxisIndexing(ctx, *x, *ind, &ai));
  const uint32_t r = x->rank;
  bool same = upd->rank == r;
  for (uint32_t d = 0; same && d < r; ++d) same = upd->dims[d] == ind->dims[d];
  if (!same)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "updates %s must have the shape of indices %s",
                    ShapeOf(*upd).s, ShapeOf(*ind).s);
  const int64_t dim = ai.dim;
  const uint64_t n = ind->elements();
  return ScatterInto(ctx, *x, *upd, red, [&](auto apply) {
    int64_t idx[kMaxRank] = {};
    int64_t off = 0;
    for (uint64_t i = 0; i < n; ++i) {
      int64_t v = IndexAt(*ind, i);
      if (v < 0) v += dim;
      apply(off + v * ai.axis_stride, static_cast<int64_t>(i), 1);
      NextIndex(r, ind->dims, idx, ai.walk, &off);
    }
  });
}

}  // namespace

Status Scatter(KernelContext& ctx) { return ScatterElementsImpl(ctx, false); }

Status ScatterElements(KernelContext& ctx) { return ScatterElementsImpl(ctx, true); }

Status ScatterND(KernelContext& ctx) {
  const TensorRef *x, *ind, *upd;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  EPCTX_RETURN_IF_ERROR(IndexInput(ctx, 1, "indices", &ind));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "updates", &upd));
  Reduction red;
  EPCTX_RETURN_IF_ERROR(ReadReduction(ctx, &red));
  const uint32_t r = x->rank, q = ind->rank;
  if (r == 0 || q == 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "data %s and indices %s must both have rank >= 1",
                    ShapeOf(*x).s, ShapeOf(*ind).s);
  const int64_t k = ind->dims[q - 1];
  if (k < 1 || k > static_cast<int64_t>(r))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "indices %s: the last dimension must be in [1, %u] (rank of data %s)",
                    ShapeOf(*ind).s, r, ShapeOf(*x).s);
  const uint32_t kk = static_cast<uint32_t>(k);
  // updates must be indices.shape[:-1] + data.shape[k:].
  bool ok = upd->rank == q - 1 + r - kk;
  for (uint32_t d = 0; ok && d + 1 < q; ++d) ok = upd->dims[d] == ind->dims[d];
  for (uint32_t d = kk; ok && d < r; ++d) ok = upd->dims[q - 1 + d - kk] == x->dims[d];
  if (!ok)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "updates %s must be indices %s without its last axis, then data %s from "
                    "axis %u",
                    ShapeOf(*upd).s, ShapeOf(*ind).s, ShapeOf(*x).s, kk);
  int64_t xs[kMaxRank];
  Strides(r, x->dims, xs);
  int64_t lookups = 1, slice = 1;
  Product(ind->dims, 0, q - 1, &lookups);
  Product(x->dims, kk, r, &slice);
  for (uint64_t t = 0; t < static_cast<uint64_t>(lookups) * kk; ++t) {
    const int64_t dim = x->dims[t % kk];
    const int64_t v = IndexAt(*ind, t);
    if (v < -dim || v >= dim)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "indices[%llu] = %lld is out of range: expected [%lld, %lld] for axis "
                      "%llu of data %s",
                      static_cast<unsigned long long>(t), static_cast<long long>(v),
                      static_cast<long long>(-dim), static_cast<long long>(dim - 1),
                      static_cast<unsigned long long>(t % kk), ShapeOf(*x).s);
  }
  return ScatterInto(ctx, *x, *upd, red, [&](auto apply) {
    uint64_t t = 0;
    for (int64_t l = 0; l < lookups; ++l) {
      int64_t off = 0;
      for (uint32_t j = 0; j < kk; ++j, ++t) {
        int64_t v = IndexAt(*ind, t);
        if (v < 0) v += x->dims[j];
        off += v * xs[j];
      }
      apply(off, l * slice, slice);
    }
  });
}

}  // namespace kern
}  // namespace epctx
