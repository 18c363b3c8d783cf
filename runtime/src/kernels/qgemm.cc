// SPDX-License-Identifier: Apache-2.0
// com.microsoft QGemm, ONNX Runtime's quantized Gemm (the op its QDQ
// transformer writes for DequantizeLinear -> Gemm -> QuantizeLinear, and
// epctx-compile's fuse_qdq_matmul.h for the CPU):
//
//   acc[m][n] = sum_k (A'[m][k] - a_zp) * (B'[k][n] - b_zp[n]) + C[m][n]
//   Y = requantise(acc * alpha * a_scale * b_scale[n] / y_scale) + y_zp
//       or, without y_scale, the float acc * alpha * a_scale * b_scale[n]
//
// A' and B' are A and B, transposed by transA / transB (both 2-D); a_scale,
// a_zero_point, y_scale and y_zero_point per tensor; b_scale and
// b_zero_point per tensor or per column; C int32, broadcast to [M, N]. The
// accumulator wraps in int32 and is rounded half to even, saturated, as
// QLinearMatMul's (qlinear.cc).
//
// A constant B runs on the int8 micro-kernels with the state
// PrepareQGemm made (qmatmul.h) when transA is 0, a_zero_point is one
// value and C is per column; everything else on the reference loop here.
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/qmatmul.h"
#include "kernels/quant_util.h"

namespace epctx {
namespace kern {
namespace {

int32_t ByteAt(const TensorRef& t, int64_t i) {
  const uint8_t v = static_cast<const uint8_t*>(t.data)[i];
  return t.dtype == EPCTX_DTYPE_INT8 ? int32_t(int8_t(v)) : int32_t(v);
}

bool IsScalar(const TensorRef& t) { return t.elements() == 1 && t.rank <= 1; }

Status CheckQ8(KernelContext& ctx, const TensorRef& t, const char* name) {
  return InMask(t.dtype, kQuant8) ? Status::Ok() : UnsupportedDtype(ctx, name, t.dtype);
}

Status CheckScalar(KernelContext& ctx, const TensorRef& t, const char* name) {
  if (IsScalar(t)) return Status::Ok();
  return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", name,
                  ShapeOf(t).s);
}

Status CheckFloat(KernelContext& ctx, const TensorRef& t, const char* name) {
  return t.dtype == EPCTX_DTYPE_FLOAT ? Status::Ok() : UnsupportedDtype(ctx, name, t.dtype);
}

// A zero point of operand `op` ([N] when per column, else a scalar): its
// dtype and layout checked; *stride is 1 per column, 0 per tensor.
Status CheckZp(KernelContext& ctx, const TensorRef* zp, const char* name, const TensorRef& op,
               int64_t N, int64_t* stride) {
  *stride = 0;
  if (!zp) return Status::Ok();
  if (zp->dtype != op.dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has dtype %s, expected its operand's %s", name,
                    dtype_name(zp->dtype), dtype_name(op.dtype));
  if (IsScalar(*zp)) return Status::Ok();
  if (N > 0 && zp->rank == 1 && zp->dims[0] == N) {
    *stride = 1;
    return Status::Ok();
  }
  return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar or [%lld], found %s", name,
                  static_cast<long long>(N), ShapeOf(*zp).s);
}

// How C lies over [M, N]: element (m, n) at m * row + n * col.
struct BiasLayout {
  int64_t row = 0, col = 0;
};

Status CheckBias(KernelContext& ctx, const TensorRef& c, int64_t M, int64_t N, BiasLayout* l) {
  if (c.dtype != EPCTX_DTYPE_INT32) return UnsupportedDtype(ctx, "C", c.dtype);
  const int64_t cm = c.rank == 2 ? c.dims[0] : 1;
  const int64_t cn = c.rank >= 1 ? c.dims[c.rank - 1] : 1;
  if (c.rank > 2 || (cm != 1 && cm != M) || (cn != 1 && cn != N))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "C %s does not broadcast to [%lld, %lld]", ShapeOf(c).s,
                    static_cast<long long>(M), static_cast<long long>(N));
  l->col = cn == 1 ? 0 : 1;
  l->row = cm == 1 ? 0 : cn;
  return Status::Ok();
}

