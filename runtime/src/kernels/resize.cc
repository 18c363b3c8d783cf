// SPDX-License-Identifier: Apache-2.0
// Resize (opsets 10..21) and Upsample (7..9), N-D, as ONNX Runtime does them.
//
// Output sizes come from `sizes`, or from trunc(scale * in) in float. Every
// output coordinate on every axis maps back to the input through
// coordinate_transformation_mode (an axis whose scale is exactly 1 maps to
// itself, as in ORT), then becomes taps on that axis:
//  - nearest: one tap (nearest_mode rounding, clamped); any element type;
//  - linear: two taps on the clamped coordinate (weights 0.5/0.5 at the last
//    sample, as ORT);
//  - cubic: four taps at floor-1 .. floor+2 with Keys coefficients
//    (cubic_coeff_a), edge samples repeated, or with exclude_outside the
//    outside taps dropped and the rest renormalised.
// An output is the sum over the product of its axes' taps. With
// tf_crop_and_resize a coordinate outside [0, in-1] on any axis yields
// extrapolation_value. Linear and cubic compute in float (double for double)
// and store integers truncated after clamping to the type's range.
//
// align_corners divides by length_resized - 1 where length_resized is
// in * scale when scales are given (as the ONNX reference does; ORT uses the
// floored output length, so the two differ when in * scale is fractional)
// and the output length when sizes are. Opset 10 and Upsample are asymmetric with ORT's "simple"
// rounding (floor when upsampling, ceil when downsampling). antialias (opset
// 18+) is not implemented.
#include <cmath>
#include <cstring>
#include <limits>

#include "epctx_uk/resize.h"
#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
// The coordinate modes and roundings are the micro-kernels' (epctx_uk/resize.h),
// which the vnpu's RESIZE computes its taps with too.
using Coord = uk::ResizeCoord;
using Round = uk::ResizeRound;
enum class Policy { kStretch, kNotLarger, kNotSmaller };

// Largest output size on one axis.
constexpr int64_t kMaxResizeDim = int64_t{1} << 40;

struct Params {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kAsymmetric;
  Round round = Round::kSimple;
  Policy policy = Policy::kStretch;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
  bool upsample = false;  // the Upsample op (scales >= 1, no roi)
};

// Keys cubic convolution weights for taps floor-1 .. floor+2 at fraction s.
void CubicCoeffs(float s, float a, float* c) {
  s = fabsf(s);
  c[0] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
  c[1] = ((a + 2) * s - (a + 3)) * s * s + 1;
  c[2] = ((a + 2) * (1 - s) - (a + 3)) * (1 - s) * (1 - s) + 1;
  c[3] = ((a * (2 - s) - 5 * a) * (2 - s) + 8 * a) * (2 - s) - 4 * a;
}

template <size_t N>
bool Is(StrView v, const char (&s)[N]) {
  return v.eq(s);
}

