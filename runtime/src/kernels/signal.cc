// SPDX-License-Identifier: Apache-2.0
// DFT (opset 17: axis attribute; from 20: axis input) and STFT, float and
// double, real ([..., 1]) or complex ([..., 2]) signals, on the transforms of
// fft.h.
//
// As ORT: a signal longer than dft_length is truncated and a shorter one
// zero-padded; the inverse is scaled by 1/n; onesided keeps the first
// n/2 + 1 outputs whatever the input (complex or inverse); a rank-2 signal
// [batch, length] is real. STFT accepts a frame as long as the signal (ORT
// requires it to be shorter).
#include <cstring>

#include "kernels/fft.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// Reads a scalar (or one-element 1-D) int32/int64 input.
Status ReadScalarInt(KernelContext& ctx, const TensorRef& t, const char* what, int64_t* out) {
  int64_t v[1] = {0};
  uint32_t n = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, t, what, v, 1, &n));
  if (n != 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", what,
                    ShapeOf(t).s);
  *out = v[0];
  return Status::Ok();
}

// One signal: `len` samples `stride` elements apart, each 1 (real) or 2
// (complex) values, optionally times a window of `n` values.
struct Signal {
  const void* data;
  int64_t len, stride, comps;
  const void* window;
};

template <typename T>
void Load(const Signal& s, const FftPlan& p) {
  const T* x = static_cast<const T*>(s.data);
  const T* win = static_cast<const T*>(s.window);
  const int64_t take = s.len < p.n ? s.len : p.n;
  double* a = p.work;
  for (int64_t j = 0; j < take; ++j) {
    const double w = win ? static_cast<double>(win[j]) : 1.0;
    a[2 * j] = static_cast<double>(x[j * s.stride]) * w;
    a[2 * j + 1] = s.comps == 2 ? static_cast<double>(x[j * s.stride + 1]) * w : 0.0;
  }
  memset(a + 2 * take, 0, 2 * static_cast<size_t>(p.n - take) * sizeof(double));
}

// Writes the first `count` outputs, `stride` elements apart (complex pairs).
template <typename T>
void Store(const FftPlan& p, int64_t count, T* y, int64_t stride) {
  const double scale = p.inverse ? 1.0 / static_cast<double>(p.n) : 1.0;
  for (int64_t k = 0; k < count; ++k) {
    y[k * stride] = static_cast<T>(p.work[2 * k] * scale);
    y[k * stride + 1] = static_cast<T>(p.work[2 * k + 1] * scale);
  }
}

// The signal shape as [outer..., channel]: rank-2 input gains channel 1.
Status SignalShape(KernelContext& ctx, const TensorRef& x, const char* what, uint32_t* rank,
                   int64_t* dims) {
  if (x.dtype != EPCTX_DTYPE_FLOAT && x.dtype != EPCTX_DTYPE_DOUBLE)
    return UnsupportedDtype(ctx, what, x.dtype);
  if (x.rank < 2)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "%s must have rank >= 2 ([batch, ..., length, 1 or 2]), found %s", what,
                    ShapeOf(x).s);
  for (uint32_t i = 0; i < x.rank; ++i) dims[i] = x.dims[i];
  *rank = x.rank;
  if (x.rank == 2) {
    dims[2] = 1;
    *rank = 3;
  } else if (dims[x.rank - 1] != 1 && dims[x.rank - 1] != 2) {
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "%s's last dimension must be 1 (real) or 2 (complex), found %s", what,
                    ShapeOf(x).s);
  }
  return Status::Ok();
}

template <typename T>
void RunDft(const TensorRef& x, const int64_t* dims, uint32_t rank, int64_t axis, int64_t out_n,
            const FftPlan& plan, T* y) {
  const int64_t comps = dims[rank - 1], len = dims[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  for (uint32_t i = static_cast<uint32_t>(axis) + 1; i + 1 < rank; ++i) inner *= dims[i];
  const T* xd = static_cast<const T*>(x.data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      Signal s{xd + (o * len * inner + i) * comps, len, inner * comps, comps, nullptr};
      Load<T>(s, plan);
      RunFft(plan);
      Store<T>(plan, out_n, y + (o * out_n * inner + i) * 2, inner * 2);
    }
}

}  // namespace

