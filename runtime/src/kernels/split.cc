// SPDX-License-Identifier: Apache-2.0
// Split: cuts the input along one axis into the node's outputs.
//
// Sizes come from the `split` attribute (opset 2-12) or input (13+); without
// them the axis is cut into equal parts, one per output, which must divide
// it evenly, except that from opset 18 `num_outputs` allows a smaller last
// part (ceil(dim / n) per part, as ORT does).
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Split(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "input", &es));
  if (x->rank == 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input must have rank >= 1, found a scalar");
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 0), x->rank, "axis", &axis));
  const uint32_t a = static_cast<uint32_t>(axis);
  const uint32_t n = ctx.num_outputs();
  if (n == 0) return ctx.Fail(EPCTX_INVALID_GRAPH, "the node has no outputs");
  const int64_t dim = x->dims[a];
  int64_t* sizes = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &sizes));
  // The explicit sizes, from the attribute or the input.
  const int64_t* attr = nullptr;
  uint32_t count = 0;
  bool given = false;
  const TensorRef* split_in = nullptr;
  if (ctx.opset() < 13) {
    given = ctx.AttrInts("split", &attr, &count);
  } else if ((split_in = ctx.input(1)) != nullptr) {
    if (split_in->dtype != EPCTX_DTYPE_INT64 && split_in->dtype != EPCTX_DTYPE_INT32)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "split must be int64, found %s",
                      dtype_name(split_in->dtype));
    if (split_in->rank > 1)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "split must be 1-D, found shape %s",
                      ShapeOf(*split_in).s);
    given = true;
    const uint64_t c = split_in->elements();
    count = c > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(c);
  }
  if (given) {
    if (count != n)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "split has %u values but the node has %u outputs",
                      count, n);
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; ++i) {
      sizes[i] = attr ? attr[i] : IndexAt(*split_in, i);
      if (sizes[i] < 0 || __builtin_add_overflow(sum, sizes[i], &sum))
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "split[%u] is %lld, expected >= 0", i,
                        static_cast<long long>(sizes[i]));
    }
    if (sum != dim)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "split sums to %lld but axis %u of input %s has %lld",
                      static_cast<long long>(sum), a, ShapeOf(*x).s, static_cast<long long>(dim));
  } else {
    const bool has_num = ctx.opset() >= 18 && ctx.node().attr("num_outputs");
    if (has_num && ctx.AttrInt("num_outputs", 0) != n)
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "attribute num_outputs is %lld but the node has %u "
                      "outputs",
                      static_cast<long long>(ctx.AttrInt("num_outputs", 0)), n);
    int64_t part = dim / n;
    if (dim % n != 0) {
      part += 1;
      if (!has_num || part * (n - 1) > dim)
        return ctx.Fail(
            EPCTX_INVALID_ARGUMENT, "axis %u of input %s (%lld) cannot be split into %u %s parts",
            a, ShapeOf(*x).s, static_cast<long long>(dim), n, has_num ? "non-empty" : "equal");
    }
    for (uint32_t i = 0; i < n; ++i) sizes[i] = i + 1 < n ? part : dim - part * (n - 1);
  }
  int64_t outer = 1, inner = 1;
  Product(x->dims, 0, a, &outer);
  Product(x->dims, a + 1, x->rank, &inner);
  const size_t in_row = static_cast<size_t>(dim * inner) * es;
  const uint8_t* src = static_cast<const uint8_t*>(x->data);
  int64_t first = 0;
  for (uint32_t i = 0; i < n; ++i) {
    int64_t dims[kMaxRank];
    for (uint32_t d = 0; d < x->rank; ++d) dims[d] = x->dims[d];
    dims[a] = sizes[i];
    TensorRef* y = nullptr;
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(i, x->dtype, x->rank, dims, &y));
    const size_t row = static_cast<size_t>(sizes[i] * inner) * es;
    uint8_t* dst = static_cast<uint8_t*>(y->data);
    if (row)
      for (int64_t o = 0; o < outer; ++o)
        memcpy(dst + o * row, src + o * in_row + first * inner * static_cast<int64_t>(es), row);
    first += sizes[i];
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
