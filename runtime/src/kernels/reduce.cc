// ReduceMean, ReduceMax, ReduceMin, ReduceSum (float32; Sum/Max/Min also
// int32/int64 for shape arithmetic). Axes come from the `axes` attribute, or
// for ReduceSum from opset 13 from the optional second input (with
// noop_with_empty_axes). The reduction view is [outer, len, inner] per
// reduced axis run: reduced axes are processed by folding the input into a
// per-output accumulation with computed strides.
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Kind { kMean, kMax, kMin, kSum };

template <typename T, Kind K>
void Reduce(const TensorRef& x, const bool* reduced, T* out, uint64_t out_n) {
  // Walk the input once; each element lands in the output index obtained by
  // dropping the reduced axes.
  int64_t ostride[kMaxRank];
  int64_t s = 1;
  for (uint32_t i = x.rank; i-- > 0;) {
    ostride[i] = reduced[i] ? 0 : s;
    if (!reduced[i]) s *= x.dims[i];
  }
  for (uint64_t i = 0; i < out_n; ++i) {
    if (K == Kind::kMax) out[i] = std::numeric_limits<T>::lowest();
    else if (K == Kind::kMin) out[i] = std::numeric_limits<T>::max();
    else out[i] = T(0);
  }
  const T* in = static_cast<const T*>(x.data);
  const uint32_t r = x.rank;
  const int64_t inner = r ? x.dims[r - 1] : 1;
  const int64_t inner_stride = r ? ostride[r - 1] : 0;
  const uint64_t total = x.elements();
  int64_t idx[kMaxRank] = {};
  int64_t base = 0;
  for (uint64_t off = 0; off < total; off += static_cast<uint64_t>(inner)) {
    const T* row = in + off;
    T* o = out + base;
    for (int64_t j = 0; j < inner; ++j) {
      T& dst = o[j * inner_stride];
      const T v = row[j];
      if (K == Kind::kMax) { if (v > dst || v != v) dst = v; }
      else if (K == Kind::kMin) { if (v < dst || v != v) dst = v; }
      else dst += v;
    }
    NextIndex(OuterRank(r), x.dims, idx, ostride, &base);
  }
  if (K == Kind::kMean) {
    const uint64_t count = out_n ? total / out_n : 0;
    for (uint64_t i = 0; i < out_n; ++i) out[i] /= static_cast<T>(count ? count : 1);
  }
}

template <Kind K>
Status ReduceOp(KernelContext& ctx, int64_t axes_input_from) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  const bool is_float = x->dtype == EPCTX_DTYPE_FLOAT;
  const bool is_int = x->dtype == EPCTX_DTYPE_INT32 || x->dtype == EPCTX_DTYPE_INT64;
  if (!is_float && !(is_int && K != Kind::kMean)) return UnsupportedDtype(ctx, "data", x->dtype);
  int64_t axes[kMaxRank];
  uint32_t naxes = 0;
  bool present = false;
  EPCTX_RETURN_IF_ERROR(ReadAxes(ctx, axes_input_from, axes, &naxes, &present));
  const bool have_axes = naxes > 0;
  const bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  bool reduced[kMaxRank] = {};
  if (!have_axes) {
    if (ctx.opset() >= axes_input_from && ctx.AttrInt("noop_with_empty_axes", 0) != 0) {
      return ctx.ViewOutput(0, x->dtype, x->rank, x->dims, x->data);
    }
    for (uint32_t i = 0; i < x->rank; ++i) reduced[i] = true;
  } else {
    for (uint32_t i = 0; i < naxes; ++i) {
      int64_t a;
      EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, axes[i], x->rank, "axes value", &a));
      if (reduced[a])
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "axis %lld is listed twice",
                        static_cast<long long>(a));
      reduced[a] = true;
    }
  }
  int64_t ydims[kMaxRank];
  uint32_t yrank = 0;
  for (uint32_t i = 0; i < x->rank; ++i) {
    if (reduced[i]) {
      if (x->dims[i] == 0 && (K == Kind::kMax || K == Kind::kMin))
        return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                        "cannot reduce the empty axis %u of %s", i, ShapeOf(*x).s);
      if (keepdims) ydims[yrank++] = 1;
    } else {
      ydims[yrank++] = x->dims[i];
    }
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, yrank, ydims, &y));
  const uint64_t out_n = y->elements();
  if (x->rank == 0) {
    __builtin_memcpy(y->data, x->data, dtype_size(x->dtype));
    return Status::Ok();
  }
  if (x->dtype == EPCTX_DTYPE_FLOAT)
    Reduce<float, K>(*x, reduced, static_cast<float*>(y->data), out_n);
  else if (x->dtype == EPCTX_DTYPE_INT32)
    Reduce<int32_t, K == Kind::kMean ? Kind::kSum : K>(*x, reduced,
                                                      static_cast<int32_t*>(y->data), out_n);
  else
    Reduce<int64_t, K == Kind::kMean ? Kind::kSum : K>(*x, reduced,
                                                      static_cast<int64_t*>(y->data), out_n);
  return Status::Ok();
}

}  // namespace

// axes became an input in opset 13 for ReduceSum and in 18 for the others
// (whose kernels the registry caps at opset 17).
Status ReduceMean(KernelContext& ctx) { return ReduceOp<Kind::kMean>(ctx, 18); }
Status ReduceMax(KernelContext& ctx) { return ReduceOp<Kind::kMax>(ctx, 18); }
Status ReduceMin(KernelContext& ctx) { return ReduceOp<Kind::kMin>(ctx, 18); }
Status ReduceSum(KernelContext& ctx) { return ReduceOp<Kind::kSum>(ctx, 13); }

}  // namespace kern
}  // namespace epctx
