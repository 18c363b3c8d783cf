// SPDX-License-Identifier: Apache-2.0
// Arithmetic with numpy broadcasting on every numeric dtype: Add, Sub, Mul,
// Div, Mod, the variadic Max, Min, Sum, Mean, and Pow (base float, double,
// float16, bfloat16, int32 or int64; exponent of any numeric type).
//
// Integer arithmetic wraps like two's complement (signed overflow would be
// undefined), so Add, Sub, Mul and Sum run signed integers as their unsigned
// twins (same bits, half the code); integer division or Mod by zero is INVALID_ARGUMENT (ORT
// crashes). Max/Min propagate NaN, as ORT's Eigen PropagateNaN does. Pow
// computes in float when base and exponent are both float (or float16/
// bfloat16 of one type), else in double, then converts like Cast (ORT's
// static_cast of std::pow; an out-of-range integer result saturates here
// where ORT's is undefined).
#include <cmath>

#include "kernels/elementwise.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

template <typename C>
C Max2(C a, C b) {
  return (a < b || b != b) ? b : a;
}
template <typename C>
C Min2(C a, C b) {
  return (b < a || b != b) ? b : a;
}

// Floored modulo (the result has the divisor's sign), as Python's %.
template <typename C>
C FlooredMod(C a, C b) {
  if constexpr (std::is_signed<C>::value) {
    if (b == -1) return 0;  // a % -1 is 0; MIN % -1 would trap
    const C r = static_cast<C>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(r + b) : r;
  } else {
    return static_cast<C>(a % b);
  }
}

// Truncated modulo (the result has the dividend's sign), as C's fmod.
template <typename C>
C TruncatedMod(C a, C b) {
  if constexpr (kIsFloatLike<C>) {
    return std::fmod(a, b);
  } else if constexpr (std::is_signed<C>::value) {
    return b == -1 ? C(0) : static_cast<C>(a % b);
  } else {
    return static_cast<C>(a % b);
  }
}

constexpr uint32_t kPowBase = kFloats | Bit(EPCTX_DTYPE_INT32) | Bit(EPCTX_DTYPE_INT64);

}  // namespace

Status Add(KernelContext& ctx) {
  static constexpr uk::Bin kRow = uk::Bin::kAdd;
  return MapBinary<kNumeric, SameType, Ints::kAsUnsigned>(
      ctx,
      [](auto a, auto b) {
        if constexpr (kIsFloatLike<decltype(a)>) return a + b;
        else return WrapAdd(a, b);
      },
      Divisor::kAny, "A", "B", Operands::kInOrder, &kRow);
}

Status Sub(KernelContext& ctx) {
  static constexpr uk::Bin kRow = uk::Bin::kSub;
  return MapBinary<kNumeric, SameType, Ints::kAsUnsigned>(
      ctx,
      [](auto a, auto b) {
        if constexpr (kIsFloatLike<decltype(a)>) return a - b;
        else return WrapSub(a, b);
      },
      Divisor::kAny, "A", "B", Operands::kInOrder, &kRow);
}

Status Mul(KernelContext& ctx) {
  static constexpr uk::Bin kRow = uk::Bin::kMul;
  return MapBinary<kNumeric, SameType, Ints::kAsUnsigned>(
      ctx,
      [](auto a, auto b) {
        if constexpr (kIsFloatLike<decltype(a)>) return a * b;
        else return WrapMul(a, b);
      },
      Divisor::kAny, "A", "B", Operands::kInOrder, &kRow);
}

Status Div(KernelContext& ctx) {
  static constexpr uk::Bin kDivRow = uk::Bin::kDiv;
  return MapBinary<kNumeric>(
      ctx,
      [](auto a, auto b) {
        using C = decltype(a);
        // Divisors were checked for zero; MIN / -1 wraps to MIN.
        if constexpr (std::is_signed<C>::value && !kIsFloatLike<C>) {
          if (b == -1) return WrapNeg(a);
        }
        return static_cast<C>(a / b);
      },
      Divisor::kNonZeroInt, "A", "B", Operands::kInOrder, &kDivRow);
}

Status Mod(KernelContext& ctx) {
  const int64_t fmod = ctx.AttrInt("fmod", 0);
  if (fmod != 0 && fmod != 1)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute fmod must be 0 or 1, found %lld",
                    static_cast<long long>(fmod));
  if (fmod == 1)
    return MapBinary<kNumeric>(
        ctx, [](auto a, auto b) { return TruncatedMod(a, b); }, Divisor::kNonZeroInt);
  const TensorRef* a;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "A", &a));
  if (InMask(a->dtype, kFloats))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "attribute fmod must be 1 for %s inputs, found 0 (integer modulo)",
                    dtype_name(a->dtype));
  return MapBinary<kInts>(
      ctx, [](auto a, auto b) { return FlooredMod(a, b); }, Divisor::kNonZeroInt);
}

Status Max(KernelContext& ctx) {
  return MapVariadic<kNumeric>(ctx, [](auto a, auto b) { return Max2(a, b); });
}
Status Min(KernelContext& ctx) {
  return MapVariadic<kNumeric>(ctx, [](auto a, auto b) { return Min2(a, b); });
}

Status Sum(KernelContext& ctx) {
  return MapVariadic<kNumeric, Ints::kAsUnsigned>(ctx, [](auto a, auto b) {
    if constexpr (kIsFloatLike<decltype(a)>) return a + b;
    else return WrapAdd(a, b);
  });
}

Status Mean(KernelContext& ctx) {
  return MapVariadic<kFloats>(
      ctx, [](auto a, auto b) { return a + b; }, /*mean=*/true);
}

Status Pow(KernelContext& ctx) {
  const TensorRef *x, *e;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "Y", &e));
  Broadcast bc;
  EPCTX_RETURN_IF_ERROR(MakeBroadcast(ctx, x->rank, x->dims, e->rank, e->dims, &bc));
  const auto pow = [](auto a, auto b) {
    using C = decltype(a);
    if constexpr (std::is_same<C, float>::value && std::is_same<decltype(b), float>::value) {
      return b == 2.0f ? a * a : std::pow(a, b);
    } else {
      return ConvertElem<C, double>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  };
  if (!InMask(x->dtype, kPowBase)) return UnsupportedDtype(ctx, "X", x->dtype);
  // An exponent of another type is converted to double once, so the kernel
  // exists per base type rather than per (base, exponent) pair, and the
  // conversion per exponent type rather than per pair.
  const double* exps = nullptr;
  if (e->dtype != x->dtype) {
    double* conv = nullptr;
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, e->elements(), &conv));
    if (!Dispatch<kNumeric>(e->dtype, [&](auto exp_tag) {
          using E = decltype(exp_tag);
          const E* src = static_cast<const E*>(e->data);
          const uint64_t n = e->elements();
          for (uint64_t i = 0; i < n; ++i)
            conv[i] = ConvertElem<double, E>(Get(src, static_cast<int64_t>(i)));
        }))
      return UnsupportedDtype(ctx, "exponent Y", e->dtype);
    exps = conv;
  }
  Status st;
  Dispatch<kPowBase>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    TensorRef* z = nullptr;
    st = ctx.AllocOutput(0, DtypeOf<T>(), bc.out_rank, bc.out_dims, &z);
    if (!st.ok() || z->elements() == 0) return;
    const T* base = static_cast<const T*>(x->data);
    T* out = static_cast<T*>(z->data);
    if (exps) {
      RunRows(bc, base, exps, out, pow);
    } else {
      RunRows(bc, base, static_cast<const T*>(e->data), out, pow);
    }
  });
  return st;
}

}  // namespace kern
}  // namespace epctx
