// SPDX-License-Identifier: Apache-2.0
// CumSum: running sums along the axis given by input 1 (an int32/int64
// scalar or one-element 1-D tensor), with `exclusive` (each output leaves
// out its own element) and `reverse` (sums from the end). Types: float,
// double, float16, bfloat16 (summed in float, each output rounded once),
// int32, int64, uint32, uint64 (wrapping).
#include <type_traits>

#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

constexpr uint32_t kCumSumTypes = kFloats | Bit(EPCTX_DTYPE_INT32) | Bit(EPCTX_DTYPE_INT64) |
                                  Bit(EPCTX_DTYPE_UINT32) | Bit(EPCTX_DTYPE_UINT64);

// The accumulator: the compute type for floats, uint64 for integers so
// sums wrap instead of overflowing.
template <typename T>
using Acc = typename std::conditional<kIsFloatLike<T>, Compute<T>, uint64_t>::type;

template <typename T>
void CumSumT(const TensorRef& x, uint32_t axis, bool exclusive, bool reverse, TensorRef* y) {
  int64_t outer = 1, inner = 1;
  Product(x.dims, 0, axis, &outer);
  Product(x.dims, axis + 1, x.rank, &inner);
  const int64_t n = x.rank ? x.dims[axis] : 1;
  const T* X = static_cast<const T*>(x.data);
  T* Y = static_cast<T*>(y->data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < inner; ++s) {
      const int64_t base = o * n * inner + s;
      Acc<T> acc = 0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = base + (reverse ? n - 1 - j : j) * inner;
        const Acc<T> v = static_cast<Acc<T>>(Load(X[at]));
        if (!exclusive) acc += v;
        Y[at] = Store<T>(static_cast<Compute<T>>(acc));
        if (exclusive) acc += v;
      }
    }
  }
}

}  // namespace

Status CumSum(KernelContext& ctx) {
  const TensorRef *x, *axis_t;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "x", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "axis", &axis_t));
  if (!InMask(x->dtype, kCumSumTypes)) return UnsupportedDtype(ctx, "x", x->dtype);
  int64_t a = 0;
  uint32_t count = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *axis_t, "axis", &a, 1, &count));
  if (count != 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "axis must hold one value, found shape %s",
                    ShapeOf(*axis_t).s);
  int64_t axis = 0;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, a, x->rank == 0 ? 1 : x->rank, "axis", &axis));
  const bool exclusive = ctx.AttrInt("exclusive", 0) != 0;
  const bool reverse = ctx.AttrInt("reverse", 0) != 0;
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  if (y->elements() == 0) return Status::Ok();
  Dispatch<kCumSumTypes>(x->dtype, [&](auto tag) {
    CumSumT<decltype(tag)>(*x, static_cast<uint32_t>(axis), exclusive, reverse, y);
  });
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
