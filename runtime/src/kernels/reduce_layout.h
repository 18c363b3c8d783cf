/* SPDX-License-Identifier: Apache-2.0 */
// The iteration space of a reduction over any set of axes, shared by the
// Reduce* ops, ArgMax/ArgMin and MeanVarianceNormalization.
//
// The input's axes split into kept axes (one output element per index, in
// row-major output order) and reduced axes (the group of input elements
// folded into that output element). Size-1 axes are dropped and adjacent
// axes of the same kind that are contiguous in the input are merged, so a
// reduction over the trailing axes is one contiguous run per output.
// Offsets are in elements of the input; the layout holds no pointers.
#ifndef EPCTX_KERNELS_REDUCE_LAYOUT_H
#define EPCTX_KERNELS_REDUCE_LAYOUT_H

#include <cstdint>

#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {

struct ReduceLayout {
  uint32_t kept_rank = 0;
  int64_t kept_dims[kMaxRank] = {};
  int64_t kept_strides[kMaxRank] = {};
  uint32_t red_rank = 0;
  int64_t red_dims[kMaxRank] = {};
  int64_t red_strides[kMaxRank] = {};
  int64_t outputs = 1;  // product of the kept dims
  int64_t group = 1;    // product of the reduced dims (0 for an empty axis)
};

// reduced[i] marks axis i of dims[0..rank) (rank <= kMaxRank). The element
// count of a non-empty input fits int64 (it exists); an empty one may have
// huge dims beside its zero, so it gets a layout that addresses nothing.
inline void MakeReduceLayout(uint32_t rank, const int64_t* dims, const bool* reduced,
                             ReduceLayout* l) {
  *l = ReduceLayout();
  bool empty = false;
  for (uint32_t i = 0; i < rank; ++i) empty |= dims[i] == 0;
  if (empty) {
    // Every output (if any) folds an empty group: one flat kept axis with
    // stride 0. Products saturate; the caller's output allocation refuses
    // a count that large.
    for (uint32_t i = 0; i < rank; ++i) {
      int64_t& p = reduced[i] ? l->group : l->outputs;
      if (dims[i] == 0 || p == 0) p = 0;
      else if (__builtin_mul_overflow(p, dims[i], &p)) p = INT64_MAX;
    }
    l->kept_rank = 1;
    l->kept_dims[0] = l->outputs;
    return;
  }
  int64_t stride = 1;
  bool prev_set = false, prev_red = false;
  // Walk from the last axis so strides are known; fill back to front, then
  // shift to the front.
  uint32_t nk = 0, nr = 0;
  int64_t kd[kMaxRank], ks[kMaxRank], rd[kMaxRank], rs[kMaxRank];
  for (uint32_t i = rank; i-- > 0;) {
    const int64_t d = dims[i];
    if (reduced[i]) l->group *= d;
    else l->outputs *= d;
    if (d != 1) {
      int64_t* cd = reduced[i] ? rd : kd;
      int64_t* cs = reduced[i] ? rs : ks;
      uint32_t& n = reduced[i] ? nr : nk;
      if (prev_set && prev_red == reduced[i] && n > 0 && cs[n - 1] * cd[n - 1] == stride) {
        cd[n - 1] *= d;  // contiguous with the axis after it
      } else {
        cd[n] = d;
        cs[n] = stride;
        ++n;
      }
      prev_set = true;
      prev_red = reduced[i];
    }
    stride *= d;
  }
  for (uint32_t i = 0; i < nk; ++i) {
    l->kept_dims[i] = kd[nk - 1 - i];
    l->kept_strides[i] = ks[nk - 1 - i];
  }
  for (uint32_t i = 0; i < nr; ++i) {
    l->red_dims[i] = rd[nr - 1 - i];
    l->red_strides[i] = rs[nr - 1 - i];
  }
  l->kept_rank = nk;
  l->red_rank = nr;
}

// Calls f(output_index, base_offset) for every output element in order.
template <typename F>
void ForEachGroup(const ReduceLayout& l, F f) {
  int64_t idx[kMaxRank] = {};
  int64_t base = 0;
  for (int64_t o = 0; o < l.outputs; ++o) {
    f(o, base);
    NextIndex(l.kept_rank, l.kept_dims, idx, l.kept_strides, &base);
  }
}

// Calls f(offset) for every input element of the group at `base`, in
// row-major order of the reduced axes.
template <typename F>
void ForEachInGroup(const ReduceLayout& l, int64_t base, F f) {
  if (l.group == 0) return;
  const uint32_t r = l.red_rank;
  if (r == 0) {
    f(base);
    return;
  }
  const int64_t n = l.red_dims[r - 1];
  const int64_t s = l.red_strides[r - 1];
  const int64_t outer = l.group / n;
  int64_t idx[kMaxRank] = {};
  int64_t off = base;
  for (int64_t t = 0; t < outer; ++t) {
    for (int64_t j = 0; j < n; ++j) f(off + j * s);
    NextIndex(r - 1, l.red_dims, idx, l.red_strides, &off);
  }
}

}  // namespace kern
}  // namespace epctx

#endif
