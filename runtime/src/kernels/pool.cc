// SPDX-License-Identifier: Apache-2.0
// Pooling over 1-D, 2-D and 3-D windows: MaxPool (float, double, float16,
// int8, uint8; optional Indices output), AveragePool and LpPool (float,
// double, float16), and the global forms (any number of spatial axes).
// float16 computes in float and rounds once per output.
//
// MaxPool Indices are flat offsets into X: plane * (D*H*W) plus the offset
// inside the plane, row-major (storage_order 0) or column-major (1), as ONNX
// Runtime numbers them. A NaN in a window makes the maximum NaN.
//
// float 2-D MaxPool (without Indices) and AveragePool with dilation 1 hand
// the interior of each output row, the columns whose window lies inside the
// input of a row whose window does, to uk::PoolRow (vectors across the row),
// and int8 and uint8 MaxPool to uk::QMaxPoolRow; the rest visit their taps
// one by one. The maximum is the same bits either
// way; an interior average is its sum times 1 / (kernel taps), not divided.
#include <cmath>
#include <limits>
#include <type_traits>

#include "epctx_uk/pool.h"
#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/window.h"

namespace epctx {
namespace kern {
namespace {

constexpr uint32_t kPoolFloats =
    Bit(EPCTX_DTYPE_FLOAT) | Bit(EPCTX_DTYPE_DOUBLE) | Bit(EPCTX_DTYPE_FLOAT16);
constexpr uint32_t kMaxPoolTypes = kPoolFloats | Bit(EPCTX_DTYPE_INT8) | Bit(EPCTX_DTYPE_UINT8);

struct PoolSetup {
  const TensorRef* x;
  TensorRef* y;
  Window w;
  int64_t planes;  // N * C
  uint32_t rank;
  int64_t ydims[2 + kMaxSpatial];
};

Status SetupPool(KernelContext& ctx, bool allow_ceil, uint32_t types, PoolSetup* ps) {
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &ps->x));
  const TensorRef& x = *ps->x;
  if (!InMask(x.dtype, types)) return UnsupportedDtype(ctx, "X", x.dtype);
  if (x.rank < 3 || x.rank > 2 + kMaxSpatial)
    return ctx.Fail(x.rank > 2 + kMaxSpatial ? EPCTX_NOT_IMPLEMENTED : EPCTX_INVALID_ARGUMENT,
                    "input X must have rank 3, 4 or 5, found shape %s", ShapeOf(x).s);
  const int64_t ceil_mode = allow_ceil ? ctx.AttrInt("ceil_mode", 0) : 0;
  const uint32_t spatial = x.rank - 2;
  EPCTX_RETURN_IF_ERROR(ComputeWindow(ctx, spatial, x.dims + 2, nullptr, ceil_mode != 0, &ps->w));
  ps->rank = x.rank;
  ps->ydims[0] = x.dims[0];
  ps->ydims[1] = x.dims[1];
  for (uint32_t i = 0; i < spatial; ++i) ps->ydims[2 + i] = ps->w.out[WindowBase(spatial) + i];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, x.rank, ps->ydims, 8, "output Y"));
  ps->planes = x.dims[0] * x.dims[1];
  return ctx.AllocOutput(0, x.dtype, x.rank, ps->ydims, &ps->y);
}

// Taps visited per plane (saturated): what a plane costs.
int64_t PlaneWork(const PoolSetup& ps) {
  int64_t taps = 1;
  for (uint32_t a = 0; a < kMaxSpatial; ++a) {
    const int64_t k = ps.w.kernel[a] > 0 ? ps.w.kernel[a] : 1;
    taps = taps > INT64_MAX / k ? INT64_MAX : taps * k;
  }
  const int64_t out = ps.w.out_size();
  return taps > 0 && out > INT64_MAX / taps ? INT64_MAX : out * taps;
}

// One output position's window: where it starts on each axis (input
// coordinates, negative in the begin padding), and its kernel taps inside
// the input, [k0, k1) per axis.
struct Taps {
  int64_t start[kMaxSpatial], k0[kMaxSpatial], k1[kMaxSpatial];
};

