// SPDX-License-Identifier: Apache-2.0
#include "kernels/broadcast.h"

#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {

Status BroadcastShape(KernelContext& ctx, uint32_t ra, const int64_t* da, uint32_t rb,
                      const int64_t* db, uint32_t* out_rank, int64_t* out_dims) {
  const uint32_t r = ra > rb ? ra : rb;
  if (r > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "rank %u exceeds %d", r, kMaxRank);
  for (uint32_t i = r; i-- > 0;) {
    const uint32_t from_end = r - 1 - i;
    const int64_t a = from_end < ra ? da[ra - 1 - from_end] : 1;
    const int64_t b = from_end < rb ? db[rb - 1 - from_end] : 1;
    if (a != b && a != 1 && b != 1)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "shapes %s and %s do not broadcast (axis %u: %lld vs %lld)",
                      ShapeOf(ra, da).s, ShapeOf(rb, db).s, i, static_cast<long long>(a),
                      static_cast<long long>(b));
    out_dims[i] = a == 1 ? b : a;
  }
  *out_rank = r;
  return CheckShape(ctx, r, out_dims, 8, "broadcast output");
}

Status MakeBroadcast(KernelContext& ctx, uint32_t ra, const int64_t* da, uint32_t rb,
                     const int64_t* db, Broadcast* out) {
  EPCTX_RETURN_IF_ERROR(BroadcastShape(ctx, ra, da, rb, db, &out->out_rank, out->out_dims));
  const uint32_t r = out->out_rank;
  for (uint32_t i = 0; i < r; ++i)
    if (out->out_dims[i] == 0) {
      // Nothing to visit; the strides of the huge dims beside the zero would
      // overflow int64.
      out->rank = 1;
      out->dims[0] = 0;
      out->sa[0] = out->sb[0] = 0;
      return Status::Ok();
    }
  int64_t sa[kMaxRank], sb[kMaxRank];
  int64_t stride_a = 1, stride_b = 1;
  for (uint32_t i = r; i-- > 0;) {
    const uint32_t from_end = r - 1 - i;
    const int64_t a = from_end < ra ? da[ra - 1 - from_end] : 1;
    const int64_t b = from_end < rb ? db[rb - 1 - from_end] : 1;
    sa[i] = a == 1 ? 0 : stride_a;
    sb[i] = b == 1 ? 0 : stride_b;
    stride_a *= a;
    stride_b *= b;
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i < r; ++i) {
    const int64_t d = out->out_dims[i];
    if (d == 1) continue;
    if (m > 0 && out->sa[m - 1] == sa[i] * d && out->sb[m - 1] == sb[i] * d) {
      out->dims[m - 1] *= d;
      out->sa[m - 1] = sa[i];
      out->sb[m - 1] = sb[i];
      continue;
    }
    out->dims[m] = d;
    out->sa[m] = sa[i];
    out->sb[m] = sb[i];
    ++m;
  }
  if (m == 0) {
    out->dims[0] = 1;
    out->sa[0] = out->sb[0] = 0;
    m = 1;
  }
  out->rank = m;
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
