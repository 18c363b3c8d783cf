// SPDX-License-Identifier: Apache-2.0
// Conv (1-D, 2-D and 3-D, float32): three paths chosen by shape.
//  - one input channel per group (depthwise, any channel multiplier): a
//    direct loop per output channel whose inner loop runs over a contiguous
//    output row with precomputed valid bounds, so it has no branches;
//  - 1x1 kernels with stride 1 and no padding: the input already is the
//    im2col matrix, so SGEMM runs on it directly;
//  - everything else: im2col into scratch, a chunk of output positions at a
//    time (bounding scratch to ~4 MB), then SGEMM weights x columns.
#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/window.h"

namespace epctx {
namespace kern {
namespace {

// Column scratch budget per chunk, in floats.
constexpr int64_t kColBudget = int64_t{1} << 20;

struct ConvShape {
  int64_t batch, cin, cout, group, cin_g, cout_g;
  Window w;
};

void DepthwiseChannel(const ConvShape& cs, const float* in, const float* wk,
                      float bias, float* out) {
  const Window& w = cs.w;
  const int64_t D = w.in[0], H = w.in[1], W = w.in[2];
  const int64_t OD = w.out[0], OH = w.out[1], OW = w.out[2];
  const int64_t sh = w.stride[1], sw = w.stride[2];
  for (int64_t od = 0; od < OD; ++od) {
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* __restrict orow = out + (od * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ++ow) orow[ow] = bias;
      for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
        const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
        if (id < 0 || id >= D) continue;
        for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
          const int64_t ih = oh * sh - w.pad_begin[1] + kh * w.dilation[1];
          if (ih < 0 || ih >= H) continue;
          const float* __restrict irow = in + (id * H + ih) * W;
          const float* wrow = wk + (kd * w.kernel[1] + kh) * w.kernel[2];
          for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
            const float wv = wrow[kw];
            const int64_t off = kw * w.dilation[2] - w.pad_begin[2];
            int64_t lo, hi;
            ValidRange(off, sw, W, OW, &lo, &hi);
            if (sw == 1) {
              const float* __restrict src = irow + off;
              for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * src[ow];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * irow[ow * sw + off];
            }
          }
        }
      }
    }
  }
}

// Columns [p0, p0+np) of the im2col matrix of one group's input into col
// (K rows of np floats, K = cin_g * KD * KH * KW).
void Im2Col(const ConvShape& cs, const float* in, int64_t p0, int64_t np,
            float* col) {
  const Window& w = cs.w;
  const int64_t D = w.in[0], H = w.in[1], W = w.in[2];
  const int64_t OH = w.out[1], OW = w.out[2];
  const int64_t sh = w.stride[1], sw = w.stride[2];
  float* dst = col;
  for (int64_t c = 0; c < cs.cin_g; ++c) {
    const float* volume = in + c * D * H * W;
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          const int64_t off = kw * w.dilation[2] - w.pad_begin[2];
          int64_t p = p0;
          const int64_t p_end = p0 + np;
          while (p < p_end) {
            const int64_t row = p / OW;  // od * OH + oh
            const int64_t od = row / OH, oh = row - od * OH;
            const int64_t ow0 = p - row * OW;
            int64_t ow1 = OW;
            if (ow1 - ow0 > p_end - p) ow1 = ow0 + (p_end - p);
            float* __restrict d = dst + (p - p0) - ow0;  // d[ow] for this row
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            const int64_t ih = oh * sh - w.pad_begin[1] + kh * w.dilation[1];
            if (id < 0 || id >= D || ih < 0 || ih >= H) {
              for (int64_t ow = ow0; ow < ow1; ++ow) d[ow] = 0.0f;
            } else {
              const float* __restrict irow = volume + (id * H + ih) * W;
              int64_t lo, hi;
              ValidRange(off, sw, W, OW, &lo, &hi);
              if (lo < ow0) lo = ow0;
              if (hi > ow1) hi = ow1;
              if (lo > hi) lo = hi;
              for (int64_t ow = ow0; ow < lo; ++ow) d[ow] = 0.0f;
              if (sw == 1) {
                const float* __restrict src = irow + off;
                for (int64_t ow = lo; ow < hi; ++ow) d[ow] = src[ow];
              } else {
                for (int64_t ow = lo; ow < hi; ++ow) d[ow] = irow[ow * sw + off];
              }
              for (int64_t ow = hi > ow0 ? hi : ow0; ow < ow1; ++ow) d[ow] = 0.0f;
            }
            p += ow1 - ow0;
          }
          dst += np;
        }
      }
    }
  }
}