// Taps of a window starting at `start` on `axis` inside the padded input.
inline int64_t PaddedTaps(const Window& w, int axis, int64_t start) {
  int64_t lo, hi;
  ValidRange(start + w.pad_begin[axis], w.dilation[axis],
             w.in[axis] + w.pad_begin[axis] + w.pad_end[axis], w.kernel[axis], &lo, &hi);
  return hi - lo;
}

// Taps of a window uk::PoolRow takes at most (kernels up to 8x8); larger
// windows take the loop over taps.
constexpr int64_t kRowTaps = 64;

// The interior runs of a pool's output rows through uk::PoolRow: output
// columns [lo, hi) of a row, one row pointer per tap.
struct PoolRun {
  const PoolSetup* ps;
  uk::PoolOp op;
  float scale;  // 1 / taps: every tap of an interior window counts
  int64_t lo, hi;
  void operator()(int64_t p, int64_t o, const Taps& t) const {
    const Window& w = ps->w;
    const int64_t at = p * w.in_size() + (t.start[0] * w.in[1] + t.start[1]) * w.in[2] + t.start[2];
    if (ps->x->dtype != EPCTX_DTYPE_FLOAT) {  // int8, uint8: the maximum
      const uint8_t* in = static_cast<const uint8_t*>(ps->x->data) + at;
      const uint8_t* rows[kRowTaps];
      int64_t nt = 0;
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) rows[nt++] = in + kh * w.in[2] + kw;
      uk::QMaxPoolRow(rows, nt, w.stride[2], ps->x->dtype == EPCTX_DTYPE_INT8,
                      static_cast<uint8_t*>(ps->y->data) + o, hi - lo);
      return;
    }
    const float* in = static_cast<const float*>(ps->x->data) + at;
    const float* rows[kRowTaps];
    int64_t nt = 0;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) rows[nt++] = in + kh * w.in[2] + kw;
    uk::PoolRow(op, rows, nt, w.stride[2], scale, static_cast<float*>(ps->y->data) + o, hi - lo);
  }
};

// Fills *run and returns it when the pool can use it (float, or int8 and
// uint8 for the maximum; 2-D, dilation 1, at most kRowTaps taps, some
// interior columns), else null.
const PoolRun* MakeRun(const PoolSetup& ps, uk::PoolOp op, PoolRun* run) {
  const Window& w = ps.w;
  const bool bytes = op == uk::PoolOp::kMax &&
                     (ps.x->dtype == EPCTX_DTYPE_INT8 || ps.x->dtype == EPCTX_DTYPE_UINT8);
  if ((ps.x->dtype != EPCTX_DTYPE_FLOAT && !bytes) || ps.rank != 4 || w.dilation[1] != 1 ||
      w.dilation[2] != 1 || w.kernel[1] * w.kernel[2] > kRowTaps)
    return nullptr;
  *run = PoolRun{&ps, op, 1.0f / static_cast<float>(w.kernel[1] * w.kernel[2]), 0, 0};
  ValidRange(-w.pad_begin[2], w.stride[2], w.in[2] - w.kernel[2] + 1, w.out[2], &run->lo, &run->hi);
  return run->lo < run->hi ? run : nullptr;
}

