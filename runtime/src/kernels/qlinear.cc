// SPDX-License-Identifier: Apache-2.0
// Integer matrix products and convolutions: MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv (uint8/int8 operands in any combination).
//
// Both families accumulate sum (a - a_zp) * (b - b_zp) in 32 bits that wrap
// like ORT's int32 accumulators. The matrix core accumulates raw B and
// subtracts b_zp * sum(a - a_zp) per column at the end (the same value mod
// 2^32), so per-column zero points cost nothing in the inner loop. The
// convolution core walks output rows per kernel tap with the valid bounds of
// window.h, so padded taps (which hold the zero point, i.e. contribute 0) are
// skipped instead of materialised.
//
// Zero points: A per tensor, per row ([M]) or per batch and row ([..., M, 1]);
// B per tensor, per column ([N]) or per batch and column ([..., 1, N]);
// conv x per tensor, w per tensor or per output channel ([M]).
// QLinear* requantize as ORT's MlasRequantizeOutput: acc (+ bias) times the
// float multiplier a_scale * b_scale / y_scale (per column or channel when
// b/w scales are), rounded half to even, plus y_zp, saturated.
// Convolutions are 1-D and 2-D, as Conv.
#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/linalg.h"
#include "kernels/ops.h"
#include "kernels/qmatmul.h"
#include "kernels/quant_util.h"
#include "kernels/window.h"
#include "epctx_uk/qconv.h"

namespace epctx {
namespace kern {
namespace {

// ReadScales' half_from for ops whose scales are float in every version.
constexpr int64_t kFloatOnly = INT64_MAX;

// A per-element parameter (zero point or scale) of a matrix operand: the
// value for matrix `batch`, row or column `i`.
template <typename V>
struct Param {
  const V* v = nullptr;
  int64_t batch_stride = 0;
  int64_t stride = 0;
  V at(int64_t batch, int64_t i) const { return v[batch * batch_stride + i * stride]; }
};

// How a parameter tensor lies over an operand: per tensor, along `len`
// (rank 1), or per batch along `len` (full rank, 1 at `one_axis`).
Status ParamLayout(KernelContext& ctx, const TensorRef& p, const char* pname, const TensorRef& op,
                   const char* opname, int64_t len, uint32_t one_axis, int64_t* batch_stride,
                   int64_t* stride) {
  *batch_stride = *stride = 0;
  if (p.elements() == 1 && p.rank <= 1) return Status::Ok();
  if (p.rank == 1 && p.dims[0] == len) {
    *stride = 1;
    return Status::Ok();
  }
  bool ok = op.rank >= 2 && p.rank == op.rank;
  for (uint32_t i = 0; ok && i < p.rank; ++i) ok = p.dims[i] == (i == one_axis ? 1 : op.dims[i]);
  if (ok) {
    *batch_stride = len;
    *stride = 1;
    return Status::Ok();
  }
  return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                  "%s %s must be a scalar, [%lld] or %s's shape with dimension %u of 1 "
                  "(%s is %s)",
                  pname, ShapeOf(p).s, static_cast<long long>(len), opname, one_axis, opname,
                  ShapeOf(op).s);
}

// Copies a zero point (dtype checked against the operand's) into int32
// scratch and lays it over the operand. `row` selects A's layout (per row,
// [..., M, 1]) over B's (per column, [..., 1, N]).
Status ReadMatrixZp(KernelContext& ctx, const TensorRef* zp, const char* zname, const TensorRef& op,
                    const char* opname, int64_t len, bool row, Param<int32_t>* out) {
  int32_t* v = nullptr;
  if (!zp) {
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, 1, &v));
    v[0] = 0;
    out->v = v;
    out->batch_stride = out->stride = 0;
    return Status::Ok();
  }
  if (zp->dtype != op.dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has dtype %s, expected %s's %s", zname,
                    dtype_name(zp->dtype), opname, dtype_name(op.dtype));
  const uint32_t r = op.rank;
  EPCTX_RETURN_IF_ERROR(ParamLayout(ctx, *zp, zname, op, opname, len,
                                    r >= 2 ? (row ? r - 1 : r - 2) : 0, &out->batch_stride,
                                    &out->stride));
  const uint64_t n = zp->elements();
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &v));
  Dispatch<kQuant8>(zp->dtype, [&](auto tag) {
    using Z = decltype(tag);
    const Z* z = static_cast<const Z*>(zp->data);
    for (uint64_t i = 0; i < n; ++i) v[i] = z[i];
  });
  out->v = v;
  return Status::Ok();
}

