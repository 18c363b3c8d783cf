// SPDX-License-Identifier: Apache-2.0
// The original unary ops and Clip, on every dtype the spec and ORT allow:
// Relu (floats and signed ints), LeakyRelu, Sigmoid, HardSigmoid, Tanh, Exp,
// Log, Sqrt (floats), Abs (every numeric type), Neg (floats and signed ints),
// Clip (every numeric type). float16/bfloat16 compute in float. Integer
// negation wraps (-MIN == MIN).
#include <cmath>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// The bound of Clip from opset 11 on: an optional scalar input of X's type.
template <typename T>
Status ClipBound(KernelContext& ctx, uint32_t i, const char* what, Compute<T>* bound) {
  const TensorRef* t = ctx.input(i);
  if (!t) return Status::Ok();
  if (t->dtype != DtypeOf<T>())
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s is %s, expected %s like X", what,
                    dtype_name(t->dtype), dtype_name(DtypeOf<T>()));
  if (t->elements() != 1 || t->rank > 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", what,
                    ShapeOf(*t).s);
  *bound = Get(static_cast<const T*>(t->data), 0);
  return Status::Ok();
}

}  // namespace

// Relu, LeakyRelu and Clip on float run through the micro-kernel rows
// (uk::ActivateRow at the CPU's widest vectors), which compute the same
// function: a NaN becomes 0 in Relu and stays NaN in Clip.
Status Relu(KernelContext& ctx) {
  static constexpr uk::Act kRow = uk::Act::kRelu;
  return MapUnary<kFloats | kSignedInts>(
      ctx, [](auto v) { return v > 0 ? v : decltype(v)(0); }, &kRow);
}

Status LeakyRelu(KernelContext& ctx) {
  static constexpr uk::Act kRow = uk::Act::kLeaky;
  const float alpha = ctx.AttrFloat("alpha", 0.01f);
  return MapUnary<kFloats>(
      ctx, [alpha](auto v) { return v >= 0 ? v : alpha * v; }, &kRow, alpha);
}

Status Sigmoid(KernelContext& ctx) {
  // float: the micro-kernel's polynomial exp (within 3e-7); others: split by
  // sign so exp never overflows.
  static constexpr uk::Act kRow = uk::Act::kSigmoid;
  return MapUnary<kFloats>(
      ctx,
      [](auto v) {
        using C = decltype(v);
        if (v >= 0) return C(1) / (C(1) + std::exp(-v));
        const C e = std::exp(v);
        return e / (C(1) + e);
      },
      &kRow);
}

// com.microsoft QuickGelu: x * sigmoid(alpha * x) (ORT's default alpha
// 1.702). alpha 1 is SiLU (epctx-compile writes it for x * Sigmoid(x)): the
// micro-kernel row, whose sigmoid is Sigmoid's, so the product is the one
// the two ops computed.
Status QuickGelu(KernelContext& ctx) {
  static constexpr uk::Act kRow = uk::Act::kSwish;
  const float alpha = ctx.AttrFloat("alpha", 1.702f);
  return MapUnary<kFloats>(
      ctx,
      [alpha](auto v) {
        using C = decltype(v);
        const C a = C(alpha) * v;
        const C s = a >= 0 ? C(1) / (C(1) + std::exp(-a)) : std::exp(a) / (C(1) + std::exp(a));
        return v * s;
      },
      alpha == 1.0f ? &kRow : nullptr);
}

// com.microsoft Gelu: x * 0.5 * (1 + erf(x / sqrt(2))) (epctx-compile
// writes it for the exact GELU exporters decompose): the micro-kernel row
// with the Erf kernel's polynomials.
Status Gelu(KernelContext& ctx) {
  static constexpr uk::Act kRow = uk::Act::kGelu;
  return MapUnary<kFloats>(
      ctx,
      [](auto v) {
        using C = decltype(v);
        return v * (std::erf(v * C(0.70710678118654752)) + C(1)) * C(0.5);
      },
      &kRow, 0.70710678f, 0.5f);
}

Status HardSigmoid(KernelContext& ctx) {
  static constexpr uk::Act kRow = uk::Act::kHardSigmoid;
  const float alpha = ctx.AttrFloat("alpha", 0.2f);
  const float beta = ctx.AttrFloat("beta", 0.5f);
  return MapUnary<kFloats>(
      ctx,
      [alpha, beta](auto v) {
        using C = decltype(v);
        const C r = alpha * v + beta;
        return r < 0 ? C(0) : (r > 1 ? C(1) : r);
      },
      &kRow, alpha, beta);
}

Status Tanh(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::tanh(v); });
}
Status Exp(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::exp(v); });
}
Status Log(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::log(v); });
}
Status Sqrt(KernelContext& ctx) {
  return MapUnary<kFloats>(ctx, [](auto v) { return std::sqrt(v); });
}

Status Abs(KernelContext& ctx) {
  return MapUnary<kNumeric>(ctx, [](auto v) {
    using C = decltype(v);
    if constexpr (kIsFloatLike<C>) return std::fabs(v);
    else if constexpr (std::is_signed<C>::value) return v < 0 ? WrapNeg(v) : v;
    else return v;
  });
}

Status Neg(KernelContext& ctx) {
  return MapUnary<kFloats | kSignedInts>(ctx, [](auto v) {
    if constexpr (kIsFloatLike<decltype(v)>) return -v;
    else return WrapNeg(v);
  });
}

Status Clip(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  if (ctx.opset() < 11) {
    // Bounds are float attributes; the op is float-only then.
    const float lo = ctx.AttrFloat("min", -std::numeric_limits<float>::infinity());
    const float hi = ctx.AttrFloat("max", std::numeric_limits<float>::infinity());
    return MapUnary<kFloats>(ctx, [lo, hi](auto v) {
      using C = decltype(v);
      const C r = v < lo ? C(lo) : v;
      return r > hi ? C(hi) : r;
    });
  }
  Status st;
  const bool ok = Dispatch<kNumeric>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if constexpr (kIsFloatLike<T>) {
      lo = -std::numeric_limits<C>::infinity();
      hi = std::numeric_limits<C>::infinity();
    }
    st = ClipBound<T>(ctx, 1, "min", &lo);
    if (st.ok()) st = ClipBound<T>(ctx, 2, "max", &hi);
    if (!st.ok()) return;
    // As the spec's reference: min first, then max (so min > max gives max;
    // the row's clamp returns min there, so it takes ordered bounds only).
    static constexpr uk::Act kRow = uk::Act::kClip;
    const bool row = std::is_same<T, float>::value && lo <= hi;
    st = MapUnary<Bit(DtypeOf<T>())>(
        ctx,
        [lo, hi](auto v) {
          const C r = v < lo ? lo : v;
          return r > hi ? hi : r;
        },
        row ? &kRow : nullptr, static_cast<float>(lo), static_cast<float>(hi));
  });
  if (!ok) return UnsupportedDtype(ctx, "X", x->dtype);
  return st;
}

}  // namespace kern
}  // namespace epctx
