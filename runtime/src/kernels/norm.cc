// BatchNormalization (inference) and Softmax / LogSoftmax (float32).
#include <cmath>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status BatchNormalization(KernelContext& ctx) {
  for (uint32_t i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.node().outputs && !ctx.node().outputs[i].empty())
      return ctx.Fail(EPCTX_NOT_IMPLEMENTED,
                      "training-mode output %u is not supported (inference only)", i);
  if (ctx.AttrInt("training_mode", 0) != 0)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "training_mode=1 is not supported");
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &x));
  if (x->rank < 2)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X must have rank >= 2, found shape %s",
                    ShapeOf(*x).s);
  const int64_t C = x->dims[1];
  const char* names[4] = {"scale", "B", "input_mean", "input_var"};
  const float* p[4];
  for (uint32_t i = 0; i < 4; ++i) {
    const TensorRef* t;
    EPCTX_RETURN_IF_ERROR(FloatInput(ctx, i + 1, names[i], &t));
    if (t->rank != 1 || t->dims[0] != C)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must have shape [%lld], found %s",
                      names[i], static_cast<long long>(C), ShapeOf(*t).s);
    p[i] = static_cast<const float*>(t->data);
  }
  const float eps = ctx.AttrFloat("epsilon", 1e-5f);
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x->rank, x->dims, &y));
  int64_t inner = 1;
  Product(x->dims, 2, x->rank, &inner);
  const float* X = static_cast<const float*>(x->data);
  float* Y = static_cast<float*>(y->data);
  for (int64_t n = 0; n < x->dims[0]; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const float a = p[0][c] / sqrtf(p[3][c] + eps);
      const float b = p[1][c] - p[2][c] * a;
      const float* __restrict in = X + (n * C + c) * inner;
      float* __restrict out = Y + (n * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] = in[i] * a + b;
    }
  }
  return Status::Ok();
}

namespace {

// Softmax over groups of `len` elements spaced `stride` apart.
template <bool kLog>
void SoftmaxRun(const float* in, float* out, int64_t outer, int64_t len,
                int64_t stride) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < stride; ++s) {
      const float* x = in + o * len * stride + s;
      float* y = out + o * len * stride + s;
      float m = x[0];
      for (int64_t i = 1; i < len; ++i)
        if (x[i * stride] > m) m = x[i * stride];
      float sum = 0.0f;
      for (int64_t i = 0; i < len; ++i) {
        const float e = expf(x[i * stride] - m);
        if (!kLog) y[i * stride] = e;
        sum += e;
      }
      if (kLog) {
        const float ls = logf(sum);
        for (int64_t i = 0; i < len; ++i) y[i * stride] = x[i * stride] - m - ls;
      } else {
        const float inv = 1.0f / sum;
        for (int64_t i = 0; i < len; ++i) y[i * stride] *= inv;
      }
    }
  }
}

template <bool kLog>
Status SoftmaxOp(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "input", &x));
  const bool per_axis = ctx.opset() >= 13;
  const int64_t rank = x->rank;
  // Before opset 13 the input is coerced to 2-D at `axis` (default 1);
  // from 13 the op runs along one axis (default -1).
  int64_t axis = 0;
  const int64_t rank_for_axis = rank == 0 ? 1 : rank;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", per_axis ? -1 : 1),
                                      rank_for_axis, "axis", &axis));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x->rank, x->dims, &y));
  if (y->elements() == 0) return Status::Ok();
  int64_t outer = 1, len = 1, stride = 1;
  const uint32_t a = static_cast<uint32_t>(axis);
  if (rank == 0) {
    // A scalar is a one-element group.
  } else if (per_axis) {
    Product(x->dims, 0, a, &outer);
    len = x->dims[a];
    Product(x->dims, a + 1, x->rank, &stride);
  } else {
    Product(x->dims, 0, a, &outer);
    Product(x->dims, a, x->rank, &len);
  }
  SoftmaxRun<kLog>(static_cast<const float*>(x->data), static_cast<float*>(y->data),
                   outer, len, stride);
  return Status::Ok();
}

}  // namespace

Status Softmax(KernelContext& ctx) { return SoftmaxOp<false>(ctx); }
Status LogSoftmax(KernelContext& ctx) { return SoftmaxOp<true>(ctx); }

}  // namespace kern
}  // namespace epctx