// Calls fn(plane, out_index, taps) for every output position of planes
// [p0, p1). With a row kernel (kRows: float only; run from MakeRun), the
// interior run of each output row whose window lies inside the input on
// the depth and height axes, the columns whose window lies inside on the
// width axis too, goes to (*run)(plane, out_index, taps of the run's first
// window) instead.
template <bool kRows, typename Fn>
void ForEachWindow(const Window& w, int64_t p0, int64_t p1, const PoolRun* run, Fn fn) {
  const int64_t OSZ = w.out_size();
  Taps t;
  for (int64_t p = p0; p < p1; ++p) {
    int64_t o = p * OSZ;
    for (int64_t od = 0; od < w.out[0]; ++od) {
      t.start[0] = od * w.stride[0] - w.pad_begin[0];
      ValidRange(t.start[0], w.dilation[0], w.in[0], w.kernel[0], &t.k0[0], &t.k1[0]);
      for (int64_t oh = 0; oh < w.out[1]; ++oh) {
        t.start[1] = oh * w.stride[1] - w.pad_begin[1];
        ValidRange(t.start[1], w.dilation[1], w.in[1], w.kernel[1], &t.k0[1], &t.k1[1]);
        const bool inside =
            kRows && run && t.k1[0] - t.k0[0] == w.kernel[0] && t.k1[1] - t.k0[1] == w.kernel[1];
        for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
          t.start[2] = ow * w.stride[2] - w.pad_begin[2];
          ValidRange(t.start[2], w.dilation[2], w.in[2], w.kernel[2], &t.k0[2], &t.k1[2]);
          if (inside && ow == run->lo) {
            (*run)(p, o, t);
            o += run->hi - run->lo - 1;
            ow = run->hi - 1;
            continue;
          }
          fn(p, o, t);
        }
      }
    }
  }
}

// Calls visit(offset in plane, d, h, w) for every tap of t.
template <typename Visit>
inline void ForEachTap(const Window& w, const Taps& t, Visit visit) {
  for (int64_t kd = t.k0[0]; kd < t.k1[0]; ++kd) {
    const int64_t d = t.start[0] + kd * w.dilation[0];
    for (int64_t kh = t.k0[1]; kh < t.k1[1]; ++kh) {
      const int64_t h = t.start[1] + kh * w.dilation[1];
      const int64_t row = (d * w.in[1] + h) * w.in[2];
      for (int64_t kw = t.k0[2]; kw < t.k1[2]; ++kw) {
        const int64_t x = t.start[2] + kw * w.dilation[2];
        visit(row + x, d, h, x);
      }
    }
  }
}

template <typename T>
void MaxPoolT(const PoolSetup& ps, int64_t p0, int64_t p1, int64_t* indices, bool column_major,
              const PoolRun* run) {
  using C = Compute<T>;
  const Window& w = ps.w;
  const T* X = static_cast<const T*>(ps.x->data);
  T* Y = static_cast<T*>(ps.y->data);
  const int64_t ISZ = w.in_size();
  // PoolRow takes floats, QMaxPoolRow bytes.
  constexpr bool kRows = std::is_same<T, float>::value || std::is_same<T, int8_t>::value ||
                         std::is_same<T, uint8_t>::value;
  ForEachWindow<kRows>(w, p0, p1, run, [&](int64_t p, int64_t o, const Taps& t) {
    const T* in = X + p * ISZ;
    C m = std::numeric_limits<C>::lowest();
    int64_t best = -1, bd = 0, bh = 0, bw = 0;
    ForEachTap(w, t, [&](int64_t off, int64_t d, int64_t h, int64_t x) {
      const C v = Load(in[off]);
      if (v > m || (v != v && m == m) || best < 0) {
        m = v;
        best = off;
        bd = d;
        bh = h;
        bw = x;
      }
    });
    Y[o] = Store<T>(m);
    if (indices) {
      int64_t idx = best < 0 ? 0 : best;
      if (column_major && best >= 0) idx = (bw * w.in[1] + bh) * w.in[0] + bd;
      indices[o] = p * ISZ + idx;
    }
  });
}

template <typename T>
void AveragePoolT(const PoolSetup& ps, int64_t p0, int64_t p1, bool include_pad,
                  const PoolRun* run) {
  using C = Compute<T>;
  const Window& w = ps.w;
  const T* X = static_cast<const T*>(ps.x->data);
  T* Y = static_cast<T*>(ps.y->data);
  const int64_t ISZ = w.in_size();
  constexpr bool kRows = std::is_same<T, float>::value;  // PoolRow takes floats
  ForEachWindow<kRows>(w, p0, p1, run, [&](int64_t p, int64_t o, const Taps& t) {
    const T* in = X + p * ISZ;
    C sum = 0;
    ForEachTap(w, t, [&](int64_t off, int64_t, int64_t, int64_t) { sum += Load(in[off]); });
    double count = 1;
    for (int a = 0; a < static_cast<int>(kMaxSpatial); ++a)
      count *= static_cast<double>(include_pad ? PaddedTaps(w, a, t.start[a]) : t.k1[a] - t.k0[a]);
    Y[o] = Store<T>(count > 0 ? static_cast<C>(sum / static_cast<C>(count)) : C(0));
  });
}

