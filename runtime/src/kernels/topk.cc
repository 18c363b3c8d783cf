// SPDX-License-Identifier: Apache-2.0
// TopK: the K largest (or smallest, largest=0 from opset 11) elements along
// `axis` and their int64 indices, for every numeric type (float16/bfloat16
// compared as float). K is the `k` attribute before opset 10 and the
// one-element input 1 from 10.
//
// Each slice along the axis is scanned once into a heap of K candidate
// indices whose root is the worst candidate (O(n log K)); popping the heap
// fills the outputs from the back, best first. Equal values rank by lower
// index, as in ORT. Deviation: sorted=0 also returns sorted order (ONNX
// leaves the order unspecified; ORT's depends on its selection algorithm).
#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// a ranks before b: better value, or equal value and lower index.
template <typename T, bool kLargest>
struct Rank {
  const T* x;
  int64_t stride;
  bool operator()(int64_t a, int64_t b) const {
    const Compute<T> va = Load(x[a * stride]), vb = Load(x[b * stride]);
    if (kLargest ? va > vb : va < vb) return true;
    return va == vb && a < b;
  }
};

// Restores the heap at position i, given heaps below it: every parent ranks
// after its children, so the root is the candidate that ranks last.
template <typename Cmp>
void SiftDown(int64_t* heap, int64_t i, int64_t n, const Cmp& better) {
  for (;;) {
    const int64_t l = 2 * i + 1, r = l + 1;
    int64_t worst = i;
    if (l < n && better(heap[worst], heap[l])) worst = l;
    if (r < n && better(heap[worst], heap[r])) worst = r;
    if (worst == i) return;
    const int64_t t = heap[i];
    heap[i] = heap[worst];
    heap[worst] = t;
    i = worst;
  }
}

template <typename T, bool kLargest>
void TopKSlices(const TensorRef& x, uint32_t axis, int64_t k, int64_t* heap, TensorRef* values,
                TensorRef* indices) {
  int64_t outer = 1, inner = 1;
  Product(x.dims, 0, axis, &outer);
  Product(x.dims, axis + 1, x.rank, &inner);
  const int64_t n = x.dims[axis];
  const T* X = static_cast<const T*>(x.data);
  T* V = static_cast<T*>(values->data);
  int64_t* I = static_cast<int64_t*>(indices->data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < inner; ++s) {
      const Rank<T, kLargest> better{X + o * n * inner + s, inner};
      for (int64_t i = 0; i < k; ++i) {
        heap[k - 1 - i] = i;
        SiftDown(heap, k - 1 - i, k, better);
      }
      for (int64_t i = k; i < n; ++i) {
        if (better(i, heap[0])) {
          heap[0] = i;
          SiftDown(heap, 0, k, better);
        }
      }
      T* v = V + o * k * inner + s;
      int64_t* ix = I + o * k * inner + s;
      for (int64_t m = k; m > 0; --m) {
        const int64_t idx = heap[0];
        v[(m - 1) * inner] = better.x[idx * inner];
        ix[(m - 1) * inner] = idx;
        heap[0] = heap[m - 1];
        SiftDown(heap, 0, m - 1, better);
      }
    }
  }
}

}  // namespace

Status TopK(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  if (!InMask(x->dtype, kNumeric)) return UnsupportedDtype(ctx, "X", x->dtype);
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", -1), x->rank, "axis", &axis));
  int64_t k = 0;
  if (ctx.opset() < 10) {
    k = ctx.AttrInt("k", -1);
    if (k < 0)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute k must be present and >= 0, found %lld",
                      static_cast<long long>(k));
  } else {
    const TensorRef* kt;
    EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "K", &kt));
    uint32_t count = 0;
    EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *kt, "K", &k, 1, &count));
    if (count != 1)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "K must hold one value, found shape %s",
                      ShapeOf(*kt).s);
  }
  const int64_t n = x->dims[axis];
  if (k < 0 || k > n)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "K %lld is out of range: expected [0, %lld] for X %s axis %lld",
                    static_cast<long long>(k), static_cast<long long>(n), ShapeOf(*x).s,
                    static_cast<long long>(axis));
  const bool largest = ctx.opset() < 11 || ctx.AttrInt("largest", 1) != 0;
  int64_t ydims[kMaxRank];
  for (uint32_t i = 0; i < x->rank; ++i) ydims[i] = x->dims[i];
  ydims[axis] = k;
  TensorRef *values = nullptr, *indices = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, ydims, &values));
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(1, EPCTX_DTYPE_INT64, x->rank, ydims, &indices));
  if (values->elements() == 0) return Status::Ok();
  int64_t* heap = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(k), &heap));
  Dispatch<kNumeric>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    if (largest) TopKSlices<T, true>(*x, static_cast<uint32_t>(axis), k, heap, values, indices);
    else TopKSlices<T, false>(*x, static_cast<uint32_t>(axis), k, heap, values, indices);
  });
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
