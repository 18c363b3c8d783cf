// SPDX-License-Identifier: Apache-2.0
// Cast (to = attribute) and CastLike (to = the dtype of input 1) between
// every pair of numeric types and bool: float, double, float16, bfloat16
// and the 8/16/32/64-bit signed and unsigned integers. Per element as
// ConvertElem: integer to integer wraps like a C++ conversion; floating to
// integer saturates at the target's range and NaN becomes 0 (undefined in
// C++; ORT's static_cast gives whatever the CPU does); to bool is "!= 0";
// double to float16/bfloat16 rounds through float, as ORT does.
//
// Not supported (NOT_IMPLEMENTED): string (a run's tensors are fixed-size
// elements; strings have no representation yet) and the float8 types.
#include <cstring>

#include "kernels/elementwise.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// From an integer or bool, conversion to an integer wraps, which gives a
// signed target the bits of its unsigned twin: those targets share the
// unsigned loop (and a same-size pair is a copy).
template <typename From>
constexpr bool kWrapsToInts = !kIsFloatLike<From>;

Status CastTo(KernelContext& ctx, const TensorRef& x, int32_t to) {
  Status st;
  bool to_ok = true;
  const bool from_ok = Dispatch<kAll>(x.dtype, [&](auto from_tag) {
    using From = decltype(from_tag);
    constexpr uint32_t kTo = kWrapsToInts<From> ? UnsignedTwins(kAll) : kAll;
    to_ok = Dispatch<kTo>(kWrapsToInts<From> ? UnsignedTwin(to) : to, [&](auto to_tag) {
      using To = decltype(to_tag);
      TensorRef* y = nullptr;
      st = ctx.AllocOutput(0, to, x.rank, x.dims, &y);
      if (!st.ok()) return;
      const uint64_t n = x.elements();
      const From* in = static_cast<const From*>(x.data);
      To* out = static_cast<To*>(y->data);
      constexpr bool kSameBits = std::is_same<From, To>::value ||
                                 (std::is_integral<From>::value && std::is_integral<To>::value &&
                                  !std::is_same<From, bool>::value && sizeof(From) == sizeof(To));
      if constexpr (kSameBits && !std::is_same<To, bool>::value) {
        if (n) memcpy(out, in, n * sizeof(To));
      } else {
        for (uint64_t i = 0; i < n; ++i)
          out[i] = ConvertElem<To, From>(Get(in, static_cast<int64_t>(i)));
      }
    });
  });
  if (!from_ok) return UnsupportedDtype(ctx, "input", x.dtype);
  if (!to_ok)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "cast to %s (%d) is not supported", dtype_name(to),
                    static_cast<int>(to));
  return st;
}

}  // namespace

Status Cast(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  const onnx::AttributeView* to_attr = ctx.node().attr("to");
  if (!to_attr || to_attr->type != onnx::AttrType::kInt)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute to is missing");
  const int64_t to = to_attr->i;
  if (to < 0 || to > 31)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute to is %lld, not a tensor element type",
                    static_cast<long long>(to));
  return CastTo(ctx, *x, static_cast<int32_t>(to));
}

Status CastLike(KernelContext& ctx) {
  const TensorRef *x, *like;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "target_type", &like));
  return CastTo(ctx, *x, like->dtype);
}

}  // namespace kern
}  // namespace epctx
