// SPDX-License-Identifier: Apache-2.0
// RoiAlign (opsets 10..21; float and double), as ONNX Runtime does it. Each
// ROI [x1, y1, x2, y2] is scaled by spatial_scale (and shifted by -0.5 with
// coordinate_transformation_mode half_pixel, the default from opset 16;
// output_half_pixel, the only behaviour of opset 10, instead widens it to at
// least 1x1), split into output_height x output_width bins, and each bin
// samples a grid of sampling_ratio (or ceil(bin size)) points per axis
// bilinearly. A sample more than one pixel outside the input counts as 0.
// avg averages the samples; max takes, as ORT does, the largest weighted
// corner over all samples of the bin.
//
// The sample positions are separable: one table per axis (bins x samples),
// so scratch stays linear in the output size.
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

template <typename T>
struct Tap {
  int64_t lo, hi;
  T wlo, whi;  // weights of lo and hi
  bool valid;
};

// Sample positions along one axis: n bins of `grid` samples each.
template <typename T>
void AxisTaps(T start, T bin, int64_t n, int64_t grid, int64_t len, Tap<T>* out) {
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < grid; ++i) {
      Tap<T>& t = out[b * grid + i];
      T v = start + static_cast<T>(b) * bin +
            (static_cast<T>(i) + T(0.5)) * bin / static_cast<T>(grid);
      if (!(v >= T(-1.0) && v <= static_cast<T>(len))) {  // also NaN
        t = {0, 0, T(0), T(0), false};
        continue;
      }
      if (v <= 0) v = 0;
      int64_t lo = static_cast<int64_t>(v), hi;
      if (lo >= len - 1) {
        hi = lo = len - 1;
        v = static_cast<T>(lo);
      } else {
        hi = lo + 1;
      }
      const T l = v - static_cast<T>(lo);
      t = {lo, hi, T(1) - l, l, true};
    }
  }
}

// Sampling points per bin beyond which an ROI is rejected: an ROI inside the
// input needs at most about the input size per axis.
inline int64_t GridLimit(int64_t len) { return 4 * len + 8; }

