/* SPDX-License-Identifier: Apache-2.0 */
// Resize coordinates, shared by the CPU Resize kernel (runtime/src/kernels/
// resize.cc) and the vnpu driver's RESIZE (hal/drivers/vnpu): where an
// output coordinate maps in the input (ONNX coordinate_transformation_mode)
// and, for nearest, which input index it takes (nearest_mode), and the two
// taps of linear interpolation, in one place so both give the same taps.
// Header-only, no state, no libm beyond floorf/ceilf/roundf/fabsf.
#ifndef EPCTX_UK_RESIZE_H
#define EPCTX_UK_RESIZE_H

#include <cmath>
#include <cstdint>

namespace epctx {
namespace uk {

enum class ResizeCoord : uint8_t {
  kHalfPixel,
  kAsymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kTfHalfPixelForNn,
  kTfCropAndResize,
  kHalfPixelSymmetric
};
enum class ResizeRound : uint8_t { kSimple, kPreferFloor, kPreferCeil, kFloor, kCeil };

// The input coordinate of output coordinate x on an axis of `in` inputs and
// `out` outputs at `scale` (align_corners: `out` is length_resized, see
// resize.cc); r0, r1: tf_crop_and_resize's region.
inline float ResizeOriginal(ResizeCoord c, float x, float scale, float out, float in, float r0,
                            float r1) {
  switch (c) {
    case ResizeCoord::kAsymmetric: return x / scale;
    case ResizeCoord::kPytorchHalfPixel: return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case ResizeCoord::kTfHalfPixelForNn: return (x + 0.5f) / scale;
    case ResizeCoord::kAlignCorners: return out == 1 ? 0.0f : x * (in - 1) / (out - 1);
    case ResizeCoord::kTfCropAndResize: {
      const double o = out > 1 ? r0 * (in - 1) + (x * (r1 - r0) * (in - 1)) / (out - 1)
                               : 0.5 * (r0 + r1) * (in - 1);
      return static_cast<float>(o);
    }
    case ResizeCoord::kHalfPixelSymmetric: {
      const float adjustment = out / (scale * in);
      const float offset = in / 2 * (1 - adjustment);
      return static_cast<float>(offset + (x + 0.5) / scale - 0.5);
    }
    case ResizeCoord::kHalfPixel: break;
  }
  return (x + 0.5f) / scale - 0.5f;
}

// The nearest input index of coordinate x (not yet clamped); `down`: the
// axis shrinks (kSimple rounds up then).
inline int64_t ResizeNearestIndex(ResizeRound r, float x, bool down) {
  float v;
  switch (r) {
    case ResizeRound::kSimple: v = down ? ceilf(x) : x; break;
    case ResizeRound::kPreferCeil: v = roundf(x); break;
    case ResizeRound::kFloor: v = floorf(x); break;
    case ResizeRound::kCeil: v = ceilf(x); break;
    default: v = x == floorf(x) + 0.5f ? floorf(x) : roundf(x); break;
  }
  if (!(v > -1e18f && v < 1e18f)) return v > 0 ? INT64_MAX / 2 : -1;  // also NaN
  return static_cast<int64_t>(v);
}

// Linear interpolation's taps at input coordinate x on an axis of `in`
// (>= 1) inputs: indices i[0] <= i[1] in [0, in) and their weights (0.5 and
// 0.5 at the last sample, as ONNX Runtime).
inline void ResizeLinearTaps(float x, int64_t in, int64_t* i, float* w) {
  const float last = static_cast<float>(in - 1);
  float v = x > 0.0f ? x : 0.0f;  // NaN -> 0
  if (v > last) v = last;
  int64_t i1 = static_cast<int64_t>(v);
  if (i1 > in - 1) i1 = in - 1;
  const int64_t i2 = i1 + 1 < in ? i1 + 1 : in - 1;
  float d1 = fabsf(v - static_cast<float>(i1)), d2 = fabsf(v - static_cast<float>(i2));
  if (i1 == i2) d1 = d2 = 0.5f;
  i[0] = i1;
  w[0] = d2;
  i[1] = i2;
  w[1] = d1;
}

}  // namespace uk
}  // namespace epctx

#endif
