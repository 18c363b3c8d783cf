// Resize (opsets 10..17): modes nearest (any element type) and linear
// (float32, interpolating the last two axes; leading axes must keep their
// size). Output sizes come from `sizes` or floor(in * scale); each output
// coordinate maps back to the input through coordinate_transformation_mode,
// then rounds (nearest_mode) or interpolates. Opset 10 has neither attribute:
// it is asymmetric with ONNX Runtime's "simple" rounding (floor when
// upsampling, ceil when downsampling).
#include <cmath>
#include <cstring>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Coord { kHalfPixel, kAsymmetric, kPytorchHalfPixel, kAlignCorners, kTfHalfPixelForNn };
enum class Round { kSimple, kPreferFloor, kPreferCeil, kFloor, kCeil };

float Original(Coord c, float x, float scale, int64_t in, int64_t out) {
  switch (c) {
    case Coord::kHalfPixel: return (x + 0.5f) / scale - 0.5f;
    case Coord::kAsymmetric: return x / scale;
    case Coord::kPytorchHalfPixel: return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case Coord::kAlignCorners:
      return out == 1 ? 0.0f
                      : x * static_cast<float>(in - 1) / static_cast<float>(out - 1);
    case Coord::kTfHalfPixelForNn: return (x + 0.5f) / scale;
  }
  return 0.0f;
}

int64_t Nearest(Round r, float x, float scale, int64_t in) {
  float v;
  switch (r) {
    case Round::kSimple: v = scale < 1.0f ? ceilf(x) : floorf(x); break;
    case Round::kPreferFloor: v = x == floorf(x) + 0.5f ? floorf(x) : roundf(x); break;
    case Round::kPreferCeil: v = x == floorf(x) + 0.5f ? ceilf(x) : roundf(x); break;
    case Round::kFloor: v = floorf(x); break;
    default: v = ceilf(x); break;
  }
  if (!(v > 0.0f)) return 0;  // also NaN
  if (v >= static_cast<float>(in - 1)) return in - 1;
  return static_cast<int64_t>(v);
}

Status ParseModes(KernelContext& ctx, bool* linear, Coord* coord, Round* round) {
  StrView mode = ctx.AttrString("mode", "nearest");
  if (mode.eq("nearest")) *linear = false;
  else if (mode.eq("linear")) *linear = true;
  else if (mode.eq("cubic"))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "mode 'cubic' is not supported");
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH, "mode is '%.*s', expected nearest, linear or cubic",
                    mode.len(), mode.data);
  if (ctx.opset() < 11) {
    *coord = Coord::kAsymmetric;
    *round = Round::kSimple;
    return Status::Ok();
  }
  StrView c = ctx.AttrString("coordinate_transformation_mode", "half_pixel");
  if (c.eq("half_pixel")) *coord = Coord::kHalfPixel;
  else if (c.eq("asymmetric")) *coord = Coord::kAsymmetric;
  else if (c.eq("pytorch_half_pixel")) *coord = Coord::kPytorchHalfPixel;
  else if (c.eq("align_corners")) *coord = Coord::kAlignCorners;
  else if (c.eq("tf_half_pixel_for_nn")) *coord = Coord::kTfHalfPixelForNn;
  else if (c.eq("tf_crop_and_resize"))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED,
                    "coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH, "coordinate_transformation_mode '%.*s' is unknown",
                    c.len(), c.data);
  StrView n = ctx.AttrString("nearest_mode", "round_prefer_floor");
  if (n.eq("round_prefer_floor")) *round = Round::kPreferFloor;
  else if (n.eq("round_prefer_ceil")) *round = Round::kPreferCeil;
  else if (n.eq("floor")) *round = Round::kFloor;
  else if (n.eq("ceil")) *round = Round::kCeil;
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH, "nearest_mode '%.*s' is unknown", n.len(), n.data);
  return Status::Ok();
}

