// SPDX-License-Identifier: Apache-2.0
// Trilu (opset 14): keeps the upper or lower triangle of the last two axes,
// shifted by the optional diagonal offset k, and zeroes the rest. Works on
// bytes, so every dtype is supported (zero is all-zero bits for each).
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Trilu(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "input", &es));
  if (x->rank < 2)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input must have rank >= 2, found shape %s",
                    ShapeOf(*x).s);
  int64_t k = 0;
  if (const TensorRef* kt = ctx.input(1)) EPCTX_RETURN_IF_ERROR(ReadScalarInt(ctx, *kt, "k", &k));
  const bool upper = ctx.AttrInt("upper", 1) != 0;
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  // An empty input may have huge dims beside its zero: no rows to walk.
  if (x->elements() == 0) return Status::Ok();
  const int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  int64_t batches = 1;
  Product(x->dims, 0, x->rank - 2, &batches);
  // Clamp k so i + k never overflows; beyond +-(rows + cols) all are alike.
  const int64_t lim = rows + cols + 1;
  k = k < -lim ? -lim : (k > lim ? lim : k);
  const size_t row_bytes = static_cast<size_t>(cols) * es;
  const uint8_t* src = static_cast<const uint8_t*>(x->data);
  uint8_t* dst = static_cast<uint8_t*>(y->data);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      // Keep columns [lo, hi): upper keeps j >= i + k, lower keeps j <= i + k.
      int64_t lo = upper ? i + k : 0;
      int64_t hi = upper ? cols : i + k + 1;
      lo = lo < 0 ? 0 : (lo > cols ? cols : lo);
      hi = hi < lo ? lo : (hi > cols ? cols : hi);
      memset(dst, 0, row_bytes);
      if (hi > lo)
        memcpy(dst + lo * static_cast<int64_t>(es), src + lo * static_cast<int64_t>(es),
               static_cast<size_t>(hi - lo) * es);
      src += row_bytes;
      dst += row_bytes;
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
