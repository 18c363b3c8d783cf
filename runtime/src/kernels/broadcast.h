/* SPDX-License-Identifier: Apache-2.0 */
// Numpy multidirectional broadcasting for two operands, reduced to the
// fewest dimensions: size-1 output axes are dropped and adjacent axes that
// are contiguous (or broadcast) in both operands are merged, so the common
// cases (same shape, scalar, per-channel bias over H*W) become one or two
// loops whose inner loop has stride 0 or 1.
#ifndef EPCTX_KERNELS_BROADCAST_H
#define EPCTX_KERNELS_BROADCAST_H

#include <cstdint>

#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {

struct Broadcast {
  // Full (unmerged) output shape.
  uint32_t out_rank = 0;
  int64_t out_dims[kMaxRank] = {};
  // Merged iteration space; strides in elements, 0 where an operand repeats.
  uint32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t sa[kMaxRank] = {};
  int64_t sb[kMaxRank] = {};
};

// The broadcast output shape of da and db into out_dims[0..*out_rank)
// (out_dims holds kMaxRank and must not alias da or db);
// INVALID_ARGUMENT naming both shapes when they do not broadcast or the
// result is too large, NOT_IMPLEMENTED above kMaxRank.
Status BroadcastShape(KernelContext& ctx, uint32_t ra, const int64_t* da, uint32_t rb,
                      const int64_t* db, uint32_t* out_rank, int64_t* out_dims);

// BroadcastShape plus the merged iteration space; same errors.
Status MakeBroadcast(KernelContext& ctx, uint32_t ra, const int64_t* da, uint32_t rb,
                     const int64_t* db, Broadcast* out);

// Calls row(a_off, b_off, out_off, n, a_step, b_step) for every inner row,
// or the part of it inside output elements [e0, e1) (a thread's share);
// steps are 0 or 1.
template <typename Row>
void ForEachRowSpan(const Broadcast& bc, int64_t e0, int64_t e1, Row row) {
  const uint32_t r = bc.rank;
  const int64_t n = bc.dims[r - 1];
  if (n <= 0 || e0 >= e1) return;
  const int64_t da = bc.sa[r - 1], db = bc.sb[r - 1];
  // The outer index of e0's row, and the operands' offsets there.
  int64_t idx[kMaxRank] = {};
  int64_t oa = 0, ob = 0;
  for (int64_t t = e0 / n, i = OuterRank(r); i-- > 0;) {
    idx[i] = t % bc.dims[i];
    t /= bc.dims[i];
    oa += idx[i] * bc.sa[i];
    ob += idx[i] * bc.sb[i];
  }
  int64_t e = e0, j = e0 % n;
  while (e < e1) {
    const int64_t len = n - j < e1 - e ? n - j : e1 - e;
    row(oa + j * da, ob + j * db, e, len, da, db);
    e += len;
    j = 0;
    NextIndex(OuterRank(r), bc.dims, idx, bc.sa, &oa, bc.sb, &ob);
  }
}

template <typename Row>
void ForEachRow(const Broadcast& bc, Row row) {
  int64_t total = 1;
  for (uint32_t i = 0; i < bc.rank; ++i) total *= bc.dims[i];
  ForEachRowSpan(bc, 0, total, row);
}

}  // namespace kern
}  // namespace epctx

#endif