// A float scale tensor (float, or float16/bfloat16 from `half_from`) into
// float scratch.
Status ReadScales(KernelContext& ctx, const TensorRef& s, const char* name, int64_t half_from,
                  float** out) {
  const uint32_t allowed = ctx.opset() >= half_from ? kScaleTypes : kFloat32;
  if (!InMask(s.dtype, allowed)) return UnsupportedDtype(ctx, name, s.dtype);
  const uint64_t n = s.elements();
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n ? n : 1, out));
  Dispatch<kScaleTypes>(s.dtype, [&](auto tag) {
    using S = decltype(tag);
    const S* p = static_cast<const S*>(s.data);
    for (uint64_t i = 0; i < n; ++i) (*out)[i] = Load(p[i]);
  });
  return Status::Ok();
}

Status RequireScalar(KernelContext& ctx, const TensorRef& t, const char* name) {
  if (t.elements() == 1 && t.rank <= 1) return Status::Ok();
  return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", name,
                  ShapeOf(t).s);
}

// One M x N integer product: done(i, row) gets each row of
// sum_k (A[i,k] - azp(i)) * (B[k,j] - bzp(j)), wrapped to int32.
template <typename TA, typename TB, typename Done>
void IntMatrix(int64_t M, int64_t N, int64_t K, const TA* A, const TB* B, int64_t ia, int64_t ib,
               const Param<int32_t>& azp, const Param<int32_t>& bzp, uint32_t* acc, Done done) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) acc[j] = 0;
    const int32_t za = azp.at(ia, i);
    uint32_t asum = 0;
    const TA* arow = A + i * K;
    for (int64_t k = 0; k < K; ++k) {
      const int32_t av = static_cast<int32_t>(arow[k]) - za;
      if (av == 0) continue;
      asum += static_cast<uint32_t>(av);
      const uint32_t au = static_cast<uint32_t>(av);
      const TB* __restrict brow = B + k * N;
      for (int64_t j = 0; j < N; ++j)
        acc[j] += au * static_cast<uint32_t>(static_cast<int32_t>(brow[j]));
    }
    for (int64_t j = 0; j < N; ++j) acc[j] -= static_cast<uint32_t>(bzp.at(ib, j)) * asum;
    done(i, acc);
  }
}

// Shared body of MatMulInteger and QLinearMatMul: checks A/B dtypes and the
// zero points, then calls row(y_matrix, i, b_matrix, acc) for every row.
struct IntMatMulArgs {
  const TensorRef *a, *b, *azp, *bzp;
  const char *azp_name, *bzp_name;
};

template <typename Row>
Status RunIntMatMul(KernelContext& ctx, const IntMatMulArgs& args, const MatMulPlan& p, Row row) {
  Param<int32_t> azp, bzp;
  EPCTX_RETURN_IF_ERROR(ReadMatrixZp(ctx, args.azp, args.azp_name, *args.a, "A", p.M, true, &azp));
  EPCTX_RETURN_IF_ERROR(ReadMatrixZp(ctx, args.bzp, args.bzp_name, *args.b, "B", p.N, false, &bzp));
  uint32_t* acc = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(p.N ? p.N : 1), &acc));
  const int64_t MK = p.M * p.K, KN = p.K * p.N;
  Dispatch<kQuant8>(args.a->dtype, [&](auto atag) {
    using TA = decltype(atag);
    Dispatch<kQuant8>(args.b->dtype, [&](auto btag) {
      using TB = decltype(btag);
      const TA* A = static_cast<const TA*>(args.a->data);
      const TB* B = static_cast<const TB*>(args.b->data);
      ForEachMatrix(p, [&](int64_t ia, int64_t ib, int64_t iy) {
        IntMatrix(p.M, p.N, p.K, A + ia * MK, B + ib * KN, ia, ib, azp, bzp, acc,
                  [&](int64_t i, const uint32_t* r) { row(iy, i, ib, r); });
      });
    });
  });
  return Status::Ok();
}