Status DFT(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  int64_t dims[kMaxRank + 1];
  uint32_t rank = 0;
  EPCTX_RETURN_IF_ERROR(SignalShape(ctx, *x, "input", &rank, dims));
  int64_t axis = ctx.opset() >= 20 ? -2 : ctx.AttrInt("axis", 1);
  if (ctx.opset() >= 20)
    if (const TensorRef* t = ctx.input(2))
      EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, *t, "axis", &axis));
  // The last dimension holds the real/imaginary parts: never the axis.
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t given = axis;
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "axis %lld is out of range: expected [%lld, -2] or [0, %lld] for input %s",
                    static_cast<long long>(given), static_cast<long long>(-r),
                    static_cast<long long>(r - 2), ShapeOf(*x).s);
  int64_t n = dims[axis];
  if (const TensorRef* t = ctx.input(1)) {
    EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, *t, "dft_length", &n));
    if (n < 1)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "dft_length is %lld, expected a positive length",
                      static_cast<long long>(n));
  } else if (n < 1) {
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "the signal along axis %lld is empty (input %s)",
                    static_cast<long long>(axis), ShapeOf(*x).s);
  }
  const bool inverse = ctx.AttrInt("inverse", 0) != 0;
  const int64_t out_n = ctx.AttrInt("onesided", 0) != 0 ? n / 2 + 1 : n;
  int64_t ydims[kMaxRank + 1];
  for (uint32_t i = 0; i < rank; ++i) ydims[i] = dims[i];
  ydims[axis] = out_n;
  ydims[rank - 1] = 2;
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, rank, ydims, 8, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, rank, ydims, &y));
  if (y->elements() == 0) return Status::Ok();  // no plan for no output
  FftPlan plan;
  EPCTX_RETURN_IF_ERROR(MakeFftPlan(ctx, n, inverse, &plan));
  if (x->dtype == EPCTX_DTYPE_DOUBLE) {
    RunDft<double>(*x, dims, rank, axis, out_n, plan, static_cast<double*>(y->data));
  } else {
    RunDft<float>(*x, dims, rank, axis, out_n, plan, static_cast<float*>(y->data));
  }
  return Status::Ok();
}

Status STFT(KernelContext& ctx) {
  const TensorRef *x, *step_t;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "signal", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "frame_step", &step_t));
  int64_t dims[kMaxRank + 1];
  uint32_t rank = 0;
  EPCTX_RETURN_IF_ERROR(SignalShape(ctx, *x, "signal", &rank, dims));
  if (rank != 3)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "signal must have shape [batch, length, 1 or 2], found %s", ShapeOf(*x).s);
  int64_t step = 0;
  EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, *step_t, "frame_step", &step));
  if (step < 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "frame_step is %lld, expected a positive step",
                    static_cast<long long>(step));
  const TensorRef* window = ctx.input(2);
  const TensorRef* length_t = ctx.input(3);
  int64_t frame = -1;
  if (length_t) EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, *length_t, "frame_length", &frame));
  if (window) {
    if (window->dtype != x->dtype)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "window has dtype %s, expected %s like signal",
                      dtype_name(window->dtype), dtype_name(x->dtype));
    EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *window, "window", 1));
    if (length_t && frame != window->dims[0])
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "frame_length is %lld but the window has %lld values",
                      static_cast<long long>(frame), static_cast<long long>(window->dims[0]));
    frame = window->dims[0];
  } else if (!length_t) {
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "neither window nor frame_length is given");
  }
  const int64_t len = dims[1];
  if (frame < 1 || frame > len)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "frame length %lld must be in [1, %lld] (the signal length)",
                    static_cast<long long>(frame), static_cast<long long>(len));
  const int64_t frames = (len - frame) / step + 1;
  const int64_t out_n = ctx.AttrInt("onesided", 1) != 0 ? frame / 2 + 1 : frame;
  const int64_t ydims[4] = {dims[0], frames, out_n, 2};
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, 4, ydims, 8, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, 4, ydims, &y));
  if (y->elements() == 0) return Status::Ok();
  FftPlan plan;
  EPCTX_RETURN_IF_ERROR(MakeFftPlan(ctx, frame, false, &plan));
  const int64_t comps = dims[2];
  const bool dbl = x->dtype == EPCTX_DTYPE_DOUBLE;
  const size_t es = dbl ? 8 : 4;
  for (int64_t b = 0; b < dims[0]; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      const int64_t in_off = (b * len + f * step) * comps;
      const int64_t out_off = (b * frames + f) * out_n * 2;
      Signal s{static_cast<const char*>(x->data) + in_off * es, frame, comps, comps,
               window ? window->data : nullptr};
      if (dbl) {
        Load<double>(s, plan);
        RunFft(plan);
        Store<double>(plan, out_n, static_cast<double*>(y->data) + out_off, 2);
      } else {
        Load<float>(s, plan);
        RunFft(plan);
        Store<float>(plan, out_n, static_cast<float*>(y->data) + out_off, 2);
      }
    }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
