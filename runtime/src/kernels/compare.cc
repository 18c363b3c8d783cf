// SPDX-License-Identifier: Apache-2.0
// Comparison, logic and bit ops with numpy broadcasting: Equal (every
// numeric type and bool), Less, Greater, LessOrEqual, GreaterOrEqual
// (numeric), And, Or, Xor, Not (bool), BitShift (unsigned ints).
//
// BitShift by the type's width or more gives 0 (in C++ it is undefined; ORT
// shifts with the raw operator, so its result there is the CPU's).
#include "kernels/elementwise.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Equal(KernelContext& ctx) {
  return MapBinary<kAll, bool>(ctx, [](auto a, auto b) { return a == b; });
}
Status Less(KernelContext& ctx) {
  return MapBinary<kNumeric, bool>(ctx, [](auto a, auto b) { return a < b; });
}
Status Greater(KernelContext& ctx) {
  return MapBinary<kNumeric, bool>(ctx, [](auto a, auto b) { return a > b; });
}
Status LessOrEqual(KernelContext& ctx) {
  return MapBinary<kNumeric, bool>(ctx, [](auto a, auto b) { return a <= b; });
}
Status GreaterOrEqual(KernelContext& ctx) {
  return MapBinary<kNumeric, bool>(ctx, [](auto a, auto b) { return a >= b; });
}

constexpr uint32_t kBool = Bit(EPCTX_DTYPE_BOOL);

Status And(KernelContext& ctx) {
  return MapBinary<kBool>(ctx, [](bool a, bool b) { return a && b; });
}
Status Or(KernelContext& ctx) {
  return MapBinary<kBool>(ctx, [](bool a, bool b) { return a || b; });
}
Status Xor(KernelContext& ctx) {
  return MapBinary<kBool>(ctx, [](bool a, bool b) { return a != b; });
}
Status Not(KernelContext& ctx) {
  return MapUnary<kBool>(ctx, [](bool v) { return !v; });
}

Status BitShift(KernelContext& ctx) {
  const StrView dir = ctx.AttrString("direction", "");
  const bool left = dir.eq("LEFT");
  if (!left && !dir.eq("RIGHT"))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "attribute direction must be \"LEFT\" or \"RIGHT\", found \"%.*s\"",
                    static_cast<int>(dir.size > 64 ? 64 : dir.size), dir.data);
  return MapBinary<kUnsignedInts>(ctx, [left](auto a, auto b) {
    using C = decltype(a);
    // Shift in at least unsigned int so that uint8/uint16 never promote to
    // a signed int that a left shift could overflow.
    using W = decltype(a + 0u);
    if (b >= sizeof(C) * 8) return C(0);
    return static_cast<C>(left ? static_cast<W>(a) << b : static_cast<W>(a) >> b);
  });
}

}  // namespace kern
}  // namespace epctx
