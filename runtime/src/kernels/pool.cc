// Pooling (float32, 1-D and 2-D): MaxPool, AveragePool, and the global forms.
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/window.h"

namespace epctx {
namespace kern {
namespace {

struct PoolSetup {
  const TensorRef* x;
  TensorRef* y;
  Window w;
  int64_t planes;  // N * C
};

Status SetupPool(KernelContext& ctx, bool allow_ceil, PoolSetup* ps) {
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &ps->x));
  const TensorRef& x = *ps->x;
  if (x.rank != 3 && x.rank != 4)
    return ctx.Fail(x.rank == 5 ? EPCTX_NOT_IMPLEMENTED : EPCTX_INVALID_ARGUMENT,
                    "input X must have rank 3 or 4, found shape %s", ShapeOf(x).s);
  const int64_t ceil_mode = allow_ceil ? ctx.AttrInt("ceil_mode", 0) : 0;
  EPCTX_RETURN_IF_ERROR(
      ComputeWindow(ctx, x.rank - 2, x.dims + 2, nullptr, ceil_mode != 0, &ps->w));
  int64_t ydims[4] = {x.dims[0], x.dims[1], ps->w.out[0], ps->w.out[1]};
  if (x.rank == 3) ydims[2] = ps->w.out[1];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, x.rank, ydims, 4, "output Y"));
  ps->planes = x.dims[0] * x.dims[1];
  return ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x.rank, ydims, &ps->y);
}

// One output position's window: where it starts on each axis (input
// coordinates, negative in the begin padding), its kernel taps inside the
// input, [kh0, kh1) x [kw0, kw1), and, when asked for, how many taps lie in
// the padded input (a ceil_mode window may run past the end padding).
struct Taps {
  int64_t hs, ws, kh0, kh1, kw0, kw1;
  int64_t padded;
};

// Taps of a window starting at `start` on `axis` inside the padded input.
inline int64_t PaddedTaps(const Window& w, int axis, int64_t start) {
  int64_t lo, hi;
  ValidRange(start + w.pad_begin[axis], w.dilation[axis],
             w.in[axis] + w.pad_begin[axis] + w.pad_end[axis], w.kernel[axis], &lo, &hi);
  return hi - lo;
}

// Visits every output position of every plane: `reduce(in, taps)` gets the
// plane's input and the window's taps (taps.padded only when kPadded), and
// returns the output value.
template <bool kPadded, typename Reduce>
void ForEachWindow(const PoolSetup& ps, Reduce reduce) {
  const Window& w = ps.w;
  const float* X = static_cast<const float*>(ps.x->data);
  float* Y = static_cast<float*>(ps.y->data);
  const int64_t HW = w.in[0] * w.in[1], OHW = w.out[0] * w.out[1];
  for (int64_t p = 0; p < ps.planes; ++p) {
    const float* in = X + p * HW;
    float* out = Y + p * OHW;
    for (int64_t oh = 0; oh < w.out[0]; ++oh) {
      Taps t;
      t.hs = oh * w.stride[0] - w.pad_begin[0];
      ValidRange(t.hs, w.dilation[0], w.in[0], w.kernel[0], &t.kh0, &t.kh1);
      const int64_t padded_h = kPadded ? PaddedTaps(w, 0, t.hs) : 0;
      t.padded = 0;
      for (int64_t ow = 0; ow < w.out[1]; ++ow) {
        t.ws = ow * w.stride[1] - w.pad_begin[1];
        ValidRange(t.ws, w.dilation[1], w.in[1], w.kernel[1], &t.kw0, &t.kw1);
        if (kPadded) t.padded = padded_h * PaddedTaps(w, 1, t.ws);
        out[oh * w.out[1] + ow] = reduce(in, t);
      }
    }
  }
}

}  // namespace

Status MaxPool(KernelContext& ctx) {
  if (ctx.num_outputs() > 1 && ctx.node().outputs && !ctx.node().outputs[1].empty())
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "the Indices output is not supported");
  PoolSetup ps;
  EPCTX_RETURN_IF_ERROR(SetupPool(ctx, true, &ps));
  const Window& w = ps.w;
  ForEachWindow<false>(ps, [&w](const float* in, const Taps& t) {
    float m = std::numeric_limits<float>::lowest();
    for (int64_t kh = t.kh0; kh < t.kh1; ++kh) {
      const float* row = in + (t.hs + kh * w.dilation[0]) * w.in[1] + t.ws;
      for (int64_t kw = t.kw0; kw < t.kw1; ++kw) {
        const float v = row[kw * w.dilation[1]];
        if (v > m || v != v) m = v;
      }
    }
    return m;
  });
  return Status::Ok();
}

Status AveragePool(KernelContext& ctx) {
  PoolSetup ps;
  EPCTX_RETURN_IF_ERROR(SetupPool(ctx, true, &ps));
  const bool include_pad = ctx.AttrInt("count_include_pad", 0) != 0;
  const Window& w = ps.w;
  auto average = [&w, include_pad](const float* in, const Taps& t) {
    float sum = 0.0f;
    for (int64_t kh = t.kh0; kh < t.kh1; ++kh) {
      const float* row = in + (t.hs + kh * w.dilation[0]) * w.in[1] + t.ws;
      for (int64_t kw = t.kw0; kw < t.kw1; ++kw) sum += row[kw * w.dilation[1]];
    }
    const int64_t count = include_pad ? t.padded : (t.kh1 - t.kh0) * (t.kw1 - t.kw0);
    return count > 0 ? sum / static_cast<float>(count) : 0.0f;
  };
  if (include_pad)
    ForEachWindow<true>(ps, average);
  else
    ForEachWindow<false>(ps, average);
  return Status::Ok();
}

namespace {

template <bool kMax>
Status GlobalPool(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &x));
  if (x->rank < 3)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "input X must have rank >= 3 (N, C, spatial...), found shape %s",
                    ShapeOf(*x).s);
  int64_t ydims[kMaxRank];
  ydims[0] = x->dims[0];
  ydims[1] = x->dims[1];
  for (uint32_t i = 2; i < x->rank; ++i) ydims[i] = 1;
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x->rank, ydims, &y));
  int64_t spatial = 1;
  Product(x->dims, 2, x->rank, &spatial);
  const int64_t planes = x->dims[0] * x->dims[1];
  const float* X = static_cast<const float*>(x->data);
  float* Y = static_cast<float*>(y->data);
  for (int64_t p = 0; p < planes; ++p) {
    const float* in = X + p * spatial;
    if (kMax) {
      float m = std::numeric_limits<float>::lowest();
      for (int64_t i = 0; i < spatial; ++i)
        if (in[i] > m || in[i] != in[i]) m = in[i];
      Y[p] = m;
    } else {
      float s = 0.0f;
      for (int64_t i = 0; i < spatial; ++i) s += in[i];
      Y[p] = spatial > 0 ? s / static_cast<float>(spatial) : 0.0f;
    }
  }
  return Status::Ok();
}

}  // namespace

Status GlobalAveragePool(KernelContext& ctx) { return GlobalPool<false>(ctx); }
Status GlobalMaxPool(KernelContext& ctx) { return GlobalPool<true>(ctx); }

}  // namespace kern
}  // namespace epctx
