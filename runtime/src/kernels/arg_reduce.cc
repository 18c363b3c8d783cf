// SPDX-License-Identifier: Apache-2.0
// ArgMax, ArgMin: the int64 index of the largest / smallest element along
// `axis` (keepdims, select_last_index from opset 12), for every numeric type
// (float16/bfloat16 compared as float). Ties go to the first index, or the
// last with select_last_index=1. Comparisons are strict as in ORT's CPU
// kernel, so a NaN wins only when it is the first element it is compared
// against. An empty axis has no answer: INVALID_ARGUMENT.
#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/reduce_layout.h"

namespace epctx {
namespace kern {
namespace {

template <typename T, bool kMax>
void RunArg(const TensorRef& x, const ReduceLayout& l, bool last, int64_t* out) {
  const T* in = static_cast<const T*>(x.data);
  ForEachGroup(l, [&](int64_t o, int64_t base) {
    Compute<T> best = Load(in[base]);
    int64_t best_i = 0, i = 0;
    ForEachInGroup(l, base, [&](int64_t off) {
      const Compute<T> v = Load(in[off]);
      const bool better = kMax ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
      if (better) {
        best = v;
        best_i = i;
      }
      ++i;
    });
    out[o] = best_i;
  });
}

template <bool kMax>
Status ArgOp(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  if (!InMask(x->dtype, kNumeric)) return UnsupportedDtype(ctx, "data", x->dtype);
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 0), x->rank, "axis", &axis));
  const bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  const bool last = ctx.opset() >= 12 && ctx.AttrInt("select_last_index", 0) != 0;
  bool reduced[kMaxRank] = {};
  reduced[axis] = true;
  int64_t ydims[kMaxRank];
  uint32_t yrank = 0;
  for (uint32_t i = 0; i < x->rank; ++i) {
    if (!reduced[i]) ydims[yrank++] = x->dims[i];
    else if (keepdims) ydims[yrank++] = 1;
  }
  ReduceLayout l;
  MakeReduceLayout(x->rank, x->dims, reduced, &l);
  if (l.group == 0 && l.outputs > 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "cannot take the index of an extreme along the empty axis %lld of data %s",
                    static_cast<long long>(axis), ShapeOf(*x).s);
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_INT64, yrank, ydims, &y));
  int64_t* out = static_cast<int64_t*>(y->data);
  Dispatch<kNumeric>(x->dtype, [&](auto tag) { RunArg<decltype(tag), kMax>(*x, l, last, out); });
  return Status::Ok();
}

}  // namespace

Status ArgMax(KernelContext& ctx) { return ArgOp<true>(ctx); }
Status ArgMin(KernelContext& ctx) { return ArgOp<false>(ctx); }

}  // namespace kern
}  // namespace epctx
