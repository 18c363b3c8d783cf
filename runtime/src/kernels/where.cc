// SPDX-License-Identifier: Apache-2.0
// Where(condition, X, Y): X where condition else Y, with numpy broadcasting
// of all three operands; X and Y share any dtype, condition is bool.
//
// Three operands do not fit the two-operand Broadcast, so each operand gets
// strides aligned to the output (0 along broadcast axes) and one odometer
// walks the output's outer axes while the innermost axis runs as a loop.
#include "kernels/elementwise.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// Element strides of an operand inside the output shape of rank R,
// 0 along axes where the operand has size 1 or is missing. All 0 for an
// empty operand (the output is empty then too), whose other dims may be
// huge enough to overflow the products.
void AlignedStrides(const TensorRef& t, uint32_t R, int64_t* s) {
  if (t.elements() == 0) {
    for (uint32_t i = 0; i < R; ++i) s[i] = 0;
    return;
  }
  int64_t stride = 1;
  for (uint32_t i = R; i-- > 0;) {
    const uint32_t from_end = R - 1 - i;
    const int64_t dim = from_end < t.rank ? t.dims[t.rank - 1 - from_end] : 1;
    s[i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
}

}  // namespace

Status Where(KernelContext& ctx) {
  const TensorRef *c, *x, *y;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "condition", &c));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "X", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "Y", &y));
  if (c->dtype != EPCTX_DTYPE_BOOL)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "condition is %s, expected bool", dtype_name(c->dtype));
  EPCTX_RETURN_IF_ERROR(SameDtype(ctx, *x, "X", *y, "Y"));
  uint32_t r1, rank;
  int64_t d1[kMaxRank], dims[kMaxRank];
  EPCTX_RETURN_IF_ERROR(BroadcastShape(ctx, c->rank, c->dims, x->rank, x->dims, &r1, d1));
  EPCTX_RETURN_IF_ERROR(BroadcastShape(ctx, r1, d1, y->rank, y->dims, &rank, dims));
  int64_t sc[kMaxRank], sx[kMaxRank], sy[kMaxRank];
  AlignedStrides(*c, rank, sc);
  AlignedStrides(*x, rank, sx);
  AlignedStrides(*y, rank, sy);
  if (!InMask(x->dtype, kAll)) return UnsupportedDtype(ctx, "X", x->dtype);
  TensorRef* out = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, rank, dims, &out));
  const uint64_t total = out->elements();
  if (total == 0) return Status::Ok();
  // Values are copied, not computed: one loop per element size.
  auto select = [&](auto tag) {
    using S = decltype(tag);
    const int64_t n = rank ? dims[rank - 1] : 1;
    const int64_t dc = rank ? sc[rank - 1] : 0;
    const int64_t dx = rank ? sx[rank - 1] : 0;
    const int64_t dy = rank ? sy[rank - 1] : 0;
    const bool* C = static_cast<const bool*>(c->data);
    const S* X = static_cast<const S*>(x->data);
    const S* Y = static_cast<const S*>(y->data);
    S* O = static_cast<S*>(out->data);
    int64_t idx_cx[kMaxRank] = {}, idx_y[kMaxRank] = {};
    int64_t oc = 0, ox = 0, oy = 0;
    const uint64_t outer = total / static_cast<uint64_t>(n);
    for (uint64_t t = 0; t < outer; ++t) {
      S* row = O + t * static_cast<uint64_t>(n);
      for (int64_t i = 0; i < n; ++i)
        row[i] = Get(C, oc + i * dc) ? X[ox + i * dx] : Y[oy + i * dy];
      NextIndex(OuterRank(rank), dims, idx_cx, sc, &oc, sx, &ox);
      NextIndex(OuterRank(rank), dims, idx_y, sy, &oy);
    }
  };
  DispatchSize(dtype_size(x->dtype), select);
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