Status CheckQ8(KernelContext& ctx, const TensorRef& t, const char* name) {
  return InMask(t.dtype, kQuant8) ? Status::Ok() : UnsupportedDtype(ctx, name, t.dtype);
}

// ---- convolution ----------------------------------------------------------

// The Window axes of the last two spatial dims: Window right-aligns its axes
// (WindowBase), so a 1-D convolution is the 2-D case with height 1.
constexpr uint32_t kH = kMaxSpatial - 2, kW = kMaxSpatial - 1;

struct IntConvShape {
  int64_t batch, cin, cout, group, cin_g, cout_g;
  Window w;
  uint32_t rank;
  int64_t ydims[4];
};

Status ReadIntConvShape(KernelContext& ctx, const TensorRef& x, const TensorRef& wt,
                        IntConvShape* cs) {
  if (x.rank == 5)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "3-D convolution (input %s) is not supported",
                    ShapeOf(x).s);
  if (x.rank != 3 && x.rank != 4)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input x must have rank 3 or 4, found shape %s",
                    ShapeOf(x).s);
  if (wt.rank != x.rank)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "weights w must have rank %u like x, found shape %s",
                    x.rank, ShapeOf(wt).s);
  const int64_t group = ctx.AttrInt("group", 1);
  if (group < 1 || group > kMaxWindowValue)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "group is %lld, expected >= 1",
                    static_cast<long long>(group));
  cs->batch = x.dims[0];
  cs->cin = x.dims[1];
  cs->cout = wt.dims[0];
  cs->group = group;
  cs->cin_g = wt.dims[1];
  int64_t expect_cin = 0;
  if (!MulOk(cs->cin_g, group, &expect_cin) || expect_cin != cs->cin)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "x has %lld channels but w %s with group %lld expects %lld",
                    static_cast<long long>(cs->cin), ShapeOf(wt).s, static_cast<long long>(group),
                    static_cast<long long>(expect_cin));
  if (cs->cout % group != 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "w has %lld output channels, expected a multiple of group %lld",
                    static_cast<long long>(cs->cout), static_cast<long long>(group));
  cs->cout_g = cs->cout / group;
  EPCTX_RETURN_IF_ERROR(ComputeWindow(ctx, x.rank - 2, x.dims + 2, wt.dims + 2, false, &cs->w));
  cs->rank = x.rank;
  cs->ydims[0] = cs->batch;
  cs->ydims[1] = cs->cout;
  cs->ydims[2] = x.rank == 3 ? cs->w.out[kW] : cs->w.out[kH];
  cs->ydims[3] = cs->w.out[kW];  // unused for rank 3
  return CheckShape(ctx, cs->rank, cs->ydims, 4, "output y");
}

// acc[OH*OW] = sum over the group's channels and kernel taps of
// (w - wzp) * (x - xzp); x points at the group's first channel.
template <typename TX, typename TW>
void IntConvChannel(const IntConvShape& cs, const TX* x, int32_t xzp, const TW* wk, int32_t wzp,
                    uint32_t* acc) {
  const Window& w = cs.w;
  const int64_t H = w.in[kH], W = w.in[kW], OH = w.out[kH], OW = w.out[kW];
  const int64_t sh = w.stride[kH], sw = w.stride[kW];
  for (int64_t p = 0; p < OH * OW; ++p) acc[p] = 0;
  for (int64_t c = 0; c < cs.cin_g; ++c) {
    const TX* plane = x + c * H * W;
    for (int64_t kh = 0; kh < w.kernel[kH]; ++kh) {
      for (int64_t kw = 0; kw < w.kernel[kW]; ++kw) {
        const int32_t wv = static_cast<int32_t>(*wk++) - wzp;
        if (wv == 0) continue;
        const uint32_t wu = static_cast<uint32_t>(wv);
        const int64_t off = kw * w.dilation[kW] - w.pad_begin[kW];
        int64_t lo, hi;
        ValidRange(off, sw, W, OW, &lo, &hi);
        for (int64_t oh = 0; oh < OH; ++oh) {
          const int64_t ih = oh * sh - w.pad_begin[kH] + kh * w.dilation[kH];
          if (ih < 0 || ih >= H) continue;
          const TX* __restrict irow = plane + ih * W;
          uint32_t* __restrict orow = acc + oh * OW;
          for (int64_t ow = lo; ow < hi; ++ow)
            orow[ow] += wu * static_cast<uint32_t>(static_cast<int32_t>(irow[ow * sw + off]) - xzp);
        }
      }
    }
  }
}

