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
  // Integer equality is equality of bits: signed types run as unsigned.
  return MapBinary<kAll, bool, Ints::kAsUnsigned>(ctx, [](auto a, auto b) { return a == b; });
}
namespace {

// Greater is Less with the operands exchanged and GreaterOrEqual is
// LessOrEqual exchanged (not "not Less": NaN compares false both ways), so
// one instantiation serves each pair.
struct LessOp {
  template <typename C>
  bool operator()(C a, C b) const {
    return a < b;
  }
};
struct LessEqualOp {
  template <typename C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};

template <typename Op>
Status Compare(KernelContext& ctx, Operands order) {
  return MapBinary<kNumeric, bool>(ctx, Op{}, Divisor::kAny, "A", "B", order);
}

}  // namespace

Status Less(KernelContext& ctx) { return Compare<LessOp>(ctx, Operands::kInOrder); }
Status Greater(KernelContext& ctx) { return Compare<LessOp>(ctx, Operands::kSwapped); }
Status LessOrEqual(KernelContext& ctx) { return Compare<LessEqualOp>(ctx, Operands::kInOrder); }
Status GreaterOrEqual(KernelContext& ctx) { return Compare<LessEqualOp>(ctx, Operands::kSwapped); }

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
