// SPDX-License-Identifier: Apache-2.0
// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare for every opset.
//
// Axes come from the `axes` attribute, or from the optional input 1 from
// opset 13 (ReduceSum) / 18 (the others), where an empty or absent axes
// input with noop_with_empty_axes=1 makes the op an identity.
//
// Types: float, double, float16, bfloat16 (computed in float, rounded once
// on store), int32, int64, uint32, uint64; Max/Min also int8, uint8, int16,
// uint16 and bool. Integer sums, products and squares wrap (computed in
// uint64, which agrees with wrapping in the narrower type); integer Mean,
// L2, LogSum and LogSumExp go through double and convert with truncation
// and saturation (ORT's integer ReduceMean does the same).
// Max/Min propagate NaN. A reduction over an empty axis yields the
// operation's identity as ONNX opset 18 specifies (0 for sums, 1 for Prod,
// -inf or the type's lowest value for Max, +inf or its highest for Min,
// -inf for LogSum/LogSumExp, NaN for a float Mean).
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/elem.h"
#include "kernels/float_math.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/reduce_layout.h"

namespace epctx {
namespace kern {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// double to an integer type: NaN is 0, out-of-range values saturate.
template <typename T>
T SaturateTo(double v) {
  if (v != v) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// One output element of a float-like reduction.
template <typename T, Kind K>
T ReduceFloat(const T* x, const ReduceLayout& l, int64_t base) {
  using A = Compute<T>;
  const A inf = std::numeric_limits<A>::infinity();
  if (K == Kind::kMax || K == Kind::kMin || K == Kind::kLogSumExp) {
    A m = K == Kind::kMin ? inf : -inf;
    ForEachInGroup(l, base, [&](int64_t i) {
      const A v = Load(x[i]);
      if (K == Kind::kMin ? (v < m || v != v) : (v > m || v != v)) m = v;
    });
    if (K != Kind::kLogSumExp) return Store<T>(m);
    if (m != m || m == inf || m == -inf) return Store<T>(m);
    A sum = 0;
    ForEachInGroup(l, base, [&](int64_t i) { sum += Exp(Load(x[i]) - m); });
    return Store<T>(Log(sum) + m);
  }
  A acc = K == Kind::kProd ? A(1) : A(0);
  ForEachInGroup(l, base, [&](int64_t i) {
    const A v = Load(x[i]);
    if (K == Kind::kProd) acc *= v;
    else if (K == Kind::kL1) acc += v < 0 ? -v : v;
    else if (K == Kind::kL2 || K == Kind::kSumSquare) acc += v * v;
    else acc += v;
  });
  if (K == Kind::kMean) acc /= static_cast<A>(l.group);
  if (K == Kind::kL2) acc = Sqrt(acc);
  if (K == Kind::kLogSum) acc = Log(acc);
  return Store<T>(acc);
}

template <typename T>
bool IsNegative(T v) {
  if constexpr (std::is_signed<T>::value) return v < 0;
  return false;
}

// One output element of an integer (or bool, for Max/Min) reduction.
template <typename T, Kind K>
T ReduceInt(const T* x, const ReduceLayout& l, int64_t base) {
  if (K == Kind::kMax || K == Kind::kMin) {
    T m = K == Kind::kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    ForEachInGroup(l, base, [&](int64_t i) {
      if (K == Kind::kMax ? x[i] > m : x[i] < m) m = x[i];
    });
    return m;
  }
  if (K == Kind::kLogSumExp) {
    if (l.group == 0) return std::numeric_limits<T>::lowest();
    T m = std::numeric_limits<T>::lowest();
    ForEachInGroup(l, base, [&](int64_t i) {
      if (x[i] > m) m = x[i];
    });
    double sum = 0;
    ForEachInGroup(l, base, [&](int64_t i) {
      sum += exp(static_cast<double>(x[i]) - static_cast<double>(m));
    });
    return SaturateTo<T>(log(sum) + static_cast<double>(m));
  }
  if (K == Kind::kMean) {
    // As ORT: the sum in double, divided, truncated and saturated.
    if (l.group == 0) return T(0);
    double sum = 0;
    ForEachInGroup(l, base, [&](int64_t i) { sum += static_cast<double>(x[i]); });
    return SaturateTo<T>(sum / static_cast<double>(l.group));
  }
  uint64_t acc = K == Kind::kProd ? 1 : 0;
  ForEachInGroup(l, base, [&](int64_t i) {
    const T v = x[i];
    const uint64_t u = static_cast<uint64_t>(v);  // sign-extends, modulo 2^64
    if (K == Kind::kProd) acc *= u;
    else if (K == Kind::kL1) acc += IsNegative(v) ? 0 - u : u;
    else if (K == Kind::kL2 || K == Kind::kSumSquare) acc += u * u;
    else acc += u;
  });
  const T wrapped = static_cast<T>(acc);
  if (K == Kind::kL2) return SaturateTo<T>(sqrt(static_cast<double>(wrapped)));
  if (K == Kind::kLogSum) return SaturateTo<T>(log(static_cast<double>(wrapped)));
  return wrapped;
}

template <typename T, Kind K>
void RunReduce(const TensorRef& x, const ReduceLayout& l, TensorRef* y) {
  const T* in = static_cast<const T*>(x.data);
  T* out = static_cast<T*>(y->data);
  ForEachGroup(l, [&](int64_t o, int64_t base) {
    if constexpr (kIsFloatLike<T>) out[o] = ReduceFloat<T, K>(in, l, base);
    else out[o] = ReduceInt<T, K>(in, l, base);
  });
}

template <Kind K>
constexpr uint32_t DtypesOf() {
  constexpr uint32_t common = kFloats | Bit(EPCTX_DTYPE_INT32) | Bit(EPCTX_DTYPE_INT64) |
                              Bit(EPCTX_DTYPE_UINT32) | Bit(EPCTX_DTYPE_UINT64);
  // ReduceMax/Min add the 8-bit integers (18) and bool (20), as the spec
  // does; no 16-bit integers.
  constexpr uint32_t max_min =
      common | Bit(EPCTX_DTYPE_INT8) | Bit(EPCTX_DTYPE_UINT8) | Bit(EPCTX_DTYPE_BOOL);
  return K == Kind::kMax || K == Kind::kMin ? max_min : common;
}

template <Kind K>
Status ReduceOp(KernelContext& ctx, int64_t axes_input_from) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  if (!InMask(x->dtype, DtypesOf<K>())) return UnsupportedDtype(ctx, "data", x->dtype);
  int64_t axes[kMaxRank];
  uint32_t naxes = 0;
  bool present = false;
  EPCTX_RETURN_IF_ERROR(ReadAxes(ctx, axes_input_from, axes, &naxes, &present));
  const bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  bool reduced[kMaxRank] = {};
  if (naxes == 0) {
    if (ctx.opset() >= axes_input_from && ctx.AttrInt("noop_with_empty_axes", 0) != 0)
      return ctx.ViewOutput(0, x->dtype, x->rank, x->dims, x->data);
    for (uint32_t i = 0; i < x->rank; ++i) reduced[i] = true;
  } else {
    for (uint32_t i = 0; i < naxes; ++i) {
      int64_t a;
      EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, axes[i], x->rank, "axes value", &a));
      if (reduced[a])
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "axis %lld is listed twice in axes",
                        static_cast<long long>(a));
      reduced[a] = true;
    }
  }
  int64_t ydims[kMaxRank];
  uint32_t yrank = 0;
  for (uint32_t i = 0; i < x->rank; ++i) {
    if (!reduced[i]) ydims[yrank++] = x->dims[i];
    else if (keepdims) ydims[yrank++] = 1;
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, yrank, ydims, &y));
  ReduceLayout l;
  MakeReduceLayout(x->rank, x->dims, reduced, &l);
  Dispatch<DtypesOf<K>()>(x->dtype, [&](auto tag) { RunReduce<decltype(tag), K>(*x, l, y); });
  return Status::Ok();
}

}  // namespace