// Runs the integer convolution and calls out(n, oc, acc) per output plane.
template <typename Out>
Status RunIntConv(KernelContext& ctx, const IntConvShape& cs, const TensorRef& x, int32_t xzp,
                  const TensorRef& wt, const Param<int32_t>& wzp, Out out) {
  const Window& w = cs.w;
  const int64_t OHW = w.out[kH] * w.out[kW];
  uint32_t* acc = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(OHW ? OHW : 1), &acc));
  const int64_t HW = w.in[kH] * w.in[kW];
  const int64_t KK = cs.cin_g * w.kernel[kH] * w.kernel[kW];
  Dispatch<kQuant8>(x.dtype, [&](auto xtag) {
    using TX = decltype(xtag);
    Dispatch<kQuant8>(wt.dtype, [&](auto wtag) {
      using TW = decltype(wtag);
      const TX* X = static_cast<const TX*>(x.data);
      const TW* Wt = static_cast<const TW*>(wt.data);
      for (int64_t n = 0; n < cs.batch; ++n)
        for (int64_t oc = 0; oc < cs.cout; ++oc) {
          const int64_t g = oc / cs.cout_g;
          IntConvChannel(cs, X + (n * cs.cin + g * cs.cin_g) * HW, xzp, Wt + oc * KK, wzp.at(0, oc),
                         acc);
          out(n, oc, acc);
        }
    });
  });
  return Status::Ok();
}

// x's zero point (a scalar of x's dtype, 0 when absent).
Status ReadConvXZp(KernelContext& ctx, const TensorRef* zp, const TensorRef& x, const char* name,
                   int32_t* out) {
  *out = 0;
  if (!zp) return Status::Ok();
  if (zp->dtype != x.dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has dtype %s, expected x's %s", name,
                    dtype_name(zp->dtype), dtype_name(x.dtype));
  EPCTX_RETURN_IF_ERROR(RequireScalar(ctx, *zp, name));
  Dispatch<kQuant8>(zp->dtype, [&](auto tag) {
    using Z = decltype(tag);
    *out = *static_cast<const Z*>(zp->data);
  });
  return Status::Ok();
}

// w's zero point: scalar or one per output channel.
Status ReadConvWZp(KernelContext& ctx, const TensorRef* zp, const TensorRef& wt, const char* name,
                   int64_t cout, Param<int32_t>* out) {
  int32_t* v = nullptr;
  const uint64_t n = zp ? zp->elements() : 1;
  if (zp) {
    if (zp->dtype != wt.dtype)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has dtype %s, expected w's %s", name,
                      dtype_name(zp->dtype), dtype_name(wt.dtype));
    const bool scalar = n == 1 && zp->rank <= 1;
    if (!scalar && !(zp->rank == 1 && zp->dims[0] == cout))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar or [%lld], found %s", name,
                      static_cast<long long>(cout), ShapeOf(*zp).s);
    out->stride = scalar ? 0 : 1;
  }
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &v));
  v[0] = 0;
  if (zp)
    Dispatch<kQuant8>(zp->dtype, [&](auto tag) {
      using Z = decltype(tag);
      const Z* z = static_cast<const Z*>(zp->data);
      for (uint64_t i = 0; i < n; ++i) v[i] = z[i];
    });
  out->v = v;
  out->batch_stride = 0;
  return Status::Ok();
}

// y's zero point for QLinear*: scalar uint8/int8; fixes the output dtype.
Status ReadYZp(KernelContext& ctx, const TensorRef* zp, int32_t* dtype, int32_t* value) {
  *dtype = EPCTX_DTYPE_UINT8;
  *value = 0;
  if (!zp) return Status::Ok();
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *zp, "y_zero_point"));
  EPCTX_RETURN_IF_ERROR(RequireScalar(ctx, *zp, "y_zero_point"));
  *dtype = zp->dtype;
  Dispatch<kQuant8>(zp->dtype, [&](auto tag) {
    using Z = decltype(tag);
    *value = *static_cast<const Z*>(zp->data);
  });
  return Status::Ok();
}