struct Operands {
  const TensorRef *a, *b, *bzp, *c;
  bool trans_a, trans_b;
  int64_t M, N, K;
  int32_t azp;
  int64_t bzp_stride;
  BiasLayout bias;
  const float* mult;  // [N]
  int32_t ydtype;     // EPCTX_DTYPE_FLOAT without y_scale
  int32_t yzp;
};

// The reference loop: one row of accumulators at a time, every output
// through SaturateRound or the float product.
void RunReference(const Operands& o, void* y) {
  const int64_t M = o.M, N = o.N, K = o.K;
  const int32_t* C = o.c ? static_cast<const int32_t*>(o.c->data) : nullptr;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      uint32_t acc = C ? uint32_t(C[m * o.bias.row + n * o.bias.col]) : 0u;
      const int32_t bz = o.bzp ? ByteAt(*o.bzp, n * o.bzp_stride) : 0;
      for (int64_t k = 0; k < K; ++k) {
        const int32_t av = ByteAt(*o.a, o.trans_a ? k * M + m : m * K + k) - o.azp;
        const int32_t bv = ByteAt(*o.b, o.trans_b ? n * K + k : k * N + n) - bz;
        acc += uint32_t(av) * uint32_t(bv);
      }
      const float v = float(int32_t(acc)) * o.mult[n];
      if (o.ydtype == EPCTX_DTYPE_FLOAT) static_cast<float*>(y)[m * N + n] = v;
      else if (o.ydtype == EPCTX_DTYPE_INT8)
        static_cast<int8_t*>(y)[m * N + n] = SaturateRound<int8_t>(v, o.yzp);
      else static_cast<uint8_t*>(y)[m * N + n] = SaturateRound<uint8_t>(v, o.yzp);
    }
}

// The micro-kernels with the prepared B, when this node's shapes allow.
bool RunPrepared(KernelContext& ctx, const Operands& o, const TensorRef& as, const TensorRef& bs,
                 const TensorRef* ys, void* y, Status* st) {
  if (o.trans_a || (o.c && o.bias.row != 0)) return false;
  MatMulPlan p;
  p.M = o.M;
  p.N = o.N;
  p.K = o.K;
  p.yrank = 2;
  p.ydims[0] = o.M;
  p.ydims[1] = o.N;
  const QMatMulPrepared* pp = QMatMulPreparedFor(ctx, *o.b, o.bzp, p);
  if (!pp) return false;
  const float* mult = QMatMulPreparedMult(*pp, as, bs, ys);
  if (!mult) mult = o.mult;
  const int32_t* bias = nullptr;
  if (o.c && o.bias.col == 1) {
    bias = static_cast<const int32_t*>(o.c->data);
  } else if (o.c) {
    int32_t* b = nullptr;
    *st = ScratchArray(ctx, uint64_t(o.N), &b);
    if (!st->ok()) return true;
    for (int64_t n = 0; n < o.N; ++n) b[n] = *static_cast<const int32_t*>(o.c->data);
    bias = b;
  }
  const bool s8 = o.ydtype == EPCTX_DTYPE_INT8;
  const QMatMulOut out = o.ydtype == EPCTX_DTYPE_FLOAT ? QMatMulOut::kFloat : QMatMulOut::kBytes;
  *st = RunQMatMulPanels(ctx, *pp, p,
                         QMatMulOperands{o.a->data, o.a->dtype, o.azp, y, out, mult, o.yzp,
                                         s8 ? -128 : 0, s8 ? 127 : 255, bias});
  return true;
}

}  // namespace