Status ParseParams(KernelContext& ctx, bool upsample, Params* p) {
  p->upsample = upsample;
  StrView mode = ctx.AttrString("mode", "nearest");
  if (Is(mode, "nearest")) p->mode = Mode::kNearest;
  else if (Is(mode, "linear") || (upsample && Is(mode, "bilinear"))) p->mode = Mode::kLinear;
  else if (!upsample && Is(mode, "cubic")) p->mode = Mode::kCubic;
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH, "mode is '%.*s', expected nearest, linear%s", mode.len(),
                    mode.data, upsample ? "" : " or cubic");
  if (upsample || ctx.opset() < 11) {
    p->coord = Coord::kAsymmetric;
    p->round = Round::kSimple;
    return Status::Ok();
  }
  StrView c = ctx.AttrString("coordinate_transformation_mode", "half_pixel");
  if (Is(c, "half_pixel")) p->coord = Coord::kHalfPixel;
  else if (Is(c, "asymmetric")) p->coord = Coord::kAsymmetric;
  else if (Is(c, "pytorch_half_pixel")) p->coord = Coord::kPytorchHalfPixel;
  else if (Is(c, "align_corners")) p->coord = Coord::kAlignCorners;
  else if (Is(c, "tf_half_pixel_for_nn")) p->coord = Coord::kTfHalfPixelForNn;
  else if (Is(c, "tf_crop_and_resize")) p->coord = Coord::kTfCropAndResize;
  else if (ctx.opset() >= 19 && Is(c, "half_pixel_symmetric"))
    p->coord = Coord::kHalfPixelSymmetric;
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH, "coordinate_transformation_mode '%.*s' is unknown",
                    c.len(), c.data);
  if (p->mode == Mode::kNearest) {
    StrView n = ctx.AttrString("nearest_mode", "round_prefer_floor");
    if (Is(n, "round_prefer_floor")) p->round = Round::kPreferFloor;
    else if (Is(n, "round_prefer_ceil")) p->round = Round::kPreferCeil;
    else if (Is(n, "floor")) p->round = Round::kFloor;
    else if (Is(n, "ceil")) p->round = Round::kCeil;
    else return ctx.Fail(EPCTX_INVALID_GRAPH, "nearest_mode '%.*s' is unknown", n.len(), n.data);
  }
  p->cubic_a = ctx.AttrFloat("cubic_coeff_a", -0.75f);
  p->exclude_outside = ctx.AttrInt("exclude_outside", 0) != 0;
  if (p->exclude_outside && p->mode != Mode::kCubic)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "exclude_outside is 1, which needs mode cubic");
  p->extrapolation = ctx.AttrFloat("extrapolation_value", 0.0f);
  if (ctx.opset() >= 18) {
    if (ctx.AttrInt("antialias", 0) != 0)
      return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "antialias=1 is not supported");
    StrView k = ctx.AttrString("keep_aspect_ratio_policy", "stretch");
    if (Is(k, "stretch")) p->policy = Policy::kStretch;
    else if (Is(k, "not_larger")) p->policy = Policy::kNotLarger;
    else if (Is(k, "not_smaller")) p->policy = Policy::kNotSmaller;
    else
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "keep_aspect_ratio_policy '%.*s' is unknown, expected stretch, "
                      "not_larger or not_smaller",
                      k.len(), k.data);
  }
  return Status::Ok();
}

// Reads a float or double tensor of n values into out.
Status ReadFloats(KernelContext& ctx, const TensorRef& t, const char* what, uint32_t n,
                  float* out) {
  if (t.elements() != n)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has %llu values, expected %u", what,
                    static_cast<unsigned long long>(t.elements()), n);
  bool ok = Dispatch<kFloats>(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* v = static_cast<const T*>(t.data);
    for (uint32_t i = 0; i < n; ++i) out[i] = static_cast<float>(Load(v[i]));
  });
  if (!ok) return UnsupportedDtype(ctx, what, t.dtype);
  return Status::Ok();
}

// The resized axes: every axis, or the `axes` attribute (opset 18+).
Status ReadResizeAxes(KernelContext& ctx, uint32_t r, uint32_t* axes, uint32_t* n) {
  const int64_t* v = nullptr;
  uint32_t count = 0;
  if (ctx.opset() < 18 || !ctx.AttrInts("axes", &v, &count)) {
    for (uint32_t i = 0; i < r; ++i) axes[i] = i;
    *n = r;
    return Status::Ok();
  }
  if (count > r) return ctx.Fail(EPCTX_INVALID_GRAPH, "axes has %u values for rank %u", count, r);
  bool seen[kMaxRank] = {};
  for (uint32_t i = 0; i < count; ++i) {
    int64_t a = 0;
    EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, v[i], r, "axes", &a));
    if (seen[a])
      return ctx.Fail(EPCTX_INVALID_GRAPH, "axes lists axis %lld twice", static_cast<long long>(a));
    seen[a] = true;
    axes[i] = static_cast<uint32_t>(a);
  }
  *n = count;
  return Status::Ok();
}