// A's zero point when it is one value of A's dtype (0 when absent): what the
// prepared path takes; false leaves other layouts and errors to
// RunIntMatMul.
bool ScalarAZp(const TensorRef* zp, const TensorRef& a, int32_t* value) {
  *value = 0;
  if (!zp) return true;
  if (zp->dtype != a.dtype || zp->elements() != 1 || zp->rank > 1) return false;
  Dispatch<kQuant8>(zp->dtype, [&](auto tag) {
    using Z = decltype(tag);
    *value = *static_cast<const Z*>(zp->data);
  });
  return true;
}

}  // namespace

Status MatMulInteger(KernelContext& ctx) {
  const TensorRef *a, *b;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "A", &a));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "B", &b));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *a, "A"));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *b, "B"));
  MatMulPlan p;
  EPCTX_RETURN_IF_ERROR(PlanMatMul(ctx, *a, *b, 4, &p));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_INT32, p.yrank, p.ydims, &y));
  int32_t* Y = static_cast<int32_t*>(y->data);
  int32_t azp;
  const QMatMulPrepared* pp = QMatMulPreparedFor(ctx, *b, ctx.input(3), p);
  if (pp && ScalarAZp(ctx.input(2), *a, &azp))
    return RunQMatMulPanels(
        ctx, *pp, p,
        QMatMulOperands{a->data, a->dtype, azp, Y, QMatMulOut::kInt32, nullptr, 0, 0, 0, nullptr});
  const int64_t MN = p.M * p.N, N = p.N;
  const IntMatMulArgs args{a, b, ctx.input(2), ctx.input(3), "a_zero_point", "b_zero_point"};
  return RunIntMatMul(ctx, args, p, [&](int64_t iy, int64_t i, int64_t, const uint32_t* r) {
    int32_t* out = Y + iy * MN + i * N;
    for (int64_t j = 0; j < N; ++j) out[j] = static_cast<int32_t>(r[j]);
  });
}

Status QLinearMatMul(KernelContext& ctx) {
  const TensorRef *a, *as, *b, *bs, *ys;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "a", &a));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "a_scale", &as));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 3, "b", &b));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 4, "b_scale", &bs));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 6, "y_scale", &ys));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *a, "a"));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *b, "b"));
  EPCTX_RETURN_IF_ERROR(RequireScalar(ctx, *as, "a_scale"));
  EPCTX_RETURN_IF_ERROR(RequireScalar(ctx, *ys, "y_scale"));
  int32_t ydtype, yzp;
  EPCTX_RETURN_IF_ERROR(ReadYZp(ctx, ctx.input(7), &ydtype, &yzp));
  MatMulPlan p;
  EPCTX_RETURN_IF_ERROR(PlanMatMul(ctx, *a, *b, 1, &p));
  int32_t azp;
  const QMatMulPrepared* pp = QMatMulPreparedFor(ctx, *b, ctx.input(5), p);
  if (pp && !ScalarAZp(ctx.input(2), *a, &azp)) pp = nullptr;
  // Multipliers made at create from these constant scales, else read here.
  const float* mult = pp ? QMatMulPreparedMult(*pp, *as, *bs, ys) : nullptr;
  float *a_scale = nullptr, *b_scale = nullptr, *y_scale = nullptr;
  Param<float> bsp;
  if (!mult) {
    EPCTX_RETURN_IF_ERROR(ReadScales(ctx, *as, "a_scale", 21, &a_scale));
    EPCTX_RETURN_IF_ERROR(ReadScales(ctx, *bs, "b_scale", 21, &b_scale));
    EPCTX_RETURN_IF_ERROR(ReadScales(ctx, *ys, "y_scale", 21, &y_scale));
    EPCTX_RETURN_IF_ERROR(ParamLayout(ctx, *bs, "b_scale", *b, "b", p.N,
                                      b->rank >= 2 ? b->rank - 2 : 0, &bsp.batch_stride,
                                      &bsp.stride));
    bsp.v = b_scale;
    // Multipliers per batch of a batched B are the reference loop's.
    if (pp && pp->matrices > 1 && bsp.batch_stride != 0) pp = nullptr;
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, ydtype, p.yrank, p.ydims, &y));
  const int64_t MN = p.M * p.N, N = p.N;
  if (pp) {
    if (!mult) {
      float* m = nullptr;
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(N), &m));
      for (int64_t j = 0; j < N; ++j) m[j] = a_scale[0] * bsp.at(0, j) / y_scale[0];
      mult = m;
    }
    const bool s8 = ydtype == EPCTX_DTYPE_INT8;
    return RunQMatMulPanels(ctx, *pp, p,
                            QMatMulOperands{a->data, a->dtype, azp, y->data, QMatMulOut::kBytes,
                                            mult, yzp, s8 ? -128 : 0, s8 ? 127 : 255, nullptr});
  }
  const float ab = a_scale[0], yv = y_scale[0];
  const IntMatMulArgs args{a, b, ctx.input(2), ctx.input(5), "a_zero_point", "b_zero_point"};
  Status st = Status::Ok();
  Dispatch<kQuant8>(ydtype, [&](auto tag) {
    using Q = decltype(tag);
    Q* Y = static_cast<Q*>(y->data);
    st = RunIntMatMul(ctx, args, p, [&](int64_t iy, int64_t i, int64_t ib, const uint32_t* r) {
      Q* out = Y + iy * MN + i * N;
      for (int64_t j = 0; j < N; ++j)
        out[j] = SaturateRound<Q>(
            static_cast<float>(static_cast<int32_t>(r[j])) * (ab * bsp.at(ib, j) / yv), yzp);
    });
  });
  return st;
}