template <typename T>
Status Run(KernelContext& ctx, const TensorRef& x, const TensorRef& rois, const int64_t* batch,
           bool max_mode, bool half_pixel, int64_t ph, int64_t pw, int64_t ratio, float scale,
           T* Y) {
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  const int64_t R = rois.dims[0];
  const T* X = static_cast<const T*>(x.data);
  const T* B = static_cast<const T*>(rois.data);
  const T offset = half_pixel ? T(0.5) : T(0);
  // Bin geometry of ROI r: start, bin size and samples per bin on each axis.
  struct Geo {
    T x0, y0, bin_h, bin_w;
    int64_t gh, gw;
  };
  auto geometry = [&](int64_t r, Geo* g) -> Status {
    const T* roi = B + r * 4;
    g->x0 = roi[0] * static_cast<T>(scale) - offset;
    g->y0 = roi[1] * static_cast<T>(scale) - offset;
    T rw = roi[2] * static_cast<T>(scale) - offset - g->x0;
    T rh = roi[3] * static_cast<T>(scale) - offset - g->y0;
    if (!half_pixel) {
      if (rw < 1) rw = 1;
      if (rh < 1) rh = 1;
    }
    g->bin_h = rh / static_cast<T>(ph);
    g->bin_w = rw / static_cast<T>(pw);
    g->gh = g->gw = ratio;
    if (ratio > 0) return Status::Ok();
    const T ch = g->bin_h > 0 ? g->bin_h : T(0), cw = g->bin_w > 0 ? g->bin_w : T(0);
    if (!(ch <= static_cast<T>(GridLimit(H))) || !(cw <= static_cast<T>(GridLimit(W))))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "roi %lld spans bins of %gx%g pixels, more than the input %s allows",
                      static_cast<long long>(r), static_cast<double>(g->bin_h),
                      static_cast<double>(g->bin_w), ShapeOf(x).s);
    g->gh = static_cast<int64_t>(ch);
    if (static_cast<T>(g->gh) < ch) ++g->gh;
    g->gw = static_cast<int64_t>(cw);
    if (static_cast<T>(g->gw) < cw) ++g->gw;
    return Status::Ok();
  };
  int64_t cap_y = 1, cap_x = 1;
  for (int64_t r = 0; r < R; ++r) {
    Geo g;
    EPCTX_RETURN_IF_ERROR(geometry(r, &g));
    if (ph * g.gh > cap_y) cap_y = ph * g.gh;
    if (pw * g.gw > cap_x) cap_x = pw * g.gw;
  }
  Tap<T>* ty = nullptr;
  Tap<T>* tx = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(cap_y), &ty));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(cap_x), &tx));
  for (int64_t r = 0; r < R; ++r) {
    const int64_t n = batch[r];
    if (n < 0 || n >= N)
      return ctx.Fail(
          EPCTX_INVALID_ARGUMENT, "batch_indices[%lld] is %lld, expected a value in [0, %lld)",
          static_cast<long long>(r), static_cast<long long>(n), static_cast<long long>(N));
    Geo g;
    EPCTX_RETURN_IF_ERROR(geometry(r, &g));
    const int64_t gh = g.gh, gw = g.gw;
    const T count = static_cast<T>(gh * gw > 0 ? gh * gw : 1);
    AxisTaps(g.y0, g.bin_h, ph, gh, H, ty);
    AxisTaps(g.x0, g.bin_w, pw, gw, W, tx);
    for (int64_t c = 0; c < C; ++c) {
      const T* plane = X + (n * C + c) * H * W;
      T* out = Y + (r * C + c) * ph * pw;
      for (int64_t by = 0; by < ph; ++by) {
        for (int64_t bx = 0; bx < pw; ++bx) {
          T acc = 0;
          bool have = false;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const Tap<T>& a = ty[by * gh + iy];
            for (int64_t ix = 0; ix < gw; ++ix) {
              const Tap<T>& b = tx[bx * gw + ix];
              T v1 = 0, v2 = 0, v3 = 0, v4 = 0;
              if (a.valid && b.valid) {
                v1 = a.wlo * b.wlo * plane[a.lo * W + b.lo];
                v2 = a.wlo * b.whi * plane[a.lo * W + b.hi];
                v3 = a.whi * b.wlo * plane[a.hi * W + b.lo];
                v4 = a.whi * b.whi * plane[a.hi * W + b.hi];
              }
              if (max_mode) {
                T m = v1 > v2 ? v1 : v2;
                m = m > v3 ? m : v3;
                m = m > v4 ? m : v4;
                acc = !have || m > acc ? m : acc;
                have = true;
              } else {
                acc += v1 + v2 + v3 + v4;
              }
            }
          }
          out[by * pw + bx] = max_mode ? acc : acc / count;
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status RoiAlign(KernelContext& ctx) {
  const TensorRef *x, *rois, *bi;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "rois", &rois));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "batch_indices", &bi));
  if (x->dtype != EPCTX_DTYPE_FLOAT && x->dtype != EPCTX_DTYPE_DOUBLE)
    return UnsupportedDtype(ctx, "X", x->dtype);
  if (rois->dtype != x->dtype)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "rois has dtype %s, expected %s like X",
                    dtype_name(rois->dtype), dtype_name(x->dtype));
  if (bi->dtype != EPCTX_DTYPE_INT64) return UnsupportedDtype(ctx, "batch_indices", bi->dtype);
  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *x, "X", 4));
  if (rois->rank != 2 || rois->dims[1] != 4)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "rois must have shape [num_rois, 4], found %s",
                    ShapeOf(*rois).s);
  if (bi->rank != 1 || bi->dims[0] != rois->dims[0])
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "batch_indices must have shape [%lld] like rois, found %s",
                    static_cast<long long>(rois->dims[0]), ShapeOf(*bi).s);
  StrView m = ctx.AttrString("mode", "avg");
  if (!m.eq("avg") && !m.eq("max"))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "mode is '%.*s', expected avg or max", m.len(), m.data);
  bool half_pixel = false;
  if (ctx.opset() >= 16) {
    StrView c = ctx.AttrString("coordinate_transformation_mode", "half_pixel");
    if (c.eq("half_pixel")) half_pixel = true;
    else if (!c.eq("output_half_pixel"))
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "coordinate_transformation_mode is '%.*s', expected half_pixel or "
                      "output_half_pixel",
                      c.len(), c.data);
  }
  const int64_t ph = ctx.AttrInt("output_height", 1), pw = ctx.AttrInt("output_width", 1);
  const int64_t ratio = ctx.AttrInt("sampling_ratio", 0);
  const float scale = ctx.AttrFloat("spatial_scale", 1.0f);
  if (ph < 1 || ph > (int64_t{1} << 20) || pw < 1 || pw > (int64_t{1} << 20))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "output_height x output_width is %lld x %lld, expected values in [1, 2^20]",
                    static_cast<long long>(ph), static_cast<long long>(pw));
  if (ratio < 0 || ratio > 4096)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "sampling_ratio is %lld, expected [0, 4096]",
                    static_cast<long long>(ratio));
  if (!(scale > 0.0f) || !(scale < 1e30f))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "spatial_scale is %g, expected > 0",
                    static_cast<double>(scale));
  const int64_t ydims[4] = {rois->dims[0], x->dims[1], ph, pw};
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, 4, ydims, dtype_size(x->dtype), "output Y"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, 4, ydims, &y));
  if (y->elements() == 0) return Status::Ok();
  if (x->dims[2] == 0 || x->dims[3] == 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X %s has an empty spatial axis", ShapeOf(*x).s);
  const int64_t* batch = static_cast<const int64_t*>(bi->data);
  const bool max_mode = m.eq("max");
  if (x->dtype == EPCTX_DTYPE_FLOAT)
    return Run(ctx, *x, *rois, batch, max_mode, half_pixel, ph, pw, ratio, scale,
               static_cast<float*>(y->data));
  return Run(ctx, *x, *rois, batch, max_mode, half_pixel, ph, pw, ratio, scale,
             static_cast<double*>(y->data));
}

}  // namespace kern
}  // namespace epctx
