/* SPDX-License-Identifier: Apache-2.0 */
// Helpers shared by the quantization kernels (quant.cc, qlinear.cc): the
// dtype sets of each role (for Dispatch<mask>) and ORT's saturating round.
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
constexpr uint32_t kScaleTypes =
    Bit(EPCTX_DTYPE_FLOAT) | Bit(EPCTX_DTYPE_FLOAT16) | Bit(EPCTX_DTYPE_BFLOAT16);

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
