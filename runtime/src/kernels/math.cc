// SPDX-License-Identifier: Apache-2.0
// Elementwise math on float, double, float16 and bfloat16 (the last two
// computed in float): trigonometric and hyperbolic functions and their
// inverses, Erf, Ceil, Floor, Round (half to even), Reciprocal, and the
// predicates IsNaN and IsInf. Sign also takes every integer type.
#include <cmath>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Sin(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::sin(v); });
}
Status Cos(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::cos(v); });
}
Status Tan(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::tan(v); });
}
Status Asin(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::asin(v); });
}
Status Acos(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::acos(v); });
}
Status Atan(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::atan(v); });
}
Status Sinh(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::sinh(v); });
}
Status Cosh(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::cosh(v); });
}
Status Asinh(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::asinh(v); });
}
Status Acosh(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::acosh(v); });
}
Status Atanh(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::atanh(v); });
}
Status Erf(KernelContext& ctx) {
  // float: the micro-kernel's polynomials (within 4 ulp of erf).
  static constexpr uk::Act kRow = uk::Act::kErf;
  return MapUnary<kFloats>(
      ctx, [](auto v) { return std::erf(v); }, &kRow);
}
Status Ceil(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::ceil(v); });
}
Status Floor(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::floor(v); });
}

// nearbyint in the default rounding mode rounds half to even.
Status RoundHalfToEven(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::nearbyint(v); });
}
Status Reciprocal(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return decltype(v)(1) / v; });
}

// -1, 0 or 1; NaN gives 0 like ORT's comparison chain.
Status Sign(KernelContext& ctx) {
  return MapUnary<kNumeric>(ctx, [](auto v) {
    using C = decltype(v);
    if constexpr (std::is_unsigned<C>::value) return v > 0 ? C(1) : C(0);
    else return v > C(0) ? C(1) : (v < C(0) ? C(-1) : C(0));
  });
}

Status IsNaN(KernelContext& ctx) {
  return MapUnary<kFloats, bool>(ctx, [](auto v) { return v != v; });
}

Status IsInf(KernelContext& ctx) {
  const bool pos = ctx.AttrInt("detect_positive", 1) != 0;
  const bool neg = ctx.AttrInt("detect_negative", 1) != 0;
  return MapUnary<kFloats, bool>(ctx, [pos, neg](auto v) {
    using C = decltype(v);
    return (pos && v == std::numeric_limits<C>::infinity()) ||
           (neg && v == -std::numeric_limits<C>::infinity());
  });
}

}  // namespace kern
}  // namespace epctx
