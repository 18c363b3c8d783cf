/* SPDX-License-Identifier: Apache-2.0 */
// Helpers shared by the data-movement kernels (data_ops.cc, pad.cc,
// scatter.cc, ...): element sizes, index tensors, strided copies and fills.
// Everything works on raw bytes by element size, so one routine serves every
// dtype; nothing here allocates.
#ifndef EPCTX_KERNELS_DATA_UTIL_H
#define EPCTX_KERNELS_DATA_UTIL_H

#include <cstdint>
#include <cstring>

#include "kernels/elem.h"
#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {

// Strided copies may walk up to twice kMaxRank dimensions (Tile).
constexpr uint32_t kMaxWalkRank = 2 * kMaxRank;

// The element size of t's dtype (NOT_IMPLEMENTED naming `what` when the
// dtype has no fixed size, e.g. string).
Status ElementSize(KernelContext& ctx, const TensorRef& t, const char* what, size_t* es);

// Input i, present and int32 or int64 (INVALID_ARGUMENT naming `what`).
Status IndexInput(KernelContext& ctx, uint32_t i, const char* what, const TensorRef** out);

// Element i of an int32 or int64 tensor.
inline int64_t IndexAt(const TensorRef& t, uint64_t i) {
  return t.dtype == EPCTX_DTYPE_INT64 ? static_cast<const int64_t*>(t.data)[i]
                                      : static_cast<const int32_t*>(t.data)[i];
}

// A scalar (rank 0 or one element) int32/int64 tensor as int64.
Status ReadScalarInt(KernelContext& ctx, const TensorRef& t, const char* what, int64_t* out);

// Validates that every index in t lies in [-dim, dim): INVALID_ARGUMENT
// naming `what`, the position and the range otherwise.
Status CheckIndices(KernelContext& ctx, const TensorRef& t, const char* what, int64_t dim);

// Indexing along one axis, as GatherElements and ScatterElements do: data x
// and indices ind of one rank >= 1, ind no longer than x on every axis but
// the attribute `axis`, every index in range for that axis. Gives the axis
// (normalised), and walk: x's element strides with 0 on the axis, so that
// walking ind's shape with them gives the offset an index adds to.
struct AxisIndexing {
  int64_t axis;
  int64_t dim;          // x's length on the axis
  int64_t axis_stride;  // x's element stride on the axis
  int64_t walk[kMaxRank];
};
Status CheckAxisIndexing(KernelContext& ctx, const TensorRef& x, const TensorRef& ind,
                         AxisIndexing* out);

// Copies the strided view (dims, strides in elements, may be 0 or negative)
// starting at src into dst contiguously. rank <= kMaxWalkRank.
void StridedCopyBytes(size_t es, uint32_t rank, const int64_t* dims, const int64_t* strides,
                      const void* src, void* dst);

// Writes the es-byte pattern at value into n consecutive elements of dst.
void FillBytes(void* dst, uint64_t n, size_t es, const void* value);

// Stable bottom-up merge sort of order[0..n) (no recursion), using
// tmp[0..n); cmp.Compare(a, b) < 0 when item a sorts before item b.
template <typename Cmp>
void MergeSort(int64_t* order, int64_t* tmp, int64_t n, const Cmp& cmp) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = lo + width < n ? lo + width : n;
      const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = cmp.Compare(order[j], order[i]) < 0 ? order[j++] : order[i++];
      while (i < mid) tmp[k++] = order[i++];
      while (j < hi) tmp[k++] = order[j++];
    }
    memcpy(order, tmp, static_cast<size_t>(n) * sizeof(int64_t));
  }
}

}  // namespace kern
}  // namespace epctx

#endif
