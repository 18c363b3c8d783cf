// SPDX-License-Identifier: Apache-2.0
// Data movement for any element type (by element size): Transpose, Concat,
// Slice, Gather.
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status Transpose(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "data", &es));
  const uint32_t r = x->rank;
  int64_t perm[kMaxRank];
  const int64_t* pv = nullptr;
  uint32_t pn = 0;
  if (ctx.AttrInts("perm", &pv, &pn)) {
    if (pn != r)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "perm has %u values, expected rank %u of %s", pn, r,
                      ShapeOf(*x).s);
    bool seen[kMaxRank] = {};
    for (uint32_t i = 0; i < r; ++i) {
      if (pv[i] < 0 || pv[i] >= r || seen[pv[i]])
        return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                        "perm is not a permutation of [0, %u): perm[%u] = %lld", r, i,
                        static_cast<long long>(pv[i]));
      seen[pv[i]] = true;
      perm[i] = pv[i];
    }
  } else {
    for (uint32_t i = 0; i < r; ++i) perm[i] = r - 1 - i;
  }
  int64_t in_strides[kMaxRank], dims[kMaxRank], strides[kMaxRank];
  Strides(r, x->dims, in_strides);
  for (uint32_t i = 0; i < r; ++i) {
    dims[i] = x->dims[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, dims, &y));
  if (y->elements() == 0) return Status::Ok();
  StridedCopyBytes(es, r, dims, strides, x->data, y->data);
  return Status::Ok();
}

Status Concat(KernelContext& ctx) {
  if (ctx.num_inputs() == 0)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "expected at least one input, found none");
  const TensorRef* first;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "inputs[0]", &first));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *first, "inputs[0]", &es));
  if (!ctx.node().attr("axis")) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute axis is missing");
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 0), first->rank, "axis", &axis));
  const uint32_t a = static_cast<uint32_t>(axis);
  int64_t dims[kMaxRank];
  for (uint32_t d = 0; d < first->rank; ++d) dims[d] = first->dims[d];
  dims[a] = 0;
  for (uint32_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorRef* t;
    EPCTX_RETURN_IF_ERROR(Input(ctx, i, "inputs", &t));
    if (t->dtype != first->dtype)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input %u is %s, expected %s like input 0", i,
                      dtype_name(t->dtype), dtype_name(first->dtype));
    bool ok = t->rank == first->rank;
    for (uint32_t d = 0; ok && d < t->rank; ++d) ok = d == a || t->dims[d] == first->dims[d];
    if (!ok)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "input %u has shape %s, expected %s except on axis %u", i, ShapeOf(*t).s,
                      ShapeOf(*first).s, a);
    if (__builtin_add_overflow(dims[a], t->dims[a], &dims[a]))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "concatenated axis overflows");
  }
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, first->rank, dims, es, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, first->dtype, first->rank, dims, &y));
  int64_t outer = 1, inner = 1;
  Product(dims, 0, a, &outer);
  Product(dims, a + 1, first->rank, &inner);
  uint8_t* out = static_cast<uint8_t*>(y->data);
  const int64_t out_row = dims[a] * inner * static_cast<int64_t>(es);
  int64_t col = 0;
  for (uint32_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorRef* t = ctx.input(i);
    const int64_t row = t->dims[a] * inner * static_cast<int64_t>(es);
    const uint8_t* src = static_cast<const uint8_t*>(t->data);
    if (row > 0)
      for (int64_t o = 0; o < outer; ++o)
        memcpy(out + o * out_row + col, src + o * row, static_cast<size_t>(row));
    col += row;
  }
  return Status::Ok();
}