// axes became an input in opset 13 for ReduceSum and in 18 for the others.
Status ReduceSum(KernelContext& ctx) { return ReduceOp<Kind::kSum>(ctx, 13); }
Status ReduceMean(KernelContext& ctx) { return ReduceOp<Kind::kMean>(ctx, 18); }
Status ReduceMax(KernelContext& ctx) { return ReduceOp<Kind::kMax>(ctx, 18); }
Status ReduceMin(KernelContext& ctx) { return ReduceOp<Kind::kMin>(ctx, 18); }
Status ReduceProd(KernelContext& ctx) { return ReduceOp<Kind::kProd>(ctx, 18); }
Status ReduceL1(KernelContext& ctx) { return ReduceOp<Kind::kL1>(ctx, 18); }
Status ReduceL2(KernelContext& ctx) { return ReduceOp<Kind::kL2>(ctx, 18); }
Status ReduceLogSum(KernelContext& ctx) { return ReduceOp<Kind::kLogSum>(ctx, 18); }
Status ReduceLogSumExp(KernelContext& ctx) { return ReduceOp<Kind::kLogSumExp>(ctx, 18); }
Status ReduceSumSquare(KernelContext& ctx) { return ReduceOp<Kind::kSumSquare>(ctx, 18); }

}  // namespace kern
}  // namespace epctx
