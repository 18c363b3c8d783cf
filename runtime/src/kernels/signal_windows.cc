// SPDX-License-Identifier: Apache-2.0
// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (opset 17),
// any numeric output_datatype.
//
// The windows are cosine sums w[i] = a0 - a1 cos(2 pi i/N) + a2 cos(4 pi i/N)
// with N = size (periodic) or size - 1 (symmetric), computed in double with
// ORT's float coefficients. A symmetric window of size 1 is [1] (as numpy,
// scipy and PyTorch; ORT divides by zero there). MelWeightMatrix follows
// ORT's (and the ONNX reference's) triangle construction step by step,
// including its floor() bin indices. Integer outputs truncate.
#include <cmath>
#include <cstring>

#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

constexpr double kPi = 3.14159265358979323846;

Status ReadScalarInt(KernelContext& ctx, uint32_t i, const char* what, int64_t* out) {
  const TensorRef* t;
  EPCTX_RETURN_IF_ERROR(Input(ctx, i, what, &t));
  int64_t v[1] = {0};
  uint32_t n = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *t, what, v, 1, &n));
  if (n != 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", what,
                    ShapeOf(*t).s);
  *out = v[0];
  return Status::Ok();
}

template <typename T>
T Convert(double v) {
  if constexpr (kIsFloatLike<T>) {
    return Store<T>(static_cast<Compute<T>>(v));
  } else {
    return static_cast<T>(v);  // callers keep v inside T's range
  }
}

// The output_datatype attribute as a dtype this kernel can write.
Status OutputType(KernelContext& ctx, int32_t* dtype) {
  const int64_t v = ctx.AttrInt("output_datatype", EPCTX_DTYPE_FLOAT);
  if (v < 0 || v > 31 || !(kNumeric & Bit(static_cast<int32_t>(v))))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "output_datatype is %lld, expected a numeric ONNX element type",
                    static_cast<long long>(v));
  *dtype = static_cast<int32_t>(v);
  return Status::Ok();
}

Status CosineSum(KernelContext& ctx, float a0, float a1, float a2) {
  int64_t size = 0;
  EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, 0, "size", &size));
  if (size < 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "size is %lld, expected a length >= 0",
                    static_cast<long long>(size));
  int32_t dtype = 0;
  EPCTX_RETURN_IF_ERROR(OutputType(ctx, &dtype));
  const bool periodic = ctx.AttrInt("periodic", 1) != 0;
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, 1, &size, 8, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, dtype, 1, &size, &y));
  const int64_t denom = periodic ? size : size - 1;
  Dispatch<kNumeric>(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(y->data);
    for (int64_t i = 0; i < size; ++i) {
      double v = 1.0;
      if (denom > 0) {
        const double a = 2.0 * kPi * static_cast<double>(i) / static_cast<double>(denom);
        v = a0 - a1 * cos(a) + (a2 == 0.0f ? 0.0 : a2 * cos(2.0 * a));
      }
      out[i] = Convert<T>(v);
    }
  });
  return Status::Ok();
}

double HzToMel(double hz) { return 2595.0 * log10(1.0 + hz / 700.0); }
double MelToHz(double mel) { return 700.0 * (pow(10.0, mel / 2595.0) - 1.0); }

}  // namespace

Status HannWindow(KernelContext& ctx) { return CosineSum(ctx, 0.5f, 0.5f, 0.0f); }

Status HammingWindow(KernelContext& ctx) {
  const float a0 = 25.0f / 46.0f;
  return CosineSum(ctx, a0, 1.0f - a0, 0.0f);
}

Status BlackmanWindow(KernelContext& ctx) {
  const float a2 = 0.16f / 2.0f;
  return CosineSum(ctx, 0.5f - a2, 0.5f, a2);
}

Status MelWeightMatrix(KernelContext& ctx) {
  int64_t bins = 0, dft = 0, rate = 0;
  EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, 0, "num_mel_bins", &bins));
  EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, 1, "dft_length", &dft));
  EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, 2, "sample_rate", &rate));
  const TensorRef *lo_t, *hi_t;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 3, "lower_edge_hertz", &lo_t));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 4, "upper_edge_hertz", &hi_t));
  float lo = 0.0f, hi = 0.0f;
  EPCTX_RETURN_IF_ERROR(ReadScalarFloat(ctx, *lo_t, "lower_edge_hertz", &lo));
  EPCTX_RETURN_IF_ERROR(ReadScalarFloat(ctx, *hi_t, "upper_edge_hertz", &hi));
  int32_t dtype = 0;
  EPCTX_RETURN_IF_ERROR(OutputType(ctx, &dtype));
  constexpr int64_t kMax = int64_t{1} << 40;
  if (bins < 1 || bins > kMax || dft < 1 || dft > kMax || rate < 1 || rate > kMax)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "num_mel_bins %lld, dft_length %lld and sample_rate %lld must be in [1, 2^40]",
                    static_cast<long long>(bins), static_cast<long long>(dft),
                    static_cast<long long>(rate));
  const int64_t spec_bins = dft / 2 + 1;
  // Every triangle point lies between the two edges' bins, so checking the
  // edges keeps all indices inside the spectrogram.
  const double lo_index = floor(static_cast<double>(dft + 1) * lo / static_cast<double>(rate));
  const double hi_index = floor(static_cast<double>(dft + 1) * hi / static_cast<double>(rate));
  if (!(lo >= 0.0f) || !(hi >= lo) || !(hi_index < static_cast<double>(spec_bins)))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "edges [%f, %f] Hz must satisfy 0 <= lower <= upper and fall in the %lld "
                    "spectrogram bins of dft_length %lld at sample_rate %lld (bins %f..%f)",
                    static_cast<double>(lo), static_cast<double>(hi),
                    static_cast<long long>(spec_bins), static_cast<long long>(dft),
                    static_cast<long long>(rate), lo_index, hi_index);
  const int64_t ydims[2] = {spec_bins, bins};
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, 2, ydims, 8, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, dtype, 2, ydims, &y));
  int64_t* points = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(bins + 2), &points));
  const double lo_mel = HzToMel(lo), hi_mel = HzToMel(hi);
  const double mel_step = (hi_mel - lo_mel) / static_cast<double>(static_cast<float>(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double hz = MelToHz(lo_mel + mel_step * static_cast<double>(i));
    int64_t p =
        static_cast<int64_t>(floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
    points[i] = p < 0 ? 0 : (p >= spec_bins ? spec_bins - 1 : p);  // rounding guard
  }
  memset(y->data, 0, y->elements() * dtype_size(dtype));
  Dispatch<kNumeric>(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(y->data);
    for (int64_t i = 0; i < bins; ++i) {
      const int64_t left = points[i], center = points[i + 1], right = points[i + 2];
      if (center == left) {
        out[center * bins + i] = Convert<T>(1.0);
      } else {
        for (int64_t j = left; j <= center; ++j)
          out[j * bins + i] =
              Convert<T>(static_cast<double>(j - left) / static_cast<double>(center - left));
      }
      for (int64_t j = center; j < right; ++j)
        out[j * bins + i] =
            Convert<T>(static_cast<double>(right - j) / static_cast<double>(right - center));
    }
  });
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