Status ConvInteger(KernelContext& ctx) {
  const TensorRef *x, *wt;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "x", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "w", &wt));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *x, "x"));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *wt, "w"));
  IntConvShape cs;
  EPCTX_RETURN_IF_ERROR(ReadIntConvShape(ctx, *x, *wt, &cs));
  int32_t xzp;
  Param<int32_t> wzp;
  EPCTX_RETURN_IF_ERROR(ReadConvXZp(ctx, ctx.input(2), *x, "x_zero_point", &xzp));
  EPCTX_RETURN_IF_ERROR(ReadConvWZp(ctx, ctx.input(3), *wt, "w_zero_point", cs.cout, &wzp));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_INT32, cs.rank, cs.ydims, &y));
  int32_t* Y = static_cast<int32_t*>(y->data);
  const int64_t OHW = cs.w.out[kH] * cs.w.out[kW];
  if (y->elements() == 0) return Status::Ok();
  return RunIntConv(ctx, cs, *x, xzp, *wt, wzp, [&](int64_t n, int64_t oc, const uint32_t* acc) {
    int32_t* out = Y + (n * cs.cout + oc) * OHW;
    for (int64_t p = 0; p < OHW; ++p) out[p] = static_cast<int32_t>(acc[p]);
  });
}

// ---- QLinearConv on the int8 panels ---------------------------------------

