// SPDX-License-Identifier: Apache-2.0
// ConvTranspose (1-D, 2-D and 3-D, float32) as SGEMM + col2im: for each
// group, columns[Cout_g*KD*KH*KW, D*H*W] = W_g^T x X_g, then every column
// entry is added into the output position its (kernel offset, input
// position) maps to. The output starts as the bias.
//
// Pads: explicit, or from auto_pad SAME_* (output = input * stride) or
// output_shape (output exactly that; any tail past the full extent stays at
// the bias), the odd pad going to the end except for SAME_LOWER. That is the
// ONNX spec and node suite; ONNX Runtime's DistributePadding puts it at the
// start for SAME_UPPER.
#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/window.h"

namespace epctx {
namespace kern {
namespace {

// Reads the shared window attributes plus output_padding and output_shape,
// and computes the pads (from auto_pad or output_shape) and output sizes.
Status ReadGeometry(KernelContext& ctx, uint32_t spatial, const int64_t* in, const int64_t* kernel,
                    Window* g) {
  AutoPad auto_pad;
  EPCTX_RETURN_IF_ERROR(ReadWindowAttrs(ctx, spatial, in, kernel, g, &auto_pad));
  int64_t op[kMaxSpatial] = {0, 0, 0}, os[kMaxSpatial] = {-1, -1, -1};
  EPCTX_RETURN_IF_ERROR(ReadWindowInts(ctx, "output_padding", spatial, 0, op));
  const int64_t* osv = nullptr;
  uint32_t osn = 0;
  const bool has_output_shape = ctx.AttrInts("output_shape", &osv, &osn);
  if (has_output_shape) {
    // output_shape may list all dims or only the spatial ones.
    if (osn == spatial + 2) {
      osv += 2;
    } else if (osn != spatial) {
      return ctx.Fail(EPCTX_INVALID_GRAPH, "output_shape has %u values, expected %u", osn, spatial);
    }
    for (uint32_t i = 0; i < spatial; ++i) {
      if (osv[i] < 0 || osv[i] > kMaxWindowValue)
        return ctx.Fail(EPCTX_INVALID_GRAPH, "output_shape[%u] is %lld", i,
                        static_cast<long long>(osv[i]));
      os[i] = osv[i];
    }
  }
  const bool same = auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower;
  const uint32_t base = WindowBase(spatial);
  for (uint32_t i = 0; i < spatial; ++i) {
    const uint32_t a = base + i;
    const int64_t s = g->stride[a], d = g->dilation[a];
    if (op[i] >= s && op[i] >= d)
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "output_padding[%u] is %lld, expected less than stride or dilation", i,
                      static_cast<long long>(op[i]));
    const int64_t span = (g->kernel[a] - 1) * d + 1;
    const int64_t full = s * (in[i] > 0 ? in[i] - 1 : 0) + op[i] + span;
    int64_t pb = g->pad_begin[a], pe = g->pad_end[a];
    int64_t out;
    if (has_output_shape || same) {
      const int64_t target = has_output_shape ? os[i] : in[i] * s;
      int64_t total = full - target;
      if (total < 0) total = 0;
      // SAME_LOWER pads more at the start, everything else at the end.
      pb = auto_pad == AutoPad::kSameLower ? total - total / 2 : total / 2;
      pe = total - pb;
      // An output_shape larger than the full extent leaves the tail at the
      // bias.
      out = target;
    } else {
      if (auto_pad == AutoPad::kValid) pb = pe = 0;
      out = full - pb - pe;
    }
    if (out < 0)
      return ctx.Fail(
          EPCTX_INVALID_ARGUMENT, "pads %lld+%lld exceed the output extent %lld on axis %u",
          static_cast<long long>(pb), static_cast<long long>(pe), static_cast<long long>(full), i);
    g->pad_begin[a] = pb;
    g->pad_end[a] = pe;
    g->out[a] = out;
  }
  return CheckWindowOut(ctx, *g);
}

// Adds the columns of channels [c0, c1) of one group (rows: c, kd, kh, kw;
// columns: id, ih, iw) into y, the group's first output channel.
void Col2Im(const Window& g, int64_t c0, int64_t c1, const float* col, float* y) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  const int64_t DHW = D * H * W;
  const float* src = col + c0 * g.kernel[0] * g.kernel[1] * g.kernel[2] * DHW;
  for (int64_t c = c0; c < c1; ++c) {
    float* volume = y + c * OD * OH * OW;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, src += DHW) {
          const int64_t off_w = kw * g.dilation[2] - g.pad_begin[2];
          // Valid iw: 0 <= iw*stride + off_w < OW.
          int64_t lo, hi;
          ValidRange(off_w, g.stride[2], OW, W, &lo, &hi);
          for (int64_t id = 0; id < D; ++id) {
            const int64_t od = id * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
            if (od < 0 || od >= OD) continue;
            for (int64_t ih = 0; ih < H; ++ih) {
              const int64_t oh = ih * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
              if (oh < 0 || oh >= OH) continue;
              float* orow = volume + (od * OH + oh) * OW;
              const float* srow = src + (id * H + ih) * W;
              for (int64_t iw = lo; iw < hi; ++iw) orow[iw * g.stride[2] + off_w] += srow[iw];
            }
          }
        }
      }
    }
  }
}

}  // namespace

