// SPDX-License-Identifier: Apache-2.0
// Ops that build a tensor from parameters rather than move input data:
// ConstantOfShape, Range, EyeLike, OneHot.
//
// Range follows ORT: the count is ceil((limit - start) / delta) and values
// accumulate (v += delta), so float results round exactly as ORT's do.
// Integer counts are computed exactly in unsigned arithmetic instead of
// through a double.
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// Value i of a numeric tensor converted to int64 (floats truncate). False
// for NaN or values outside int64.
bool NumberAsInt(const TensorRef& t, uint64_t i, int64_t* out) {
  bool ok = false;
  Dispatch<kNumeric>(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto v = Load(static_cast<const T*>(t.data)[i]);
    if constexpr (kIsFloatLike<T>) {
      const double d = static_cast<double>(v);
      ok = d > -9.2e18 && d < 9.2e18;
      if (ok) *out = static_cast<int64_t>(d);
    } else if constexpr (std::is_same<T, uint64_t>::value) {
      ok = v <= static_cast<uint64_t>(INT64_MAX);
      if (ok) *out = static_cast<int64_t>(v);
    } else {
      ok = true;
      *out = static_cast<int64_t>(v);
    }
  });
  return ok;
}

// Exact element count of Range for integers: ceil((limit - start) / delta).
uint64_t IntRangeCount(int64_t start, int64_t limit, int64_t delta) {
  if (delta > 0 && limit > start) {
    const uint64_t span = static_cast<uint64_t>(limit) - static_cast<uint64_t>(start);
    const uint64_t d = static_cast<uint64_t>(delta);
    return span / d + (span % d != 0);
  }
  if (delta < 0 && limit < start) {
    const uint64_t span = static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    const uint64_t d = 0u - static_cast<uint64_t>(delta);
    return span / d + (span % d != 0);
  }
  return 0;
}

}  // namespace

Status ConstantOfShape(KernelContext& ctx) {
  const TensorRef* shape;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &shape));
  int64_t dims[kMaxRank];
  uint32_t rank = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *shape, "input (the shape)", dims, kMaxRank, &rank));
  for (uint32_t i = 0; i < rank; ++i)
    if (dims[i] < 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "shape[%u] is %lld, expected >= 0", i,
                      static_cast<long long>(dims[i]));
  int32_t dtype = EPCTX_DTYPE_FLOAT;
  const float zero = 0.0f;
  const void* value = &zero;
  if (const onnx::TensorView* t = ctx.AttrTensor("value")) {
    if (t->storage == onnx::Storage::kExternal)
      return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "attribute value uses external data");
    uint64_t n = 0;
    const size_t es = dtype_size(t->dtype);
    if (es == 0 || es > 8) return UnsupportedDtype(ctx, "attribute value", t->dtype);
    if (!shape_elements(t->dims, t->rank, &n) || n != 1 || !t->data || t->bytes < es)
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "attribute value must hold exactly one element, found shape %s "
                      "with %llu bytes",
                      ShapeOf(t->rank, t->dims).s, static_cast<unsigned long long>(t->bytes));
    dtype = t->dtype;
    value = t->data;
  }
  const size_t es = dtype_size(dtype);
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, rank, dims, es, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, dtype, rank, dims, &y));
  FillBytes(y->data, y->elements(), es, value);
  return Status::Ok();
}

Status Range(KernelContext& ctx) {
  const TensorRef *start, *limit, *delta;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "start", &start));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "limit", &limit));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "delta", &delta));
  const TensorRef* all[3] = {start, limit, delta};
  const char* names[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    if (all[i]->dtype != start->dtype)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s is %s, expected %s like start", names[i],
                      dtype_name(all[i]->dtype), dtype_name(start->dtype));
    if (all[i]->rank > 1 || all[i]->elements() != 1)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", names[i],
                      ShapeOf(*all[i]).s);
  }
  constexpr uint32_t kRangeTypes = Bit(EPCTX_DTYPE_FLOAT) | Bit(EPCTX_DTYPE_DOUBLE) |
                                   Bit(EPCTX_DTYPE_INT16) | Bit(EPCTX_DTYPE_INT32) |
                                   Bit(EPCTX_DTYPE_INT64);
  Status st = Status::Ok();
  const bool ok = Dispatch<kRangeTypes>(start->dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr bool kRangeType =
        std::is_floating_point<T>::value || (std::is_signed<T>::value && sizeof(T) >= 2);
    if constexpr (kRangeType) {
      const T s = *static_cast<const T*>(start->data);
      const T l = *static_cast<const T*>(limit->data);
      const T d = *static_cast<const T*>(delta->data);
      if (d == T{0}) {
        st = ctx.Fail(EPCTX_INVALID_ARGUMENT, "delta is zero");
        return;
      }
      int64_t n = 0;
      if constexpr (std::is_floating_point<T>::value) {
        const double q = static_cast<double>(l - s) / static_cast<double>(d);
        if (q != q || q >= 9.2e18) {
          st = ctx.Fail(EPCTX_INVALID_ARGUMENT,
                        "start %g, limit %g and delta %g give no finite element count",
                        static_cast<double>(s), static_cast<double>(l), static_cast<double>(d));
          return;
        }
        // ceil(q) without libm's ceil (not on the freestanding allowlist).
        n = q > 0 ? static_cast<int64_t>(q) : 0;
        if (q > 0 && static_cast<double>(n) < q) ++n;
      } else {
        const uint64_t c = IntRangeCount(s, l, d);
        // A count past INT64_MAX fails CheckShape below like any huge shape.
        n = c > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(c);
      }
      st = CheckShape(ctx, 1, &n, sizeof(T), "output");
      if (!st.ok()) return;
      TensorRef* y = nullptr;
      st = ctx.AllocOutput(0, start->dtype, 1, &n, &y);
      if (!st.ok()) return;
      T* out = static_cast<T*>(y->data);
      if constexpr (std::is_floating_point<T>::value) {
        T v = s;
        for (int64_t i = 0; i < n; ++i) {
          out[i] = v;
          v += d;
        }
      } else {
        // Wraps through unsigned: values stay between start and limit, so
        // the result is exact; only the step after the last may wrap.
        uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(s));
        const uint64_t step = static_cast<uint64_t>(static_cast<int64_t>(d));
        for (int64_t i = 0; i < n; ++i) {
          out[i] = static_cast<T>(static_cast<int64_t>(v));
          v += step;
        }
      }
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "start", start->dtype);
  return st;
}

