// SPDX-License-Identifier: Apache-2.0
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.
//
// Scale and zero point are per tensor (one element), per axis (1-D, one per
// index along `axis`, opset 13+) or blocked (opset 21 `block_size`: the
// shape of x with the axis dimension ceil(D / block_size)). x is walked as
// [outer, D, inner] around the axis and the parameter index is computed per
// element from that layout.
//
// As ONNX Runtime: y = saturate(round_half_even(x / scale) + zero_point),
// computed in float with a true division (not a reciprocal multiply); a NaN
// quotient saturates to the type's minimum as ORT's SSE kernel does.
// Dequantize is float(x - zero_point) * scale, rounded once into float16 or
// bfloat16 outputs. DynamicQuantizeLinear widens [min, max] to include 0,
// takes scale = (max - min) / 255 (1 when max == min, as ORT, where the
// ONNX reference divides 1 by 255) and zero point round(clamp(-min/scale)).
// Float8 and 4-bit types are not epctx dtypes, so they are not supported.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/quant_util.h"
#include "epctx_uk/qgemm.h"

namespace epctx {
namespace kern {
namespace {

constexpr uint32_t kDequantIn = kQuantOut | Bit(EPCTX_DTYPE_INT32);

// QuantizeLinear's x: a scale type or int32.
template <typename F>
void DispatchQuantizeInput(int32_t dtype, F&& f) {
  Dispatch<kScaleTypes>(dtype, f);
  if (dtype == EPCTX_DTYPE_INT32) f(int32_t{});
}

// x as [outer, dim, inner] around the quantization axis.
struct QuantLayout {
  int64_t outer = 1, dim = 1, inner = 1;
  bool per_axis = false;
  int64_t block = 0;  // > 0: blocked along the axis
  int64_t qdim = 1;   // blocks along the axis
};

// Index of the scale/zero point for element (o, a, i).
inline int64_t ParamIndex(const QuantLayout& l, int64_t o, int64_t a, int64_t i) {
  if (l.block) return (o * l.qdim + a / l.block) * l.inner + i;
  return l.per_axis ? a : 0;
}

bool SameShape(const TensorRef& a, const TensorRef& b) {
  if (a.rank != b.rank) return false;
  for (uint32_t i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  return true;
}

// Validates scale/zero point against x and fills the layout.
Status ReadLayout(KernelContext& ctx, const TensorRef& x, const TensorRef& scale,
                  const TensorRef* zp, const char* scale_name, const char* zp_name,
                  QuantLayout* l) {
  const uint64_t n_scale = scale.elements();
  if (zp && !(SameShape(*zp, scale) || (zp->elements() == 1 && n_scale == 1)))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s %s must have the shape of %s %s", zp_name,
                    ShapeOf(*zp).s, scale_name, ShapeOf(scale).s);
  const int64_t block = ctx.opset() >= 21 ? ctx.AttrInt("block_size", 0) : 0;
  if (block < 0)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "block_size is %lld, expected >= 0",
                    static_cast<long long>(block));
  const bool per_tensor = block == 0 && scale.rank <= 1 && n_scale == 1;
  if (per_tensor) {
    l->outer = 1;
    l->inner = 1;
    return Product(x.dims, 0, x.rank, &l->dim)
               ? Status::Ok()
               : ctx.Fail(EPCTX_INVALID_ARGUMENT, "x %s is too large", ShapeOf(x).s);
  }
  if (ctx.opset() < 13)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar before opset 13, found shape %s",
                    scale_name, ShapeOf(scale).s);
  if (x.rank == 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s %s is not a scalar but x is rank 0", scale_name,
                    ShapeOf(scale).s);
  int64_t axis = 0;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", 1), x.rank, "axis", &axis));
  const uint32_t ax = static_cast<uint32_t>(axis);
  if (!Product(x.dims, 0, ax, &l->outer) || !Product(x.dims, ax + 1, x.rank, &l->inner))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "x %s is too large", ShapeOf(x).s);
  l->dim = x.dims[ax];
  if (block == 0) {
    if (scale.rank != 1 || scale.dims[0] != l->dim)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "per-axis %s must have shape [%lld] (x %s, axis %lld), found %s", scale_name,
                      static_cast<long long>(l->dim), ShapeOf(x).s, static_cast<long long>(axis),
                      ShapeOf(scale).s);
    l->per_axis = true;
    return Status::Ok();
  }
  l->block = block;
  l->qdim = l->dim / block + (l->dim % block != 0);
  bool ok = scale.rank == x.rank;
  for (uint32_t i = 0; ok && i < x.rank; ++i) ok = scale.dims[i] == (i == ax ? l->qdim : x.dims[i]);
  if (!ok)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "blocked %s must have the shape of x %s with dimension %lld = "
                    "ceil(%lld / block_size %lld) = %lld, found %s",
                    scale_name, ShapeOf(x).s, static_cast<long long>(axis),
                    static_cast<long long>(l->dim), static_cast<long long>(block),
                    static_cast<long long>(l->qdim), ShapeOf(scale).s);
  return Status::Ok();
}