// Output sizes, per-axis scales and roi (starts in roi[0..r), ends in
// roi[r..2r)).
Status OutputShape(KernelContext& ctx, const Params& p, const TensorRef& x, int64_t* out,
                   float* scales, float* roi, bool* from_scales) {
  const uint32_t r = x.rank;
  uint32_t axes[kMaxRank], na = 0;
  EPCTX_RETURN_IF_ERROR(ReadResizeAxes(ctx, r, axes, &na));
  for (uint32_t i = 0; i < r; ++i) {
    out[i] = x.dims[i];
    scales[i] = 1.0f;
    roi[i] = 0.0f;
    roi[r + i] = 1.0f;
  }
  const TensorRef *sc = nullptr, *sz = nullptr;
  bool have_scales = false;
  float given[kMaxRank];
  if (p.upsample) {
    if (ctx.opset() < 9) {
      const float* v = nullptr;
      uint32_t n = 0;
      if (!ctx.AttrFloats("scales", &v, &n))
        return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute scales is missing");
      if (n != r)
        return ctx.Fail(EPCTX_INVALID_GRAPH, "scales has %u values, expected rank %u", n, r);
      for (uint32_t i = 0; i < r; ++i) given[i] = v[i];
    } else {
      EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "scales", &sc));
      EPCTX_RETURN_IF_ERROR(ReadFloats(ctx, *sc, "scales", r, given));
    }
    for (uint32_t i = 0; i < r; ++i)
      if (!(given[i] >= 1.0f))
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "scales[%u] is %g, expected >= 1", i,
                        static_cast<double>(given[i]));
    have_scales = true;
  } else {
    sc = ctx.input(ctx.opset() < 11 ? 1 : 2);
    sz = ctx.opset() < 11 ? nullptr : ctx.input(3);
    if (sc && sc->elements() == 0) sc = nullptr;
    if (sz && sz->elements() == 0) sz = nullptr;
    if ((sc != nullptr) == (sz != nullptr))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "exactly one of scales and sizes must be given, found %s",
                      sc ? "both" : "neither");
    if (sc) EPCTX_RETURN_IF_ERROR(ReadFloats(ctx, *sc, "scales", na, given));
    have_scales = sc != nullptr;
    const TensorRef* ro = ctx.opset() >= 11 ? ctx.input(1) : nullptr;
    if (p.coord == Coord::kTfCropAndResize && ro && ro->elements() > 0) {
      float rv[2 * kMaxRank];
      EPCTX_RETURN_IF_ERROR(ReadFloats(ctx, *ro, "roi", 2 * na, rv));
      for (uint32_t i = 0; i < na; ++i) {
        roi[axes[i]] = rv[i];
        roi[r + axes[i]] = rv[na + i];
      }
    }
  }
  *from_scales = have_scales;
  if (have_scales) {
    for (uint32_t i = 0; i < na; ++i) {
      const uint32_t a = axes[i];
      const float s = given[i];
      if (!(s > 0.0f) || s > 1e9f)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "scales[%u] is %g, expected a value in (0, 1e9]", i,
                        static_cast<double>(s));
      const float o = s * static_cast<float>(x.dims[a]);
      if (!(o < static_cast<float>(kMaxResizeDim)))
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output size on axis %u is too large", a);
      out[a] = static_cast<int64_t>(o);
      scales[a] = s;
    }
    return Status::Ok();
  }
  int64_t sizes[kMaxRank];
  uint32_t n = 0;
  EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *sz, "sizes", sizes, kMaxRank, &n));
  if (n != na) return ctx.Fail(EPCTX_INVALID_ARGUMENT, "sizes has %u values, expected %u", n, na);
  for (uint32_t i = 0; i < na; ++i) {
    if (sizes[i] < 0 || sizes[i] > kMaxResizeDim)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "sizes[%u] is %lld", i,
                      static_cast<long long>(sizes[i]));
    out[axes[i]] = sizes[i];
  }
  for (uint32_t i = 0; i < r; ++i) {
    if (x.dims[i] == 0 && out[i] != 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "cannot resize the empty axis %u of %s", i,
                      ShapeOf(x).s);
    scales[i] = x.dims[i] ? static_cast<float>(out[i]) / static_cast<float>(x.dims[i]) : 1.0f;
  }
  if (p.policy != Policy::kStretch && na > 0) {
    float s = scales[axes[0]];
    for (uint32_t i = 1; i < na; ++i) {
      const float v = scales[axes[i]];
      if (p.policy == Policy::kNotLarger ? v < s : v > s) s = v;
    }
    for (uint32_t i = 0; i < na; ++i) {
      const uint32_t a = axes[i];
      scales[a] = s;
      const float o = roundf(s * static_cast<float>(x.dims[a]));
      if (!(o < static_cast<float>(kMaxResizeDim)))
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "output size on axis %u is too large", a);
      out[a] = static_cast<int64_t>(o);
    }
  }
  return Status::Ok();
}

