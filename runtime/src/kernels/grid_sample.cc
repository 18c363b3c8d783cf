// SPDX-License-Identifier: Apache-2.0
// GridSample (opsets 16..21; float and double), as ONNX Runtime does it.
// Each output point reads its normalised location from the grid (x first),
// denormalises it (align_corners: [-1, 1] -> [0, len-1]; else
// [-0.5, len-0.5]) and samples the input plane:
//  - nearest: round half to even, then one pixel;
//  - (bi)linear: the 4 (2-D) or 8 (3-D) neighbours;
//  - (bi)cubic (2-D only): the 4x4 neighbours, Keys a = -0.75.
// Neighbours outside the input are 0 (zeros), clamped (border), or
// reflected about the borders until inside (reflection). Opsets 16..19 name
// the modes bilinear/bicubic and take 4-D inputs; from 20 they are
// linear/cubic and 5-D inputs (volumetric, not cubic) work too.
#include <cmath>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class PadMode { kZeros, kBorder, kReflection };

// Coordinates beyond this are far outside any input; clamping them keeps the
// integer conversions defined without changing any sample.
constexpr double kFar = double(int64_t{1} << 40);

template <typename T>
T Clamp(T v) {
  if (!(v > -kFar)) return static_cast<T>(-kFar);  // also NaN
  if (v > kFar) return static_cast<T>(kFar);
  return v;
}

inline float Floor(float v) { return floorf(v); }
inline double Floor(double v) { return floor(v); }

// Round half to even (std::nearbyint in the default rounding mode).
template <typename T>
T RoundEven(T v) {
  const T f = Floor(v);
  const T d = v - f;
  if (d > T(0.5)) return f + 1;
  if (d < T(0.5)) return f;
  const int64_t fi = static_cast<int64_t>(f);
  return (fi & 1) ? f + 1 : f;
}

template <typename T>
T Denormalize(T n, int64_t len, bool align) {
  return align ? static_cast<T>((n + 1) / 2.f * (len - 1))
               : static_cast<T>(((n + 1) * len - 1) / 2.f);
}