Status QGemm(KernelContext& ctx) {
  const TensorRef *a, *as, *b, *bs;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "A", &a));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "a_scale", &as));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 3, "B", &b));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 4, "b_scale", &bs));
  const TensorRef *azp = ctx.input(2), *c = ctx.input(6), *ys = ctx.input(7), *yzp = ctx.input(8);
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *a, "A"));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *b, "B"));
  if (a->rank != 2 || b->rank != 2)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "A %s and B %s must be 2-D", ShapeOf(*a).s,
                    ShapeOf(*b).s);
  Operands o{};
  o.a = a;
  o.b = b;
  o.bzp = ctx.input(5);
  o.c = c;
  o.trans_a = ctx.AttrInt("transA", 0) != 0;
  o.trans_b = ctx.AttrInt("transB", 0) != 0;
  o.M = a->dims[o.trans_a ? 1 : 0];
  o.K = a->dims[o.trans_a ? 0 : 1];
  o.N = b->dims[o.trans_b ? 0 : 1];
  const int64_t kb = b->dims[o.trans_b ? 1 : 0];
  if (kb != o.K)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "A %s and B %s (transA %d, transB %d) differ in K",
                    ShapeOf(*a).s, ShapeOf(*b).s, int(o.trans_a), int(o.trans_b));
  EPCTX_RETURN_IF_ERROR(CheckFloat(ctx, *as, "a_scale"));
  EPCTX_RETURN_IF_ERROR(CheckScalar(ctx, *as, "a_scale"));
  EPCTX_RETURN_IF_ERROR(CheckFloat(ctx, *bs, "b_scale"));
  if (!IsScalar(*bs) && !(bs->rank == 1 && bs->dims[0] == o.N))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "b_scale must be a scalar or [%lld], found %s",
                    static_cast<long long>(o.N), ShapeOf(*bs).s);
  int64_t unused = 0;
  EPCTX_RETURN_IF_ERROR(CheckZp(ctx, azp, "a_zero_point", *a, 0, &unused));
  o.azp = azp ? ByteAt(*azp, 0) : 0;
  EPCTX_RETURN_IF_ERROR(CheckZp(ctx, o.bzp, "b_zero_point", *b, o.N, &o.bzp_stride));
  if (c) EPCTX_RETURN_IF_ERROR(CheckBias(ctx, *c, o.M, o.N, &o.bias));
  o.ydtype = EPCTX_DTYPE_FLOAT;
  if (ys) {
    EPCTX_RETURN_IF_ERROR(CheckFloat(ctx, *ys, "y_scale"));
    EPCTX_RETURN_IF_ERROR(CheckScalar(ctx, *ys, "y_scale"));
    o.ydtype = EPCTX_DTYPE_UINT8;
    if (yzp) {
      EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *yzp, "y_zero_point"));
      EPCTX_RETURN_IF_ERROR(CheckScalar(ctx, *yzp, "y_zero_point"));
      o.ydtype = yzp->dtype;
      o.yzp = ByteAt(*yzp, 0);
    }
  }
  // The multipliers, as PrepareQGemm makes them (qmatmul.cc).
  float* mult = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(o.N > 0 ? o.N : 1), &mult));
  const float sa = ctx.AttrFloat("alpha", 1.0f) * *static_cast<const float*>(as->data);
  const float* sb = static_cast<const float*>(bs->data);
  for (int64_t n = 0; n < o.N; ++n) {
    const float v = sa * sb[IsScalar(*bs) ? 0 : n];
    mult[n] = ys ? v / *static_cast<const float*>(ys->data) : v;
  }
  o.mult = mult;
  const int64_t ydims[2] = {o.M, o.N};
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, o.ydtype, 2, ydims, &y));
  Status st = Status::Ok();
  if (RunPrepared(ctx, o, *as, *bs, ys, y->data, &st)) return st;
  RunReference(o, y->data);
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