// Output sizes and per-axis scales from the scales or sizes input.
Status OutputShape(KernelContext& ctx, const TensorRef& x, int64_t* out, float* scales) {
  const uint32_t r = x.rank;
  const TensorRef* sc = ctx.input(ctx.opset() < 11 ? 1 : 2);
  const TensorRef* sz = ctx.opset() < 11 ? nullptr : ctx.input(3);
  if (sc && sc->elements() == 0) sc = nullptr;
  if (sz && sz->elements() == 0) sz = nullptr;
  if ((sc != nullptr) == (sz != nullptr))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "exactly one of scales and sizes must be given, found %s",
                    sc ? "both" : "neither");
  if (sc) {
    if (sc->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, "scales", sc->dtype);
    if (sc->elements() != r)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "scales has %llu values, expected rank %u",
                      static_cast<unsigned long long>(sc->elements()), r);
    const float* s = static_cast<const float*>(sc->data);
    for (uint32_t i = 0; i < r; ++i) {
      if (!(s[i] > 0.0f) || s[i] > 1e6f)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "scales[%u] is %f, expected > 0", i,
                        static_cast<double>(s[i]));
      const double o = floor(static_cast<double>(x.dims[i]) * static_cast<double>(s[i]));
      if (o > static_cast<double>(int64_t{1} << 40))
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output size on axis %u is too large", i);
      out[i] = static_cast<int64_t>(o);
      scales[i] = s[i];
    }
  } else {
    uint32_t n = 0;
    EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *sz, "sizes", out, kMaxRank, &n));
    if (n != r)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "sizes has %u values, expected rank %u", n, r);
    for (uint32_t i = 0; i < r; ++i) {
      if (out[i] < 0 || out[i] > (int64_t{1} << 40))
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "sizes[%u] is %lld", i,
                        static_cast<long long>(out[i]));
      scales[i] = x.dims[i] > 0 ? static_cast<float>(out[i]) / static_cast<float>(x.dims[i])
                                : 1.0f;
    }
  }
  return Status::Ok();
}

template <typename T>
void NearestCopy(const TensorRef& x, const int64_t* out_dims, int64_t* const* maps,
                 T* y) {
  const uint32_t r = x.rank;
  int64_t in_strides[kMaxRank];
  Strides(r, x.dims, in_strides);
  const T* src = static_cast<const T*>(x.data);
  const int64_t n = out_dims[r - 1];
  const int64_t* last = maps[r - 1];
  int64_t outer = 1;
  for (uint32_t i = 0; i + 1 < r; ++i) outer *= out_dims[i];
  int64_t idx[kMaxRank] = {};
  for (int64_t t = 0; t < outer; ++t) {
    int64_t off = 0;
    for (uint32_t i = 0; i + 1 < r; ++i) off += maps[i][idx[i]] * in_strides[i];
    const T* row = src + off;
    for (int64_t j = 0; j < n; ++j) y[j] = row[last[j]];
    y += n;
    NextIndex(OuterRank(r), out_dims, idx, nullptr, nullptr);
  }
}

}  // namespace