Status Slice(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "data", &es));
  const uint32_t r = x->rank;
  int64_t starts[kMaxRank], ends[kMaxRank], axes[kMaxRank], steps[kMaxRank];
  uint32_t ns = 0, ne = 0, na = 0, nst = 0;
  bool have_axes = false, have_steps = false;
  if (ctx.opset() < 10) {
    bool present;
    EPCTX_RETURN_IF_ERROR(ReadIntsAttr(ctx, "starts", starts, &ns, &present));
    if (!present) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute starts is missing");
    EPCTX_RETURN_IF_ERROR(ReadIntsAttr(ctx, "ends", ends, &ne, &present));
    if (!present) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute ends is missing");
    EPCTX_RETURN_IF_ERROR(ReadIntsAttr(ctx, "axes", axes, &na, &have_axes));
  } else {
    const TensorRef* t;
    EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "starts", &t));
    EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *t, "starts", starts, kMaxRank, &ns));
    EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "ends", &t));
    EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *t, "ends", ends, kMaxRank, &ne));
    if ((t = ctx.input(3)) != nullptr) {
      EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *t, "axes", axes, kMaxRank, &na));
      have_axes = true;
    }
    if ((t = ctx.input(4)) != nullptr) {
      EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *t, "steps", steps, kMaxRank, &nst));
      have_steps = true;
    }
  }
  if (ne != ns || (have_axes && na != ns) || (have_steps && nst != ns))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "starts, ends, axes and steps must have one length: %u, %u, %u, %u", ns, ne,
                    have_axes ? na : ns, have_steps ? nst : ns);
  int64_t first[kMaxRank], step[kMaxRank], dims[kMaxRank];
  bool seen[kMaxRank] = {};
  for (uint32_t i = 0; i < r; ++i) {
    first[i] = 0;
    step[i] = 1;
    dims[i] = x->dims[i];
  }
  for (uint32_t i = 0; i < ns; ++i) {
    int64_t a = i;
    if (have_axes) EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, axes[i], r, "axes value", &a));
    else if (i >= r)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%u starts for data of rank %u", ns, r);
    if (seen[a])
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "axis %lld is sliced twice",
                      static_cast<long long>(a));
    seen[a] = true;
    const int64_t st = have_steps ? steps[i] : 1;
    if (st == 0) return ctx.Fail(EPCTX_INVALID_ARGUMENT, "steps[%u] is 0", i);
    const int64_t dim = x->dims[a];
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count;
    if (st > 0) {
      s = s < 0 ? 0 : (s > dim ? dim : s);
      e = e < 0 ? 0 : (e > dim ? dim : e);
      count = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = s < -1 ? -1 : (s > dim - 1 ? dim - 1 : s);
      e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
      // -st cannot overflow for st == INT64_MIN? It can: treat as huge step.
      const int64_t mag = st == INT64_MIN ? INT64_MAX : -st;
      count = s > e ? (s - e - 1) / mag + 1 : 0;
    }
    first[a] = count > 0 ? s : 0;
    step[a] = st;
    dims[a] = count;
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, dims, &y));
  if (y->elements() == 0) return Status::Ok();
  int64_t in_strides[kMaxRank], strides[kMaxRank];
  Strides(r, x->dims, in_strides);
  int64_t off = 0;
  for (uint32_t i = 0; i < r; ++i) {
    off += first[i] * in_strides[i];
    strides[i] = step[i] * in_strides[i];
  }
  StridedCopyBytes(es, r, dims, strides,
                   static_cast<const uint8_t*>(x->data) + off * static_cast<int64_t>(es), y->data);
  return Status::Ok();
}

Status Gather(KernelContext& ctx) {
  const TensorRef *x, *ind;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "indices", &ind));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "data", &es));
  if (ind->dtype != EPCTX_DTYPE_INT32 && ind->dtype != EPCTX_DTYPE_INT64)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "indices must be int32 or int64, found %s",
                    dtype_name(ind->dtype));
  if (x->rank == 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "data must have rank >= 1, found a scalar");
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 0), x->rank, "axis", &axis));
  const uint32_t a = static_cast<uint32_t>(axis);
  const uint32_t out_rank = x->rank - 1 + ind->rank;
  if (out_rank > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "output rank %u exceeds %d", out_rank, kMaxRank);
  int64_t dims[kMaxRank];
  uint32_t k = 0;
  for (uint32_t i = 0; i < a; ++i) dims[k++] = x->dims[i];
  for (uint32_t i = 0; i < ind->rank; ++i) dims[k++] = ind->dims[i];
  for (uint32_t i = a + 1; i < x->rank; ++i) dims[k++] = x->dims[i];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, out_rank, dims, es, "output"));
  const int64_t dim = x->dims[a];
  const uint64_t n_ind = ind->elements();
  // Validate every index before writing anything.
  for (uint64_t i = 0; i < n_ind; ++i) {
    const int64_t v = IndexAt(*ind, i);
    if (v < -dim || v >= dim)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "indices[%llu] = %lld is out of range: expected [%lld, %lld] "
                      "for axis %u of data %s",
                      static_cast<unsigned long long>(i), static_cast<long long>(v),
                      static_cast<long long>(-dim), static_cast<long long>(dim - 1), a,
                      ShapeOf(*x).s);
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, out_rank, dims, &y));
  if (y->elements() == 0) return Status::Ok();
  int64_t outer = 1, inner = 1;
  Product(x->dims, 0, a, &outer);
  Product(x->dims, a + 1, x->rank, &inner);
  const size_t block = static_cast<size_t>(inner) * es;
  const uint8_t* src = static_cast<const uint8_t*>(x->data);
  uint8_t* dst = static_cast<uint8_t*>(y->data);
  for (int64_t o = 0; o < outer; ++o) {
    for (uint64_t i = 0; i < n_ind; ++i) {
      int64_t v = IndexAt(*ind, i);
      if (v < 0) v += dim;
      memcpy(dst, src + (o * dim + v) * static_cast<int64_t>(block), block);
      dst += block;
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
