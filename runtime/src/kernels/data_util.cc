// SPDX-License-Identifier: Apache-2.0
#include "kernels/data_util.h"

namespace epctx {
namespace kern {
namespace {

template <typename T>
void StridedCopy(uint32_t rank, const int64_t* dims, const int64_t* strides, const T* src, T* dst) {
  // Nothing to copy; the product of the other dims of an empty walk may
  // overflow (and would be a long loop of empty rows).
  for (uint32_t i = 0; i < rank; ++i)
    if (dims[i] == 0) return;
  const int64_t n = rank ? dims[rank - 1] : 1;
  const int64_t s = rank ? strides[rank - 1] : 1;
  int64_t outer = 1;
  for (uint32_t i = 0; i + 1 < rank; ++i) outer *= dims[i];
  int64_t idx[kMaxWalkRank] = {};
  int64_t off = 0;
  for (int64_t t = 0; t < outer; ++t) {
    const T* p = src + off;
    if (s == 1) {
      memcpy(dst, p, static_cast<size_t>(n) * sizeof(T));
    } else {
      for (int64_t j = 0; j < n; ++j) dst[j] = p[j * s];
    }
    dst += n;
    NextIndex(OuterRank(rank), dims, idx, strides, &off);
  }
}

}  // namespace

Status ElementSize(KernelContext& ctx, const TensorRef& t, const char* what, size_t* es) {
  *es = dtype_size(t.dtype);
  if (*es == 0 || *es > 8) return UnsupportedDtype(ctx, what, t.dtype);
  return Status::Ok();
}

Status IndexInput(KernelContext& ctx, uint32_t i, const char* what, const TensorRef** out) {
  EPCTX_RETURN_IF_ERROR(Input(ctx, i, what, out));
  if ((*out)->dtype != EPCTX_DTYPE_INT32 && (*out)->dtype != EPCTX_DTYPE_INT64)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be int32 or int64, found %s", what,
                    dtype_name((*out)->dtype));
  return Status::Ok();
}

Status ReadScalarInt(KernelContext& ctx, const TensorRef& t, const char* what, int64_t* out) {
  if (t.dtype != EPCTX_DTYPE_INT32 && t.dtype != EPCTX_DTYPE_INT64)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be int32 or int64, found %s", what,
                    dtype_name(t.dtype));
  if (t.rank > 1 || t.elements() != 1 || !t.data)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", what,
                    ShapeOf(t).s);
  *out = IndexAt(t, 0);
  return Status::Ok();
}

Status CheckIndices(KernelContext& ctx, const TensorRef& t, const char* what, int64_t dim) {
  const uint64_t n = t.elements();
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t v = IndexAt(t, i);
    if (v < -dim || v >= dim)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "%s[%llu] = %lld is out of range: expected [%lld, %lld]", what,
                      static_cast<unsigned long long>(i), static_cast<long long>(v),
                      static_cast<long long>(-dim), static_cast<long long>(dim - 1));
  }
  return Status::Ok();
}

Status CheckAxisIndexing(KernelContext& ctx, const TensorRef& x, const TensorRef& ind,
                         AxisIndexing* out) {
  const uint32_t r = x.rank;
  if (r == 0) return ctx.Fail(EPCTX_INVALID_ARGUMENT, "data must have rank >= 1, found a scalar");
  if (ind.rank != r)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "indices %s must have the rank of data %s",
                    ShapeOf(ind).s, ShapeOf(x).s);
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 0), r, "axis", &axis));
  for (uint32_t d = 0; d < r; ++d)
    if (d != axis && ind.dims[d] > x.dims[d])
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "indices %s exceeds data %s on axis %u (only axis %lld may differ)",
                      ShapeOf(ind).s, ShapeOf(x).s, d, static_cast<long long>(axis));
  EPCTX_RETURN_IF_ERROR(CheckIndices(ctx, ind, "indices", x.dims[axis]));
  int64_t xs[kMaxRank];
  Strides(r, x.dims, xs);
  for (uint32_t d = 0; d < r; ++d) out->walk[d] = d == axis ? 0 : xs[d];
  out->axis = axis;
  out->dim = x.dims[axis];
  out->axis_stride = xs[axis];
  return Status::Ok();
}

void StridedCopyBytes(size_t es, uint32_t rank, const int64_t* dims, const int64_t* strides,
                      const void* src, void* dst) {
  DispatchSize(es, [&](auto tag) {
    using U = decltype(tag);
    StridedCopy(rank, dims, strides, static_cast<const U*>(src), static_cast<U*>(dst));
  });
}

void FillBytes(void* dst, uint64_t n, size_t es, const void* value) {
  uint8_t* d = static_cast<uint8_t*>(dst);
  bool zero = true;
  for (size_t i = 0; i < es; ++i) zero = zero && static_cast<const uint8_t*>(value)[i] == 0;
  if (zero) {
    memset(d, 0, static_cast<size_t>(n * es));
    return;
  }
  DispatchSize(es, [&](auto tag) {
    using U = decltype(tag);
    U v;
    memcpy(&v, value, sizeof(U));
    U* p = static_cast<U*>(dst);
    for (uint64_t i = 0; i < n; ++i) p[i] = v;
  });
}

}  // namespace kern
}  // namespace epctx
