// Elementwise unary ops (float32; Abs and Neg also int32/int64) and Clip.
#include <cmath>
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// Allocates Y like X (float) and applies f to every element.
template <typename F>
Status MapFloat(KernelContext& ctx, F f) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &x));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x->rank, x->dims, &y));
  const float* __restrict in = static_cast<const float*>(x->data);
  float* __restrict out = static_cast<float*>(y->data);
  const uint64_t n = x->elements();
  for (uint64_t i = 0; i < n; ++i) out[i] = f(in[i]);
  return Status::Ok();
}

template <typename T, typename F>
void MapTyped(const TensorRef& x, TensorRef* y, F f) {
  const T* __restrict in = static_cast<const T*>(x.data);
  T* __restrict out = static_cast<T*>(y->data);
  const uint64_t n = x.elements();
  for (uint64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

// Abs/Neg on float, int32, int64; integer negation wraps (-MIN == MIN).
template <bool kNeg>
Status SignOp(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  TensorRef* y = nullptr;
  switch (x->dtype) {
    case EPCTX_DTYPE_FLOAT:
      EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
      MapTyped<float>(*x, y, [](float v) { return kNeg ? -v : fabsf(v); });
      return Status::Ok();
    case EPCTX_DTYPE_INT32:
      EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
      MapTyped<int32_t>(*x, y, [](int32_t v) {
        const uint32_t neg = 0u - static_cast<uint32_t>(v);
        return static_cast<int32_t>(kNeg || v < 0 ? neg : static_cast<uint32_t>(v));
      });
      return Status::Ok();
    case EPCTX_DTYPE_INT64:
      EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
      MapTyped<int64_t>(*x, y, [](int64_t v) {
        const uint64_t neg = 0u - static_cast<uint64_t>(v);
        return static_cast<int64_t>(kNeg || v < 0 ? neg : static_cast<uint64_t>(v));
      });
      return Status::Ok();
    default:
      return UnsupportedDtype(ctx, "X", x->dtype);
  }
}

}  // namespace

Status Relu(KernelContext& ctx) {
  return MapFloat(ctx, [](float v) { return v > 0.0f ? v : 0.0f; });
}

Status LeakyRelu(KernelContext& ctx) {
  const float alpha = ctx.AttrFloat("alpha", 0.01f);
  return MapFloat(ctx, [alpha](float v) { return v >= 0.0f ? v : alpha * v; });
}

Status Sigmoid(KernelContext& ctx) {
  // Split by sign so expf never overflows.
  return MapFloat(ctx, [](float v) {
    if (v >= 0.0f) return 1.0f / (1.0f + expf(-v));
    const float e = expf(v);
    return e / (1.0f + e);
  });
}

Status HardSigmoid(KernelContext& ctx) {
  const float alpha = ctx.AttrFloat("alpha", 0.2f);
  const float beta = ctx.AttrFloat("beta", 0.5f);
  return MapFloat(ctx, [alpha, beta](float v) {
    const float r = alpha * v + beta;
    return r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r);
  });
}

Status Tanh(KernelContext& ctx) { return MapFloat(ctx, [](float v) { return tanhf(v); }); }
Status Exp(KernelContext& ctx) { return MapFloat(ctx, [](float v) { return expf(v); }); }
Status Log(KernelContext& ctx) { return MapFloat(ctx, [](float v) { return logf(v); }); }
Status Sqrt(KernelContext& ctx) { return MapFloat(ctx, [](float v) { return sqrtf(v); }); }
Status Abs(KernelContext& ctx) { return SignOp<false>(ctx); }
Status Neg(KernelContext& ctx) { return SignOp<true>(ctx); }

Status Clip(KernelContext& ctx) {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (ctx.opset() < 11) {
    lo = ctx.AttrFloat("min", lo);
    hi = ctx.AttrFloat("max", hi);
  } else {
    // From opset 11 the bounds are optional scalar inputs.
    if (const TensorRef* t = ctx.input(1)) {
      if (t->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, "min", t->dtype);
      EPCTX_RETURN_IF_ERROR(ReadScalarFloat(ctx, *t, "min", &lo));
    }
    if (const TensorRef* t = ctx.input(2)) {
      if (t->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, "max", t->dtype);
      EPCTX_RETURN_IF_ERROR(ReadScalarFloat(ctx, *t, "max", &hi));
    }
  }
  // As the spec's reference: min first, then max (so min > max gives max).
  return MapFloat(ctx, [lo, hi](float v) {
    const float r = v < lo ? lo : v;
    return r > hi ? hi : r;
  });
}

}  // namespace kern
}  // namespace epctx