// Reflects x about [lo, hi] until inside.
template <typename T>
T Reflect(T x, T lo, T hi) {
  const T range = hi - lo;
  if (!(range > 0)) return lo;
  if (x < lo) {
    const T dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const T r = dx - static_cast<T>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const T dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const T r = dx - static_cast<T>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

template <typename T>
void CubicCoeffs(T x, T* c) {
  constexpr T a = T(-0.75);
  x = x < 0 ? -x : x;
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

template <typename T>
struct Sampler {
  PadMode pad;
  uint32_t nd;      // 2 or 3 spatial axes
  int64_t size[3];  // input sizes, x (W) first
  T lo[3], hi[3];   // reflection borders per axis, x first
  const T* plane;

  // The pixel at integer position p (x first) under the padding mode.
  T At(const int64_t* p) const {
    int64_t off = 0;
    for (uint32_t a = nd; a-- > 0;) {
      int64_t v = p[a];
      if (pad == PadMode::kZeros) {
        if (v < 0 || v >= size[a]) return T(0);
      } else if (pad == PadMode::kBorder) {
        v = v < 0 ? 0 : (v >= size[a] ? size[a] - 1 : v);
      } else {
        v = static_cast<int64_t>(Reflect(static_cast<T>(v), lo[a], hi[a]));
        if (v < 0) v = 0;
        if (v >= size[a]) v = size[a] - 1;
      }
      off = off * size[a] + v;
    }
    return plane[off];
  }
};

template <typename T>
void SampleAll(const TensorRef& x, const TensorRef& grid, Mode mode, PadMode pad, bool align,
               T* Y) {
  const uint32_t nd = x.rank - 2;
  const int64_t N = x.dims[0], C = x.dims[1];
  Sampler<T> s;
  s.pad = pad;
  s.nd = nd;
  int64_t in_plane = 1, out_plane = 1;
  for (uint32_t a = 0; a < nd; ++a) {
    const int64_t len = x.dims[x.rank - 1 - a];
    s.size[a] = len;
    s.lo[a] = align ? T(0) : T(-0.5);
    s.hi[a] = align ? static_cast<T>(len - 1) : static_cast<T>(static_cast<double>(len) - 0.5);
    in_plane *= len;
    out_plane *= grid.dims[1 + a];
  }
  const T* X = static_cast<const T*>(x.data);
  const T* G = static_cast<const T*>(grid.data);
  for (int64_t n = 0; n < N; ++n) {
    const T* g = G + n * out_plane * nd;
    for (int64_t c = 0; c < C; ++c) {
      s.plane = X + (n * C + c) * in_plane;
      T* y = Y + (n * C + c) * out_plane;
      for (int64_t o = 0; o < out_plane; ++o) {
        const T* gp = g + o * nd;
        T pos[3];
        for (uint32_t a = 0; a < nd; ++a) pos[a] = Clamp(Denormalize(gp[a], s.size[a], align));
        if (mode == Mode::kNearest) {
          int64_t p[3];
          for (uint32_t a = 0; a < nd; ++a) p[a] = static_cast<int64_t>(RoundEven(pos[a]));
          y[o] = s.At(p);
        } else if (mode == Mode::kLinear) {
          int64_t p1[3];
          T d1[3], d2[3];
          for (uint32_t a = 0; a < nd; ++a) {
            p1[a] = static_cast<int64_t>(Floor(pos[a]));
            d1[a] = pos[a] - static_cast<T>(p1[a]);      // weight of p1 + 1
            d2[a] = static_cast<T>(p1[a] + 1) - pos[a];  // weight of p1
          }
          // Innermost axis first, as ORT: dy2*(dx2*p11 + dx1*p12) + ...
          T acc = 0;
          for (uint32_t zc = 0; zc < (nd == 3 ? 2u : 1u); ++zc) {
            T plane_acc = 0;
            for (uint32_t yc = 0; yc < 2; ++yc) {
              int64_t p[3] = {p1[0], p1[1] + yc, nd == 3 ? p1[2] + zc : 0};
              const T a0 = s.At(p);
              p[0] += 1;
              const T a1 = s.At(p);
              plane_acc += (yc ? d1[1] : d2[1]) * (d2[0] * a0 + d1[0] * a1);
            }
            acc += nd == 3 ? (zc ? d1[2] : d2[2]) * plane_acc : plane_acc;
          }
          y[o] = acc;
        } else {
          const int64_t x0 = static_cast<int64_t>(Floor(pos[0])) - 1;
          const int64_t y0 = static_cast<int64_t>(Floor(pos[1])) - 1;
          T cx[4], cy[4];
          CubicCoeffs(static_cast<T>(pos[0] - x0 - 1), cx);
          CubicCoeffs(static_cast<T>(pos[1] - y0 - 1), cy);
          T acc = 0;
          for (int64_t h = 0; h < 4; ++h) {
            T row = 0;
            for (int64_t w = 0; w < 4; ++w) {
              const int64_t p[2] = {x0 + w, y0 + h};
              row += cx[w] * s.At(p);
            }
            acc += cy[h] * row;
          }
          y[o] = acc;
        }
      }
    }
  }
}

}  // namespace

Status GridSample(KernelContext& ctx) {
  const TensorRef *x, *grid;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "grid", &grid));
  if (x->dtype != EPCTX_DTYPE_FLOAT && x->dtype != EPCTX_DTYPE_DOUBLE)
    return UnsupportedDtype(ctx, "X", x->dtype);
  if (grid->dtype != x->dtype)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "grid has dtype %s, expected %s like X",
                    dtype_name(grid->dtype), dtype_name(x->dtype));
  const bool v20 = ctx.opset() >= 20;
  if (x->rank != 4 && !(v20 && x->rank == 5))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X must have rank 4%s, found shape %s",
                    v20 ? " or 5" : "", ShapeOf(*x).s);
  const uint32_t nd = x->rank - 2;
  if (grid->rank != x->rank || grid->dims[0] != x->dims[0] ||
      grid->dims[x->rank - 1] != static_cast<int64_t>(nd))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "grid must have shape [%lld, <%u output sizes>, %u], found %s",
                    static_cast<long long>(x->dims[0]), nd, nd, ShapeOf(*grid).s);
  StrView m = ctx.AttrString("mode", v20 ? "linear" : "bilinear");
  Mode mode;
  if (m.eq("nearest")) mode = Mode::kNearest;
  else if (m.eq(v20 ? "linear" : "bilinear")) mode = Mode::kLinear;
  else if (m.eq(v20 ? "cubic" : "bicubic")) mode = Mode::kCubic;
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH, "mode is '%.*s', expected %s", m.len(), m.data,
                    v20 ? "linear, nearest or cubic" : "bilinear, nearest or bicubic");
  if (mode == Mode::kCubic && nd != 2)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "cubic mode needs a 4-D input, found %s", ShapeOf(*x).s);
  StrView pm = ctx.AttrString("padding_mode", "zeros");
  PadMode pad;
  if (pm.eq("zeros")) pad = PadMode::kZeros;
  else if (pm.eq("border")) pad = PadMode::kBorder;
  else if (pm.eq("reflection")) pad = PadMode::kReflection;
  else
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "padding_mode is '%.*s', expected zeros, border or reflection", pm.len(),
                    pm.data);
  const int64_t align = ctx.AttrInt("align_corners", 0);
  if (align != 0 && align != 1)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "align_corners is %lld, expected 0 or 1",
                    static_cast<long long>(align));
  int64_t ydims[5] = {x->dims[0], x->dims[1]};
  for (uint32_t a = 0; a < nd; ++a) ydims[2 + a] = grid->dims[1 + a];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, x->rank, ydims, dtype_size(x->dtype), "output Y"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, ydims, &y));
  if (y->elements() == 0) return Status::Ok();
  for (uint32_t a = 2; a < x->rank; ++a)
    if (x->dims[a] == 0)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "cannot sample the empty input %s", ShapeOf(*x).s);
  if (x->dtype == EPCTX_DTYPE_FLOAT)
    SampleAll(*x, *grid, mode, pad, align != 0, static_cast<float*>(y->data));
  else SampleAll(*x, *grid, mode, pad, align != 0, static_cast<double*>(y->data));
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
