/* SPDX-License-Identifier: Apache-2.0 */
// Helpers shared by the quantization kernels (quant.cc, qlinear.cc): the
// dtype sets, dispatchers that instantiate only the types a role takes
// (DispatchType would instantiate every dtype), and ORT's saturating round.
#ifndef EPCTX_KERNELS_QUANT_UTIL_H
#define EPCTX_KERNELS_QUANT_UTIL_H

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/elem.h"

namespace epctx {
namespace kern {

constexpr uint32_t kQuant8 = Bit(EPCTX_DTYPE_UINT8) | Bit(EPCTX_DTYPE_INT8);
constexpr uint32_t kQuantOut = kQuant8 | Bit(EPCTX_DTYPE_UINT16) | Bit(EPCTX_DTYPE_INT16);
constexpr uint32_t kScaleTypes = Bit(EPCTX_DTYPE_FLOAT) | Bit(EPCTX_DTYPE_FLOAT16) |
                                 Bit(EPCTX_DTYPE_BFLOAT16);

inline bool InMask(int32_t dtype, uint32_t mask) {
  return dtype >= 0 && dtype <= 31 && (mask & Bit(dtype)) != 0;
}

// f(T{}) for uint8 / int8 (callers checked the dtype).
template <typename F>
void DispatchQ8(int32_t dtype, F&& f) {
  if (dtype == EPCTX_DTYPE_UINT8) f(uint8_t{});
  if (dtype == EPCTX_DTYPE_INT8) f(int8_t{});
}
// f(T{}) for the quantized integers: kQuantOut and int32.
template <typename F>
void DispatchQuantInt(int32_t dtype, F&& f) {
  DispatchQ8(dtype, f);
  if (dtype == EPCTX_DTYPE_UINT16) f(uint16_t{});
  if (dtype == EPCTX_DTYPE_INT16) f(int16_t{});
  if (dtype == EPCTX_DTYPE_INT32) f(int32_t{});
}
// f(T{}) for float, float16, bfloat16.
template <typename F>
void DispatchScale(int32_t dtype, F&& f) {
  if (dtype == EPCTX_DTYPE_FLOAT) f(float{});
  if (dtype == EPCTX_DTYPE_FLOAT16) f(Half{});
  if (dtype == EPCTX_DTYPE_BFLOAT16) f(BFloat16{});
}

// round_half_even(v) + zp, saturated to Q. Clamping v to [min - zp, max - zp]
// first (as ORT's kernels do) keeps the float -> int conversion in range; a
// NaN gives Q's minimum, as ORT's SSE max_ps does.
template <typename Q>
inline Q SaturateRound(float v, int32_t zp) {
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  const float zf = static_cast<float>(zp);
  if (!(v >= lo - zf)) v = lo - zf;
  if (v > hi - zf) v = hi - zf;
  return static_cast<Q>(static_cast<int32_t>(nearbyintf(v)) + zp);
}

}  // namespace kern
}  // namespace epctx

#endif