// Taps of one axis: for output index o, taps idx[o*n .. o*n+n) (element
// offsets, already times the axis stride) with weights w; idx[o*n] < 0 marks
// an extrapolated position. An axis of up to kTableCells cells keeps them in
// a table; a longer one computes the taps of a coordinate when the walk
// reaches it (At), so the index map never grows with the output (a Resize to
// 2 GiB along one axis took a 4 GB table).
struct AxisTaps {
  uint32_t n;
  int64_t* idx;  // [out * n], or nullptr: computed by At
  float* w;      // [out * n] when idx is (axes with n > 1 only)
  // What At needs for an axis without a table.
  const Params* p;
  int64_t in, out, stride;
  float scale, r0, r1;
  float len;         // length_resized: in * scale for given scales, else out
  int64_t cur = -1;  // the coordinate cur_idx/cur_w hold
  int64_t cur_idx[4];
  float cur_w[4];
};

constexpr uint64_t kTableCells = uint64_t(1) << 20;

// The taps of output coordinate o into idx[0..n), w[0..n); false for a cubic
// source coordinate out of range.
bool TapsOf(const AxisTaps& t, int64_t o, int64_t* idx, float* w, float* bad_x) {
  const Params& p = *t.p;
  const int64_t in = t.in, stride = t.stride;
  const float scale = t.scale;
  const bool identity = scale == 1.0f && in == t.out;
  const bool extrapolate = p.coord == Coord::kTfCropAndResize;
  const float last = static_cast<float>(in - 1);
  const float fo = static_cast<float>(o);
  const float x =
      scale == 1.0f
          ? fo
          : uk::ResizeOriginal(p.coord, fo, scale,
                               p.coord == Coord::kAlignCorners ? t.len : static_cast<float>(t.out),
                               static_cast<float>(in), t.r0, t.r1);
  if (identity) {
    idx[0] = o * stride;
    w[0] = 1.0f;
    return true;
  }
  if (extrapolate && (x < 0 || x > last)) {
    for (uint32_t k = 0; k < t.n; ++k) {
      idx[k] = -1;
      w[k] = 0.0f;
    }
    return true;
  }
  if (p.mode == Mode::kNearest) {
    int64_t i = uk::ResizeNearestIndex(p.round, x, scale < 1.0f);
    if (i > in - 1) i = in - 1;
    if (i < 0) i = 0;
    idx[0] = i * stride;
    w[0] = 1.0f;
  } else if (p.mode == Mode::kLinear) {
    uk::ResizeLinearTaps(x, in, idx, w);
    idx[0] *= stride;
    idx[1] *= stride;
  } else {
    const float fl = floorf(x);
    if (!(fl > -1e15f && fl < 1e15f)) {
      *bad_x = x;
      return false;
    }
    const int64_t xi = static_cast<int64_t>(fl);
    float c[4];
    CubicCoeffs(x - fl, p.cubic_a, c);
    float sum = 1.0f;
    if (p.exclude_outside) {
      sum = 0.0f;
      for (int k = 0; k < 4; ++k) {
        const int64_t j = xi - 1 + k;
        if (j < 0 || j >= in) c[k] = 0.0f;
        sum += c[k];
      }
    }
    for (int k = 0; k < 4; ++k) {
      int64_t j = xi - 1 + k;
      if (j < 0) j = 0;
      if (j > in - 1) j = in - 1;
      idx[k] = j * stride;
      w[k] = sum != 0.0f ? c[k] / sum : 0.0f;
    }
  }
  return true;
}

// The taps of coordinate o: the table's, or computed into t's cur_* fields.
inline const int64_t* IdxAt(AxisTaps& t, int64_t o) {
  if (t.idx) return t.idx + o * t.n;
  if (t.cur != o) {
    float bad;
    (void)TapsOf(t, o, t.cur_idx, t.cur_w, &bad);  // the range was checked by BuildTaps
    t.cur = o;
  }
  return t.cur_idx;
}
inline const float* WAt(AxisTaps& t, int64_t o) {
  if (t.idx) return t.w + o * t.n;
  (void)IdxAt(t, o);
  return t.cur_w;
}

