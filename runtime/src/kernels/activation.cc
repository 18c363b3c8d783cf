// SPDX-License-Identifier: Apache-2.0
// Activations: Elu, Selu, Celu, Softplus, Softsign, HardSwish,
// ThresholdedRelu (float, double, float16, bfloat16), PRelu (numpy-broadcast
// slope; floats and integers) and Shrink (every numeric type; integers
// compute in float and convert back like Cast, as ORT's T(val +- bias)).
#include <cmath>

#include "kernels/elementwise.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Elu(KernelContext& ctx) {
  const float alpha = ctx.AttrFloat("alpha", 1.0f);
  return MapUnary<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v >= 0 ? v : C(alpha) * (std::exp(v) - C(1));
  });
}

Status Selu(KernelContext& ctx) {
  const float alpha = ctx.AttrFloat("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.AttrFloat("gamma", 1.05070102214813232421875f);
  return MapUnary<kFloats>(ctx, [alpha, gamma](auto v) {
    using C = decltype(v);
    return C(gamma) * (v > 0 ? v : C(alpha) * std::exp(v) - C(alpha));
  });
}

Status Celu(KernelContext& ctx) {
  const float alpha = ctx.AttrFloat("alpha", 1.0f);
  if (alpha == 0.0f)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute alpha must be nonzero, found 0");
  return MapUnary<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v > 0 ? v : C(alpha) * (std::exp(v / C(alpha)) - C(1));
  });
}

Status Softplus(KernelContext& ctx) {
  // log(1 + e^v) without overflowing e^v.
  return MapUnary<kFloats>(
      ctx, [](auto v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); });
}

Status Softsign(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return v / (decltype(v)(1) + std::fabs(v)); });
}

// float: the micro-kernel row, x * min(max(x + 3, 0), 6) / 6 (the same
// function; epctx-compile writes HardSwish for x * HardSigmoid(x)).
Status HardSwish(KernelContext& ctx) {
  static constexpr uk::Act kRow = uk::Act::kHardSwish;
  return MapUnary<kFloats>(
      ctx,
      [](auto v) {
        using C = decltype(v);
        const C r = v / C(6) + C(0.5);
        return v * (r < 0 ? C(0) : (r > 1 ? C(1) : r));
      },
      &kRow, 1.0f, 0.0f);
}

Status ThresholdedRelu(KernelContext& ctx) {
  const float alpha = ctx.AttrFloat("alpha", 1.0f);
  return MapUnary<kFloats>(ctx, [alpha](auto v) { return v > alpha ? v : decltype(v)(0); });
}

// The spec's types (opset 16): no 8- or 16-bit integers.
constexpr uint32_t kPReluTypes = kFloats | Bit(EPCTX_DTYPE_INT32) | Bit(EPCTX_DTYPE_INT64) |
                                 Bit(EPCTX_DTYPE_UINT32) | Bit(EPCTX_DTYPE_UINT64);

Status PRelu(KernelContext& ctx) {
  return MapBinary<kPReluTypes>(
      ctx,
      [](auto x, auto slope) {
        using C = decltype(x);
        if constexpr (kIsFloatLike<C>) return x < 0 ? x * slope : x;
        else if constexpr (std::is_signed<C>::value) return x < 0 ? WrapMul(x, slope) : x;
        else return x;
      },
      Divisor::kAny, "X", "slope");
}

Status Shrink(KernelContext& ctx) {
  const float lambd = ctx.AttrFloat("lambd", 0.5f);
  const float bias = ctx.AttrFloat("bias", 0.0f);
  return MapUnary<kNumeric>(ctx, [lambd, bias](auto v) {
    using C = decltype(v);
    using W = typename std::conditional<std::is_same<C, double>::value, double, float>::type;
    const W w = static_cast<W>(v);
    if (w < -lambd) return ConvertElem<C, W>(w + bias);
    if (w > lambd) return ConvertElem<C, W>(w - bias);
    return C(0);
  });
}

}  // namespace kern
}  // namespace epctx