// Scales as floats and zero points as int32 (0 when absent), in scratch.
Status ReadParams(KernelContext& ctx, const TensorRef& scale, const TensorRef* zp, float** scales,
                  int32_t** zps) {
  const uint64_t n = scale.elements();
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, scales));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, zps));
  Dispatch<kScaleTypes>(scale.dtype, [&](auto tag) {
    using S = decltype(tag);
    const S* s = static_cast<const S*>(scale.data);
    for (uint64_t i = 0; i < n; ++i) (*scales)[i] = Load(s[i]);
  });
  if (!zp) {
    for (uint64_t i = 0; i < n; ++i) (*zps)[i] = 0;
    return Status::Ok();
  }
  const uint64_t nz = zp->elements();  // 1 or n (checked by ReadLayout)
  Dispatch<kDequantIn>(zp->dtype, [&](auto tag) {
    using Z = decltype(tag);
    const Z* z = static_cast<const Z*>(zp->data);
    for (uint64_t i = 0; i < n; ++i) (*zps)[i] = static_cast<int32_t>(z[nz == 1 ? 0 : i]);
  });
  return Status::Ok();
}

template <typename X, typename Q>
void QuantizeAll(const QuantLayout& l, const X* x, const float* scales, const int32_t* zps, Q* y) {
  // float32 into 8 bits, per tensor or one parameter per row of 16 or more:
  // the micro-kernel's rows (vector lanes where the CPU has them), which
  // round and saturate as SaturateRound does.
  // A per-tensor layout (outer 1, inner 1, dim the whole tensor) is one row.
  const bool one_row = !l.per_axis;
  if (std::is_same<X, float>::value && sizeof(Q) == 1 && !l.block && (one_row || l.inner >= 16)) {
    const uk::QuantizeFn row = uk::QuantizeKernel();
    constexpr int32_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
    const float* xf = reinterpret_cast<const float*>(x);
    uint8_t* yb = reinterpret_cast<uint8_t*>(y);
    if (one_row) {
      row(xf, l.outer * l.dim * l.inner, scales[0], zps[0], lo, hi, yb);
      return;
    }
    int64_t e = 0;
    for (int64_t o = 0; o < l.outer; ++o)
      for (int64_t a = 0; a < l.dim; ++a, e += l.inner) {
        const int64_t p = ParamIndex(l, o, a, 0);
        row(xf + e, l.inner, scales[p], zps[p], lo, hi, yb + e);
      }
    return;
  }
  int64_t e = 0;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t a = 0; a < l.dim; ++a) {
      const int64_t p0 = ParamIndex(l, o, a, 0);
      const int64_t step = l.block ? 1 : 0;
      for (int64_t i = 0; i < l.inner; ++i, ++e) {
        const int64_t p = p0 + i * step;
        y[e] = SaturateRound<Q>(static_cast<float>(Load(x[e])) / scales[p], zps[p]);
      }
    }
}