Status BuildTaps(KernelContext& ctx, const Params& p, int64_t in, int64_t out, float scale,
                 bool from_scale, float r0, float r1, int64_t stride, AxisTaps* t) {
  const bool identity = scale == 1.0f && in == out;
  t->n = identity || p.mode == Mode::kNearest ? 1 : p.mode == Mode::kLinear ? 2 : 4;
  t->p = &p;
  t->in = in;
  t->out = out;
  t->stride = stride;
  t->scale = scale;
  t->len = from_scale ? scale * static_cast<float>(in) : static_cast<float>(out);
  t->r0 = r0;
  t->r1 = r1;
  t->cur = -1;
  t->idx = nullptr;
  t->w = nullptr;
  float bad_x = 0.0f;
  int64_t bad_o = -1;
  const uint64_t cells = static_cast<uint64_t>(out) * t->n;
  if (cells > kTableCells) {
    // Source coordinates are affine in o: in range at both ends, in range
    // everywhere (cubic is the only mode that can refuse one).
    if (!TapsOf(*t, 0, t->cur_idx, t->cur_w, &bad_x)) bad_o = 0;
    else if (!TapsOf(*t, out - 1, t->cur_idx, t->cur_w, &bad_x)) bad_o = out - 1;
  } else {
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, cells, &t->idx));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, cells, &t->w));
    for (int64_t o = 0; o < out && bad_o < 0; ++o)
      if (!TapsOf(*t, o, t->idx + o * t->n, t->w + o * t->n, &bad_x)) bad_o = o;
  }
  if (bad_o >= 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "cubic source coordinate %g for output %lld is out of range",
                    static_cast<double>(bad_x), static_cast<long long>(bad_o));
  return Status::Ok();
}