namespace {

// What PrepareQLinearConv leaves: the weight rows' sums (signed, as the
// micro-kernels read them) of the constant W it was made for.
struct QConvPrepared {
  const void* weights;
  int64_t cout, K;
  int32_t* wsum;  // [cout]
};

// The int8 micro-kernel paths where they apply: 2-D, 8-bit x and w with a
// prepared W and one weight zero point for every channel; a depthwise
// convolution whose weights' zero point is 0 as signed bytes
// (uk::QDepthwiseRun), else at least 4 output channels per group and 16 K
// rows (uk::QConvRun); other shapes keep the tap loops. Same accumulators (wrapping int32) and
// requantisation as RunIntConv's epilogue; false: not taken, nothing written.
bool QLinearConvPanels(KernelContext& ctx, const IntConvShape& cs, const TensorRef& x, int32_t xzp,
                       const TensorRef& wt, const Param<int32_t>& wzp, const int32_t* bias,
                       const float* mult, int32_t yzp, int32_t ydtype, TensorRef* y) {
  const QConvPrepared* pp = static_cast<const QConvPrepared*>(ctx.prepared());
  const int64_t K = cs.cin_g * cs.w.kernel[kH] * cs.w.kernel[kW];
  if (!pp || pp->weights != wt.data || pp->cout != cs.cout || pp->K != K || cs.rank != 4)
    return false;
  for (int64_t c = 1; c < cs.cout; ++c)
    if (wzp.at(0, c) != wzp.at(0, 0)) return false;
  const bool xs8 = x.dtype == EPCTX_DTYPE_INT8, wu8 = wt.dtype == EPCTX_DTYPE_UINT8;
  const Window& w = cs.w;
  uk::QConvJob j{};
  j.x = static_cast<const uint8_t*>(x.data);
  j.w = static_cast<const uint8_t*>(wt.data);
  j.y = y->data;
  j.N = cs.batch, j.C = cs.cin, j.H = w.in[kH], j.W = w.in[kW], j.CO = cs.cout;
  j.OH = w.out[kH], j.OW = w.out[kW], j.G = cs.group, j.KH = w.kernel[kH], j.KW = w.kernel[kW];
  j.sh = w.stride[kH], j.sw = w.stride[kW], j.dh = w.dilation[kH], j.dw = w.dilation[kW];
  j.pt = w.pad_begin[kH], j.pl = w.pad_begin[kW];
  j.xflip = xs8 ? 0x80 : 0;
  j.wflip = wu8 ? 0x80 : 0;
  j.wsum = pp->wsum;
  j.xz = xzp + (xs8 ? 128 : 0);
  j.wz = wzp.at(0, 0) - (wu8 ? 128 : 0);
  j.bias = bias;
  j.mult = mult;
  j.zp = yzp;
  j.lo = ydtype == EPCTX_DTYPE_INT8 ? -128 : 0;
  j.hi = ydtype == EPCTX_DTYPE_INT8 ? 127 : 255;
  j.int32_out = false;
  j.wide_bias = false;  // ORT's wrapping acc + bias
  j.tile = uk::QTileKernel();
  j.pack = uk::QPackKernel(uk::Isa::kAuto, j.KW, j.sw);
  j.requant = uk::QRequantKernel();
  j.depthwise = uk::QDwKernel();
  const bool depthwise = uk::QDepthwiseFits(j);
  if (!depthwise && (cs.cout_g < 4 || K < 16)) return false;
  const uint64_t work =
      ((depthwise ? uk::QDepthwiseWorkBytes(j) : uk::QConvWorkBytes(j)) + 63) / 64 * 64;
  uint8_t* scratch = static_cast<uint8_t*>(ctx.Scratch(uint64_t(ctx.threads()) * work, 64));
  if (!scratch) return false;
  const int64_t units = depthwise ? j.N * j.C : uk::QConvUnits(j);
  const uint32_t chunks =
      ctx.Chunks(units, depthwise ? j.OH * j.OW * K : K * uk::kQCols * cs.cout_g);
  ctx.ParallelFor(chunks, [&](uint32_t c, uint32_t worker) {
    int64_t lo, hi;
    ChunkRange(units, chunks, c, 1, &lo, &hi);
    if (lo >= hi) return;
    if (depthwise) uk::QDepthwiseRun(j, lo, hi, scratch + uint64_t(worker) * work);
    else uk::QConvRun(j, lo, hi, scratch + uint64_t(worker) * work);
  });
  return true;
}

}  // namespace

Status PrepareQLinearConv(PrepareContext& pc) {
  const TensorRef* wt = pc.constant(3);
  if (!wt || (wt->dtype != EPCTX_DTYPE_INT8 && wt->dtype != EPCTX_DTYPE_UINT8) || wt->rank != 4)
    return Status::Ok();
  int64_t K = 0;
  if (!Product(wt->dims, 1, wt->rank, &K) || K <= 0 || wt->dims[0] <= 0) return Status::Ok();
  QConvPrepared* pp = static_cast<QConvPrepared*>(pc.Alloc(sizeof(QConvPrepared), 16));
  int32_t* wsum = static_cast<int32_t*>(pc.Alloc(uint64_t(wt->dims[0]) * sizeof(int32_t), 16));
  if (!pp || !wsum) return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the prepared state");
  uk::QWeightSums(static_cast<const uint8_t*>(wt->data), wt->dims[0], K,
                  wt->dtype == EPCTX_DTYPE_UINT8 ? 0x80 : 0, wsum);
  *pp = QConvPrepared{wt->data, wt->dims[0], K, wsum};
  pc.SetPrepared(pp);
  return Status::Ok();
}

