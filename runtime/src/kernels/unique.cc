// SPDX-License-Identifier: Apache-2.0
// Unique (opset 11): the distinct elements (no axis: of the flattened
// input) or distinct slices along `axis`, with all four outputs: Y, the
// index of each one's first occurrence, the inverse indices and counts.
//
// Items are ordered by MergeSort (data_util.h, stable) over an index
// array, equal runs become groups, and for sorted = 0 groups are
// renumbered by first occurrence. Floats order NaN after every number and
// treat all NaNs as one value; slices compare lexicographically, as numpy
// does.
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

template <typename T>
int CompareElem(T a, T b) {
  const auto x = Load(a), y = Load(b);
  if constexpr (kIsFloatLike<T>) {
    const bool xn = x != x, yn = y != y;
    if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
  }
  return x < y ? -1 : (y < x ? 1 : 0);
}

// Item i is the slice {(o, i, k)} of the [outer, items, inner] view.
template <typename T>
struct Items {
  const T* data;
  int64_t items, inner, outer;
  int Compare(int64_t i, int64_t j) const {
    for (int64_t o = 0; o < outer; ++o) {
      const T* a = data + (o * items + i) * inner;
      const T* b = data + (o * items + j) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        const int c = CompareElem(a[k], b[k]);
        if (c) return c;
      }
    }
    return 0;
  }
};

}  // namespace

Status Unique(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  size_t es;
  EPCTX_RETURN_IF_ERROR(ElementSize(ctx, *x, "X", &es));
  const bool has_axis = ctx.node().attr("axis") != nullptr;
  const bool sorted = ctx.AttrInt("sorted", 1) != 0;
  int64_t axis = 0, items = static_cast<int64_t>(x->elements()), inner = 1, outer = 1;
  if (has_axis) {
    EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 0), x->rank, "axis", &axis));
    items = x->dims[axis];
    Product(x->dims, 0, static_cast<uint32_t>(axis), &outer);
    Product(x->dims, static_cast<uint32_t>(axis) + 1, x->rank, &inner);
  }
  const uint64_t n = static_cast<uint64_t>(items);
  int64_t *order, *tmp, *group_of, *first, *counts, *remap;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &order));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &tmp));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &group_of));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &first));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &counts));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &remap));
  for (int64_t i = 0; i < items; ++i) order[i] = i;
  int64_t groups = 0;
  const bool ok = Dispatch<kAll>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    const Items<T> it{static_cast<const T*>(x->data), items, inner, outer};
    MergeSort(order, tmp, items, it);
    for (int64_t s = 0; s < items; ++s) {
      if (s == 0 || it.Compare(order[s - 1], order[s]) != 0) {
        first[groups] = order[s];  // stable: the earliest of its run
        counts[groups++] = 0;
      }
      group_of[order[s]] = groups - 1;
      ++counts[groups - 1];
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "X", x->dtype);
  // remap[g]: the output position of group g.
  if (sorted) {
    for (int64_t g = 0; g < groups; ++g) remap[g] = g;
  } else {
    int64_t next = 0;
    for (int64_t i = 0; i < items; ++i)
      if (first[group_of[i]] == i) remap[group_of[i]] = next++;
  }
  // Output order of groups (the inverse of remap).
  for (int64_t g = 0; g < groups; ++g) tmp[remap[g]] = g;
  const uint32_t nout = ctx.num_outputs();
  int64_t dims[kMaxRank];
  uint32_t rank = 1;
  dims[0] = groups;
  if (has_axis) {
    rank = x->rank;
    for (uint32_t d = 0; d < rank; ++d) dims[d] = x->dims[d];
    dims[axis] = groups;
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, rank, dims, &y));
  const size_t block = static_cast<size_t>(inner) * es;
  const uint8_t* src = static_cast<const uint8_t*>(x->data);
  uint8_t* out = static_cast<uint8_t*>(y->data);
  for (int64_t o = 0; o < outer && block; ++o)
    for (int64_t u = 0; u < groups; ++u, out += block)
      memcpy(out, src + (o * items + first[tmp[u]]) * static_cast<int64_t>(block), block);
  const int64_t* per_output[3] = {first, nullptr, counts};
  for (uint32_t k = 1; k < nout && k < 4; ++k) {
    const int64_t len = k == 2 ? items : groups;
    TensorRef* t = nullptr;
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(k, EPCTX_DTYPE_INT64, 1, &len, &t));
    int64_t* v = static_cast<int64_t*>(t->data);
    if (k == 2) {
      for (int64_t i = 0; i < items; ++i) v[i] = remap[group_of[i]];
    } else {
      for (int64_t u = 0; u < groups; ++u) v[u] = per_output[k - 1][tmp[u]];
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