Status CheckScaleDtype(KernelContext& ctx, const TensorRef& scale, const char* name) {
  const uint32_t allowed = ctx.opset() >= 19 ? kScaleTypes : kFloat32;
  if (!InMask(scale.dtype, allowed)) return UnsupportedDtype(ctx, name, scale.dtype);
  return Status::Ok();
}

}  // namespace

Status QuantizeLinear(KernelContext& ctx) {
  const TensorRef *x, *scale, *zp = ctx.input(2);
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "x", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "y_scale", &scale));
  EPCTX_RETURN_IF_ERROR(CheckScaleDtype(ctx, *scale, "y_scale"));
  const int64_t out_attr = ctx.opset() >= 21 ? ctx.AttrInt("output_dtype", 0) : 0;
  int32_t ydtype =
      zp ? zp->dtype : (out_attr ? static_cast<int32_t>(out_attr) : int32_t{EPCTX_DTYPE_UINT8});
  if (zp && out_attr && out_attr != zp->dtype)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "output_dtype %lld differs from y_zero_point's dtype %s",
                    static_cast<long long>(out_attr), dtype_name(zp->dtype));
  if (!InMask(ydtype, kQuantOut))
    return UnsupportedDtype(ctx, zp ? "y_zero_point" : "output_dtype", ydtype);
  constexpr uint32_t kXTypes = kScaleTypes | Bit(EPCTX_DTYPE_INT32);
  if (!InMask(x->dtype, kXTypes)) return UnsupportedDtype(ctx, "x", x->dtype);
  QuantLayout l;
  EPCTX_RETURN_IF_ERROR(ReadLayout(ctx, *x, *scale, zp, "y_scale", "y_zero_point", &l));
  float* scales = nullptr;
  int32_t* zps = nullptr;
  EPCTX_RETURN_IF_ERROR(ReadParams(ctx, *scale, zp, &scales, &zps));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, ydtype, x->rank, x->dims, &y));
  DispatchQuantizeInput(x->dtype, [&](auto xtag) {
    using X = decltype(xtag);
    Dispatch<kDequantIn>(ydtype, [&](auto qtag) {
      using Q = decltype(qtag);
      QuantizeAll(l, static_cast<const X*>(x->data), scales, zps, static_cast<Q*>(y->data));
    });
  });
  return Status::Ok();
}

