// SPDX-License-Identifier: Apache-2.0
// Ops that select or reorder input elements by data: Compress, NonZero,
// ReverseSequence. Output sizes that depend on values (Compress, NonZero)
// are counted in a first pass, then filled.
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

// Compress: the condition may be shorter than the axis (the rest counts as
// false) or longer (the excess is ignored), as in ORT.
Status Compress(KernelContext& ctx) {
  const TensorRef *x, *cond;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "condition", &cond));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "input", &es));
  if (cond->dtype != EPCTX_DTYPE_BOOL)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "condition must be bool, found %s",
                    dtype_name(cond->dtype));
  if (cond->rank != 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "condition must be 1-D, found shape %s",
                    ShapeOf(*cond).s);
  const bool has_axis = ctx.node().attr("axis") != nullptr;
  int64_t axis = 0;
  if (has_axis)
    EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 0), x->rank, "axis", &axis));
  const uint32_t a = static_cast<uint32_t>(axis);
  const int64_t len = has_axis ? x->dims[a] : static_cast<int64_t>(x->elements());
  const int64_t cl = static_cast<int64_t>(cond->elements());
  const int64_t valid = cl < len ? cl : len;
  const bool* c = static_cast<const bool*>(cond->data);
  int64_t kept = 0;
  for (int64_t i = 0; i < valid; ++i) kept += c[i] ? 1 : 0;
  int64_t dims[kMaxRank];
  uint32_t rank = 1;
  int64_t outer = 1, inner = 1;
  if (has_axis) {
    rank = x->rank;
    for (uint32_t d = 0; d < rank; ++d) dims[d] = x->dims[d];
    dims[a] = kept;
    Product(x->dims, 0, a, &outer);
    Product(x->dims, a + 1, x->rank, &inner);
  } else {
    dims[0] = kept;
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, rank, dims, &y));
  const size_t block = static_cast<size_t>(inner) * es;
  const uint8_t* src = static_cast<const uint8_t*>(x->data);
  uint8_t* out = static_cast<uint8_t*>(y->data);
  if (kept == 0 || block == 0) return Status::Ok();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < valid; ++i)
      if (c[i]) {
        memcpy(out, src + (o * len + i) * static_cast<int64_t>(block), block);
        out += block;
      }
  return Status::Ok();
}

// NonZero: int64 [rank, count] coordinates in row-major order; a scalar is
// treated as shape [1], as in ORT.
Status NonZero(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  const uint64_t n = x->elements();
  uint8_t* nz = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &nz));
  uint64_t count = 0;
  const bool ok = Dispatch<kAll>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(x->data);
    for (uint64_t i = 0; i < n; ++i) {
      nz[i] = Load(p[i]) != static_cast<Compute<T>>(0);
      count += nz[i];
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "X", x->dtype);
  const uint32_t r = x->rank ? x->rank : 1;
  const int64_t one = 1;
  const int64_t* dims = x->rank ? x->dims : &one;
  const int64_t out_dims[2] = {r, static_cast<int64_t>(count)};
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_INT64, 2, out_dims, &y));
  int64_t* out = static_cast<int64_t*>(y->data);
  int64_t idx[kMaxRank] = {};
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (nz[i]) {
      for (uint32_t d = 0; d < r; ++d) out[d * count + k] = idx[d];
      ++k;
    }
    for (uint32_t d = r; d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

Status ReverseSequence(KernelContext& ctx) {
  const TensorRef *x, *lens;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  EPCTX_RETURN_IF_ERROR(IndexInput(ctx, 1, "sequence_lens", &lens));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "input", &es));
  if (x->rank < 2)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input must have rank >= 2, found shape %s",
                    ShapeOf(*x).s);
  const int64_t ba = ctx.AttrInt("batch_axis", 1), ta = ctx.AttrInt("time_axis", 0);
  if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "batch_axis %lld and time_axis %lld must be 0 and 1 in some order",
                    static_cast<long long>(ba), static_cast<long long>(ta));
  const int64_t batch = x->dims[ba], steps = x->dims[ta];
  if (lens->rank != 1 || lens->dims[0] != batch)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "sequence_lens must have shape [%lld] (the batch axis of input %s), "
                    "found %s",
                    static_cast<long long>(batch), ShapeOf(*x).s, ShapeOf(*lens).s);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t l = IndexAt(*lens, static_cast<uint64_t>(b));
    if (l < 0 || l > steps)
      return ctx.Fail(
          EPCTX_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is out of range: expected [0, %lld]",
          static_cast<long long>(b), static_cast<long long>(l), static_cast<long long>(steps));
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  int64_t inner = 1;
  Product(x->dims, 2, x->rank, &inner);
  const size_t block = static_cast<size_t>(inner) * es;
  if (block == 0) return Status::Ok();
  // Offsets of (batch b, time t) blocks in units of `block`.
  const int64_t sb = ba == 0 ? steps : 1, st = ta == 0 ? batch : 1;
  const uint8_t* src = static_cast<const uint8_t*>(x->data);
  uint8_t* out = static_cast<uint8_t*>(y->data);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t l = IndexAt(*lens, static_cast<uint64_t>(b));
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < l ? l - 1 - t : t;
      memcpy(out + (b * sb + t * st) * static_cast<int64_t>(block),
             src + (b * sb + from * st) * static_cast<int64_t>(block), block);
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