Status QLinearConv(KernelContext& ctx) {
  const TensorRef *x, *xs, *wt, *ws, *ys, *bias = ctx.input(8);
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "x", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "x_scale", &xs));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 3, "w", &wt));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 4, "w_scale", &ws));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 6, "y_scale", &ys));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *x, "x"));
  EPCTX_RETURN_IF_ERROR(CheckQ8(ctx, *wt, "w"));
  EPCTX_RETURN_IF_ERROR(RequireScalar(ctx, *xs, "x_scale"));
  EPCTX_RETURN_IF_ERROR(RequireScalar(ctx, *ys, "y_scale"));
  IntConvShape cs;
  EPCTX_RETURN_IF_ERROR(ReadIntConvShape(ctx, *x, *wt, &cs));
  int32_t xzp, ydtype, yzp;
  Param<int32_t> wzp;
  EPCTX_RETURN_IF_ERROR(ReadConvXZp(ctx, ctx.input(2), *x, "x_zero_point", &xzp));
  EPCTX_RETURN_IF_ERROR(ReadConvWZp(ctx, ctx.input(5), *wt, "w_zero_point", cs.cout, &wzp));
  EPCTX_RETURN_IF_ERROR(ReadYZp(ctx, ctx.input(7), &ydtype, &yzp));
  const bool ws_scalar = ws->elements() == 1 && ws->rank <= 1;
  if (!ws_scalar && !(ws->rank == 1 && ws->dims[0] == cs.cout))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "w_scale must be a scalar or [%lld], found %s",
                    static_cast<long long>(cs.cout), ShapeOf(*ws).s);
  if (bias) {
    if (bias->dtype != EPCTX_DTYPE_INT32) return UnsupportedDtype(ctx, "B", bias->dtype);
    if (bias->rank != 1 || bias->dims[0] != cs.cout)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "bias B must have shape [%lld], found %s",
                      static_cast<long long>(cs.cout), ShapeOf(*bias).s);
  }
  float *x_scale, *w_scale, *y_scale;
  EPCTX_RETURN_IF_ERROR(ReadScales(ctx, *xs, "x_scale", kFloatOnly, &x_scale));
  EPCTX_RETURN_IF_ERROR(ReadScales(ctx, *ws, "w_scale", kFloatOnly, &w_scale));
  EPCTX_RETURN_IF_ERROR(ReadScales(ctx, *ys, "y_scale", kFloatOnly, &y_scale));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, ydtype, cs.rank, cs.ydims, &y));
  if (y->elements() == 0) return Status::Ok();
  const int64_t OHW = cs.w.out[kH] * cs.w.out[kW];
  const int32_t* B = bias ? static_cast<const int32_t*>(bias->data) : nullptr;
  if (ctx.prepared()) {
    float* mult = nullptr;
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, uint64_t(cs.cout), &mult));
    for (int64_t oc = 0; oc < cs.cout; ++oc)
      mult[oc] = x_scale[0] * w_scale[ws_scalar ? 0 : oc] / y_scale[0];
    if (QLinearConvPanels(ctx, cs, *x, xzp, *wt, wzp, B, mult, yzp, ydtype, y)) return Status::Ok();
  }
  Status st = Status::Ok();
  Dispatch<kQuant8>(ydtype, [&](auto tag) {
    using Q = decltype(tag);
    Q* Y = static_cast<Q*>(y->data);
    st = RunIntConv(ctx, cs, *x, xzp, *wt, wzp, [&](int64_t n, int64_t oc, const uint32_t* acc) {
      const float mult = x_scale[0] * w_scale[ws_scalar ? 0 : oc] / y_scale[0];
      const uint32_t bv = B ? static_cast<uint32_t>(B[oc]) : 0u;
      Q* out = Y + (n * cs.cout + oc) * OHW;
      for (int64_t p = 0; p < OHW; ++p)
        out[p] =
            SaturateRound<Q>(static_cast<float>(static_cast<int32_t>(acc[p] + bv)) * mult, yzp);
    });
  });
  return st;
}

}  // namespace kern
}  // namespace epctx