Status ReadConvShape(KernelContext& ctx, const TensorRef& x, const TensorRef& wt,
                     ConvShape* cs) {
  if (x.rank > 5)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "%u-D convolution (input %s) is not supported",
                    x.rank - 2, ShapeOf(x).s);
  if (x.rank < 3)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "input X must have rank 3, 4 or 5, found shape %s", ShapeOf(x).s);
  if (wt.rank != x.rank)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "weights W must have rank %u like X, found shape %s", x.rank,
                    ShapeOf(wt).s);
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
                    "X has %lld channels but W %s with group %lld expects %lld",
                    static_cast<long long>(cs->cin), ShapeOf(wt).s,
                    static_cast<long long>(group),
                    static_cast<long long>(cs->cin_g * group));
  if (cs->cout % group != 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "W has %lld output channels, expected a multiple of group %lld",
                    static_cast<long long>(cs->cout), static_cast<long long>(group));
  cs->cout_g = cs->cout / group;
  return ComputeWindow(ctx, x.rank - 2, x.dims + 2, wt.dims + 2, false, &cs->w);
}

}  // namespace

Status Conv(KernelContext& ctx) {
  const TensorRef *x, *wt, *b = ctx.input(2);
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 1, "W", &wt));
  ConvShape cs;
  EPCTX_RETURN_IF_ERROR(ReadConvShape(ctx, *x, *wt, &cs));
  if (b) {
    if (b->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, "B", b->dtype);
    if (b->rank != 1 || b->dims[0] != cs.cout)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "bias B must have shape [%lld], found %s",
                      static_cast<long long>(cs.cout), ShapeOf(*b).s);
  }
  const Window& w = cs.w;
  int64_t ydims[2 + kMaxSpatial] = {cs.batch, cs.cout};
  for (uint32_t i = 0; i + 2 < x->rank; ++i) ydims[2 + i] = w.out[WindowBase(x->rank - 2) + i];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, x->rank, ydims, 4, "output Y"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x->rank, ydims, &y));

  const float* X = static_cast<const float*>(x->data);
  const float* Wt = static_cast<const float*>(wt->data);
  const float* B = b ? static_cast<const float*>(b->data) : nullptr;
  float* Y = static_cast<float*>(y->data);
  const int64_t HW = w.in_size();
  const int64_t OHW = w.out_size();
  if (y->elements() == 0) return Status::Ok();
  int64_t KHW = 0, K = 0;
  if (!Product(wt->dims, 2, wt->rank, &KHW) || !Product(wt->dims, 1, wt->rank, &K))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "weights W %s are too large", ShapeOf(*wt).s);

  if (cs.cin_g == 1) {
    for (int64_t n = 0; n < cs.batch; ++n)
      for (int64_t oc = 0; oc < cs.cout; ++oc) {
        const int64_t ic = oc / cs.cout_g;
        DepthwiseChannel(cs, X + (n * cs.cin + ic) * HW, Wt + oc * KHW,
                         B ? B[oc] : 0.0f, Y + (n * cs.cout + oc) * OHW);
      }
    return Status::Ok();
  }

  bool pointwise = KHW == 1;
  for (uint32_t a = 0; a < kMaxSpatial; ++a)
    pointwise = pointwise && w.stride[a] == 1 && w.pad_begin[a] == 0 && w.pad_end[a] == 0;
  int64_t chunk = OHW;
  if (!pointwise && K * chunk > kColBudget) {
    chunk = kColBudget / K;
    if (chunk < 64) chunk = 64;
    if (chunk > OHW) chunk = OHW;
  }
  float* col = nullptr;
  if (!pointwise) EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(K * chunk), &col));
  float* ws = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, SgemmWorkspaceFloats(cs.cout_g, chunk, K), &ws));

  for (int64_t n = 0; n < cs.batch; ++n) {
    for (int64_t g = 0; g < cs.group; ++g) {
      const float* xg = X + (n * cs.cin + g * cs.cin_g) * HW;
      const float* wg = Wt + g * cs.cout_g * K;
      float* yg = Y + (n * cs.cout + g * cs.cout_g) * OHW;
      for (int64_t p0 = 0; p0 < OHW; p0 += chunk) {
        const int64_t np = OHW - p0 < chunk ? OHW - p0 : chunk;
        if (pointwise) {
          Sgemm(false, false, cs.cout_g, np, K, 1.0f, wg, K, xg + p0, HW, 0.0f,
                yg + p0, OHW, ws);
        } else {
          Im2Col(cs, xg, p0, np, col);
          Sgemm(false, false, cs.cout_g, np, K, 1.0f, wg, K, col, np, 0.0f,
                yg + p0, OHW, ws);
        }
      }
      if (B) {
        for (int64_t oc = 0; oc < cs.cout_g; ++oc) {
          const float bv = B[g * cs.cout_g + oc];
          float* __restrict row = yg + oc * OHW;
          for (int64_t p = 0; p < OHW; ++p) row[p] += bv;
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
