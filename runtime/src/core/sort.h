/* SPDX-License-Identifier: Apache-2.0 */
// In-place heapsort for the device code: O(n log n) worst case, no
// recursion, no allocation, no libstdc++ (std::sort may call into the
// runtime and is quadratic-proof only in practice). Used wherever a count
// read from a file drives a lookup or a duplicate check (manifests, graph
// names), so hostile inputs cannot make loading quadratic.
#ifndef EPCTX_CORE_SORT_H
#define EPCTX_CORE_SORT_H

#include <cstddef>

namespace epctx {

// Sorts a[0..n) so that !less(a[i+1], a[i]) for every i.
template <typename T, typename Less>
void HeapSort(T* a, size_t n, Less less) {
  auto sift = [&](size_t root, size_t end) {
    for (;;) {
      size_t child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && less(a[child], a[child + 1])) ++child;
      if (!less(a[root], a[child])) return;
      T t = a[root];
      a[root] = a[child];
      a[child] = t;
      root = child;
    }
  };
  if (n < 2) return;
  for (size_t i = n / 2; i-- > 0;) sift(i, n);
  for (size_t end = n - 1; end > 0; --end) {
    T t = a[0];
    a[0] = a[end];
    a[end] = t;
    sift(0, end);
  }
}

}  // namespace epctx

#endif