template <typename T>
T FromFloat(float v) {
  if constexpr (kIsFloatLike<T>) {
    return Store<T>(static_cast<Compute<T>>(v));
  } else if constexpr (std::is_same<T, bool>::value) {
    return v != 0.0f;
  } else {
    const float lo = static_cast<float>(std::numeric_limits<T>::lowest());
    const float hi = static_cast<float>(std::numeric_limits<T>::max());
    if (!(v >= lo)) return v != v ? T{0} : std::numeric_limits<T>::lowest();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// 2 or 4 when a last-axis table reads column j / 2 or j / 4 for every j
// and n_last is a multiple of 4 * that (nearest upsampling: a detection
// neck's 2x, its head's 4x), else 0.
int64_t RepFactor(const int64_t* idx, int64_t n_last) {
  for (int64_t f = 2; f <= 4; f += 2) {
    if (n_last % (4 * f) != 0) continue;
    bool ok = true;
    for (int64_t j = 0; j < n_last && ok; ++j) ok = idx[j] == j / f;
    if (ok) return f;
  }
  return 0;
}

// Such a row of 4-byte elements: each source vector of 4 stored rep times
// spread, not gathered one element at a time (one copy for every type).
void ReplicateRow4(const void* src, void* dst, int64_t n_last, int64_t rep) {
  typedef uint32_t U4 __attribute__((vector_size(16)));
  const unsigned char* sr = static_cast<const unsigned char*>(src);
  unsigned char* yb = static_cast<unsigned char*>(dst);
  for (int64_t j = 0; j < n_last / rep; j += 4) {
    U4 v, a;
    memcpy(&v, sr + j * 4, 16);
    if (rep == 2) {
      a = __builtin_shufflevector(v, v, 0, 0, 1, 1);
      memcpy(yb + j * 8, &a, 16);
      a = __builtin_shufflevector(v, v, 2, 2, 3, 3);
      memcpy(yb + j * 8 + 16, &a, 16);
    } else {
      for (int k = 0; k < 4; ++k) {
        a = U4{} + v[k];
        memcpy(yb + (j + k) * 16, &a, 16);
      }
    }
  }
}

// Walks every output element; per element, the taps of every axis combine.
template <typename T>
// Output rows [row0, row1) (a row: every index but the last axis's). taps
// is the caller's own copy: axes without a table keep their current
// coordinate in it.
void Interpolate(const TensorRef& x, const int64_t* out, AxisTaps* taps, float extra,
                 bool extrapolates, int64_t row0, int64_t row1, T* y_all) {
  using C = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
  const uint32_t r = x.rank;
  const T* src = static_cast<const T*>(x.data);
  const T extra_t = FromFloat<T>(extra);
  // Axes with more than one tap, innermost first.
  uint32_t act[kMaxRank], na = 0;
  for (uint32_t a = r; a-- > 0;)
    if (taps[a].n > 1) act[na++] = a;
  const int64_t n_last = out[r - 1];
  int64_t o[kMaxRank] = {};
  for (int64_t a = int64_t(r) - 2, rest = row0; a >= 0; --a) {
    o[a] = rest % out[a];
    rest /= out[a];
  }
  T* y = y_all + row0 * n_last;
  // One tap per axis and a table for the last: a row is a gather from one
  // source row, and a row that reads the same source row as the one before
  // (upsampling along an outer axis) is a copy of it.
  const bool gather = na == 0 && !extrapolates && taps[r - 1].idx != nullptr;
  // Nearest upsampling of the last axis by 2 or 4, 4-byte elements: rows
  // replicated a vector at a time (RepFactor, ReplicateRow4).
  const int64_t rep = gather && sizeof(T) == 4 ? RepFactor(taps[r - 1].idx, n_last) : 0;
  // Linear on the last two axes alone (a segmentation head's bilinear
  // upsampling), float32, both tables there: each output row blends two
  // source rows with the tap order and products of the general loop below
  // (w = (1 * w_x) * w_y, summed x-tap fastest), so the values are the same
  // bits, without its per-element tap walk (deeplabv3's 21 x 256 x 256
  // upsampling: ~29% of its run).
  if constexpr (std::is_same<T, float>::value) {
    if (na == 2 && act[0] == r - 1 && act[1] == r - 2 && taps[r - 1].n == 2 && taps[r - 2].n == 2 &&
        !extrapolates && taps[r - 1].idx && taps[r - 2].idx) {
      const int64_t* xi = taps[r - 1].idx;
      const float* xw = taps[r - 1].w;
      for (int64_t row = row0; row < row1; ++row, y += n_last) {
        int64_t base = 0;
        for (uint32_t a = 0; a + 2 < r; ++a) base += IdxAt(taps[a], o[a])[0];
        const int64_t* yi = IdxAt(taps[r - 2], o[r - 2]);
        const float* yw = WAt(taps[r - 2], o[r - 2]);
        const float* __restrict s0 = src + base + yi[0];
        const float* __restrict s1 = src + base + yi[1];
        const float wy0 = yw[0], wy1 = yw[1];
        for (int64_t j = 0; j < n_last; ++j) {
          const int64_t x0 = xi[2 * j], x1 = xi[2 * j + 1];
          const float wx0 = xw[2 * j], wx1 = xw[2 * j + 1];
          float acc = 0;
          acc += wx0 * wy0 * s0[x0];
          acc += wx1 * wy0 * s0[x1];
          acc += wx0 * wy1 * s1[x0];
          acc += wx1 * wy1 * s1[x1];
          y[j] = acc;
        }
        NextIndex(OuterRank(r), out, o, nullptr, nullptr);
      }
      return;
    }
  }
  int64_t prev_base = -1;
  for (int64_t row = row0; row < row1; ++row) {
    if (gather) {
      int64_t base = 0;
      for (uint32_t a = 0; a + 1 < r; ++a) base += IdxAt(taps[a], o[a])[0];
      if (base == prev_base) {
        memcpy(y, y - n_last, size_t(n_last) * sizeof(T));
      } else if (rep) {
        ReplicateRow4(src + base, y, n_last, rep);
      } else {
        const T* __restrict sr = src + base;
        const int64_t* __restrict xi = taps[r - 1].idx;
        for (int64_t j = 0; j < n_last; ++j) y[j] = sr[xi[j]];
      }
      prev_base = base;
      y += n_last;
      NextIndex(OuterRank(r), out, o, nullptr, nullptr);
      continue;
    }
    for (int64_t j = 0; j < n_last; ++j, ++y) {
      o[r - 1] = j;
      bool extrap = false;
      int64_t base = 0;
      for (uint32_t a = 0; a < r; ++a) {
        const int64_t v = IdxAt(taps[a], o[a])[0];
        if (v < 0) {
          extrap = true;
          break;
        }
        if (taps[a].n == 1) base += v;
      }
      if (extrap) {
        *y = extra_t;
        continue;
      }
      if (na == 0) {
        *y = src[base];
        continue;
      }
      uint32_t t[kMaxRank] = {};
      C acc = 0;
      for (;;) {
        int64_t off = base;
        C w = 1;
        for (uint32_t k = 0; k < na; ++k) {
          AxisTaps& at = taps[act[k]];
          off += IdxAt(at, o[act[k]])[t[k]];
          w *= WAt(at, o[act[k]])[t[k]];
        }
        acc += w * static_cast<C>(Load(src[off]));
        uint32_t k = 0;
        while (k < na && ++t[k] == taps[act[k]].n) t[k++] = 0;
        if (k == na) break;
      }
      if constexpr (std::is_same<T, double>::value) {
        *y = acc;
      } else {
        *y = FromFloat<T>(acc);
      }
    }
    NextIndex(OuterRank(r), out, o, nullptr, nullptr);
  }
}

Status ResizeCommon(KernelContext& ctx, bool upsample) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  const uint32_t r = x->rank;
  if (r == 0) return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X must have rank >= 1, found a scalar");
  Params p;
  EPCTX_RETURN_IF_ERROR(ParseParams(ctx, upsample, &p));
  const size_t es = dtype_size(x->dtype);
  const uint32_t interp_types =
      kFloats | Bit(EPCTX_DTYPE_INT8) | Bit(EPCTX_DTYPE_UINT8) | Bit(EPCTX_DTYPE_INT32);
  if (es == 0 || (p.mode != Mode::kNearest && !(interp_types & Bit(x->dtype))))
    return UnsupportedDtype(ctx, "X", x->dtype);
  int64_t out[kMaxRank];
  float scales[kMaxRank], roi[2 * kMaxRank];
  bool from_scales = false;
  EPCTX_RETURN_IF_ERROR(OutputShape(ctx, p, *x, out, scales, roi, &from_scales));
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, r, out, es, "output Y"));
  for (uint32_t i = 0; i < r; ++i)
    if (x->dims[i] == 0 && out[i] != 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "cannot resize the empty axis %u of %s", i,
                      ShapeOf(*x).s);
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, r, out, &y));
  if (y->elements() == 0) return Status::Ok();
  bool same = true;
  for (uint32_t i = 0; i < r; ++i) same = same && out[i] == x->dims[i];
  if (same) {
    memcpy(y->data, x->data, y->elements() * es);
    return Status::Ok();
  }
  int64_t strides[kMaxRank];
  Strides(r, x->dims, strides);
  AxisTaps taps[kMaxRank];
  for (uint32_t a = 0; a < r; ++a)
    EPCTX_RETURN_IF_ERROR(BuildTaps(ctx, p, x->dims[a], out[a], scales[a], from_scales, roi[a],
                                    roi[r + a], strides[a], &taps[a]));
  // Types outside interp_types were refused above for the other modes.
  int64_t outer = 1, taps_per_out = 1;
  for (uint32_t i = 0; i + 1 < r; ++i) outer *= out[i];
  for (uint32_t i = 0; i < r; ++i) taps_per_out *= taps[i].n;
  const bool extrapolates = p.coord == Coord::kTfCropAndResize;
  bool ok = Dispatch<kAll>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    // Threads split the output rows, each with its own copy of the taps.
    ctx.ParallelRange(outer, out[r - 1] * taps_per_out, [&](int64_t lo, int64_t hi) {
      AxisTaps mine[kMaxRank];
      for (uint32_t a = 0; a < r; ++a) mine[a] = taps[a];
      Interpolate<T>(*x, out, mine, p.extrapolation, extrapolates, lo, hi,
                     static_cast<T*>(y->data));
    });
  });
  if (!ok) return UnsupportedDtype(ctx, "X", x->dtype);
  return Status::Ok();
}

}  // namespace

Status Resize(KernelContext& ctx) { return ResizeCommon(ctx, false); }
Status Upsample(KernelContext& ctx) { return ResizeCommon(ctx, true); }

}  // namespace kern
}  // namespace epctx