template <typename T>
void LpPoolT(const PoolSetup& ps, int64_t p0, int64_t p1, float pw) {
  using C = Compute<T>;
  const Window& w = ps.w;
  const T* X = static_cast<const T*>(ps.x->data);
  T* Y = static_cast<T*>(ps.y->data);
  const int64_t ISZ = w.in_size();
  ForEachWindow<false>(w, p0, p1, nullptr, [&](int64_t p, int64_t o, const Taps& t) {
    const T* in = X + p * ISZ;
    float sum = 0;
    ForEachTap(w, t, [&](int64_t off, int64_t, int64_t, int64_t) {
      sum += powf(fabsf(static_cast<float>(Load(in[off]))), pw);
    });
    Y[o] = Store<T>(static_cast<C>(powf(sum, 1.0f / pw)));
  });
}

}  // namespace

Status MaxPool(KernelContext& ctx) {
  const bool want_indices =
      ctx.num_outputs() > 1 && ctx.node().outputs && !ctx.node().outputs[1].empty();
  const int64_t storage_order = ctx.AttrInt("storage_order", 0);
  if (storage_order != 0 && storage_order != 1)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "storage_order is %lld, expected 0 or 1",
                    static_cast<long long>(storage_order));
  PoolSetup ps;
  EPCTX_RETURN_IF_ERROR(SetupPool(ctx, true, kMaxPoolTypes, &ps));
  int64_t* indices = nullptr;
  if (want_indices) {
    TensorRef* it = nullptr;
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(1, EPCTX_DTYPE_INT64, ps.rank, ps.ydims, &it));
    indices = static_cast<int64_t*>(it->data);
  }
  PoolRun run;
  const PoolRun* rows = indices ? nullptr : MakeRun(ps, uk::PoolOp::kMax, &run);
  Dispatch<kMaxPoolTypes>(ps.x->dtype, [&](auto tag) {
    ctx.ParallelRange(ps.planes, PlaneWork(ps), [&](int64_t p0, int64_t p1) {
      MaxPoolT<decltype(tag)>(ps, p0, p1, indices, storage_order == 1, rows);
    });
  });
  return Status::Ok();
}

Status AveragePool(KernelContext& ctx) {
  PoolSetup ps;
  EPCTX_RETURN_IF_ERROR(SetupPool(ctx, true, kPoolFloats, &ps));
  const bool include_pad = ctx.AttrInt("count_include_pad", 0) != 0;
  PoolRun run;
  const PoolRun* rows = MakeRun(ps, uk::PoolOp::kAverage, &run);
  Dispatch<kPoolFloats>(ps.x->dtype, [&](auto tag) {
    ctx.ParallelRange(ps.planes, PlaneWork(ps), [&](int64_t p0, int64_t p1) {
      AveragePoolT<decltype(tag)>(ps, p0, p1, include_pad, rows);
    });
  });
  return Status::Ok();
}

namespace {

Status ReadP(KernelContext& ctx, float* p) {
  const int64_t v = ctx.AttrInt("p", 2);
  if (v < 1 || v > 1024)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "p is %lld, expected a value in [1, 1024]",
                    static_cast<long long>(v));
  *p = static_cast<float>(v);
  return Status::Ok();
}

}  // namespace

