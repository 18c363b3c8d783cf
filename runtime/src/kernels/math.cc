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

#define EPCTX_FLOAT_MAP(Op, expr) \
  Status Op(KernelContext& ctx) { \
    return MapUnary<kFloats>(ctx, [](auto v) { return expr; }); \
  }

EPCTX_FLOAT_MAP(Sin, std::sin(v))
EPCTX_FLOAT_MAP(Cos, std::cos(v))
EPCTX_FLOAT_MAP(Tan, std::tan(v))
EPCTX_FLOAT_MAP(Asin, std::asin(v))
EPCTX_FLOAT_MAP(Acos, std::acos(v))
EPCTX_FLOAT_MAP(Atan, std::atan(v))
EPCTX_FLOAT_MAP(Sinh, std::sinh(v))
EPCTX_FLOAT_MAP(Cosh, std::cosh(v))
EPCTX_FLOAT_MAP(Asinh, std::asinh(v))
EPCTX_FLOAT_MAP(Acosh, std::acosh(v))
EPCTX_FLOAT_MAP(Atanh, std::atanh(v))
EPCTX_FLOAT_MAP(Erf, std::erf(v))
EPCTX_FLOAT_MAP(Ceil, std::ceil(v))
EPCTX_FLOAT_MAP(Floor, std::floor(v))
// nearbyint in the default rounding mode rounds half to even.
EPCTX_FLOAT_MAP(RoundHalfToEven, std::nearbyint(v))
EPCTX_FLOAT_MAP(Reciprocal, decltype(v)(1) / v)

#undef EPCTX_FLOAT_MAP

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