Status Resize(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  const uint32_t r = x->rank;
  if (r == 0) return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X must have rank >= 1");
  bool linear = false;
  Coord coord = Coord::kHalfPixel;
  Round round = Round::kPreferFloor;
  EPCTX_RETURN_IF_ERROR(ParseModes(ctx, &linear, &coord, &round));
  const size_t es = dtype_size(x->dtype);
  if (es == 0 || (linear && x->dtype != EPCTX_DTYPE_FLOAT))
    return UnsupportedDtype(ctx, "X", x->dtype);
  int64_t out[kMaxRank];
  float scales[kMaxRank];
  EPCTX_RETURN_IF_ERROR(OutputShape(ctx, *x, out, scales));
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, r, out, es, "output Y"));
  for (uint32_t i = 0; i < r; ++i)
    if (x->dims[i] == 0 && out[i] != 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "cannot resize the empty axis %u of %s", i,
                      ShapeOf(*x).s);
  if (linear)
    for (uint32_t i = 0; i + 2 < r; ++i)
      if (out[i] != x->dims[i])
        return ctx.Fail(EPCTX_NOT_IMPLEMENTED,
                        "linear mode resizes only the last two axes; axis %u goes %lld -> %lld",
                        i, static_cast<long long>(x->dims[i]), static_cast<long long>(out[i]));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, out, &y));
  if (y->elements() == 0) return Status::Ok();

  if (!linear) {
    int64_t* maps[kMaxRank];
    for (uint32_t i = 0; i < r; ++i) {
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(out[i]), &maps[i]));
      for (int64_t o = 0; o < out[i]; ++o)
        maps[i][o] = Nearest(round,
                             Original(coord, static_cast<float>(o), scales[i], x->dims[i], out[i]),
                             scales[i], x->dims[i]);
    }
    switch (es) {
      case 1: NearestCopy(*x, out, maps, static_cast<uint8_t*>(y->data)); break;
      case 2: NearestCopy(*x, out, maps, static_cast<uint16_t*>(y->data)); break;
      case 4: NearestCopy(*x, out, maps, static_cast<uint32_t*>(y->data)); break;
      default: NearestCopy(*x, out, maps, static_cast<uint64_t*>(y->data)); break;
    }
    return Status::Ok();
  }

  // Bilinear over (H, W) = the last two axes (H = 1 for rank 1).
  const int64_t H = r >= 2 ? x->dims[r - 2] : 1, W = x->dims[r - 1];
  const int64_t OH = r >= 2 ? out[r - 2] : 1, OW = out[r - 1];
  const float sh = r >= 2 ? scales[r - 2] : 1.0f, sw = scales[r - 1];
  int64_t planes = 1;
  Product(out, 0, r >= 2 ? r - 2 : 0, &planes);
  int64_t *h0, *h1, *w0, *w1;
  float *hl, *wl;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(OH), &h0));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(OH), &h1));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(OH), &hl));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(OW), &w0));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(OW), &w1));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(OW), &wl));
  const int64_t sizes_in[2] = {H, W}, sizes_out[2] = {OH, OW};
  const float sc2[2] = {sh, sw};
  int64_t* i0[2] = {h0, w0};
  int64_t* i1[2] = {h1, w1};
  float* lam[2] = {hl, wl};
  for (int a = 0; a < 2; ++a) {
    for (int64_t o = 0; o < sizes_out[a]; ++o) {
      float v = Original(coord, static_cast<float>(o), sc2[a], sizes_in[a], sizes_out[a]);
      const float hi = static_cast<float>(sizes_in[a] - 1);
      if (!(v > 0.0f)) v = 0.0f;
      if (v > hi) v = hi;
      int64_t lo = static_cast<int64_t>(v);
      if (lo > sizes_in[a] - 1) lo = sizes_in[a] - 1;
      i0[a][o] = lo;
      i1[a][o] = lo + 1 < sizes_in[a] ? lo + 1 : lo;
      lam[a][o] = v - static_cast<float>(lo);
    }
  }
  const float* X = static_cast<const float*>(x->data);
  float* Y = static_cast<float*>(y->data);
  for (int64_t p = 0; p < planes; ++p) {
    const float* in = X + p * H * W;
    float* o = Y + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const float* r0 = in + h0[oh] * W;
      const float* r1 = in + h1[oh] * W;
      const float ly = hl[oh];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const float lx = wl[ow];
        const float top = r0[w0[ow]] + (r0[w1[ow]] - r0[w0[ow]]) * lx;
        const float bot = r1[w0[ow]] + (r1[w1[ow]] - r1[w0[ow]]) * lx;
        o[oh * OW + ow] = top + (bot - top) * ly;
      }
    }
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