Status LpPool(KernelContext& ctx) {
  float p = 2;
  EPCTX_RETURN_IF_ERROR(ReadP(ctx, &p));
  PoolSetup ps;
  EPCTX_RETURN_IF_ERROR(SetupPool(ctx, ctx.opset() >= 18, kPoolFloats, &ps));
  Dispatch<kPoolFloats>(ps.x->dtype, [&](auto tag) {
    ctx.ParallelRange(ps.planes, PlaneWork(ps),
                      [&](int64_t p0, int64_t p1) { LpPoolT<decltype(tag)>(ps, p0, p1, p); });
  });
  return Status::Ok();
}

namespace {

enum class Global { kAverage, kMax, kLp };

template <Global kKind>
Status GlobalPool(KernelContext& ctx) {
  float pw = 2;
  if (kKind == Global::kLp) EPCTX_RETURN_IF_ERROR(ReadP(ctx, &pw));
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  if (x->rank < 3)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "input X must have rank >= 3 (N, C, spatial...), found shape %s",
                    ShapeOf(*x).s);
  int64_t ydims[kMaxRank];
  ydims[0] = x->dims[0];
  ydims[1] = x->dims[1];
  for (uint32_t i = 2; i < x->rank; ++i) ydims[i] = 1;
  constexpr uint32_t types = kKind == Global::kMax ? kMaxPoolTypes : kPoolFloats;
  if (!InMask(x->dtype, types)) return UnsupportedDtype(ctx, "X", x->dtype);
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, ydims, &y));
  int64_t spatial = 1;
  Product(x->dims, 2, x->rank, &spatial);
  const int64_t planes = x->dims[0] * x->dims[1];
  Dispatch<types>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    const T* X = static_cast<const T*>(x->data);
    T* Y = static_cast<T*>(y->data);
    ctx.ParallelRange(planes, spatial, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T* in = X + p * spatial;
        if (kKind == Global::kMax) {
          C m = std::numeric_limits<C>::lowest();
          for (int64_t i = 0; i < spatial; ++i) {
            const C v = Load(in[i]);
            if (v > m || v != v) m = v;
            if (m != m) break;
          }
          Y[p] = Store<T>(m);
        } else if (kKind == Global::kAverage) {
          C s = 0;
          int64_t i = 0;
          if (sizeof(T) == 4 && sizeof(C) == 4) {
            // float: 16 running sums (four 4-lane vectors), not one scalar
            // chain bound by the add latency (48% of a 14x14 depthwise
            // layer and its pooling), then added in a fixed order.
            typedef float V4 __attribute__((vector_size(16)));
            typedef float V4U __attribute__((vector_size(16), aligned(4), may_alias));
            const float* f = reinterpret_cast<const float*>(in);
            V4 a = {}, b = {}, c = {}, d = {};
            for (; i + 16 <= spatial; i += 16) {
              a += *reinterpret_cast<const V4U*>(f + i);
              b += *reinterpret_cast<const V4U*>(f + i + 4);
              c += *reinterpret_cast<const V4U*>(f + i + 8);
              d += *reinterpret_cast<const V4U*>(f + i + 12);
            }
            const V4 e = (a + b) + (c + d);
            s = static_cast<C>((e[0] + e[1]) + (e[2] + e[3]));
          }
          for (; i < spatial; ++i) s += Load(in[i]);
          Y[p] = Store<T>(spatial > 0 ? static_cast<C>(s / static_cast<C>(spatial)) : C(0));
        } else {
          float s = 0;
          for (int64_t i = 0; i < spatial; ++i)
            s += powf(fabsf(static_cast<float>(Load(in[i]))), pw);
          Y[p] = Store<T>(static_cast<C>(powf(s, 1.0f / pw)));
        }
      }
    });
  });
  return Status::Ok();
}

}  // namespace

Status GlobalAveragePool(KernelContext& ctx) { return GlobalPool<Global::kAverage>(ctx); }
Status GlobalMaxPool(KernelContext& ctx) { return GlobalPool<Global::kMax>(ctx); }
Status GlobalLpPool(KernelContext& ctx) { return GlobalPool<Global::kLp>(ctx); }

}  // namespace kern
}  // namespace epctx
