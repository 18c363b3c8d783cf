/* SPDX-License-Identifier: Apache-2.0 */
// float32 -> IEEE 754 binary16 bits, rounding to nearest even, overflow to
// infinity, NaN kept (quiet). Header-only; used by --input-value and by
// backends that store float16 weights.
#ifndef EPCTX_HOST_HALF_H
#define EPCTX_HOST_HALF_H

#include <cstdint>
#include <cstring>

namespace epctx {
namespace host {

inline uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past the largest half
  if (abs < 0x33000001u) return uint16_t(sign);             // at most half the smallest subnormal
  const int e = int(abs >> 23) - 127;
  const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  const int shift = e < -14 ? 13 + (-14 - e) : 13;
  uint32_t half = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
  if (rem > mid || (rem == mid && (half & 1))) ++half;  // may carry into the exponent: fine
  if (e >= -14) half = (uint32_t(e + 15) << 10) + (half - 0x400u);
  return uint16_t(sign | half);
}

}  // namespace host
}  // namespace epctx

#endif