Status DequantizeLinear(KernelContext& ctx) {
  const TensorRef *x, *scale, *zp = ctx.input(2);
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "x", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "x_scale", &scale));
  EPCTX_RETURN_IF_ERROR(CheckScaleDtype(ctx, *scale, "x_scale"));
  if (!InMask(x->dtype, kDequantIn)) return UnsupportedDtype(ctx, "x", x->dtype);
  if (zp && zp->dtype != x->dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "x_zero_point has dtype %s, expected x's %s",
                    dtype_name(zp->dtype), dtype_name(x->dtype));
  QuantLayout l;
  EPCTX_RETURN_IF_ERROR(ReadLayout(ctx, *x, *scale, zp, "x_scale", "x_zero_point", &l));
  float* scales = nullptr;
  int32_t* zps = nullptr;
  EPCTX_RETURN_IF_ERROR(ReadParams(ctx, *scale, zp, &scales, &zps));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, scale->dtype, x->rank, x->dims, &y));
  Dispatch<kDequantIn>(x->dtype, [&](auto xtag) {
    using X = decltype(xtag);
    Dispatch<kScaleTypes>(scale->dtype, [&](auto ttag) {
      using T = decltype(ttag);
      const X* in = static_cast<const X*>(x->data);
      T* out = static_cast<T*>(y->data);
      const int64_t step = l.block ? 1 : 0;
      int64_t e = 0;
      // 8 bits into float32, per tensor or one parameter per row of 16 or
      // more: the micro-kernel's rows.
      if (std::is_same<T, float>::value && sizeof(X) == 1 && !l.block &&
          (!l.per_axis || l.inner >= 16)) {
        const uk::DequantizeFn row = uk::DequantizeKernel();
        const uint8_t* xb = reinterpret_cast<const uint8_t*>(in);
        float* yf = reinterpret_cast<float*>(out);
        if (!l.per_axis) {  // per tensor: one row
          row(xb, l.outer * l.dim * l.inner, std::is_signed<X>::value, zps[0], scales[0], yf);
          return;
        }
        for (int64_t o = 0; o < l.outer; ++o)
          for (int64_t a = 0; a < l.dim; ++a, e += l.inner) {
            const int64_t p = ParamIndex(l, o, a, 0);
            row(xb + e, l.inner, std::is_signed<X>::value, zps[p], scales[p], yf + e);
          }
        return;
      }
      for (int64_t o = 0; o < l.outer; ++o)
        for (int64_t a = 0; a < l.dim; ++a) {
          const int64_t p0 = ParamIndex(l, o, a, 0);
          for (int64_t i = 0; i < l.inner; ++i, ++e) {
            const int64_t p = p0 + i * step;
            const int64_t d = static_cast<int64_t>(in[e]) - zps[p];
            out[e] = Store<T>(static_cast<float>(d) * scales[p]);
          }
        }
    });
  });
  return Status::Ok();
}

Status DynamicQuantizeLinear(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "x", &x));
  const float* in = static_cast<const float*>(x->data);
  const uint64_t n = x->elements();
  // [min, max] with 0 in 16 independent lanes (vector min/max; NaN never
  // enters a lane, as in one running pair), then across them.
  constexpr uint64_t kLanes = 16;
  float lanes_lo[kLanes] = {}, lanes_hi[kLanes] = {};
  uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (uint64_t j = 0; j < kLanes; ++j) {
      lanes_lo[j] = in[i + j] < lanes_lo[j] ? in[i + j] : lanes_lo[j];
      lanes_hi[j] = in[i + j] > lanes_hi[j] ? in[i + j] : lanes_hi[j];
    }
  float lo = 0.0f, hi = 0.0f;
  for (; i < n; ++i) {
    lo = in[i] < lo ? in[i] : lo;
    hi = in[i] > hi ? in[i] : hi;
  }
  for (uint64_t j = 0; j < kLanes; ++j) {
    lo = lanes_lo[j] < lo ? lanes_lo[j] : lo;
    hi = lanes_hi[j] > hi ? lanes_hi[j] : hi;
  }
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float zpf = 0.0f - lo / scale;
  // !(zpf > 0): a NaN (an infinite range) clamps to 0 too, never reaching
  // the float -> int conversion, which is undefined for it.
  zpf = !(zpf > 0.0f) ? 0.0f : (zpf > 255.0f ? 255.0f : zpf);
  const uint8_t zp = static_cast<uint8_t>(nearbyintf(zpf));
  TensorRef *y = nullptr, *ys = nullptr, *yz = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_UINT8, x->rank, x->dims, &y));
  if (ctx.num_outputs() > 1) {
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(1, EPCTX_DTYPE_FLOAT, 0, nullptr, &ys));
    *static_cast<float*>(ys->data) = scale;
  }
  if (ctx.num_outputs() > 2) {
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(2, EPCTX_DTYPE_UINT8, 0, nullptr, &yz));
    *static_cast<uint8_t*>(yz->data) = zp;
  }
  // The micro-kernel row QuantizeAll uses: SaturateRound's bytes.
  uk::QuantizeKernel()(in, int64_t(n), scale, zp, 0, 255, static_cast<uint8_t*>(y->data));
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