Status ConvTranspose(KernelContext& ctx) {
  const TensorRef *x, *wt, *b = ctx.input(2);
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 1, "W", &wt));
  if (x->rank < 3 || x->rank > 5)
    return ctx.Fail(x->rank > 5 ? EPCTX_NOT_IMPLEMENTED : EPCTX_INVALID_ARGUMENT,
                    "input X must have rank 3, 4 or 5, found shape %s", ShapeOf(*x).s);
  if (wt->rank != x->rank)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "weights W must have rank %u like X, found shape %s",
                    x->rank, ShapeOf(*wt).s);
  const int64_t group = ctx.AttrInt("group", 1);
  if (group < 1 || group > kMaxWindowValue)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "group is %lld, expected >= 1",
                    static_cast<long long>(group));
  const int64_t batch = x->dims[0], cin = x->dims[1];
  if (wt->dims[0] != cin || cin % group != 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "X has %lld channels; expected W %s to have as many in dim 0, "
                    "divisible by group %lld",
                    static_cast<long long>(cin), ShapeOf(*wt).s, static_cast<long long>(group));
  const int64_t cin_g = cin / group, cout_g = wt->dims[1];
  int64_t cout = 0;
  if (!MulOk(cout_g, group, &cout))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "W shape %s is too large", ShapeOf(*wt).s);
  if (b) {
    if (b->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, "B", b->dtype);
    if (b->rank != 1 || b->dims[0] != cout)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "bias B must have shape [%lld], found %s",
                      static_cast<long long>(cout), ShapeOf(*b).s);
  }
  Window g;
  EPCTX_RETURN_IF_ERROR(ReadGeometry(ctx, x->rank - 2, x->dims + 2, wt->dims + 2, &g));
  int64_t ydims[2 + kMaxSpatial] = {batch, cout};
  for (uint32_t i = 0; i + 2 < x->rank; ++i) ydims[2 + i] = g.out[WindowBase(x->rank - 2) + i];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, x->rank, ydims, 4, "output Y"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x->rank, ydims, &y));
  if (y->elements() == 0) return Status::Ok();

  const int64_t HW = g.in_size(), OHW = g.out_size();
  int64_t M = 0, col_n = 0;
  if (!Product(wt->dims, 1, wt->rank, &M) || !MulOk(M, HW, &col_n) || col_n > (int64_t{1} << 40))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "column buffer for X %s, W %s is too large",
                    ShapeOf(*x).s, ShapeOf(*wt).s);
  float* col = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(col_n), &col));
  GemmRunner gemm;
  EPCTX_RETURN_IF_ERROR(gemm.Init(ctx, M, HW, cin_g));
  const float* X = static_cast<const float*>(x->data);
  const float* Wt = static_cast<const float*>(wt->data);
  const float* B = b ? static_cast<const float*>(b->data) : nullptr;
  float* Y = static_cast<float*>(y->data);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < cout; ++c) {
      float* row = Y + (n * cout + c) * OHW;
      const float bv = B ? B[c] : 0.0f;
      for (int64_t p = 0; p < OHW; ++p) row[p] = bv;
    }
    for (int64_t gi = 0; gi < group; ++gi) {
      // W_g is [cin_g, M] row-major; we need W_g^T x X_g.
      gemm.Run(true, false, M, HW, cin_g, 1.0f, Wt + gi * cin_g * M, M,
               X + (n * cin + gi * cin_g) * HW, HW, 0.0f, col, HW);
      // Output channels are independent: the threads take runs of them.
      const uint32_t chunks = ctx.Chunks(cout_g, M / (cout_g ? cout_g : 1) * HW);
      ctx.ParallelFor(chunks, [&](uint32_t ch, uint32_t) {
        int64_t c0, c1;
        ChunkRange(cout_g, chunks, ch, 1, &c0, &c1);
        Col2Im(g, c0, c1, col, Y + (n * cout + gi * cout_g) * OHW);
      });
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