Status EyeLike(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *x, "input", 2));
  const int64_t dt = ctx.AttrInt("dtype", x->dtype);
  const int32_t dtype = dt >= 0 && dt <= 31 ? static_cast<int32_t>(dt) : 0;
  const int64_t k = ctx.AttrInt("k", 0);
  const int64_t rows = x->dims[0], cols = x->dims[1];
  TensorRef* y = nullptr;
  Status st = Status::Ok();
  const bool ok = Dispatch<kAll>(dtype, [&](auto tag) {
    using T = decltype(tag);
    st = ctx.AllocOutput(0, dtype, 2, x->dims, &y);
    if (!st.ok()) return;
    T* out = static_cast<T*>(y->data);
    memset(out, 0, static_cast<size_t>(y->elements()) * sizeof(T));
    const T one = Store<T>(static_cast<Compute<T>>(1));
    // Row i has its one at column i + k; only rows whose column is in range
    // (|k| beyond the matrix leaves it zero; no i + k overflow).
    if (k >= cols || k <= -rows) return;
    const int64_t first = k < 0 ? -k : 0;
    for (int64_t i = first; i < rows; ++i) {
      const int64_t j = i + k;
      if (j >= cols) break;
      out[i * cols + j] = one;
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "dtype attribute", dtype);
  return st;
}

Status OneHot(KernelContext& ctx) {
  const TensorRef *ind, *depth_t, *values;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "indices", &ind));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "depth", &depth_t));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "values", &values));
  if (!Dispatch<kNumeric>(ind->dtype, [](auto) {}))
    return UnsupportedDtype(ctx, "indices", ind->dtype);
  if (!Dispatch<kNumeric>(depth_t->dtype, [](auto) {}))
    return UnsupportedDtype(ctx, "depth", depth_t->dtype);
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *values, "values", &es));
  if (depth_t->rank > 1 || depth_t->elements() != 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "depth must be a scalar, found shape %s",
                    ShapeOf(*depth_t).s);
  if (values->rank != 1 || values->dims[0] != 2)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "values must have shape [2] (off, on), found %s",
                    ShapeOf(*values).s);
  int64_t depth = 0;
  if (!NumberAsInt(*depth_t, 0, &depth) || depth < 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "depth must be >= 1, found %lld",
                    static_cast<long long>(depth));
  const uint32_t r = ind->rank;
  if (r + 1 > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "output rank %u exceeds %d", r + 1, kMaxRank);
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", -1), r + 1, "axis", &axis));
  const uint32_t a = static_cast<uint32_t>(axis);
  int64_t dims[kMaxRank];
  for (uint32_t i = 0, j = 0; i <= r; ++i) dims[i] = i == a ? depth : ind->dims[j++];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, r + 1, dims, es, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, values->dtype, r + 1, dims, &y));
  const uint8_t* off_on = static_cast<const uint8_t*>(values->data);
  FillBytes(y->data, y->elements(), es, off_on);
  int64_t inner = 1;
  Product(ind->dims, a, r, &inner);
  const uint64_t n = ind->elements();
  uint8_t* out = static_cast<uint8_t*>(y->data);
  for (uint64_t i = 0; i < n; ++i) {
    int64_t v;
    if (!NumberAsInt(*ind, i, &v)) continue;
    if (v < 0) v += depth;
    if (v < 0 || v >= depth) continue;
    const int64_t o = static_cast<int64_t>(i) / inner, s = static_cast<int64_t>(i) % inner;
    memcpy(out + ((o * depth + v) * inner + s) * static_cast<int64_t>(es), off_on + es, es);
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
