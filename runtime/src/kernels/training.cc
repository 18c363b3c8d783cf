// SPDX-License-Identifier: Apache-2.0
// The ai.onnx.preview.training optimisers (opset 1): Adagrad, Adam and
// Momentum (standard and Nesterov). ORT does not run these; we do, following
// the update rules of the ONNX spec and its reference.
//
// Inputs are R (learning rate, float/double scalar), T (update count, int64
// scalar), then n tensors of each state kind in blocks: X1..Xn, G1..Gn and
// (Adagrad H; Adam V, H; Momentum V). Outputs are the new X1..Xn followed by
// the new state blocks. Every tensor of group i has the shape of Xi and all
// share one float or double dtype; each update is elementwise, computed in
// that dtype. Adam's bias correction raises alpha and beta to the integer
// power T by squaring (no pow from libm).
#include <cmath>

#include "kernels/float_math.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

double IntPow(double base, int64_t e) {
  double r = 1.0;
  uint64_t u = e < 0 ? 0 : static_cast<uint64_t>(e);
  while (u) {
    if (u & 1u) r *= base;
    base *= base;
    u >>= 1;
  }
  return r;
}

struct OptArgs {
  uint32_t n = 0;     // tensors per block
  double r = 0.0;     // learning rate
  int64_t t = 0;      // update count
  int32_t dtype = 0;  // of every X/G/state tensor
};

// Checks R, T, the block structure (`in_blocks` input and `out_blocks`
// output blocks) and that each group's tensors match Xi in shape and dtype.
Status ReadOptimizer(KernelContext& ctx, uint32_t in_blocks, uint32_t out_blocks, OptArgs* a) {
  const TensorRef *r, *t;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "R", &r));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "T", &t));
  if (r->elements() != 1 || r->rank > 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "R must be a scalar, found shape %s", ShapeOf(*r).s);
  if (r->dtype == EPCTX_DTYPE_FLOAT) a->r = *static_cast<const float*>(r->data);
  else if (r->dtype == EPCTX_DTYPE_DOUBLE) a->r = *static_cast<const double*>(r->data);
  else return UnsupportedDtype(ctx, "R", r->dtype);
  if (t->dtype != EPCTX_DTYPE_INT64) return UnsupportedDtype(ctx, "T", t->dtype);
  if (t->elements() != 1 || t->rank > 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "T must be a scalar, found shape %s", ShapeOf(*t).s);
  a->t = *static_cast<const int64_t*>(t->data);
  const uint32_t tensors = ctx.num_inputs() - 2;
  if (ctx.num_inputs() < 2 + in_blocks || tensors % in_blocks != 0)
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "expected R, T and %u blocks of equally many tensors, found %u inputs",
                    in_blocks, ctx.num_inputs());
  a->n = tensors / in_blocks;
  if (ctx.num_outputs() != out_blocks * a->n)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "expected %u outputs for %u optimised tensors, found %u",
                    out_blocks * a->n, a->n, ctx.num_outputs());
  for (uint32_t i = 0; i < a->n; ++i) {
    const TensorRef* x;
    EPCTX_RETURN_IF_ERROR(Input(ctx, 2 + i, "X", &x));
    if (i == 0) a->dtype = x->dtype;
    if (x->dtype != EPCTX_DTYPE_FLOAT && x->dtype != EPCTX_DTYPE_DOUBLE)
      return UnsupportedDtype(ctx, "X", x->dtype);
    for (uint32_t b = 0; b < in_blocks; ++b) {
      const TensorRef* s;
      EPCTX_RETURN_IF_ERROR(Input(ctx, 2 + b * a->n + i, "optimiser state", &s));
      bool same = s->dtype == a->dtype && s->rank == x->rank;
      for (uint32_t d = 0; same && d < x->rank; ++d) same = s->dims[d] == x->dims[d];
      if (!same)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input %u is %s %s, expected %s %s like X%u",
                        2 + b * a->n + i, dtype_name(s->dtype), ShapeOf(*s).s, dtype_name(a->dtype),
                        ShapeOf(*x).s, i + 1);
    }
  }
  return Status::Ok();
}

// For group i: ins[b] = data of input block b, outs[b] = output block b
// allocated like Xi; then f(ins, outs, count) in dtype T.
template <typename T, typename F>
Status ForEachGroup(KernelContext& ctx, const OptArgs& a, uint32_t in_blocks, uint32_t out_blocks,
                    F f) {
  for (uint32_t i = 0; i < a.n; ++i) {
    const T* ins[4] = {};
    T* outs[4] = {};
    const TensorRef* x = ctx.input(2 + i);
    for (uint32_t b = 0; b < in_blocks; ++b)
      ins[b] = static_cast<const T*>(ctx.input(2 + b * a.n + i)->data);
    for (uint32_t b = 0; b < out_blocks; ++b) {
      TensorRef* o = nullptr;
      EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(b * a.n + i, a.dtype, x->rank, x->dims, &o));
      outs[b] = static_cast<T*>(o->data);
    }
    f(ins, outs, x->elements());
  }
  return Status::Ok();
}

template <typename F>
Status ByDtype(const OptArgs& a, F f) {
  return a.dtype == EPCTX_DTYPE_FLOAT ? f(float{}) : f(double{});
}

}  // namespace

Status Adagrad(KernelContext& ctx) {
  OptArgs a;
  EPCTX_RETURN_IF_ERROR(ReadOptimizer(ctx, 3, 2, &a));
  const double decay = ctx.AttrFloat("decay_factor", 0.0f);
  const double eps = ctx.AttrFloat("epsilon", 1e-6f);
  const double norm = ctx.AttrFloat("norm_coefficient", 0.0f);
  return ByDtype(a, [&](auto tag) {
    using T = decltype(tag);
    const T r = static_cast<T>(a.r / (1.0 + static_cast<double>(a.t) * decay));
    return ForEachGroup<T>(ctx, a, 3, 2, [&](const T* const* in, T* const* out, uint64_t n) {
      const T *x = in[0], *g = in[1], *h = in[2];
      for (uint64_t e = 0; e < n; ++e) {
        const T gr = static_cast<T>(norm) * x[e] + g[e];
        const T hn = h[e] + gr * gr;
        out[1][e] = hn;
        out[0][e] = x[e] - r * gr / (Sqrt(hn) + static_cast<T>(eps));
      }
    });
  });
}

Status Adam(KernelContext& ctx) {
  OptArgs a;
  EPCTX_RETURN_IF_ERROR(ReadOptimizer(ctx, 4, 3, &a));
  const double alpha = ctx.AttrFloat("alpha", 0.9f);
  const double beta = ctx.AttrFloat("beta", 0.999f);
  const double eps = ctx.AttrFloat("epsilon", 1e-6f);
  const double norm = ctx.AttrFloat("norm_coefficient", 0.0f);
  const double post = ctx.AttrFloat("norm_coefficient_post", 0.0f);
  double r = a.r;
  if (a.t > 0) r = r * sqrt(1.0 - IntPow(beta, a.t)) / (1.0 - IntPow(alpha, a.t));
  return ByDtype(a, [&](auto tag) {
    using T = decltype(tag);
    const T ra = static_cast<T>(r), al = static_cast<T>(alpha), be = static_cast<T>(beta);
    return ForEachGroup<T>(ctx, a, 4, 3, [&](const T* const* in, T* const* out, uint64_t n) {
      const T *x = in[0], *g = in[1], *v = in[2], *h = in[3];
      for (uint64_t e = 0; e < n; ++e) {
        const T gr = static_cast<T>(norm) * x[e] + g[e];
        const T vn = al * v[e] + (T(1) - al) * gr;
        const T hn = be * h[e] + (T(1) - be) * (gr * gr);
        const T xn = x[e] - ra * (vn / (Sqrt(hn) + static_cast<T>(eps)));
        out[0][e] = (T(1) - static_cast<T>(post)) * xn;
        out[1][e] = vn;
        out[2][e] = hn;
      }
    });
  });
}

Status Momentum(KernelContext& ctx) {
  OptArgs a;
  EPCTX_RETURN_IF_ERROR(ReadOptimizer(ctx, 3, 2, &a));
  static const char* const kRequired[] = {"alpha", "beta", "norm_coefficient", "mode"};
  for (const char* name : kRequired)
    if (!ctx.node().attr(name))
      return ctx.Fail(EPCTX_INVALID_GRAPH, "required attribute '%s' is missing", name);
  const double alpha = ctx.AttrFloat("alpha", 0.0f);
  const double beta = ctx.AttrFloat("beta", 0.0f);
  const double norm = ctx.AttrFloat("norm_coefficient", 0.0f);
  const StrView mode = ctx.AttrString("mode", "");
  const bool nesterov = mode.eq("nesterov");
  if (!nesterov && !mode.eq("standard"))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "mode is '%.*s', expected standard or nesterov",
                    mode.len(), mode.data);
  return ByDtype(a, [&](auto tag) {
    using T = decltype(tag);
    const T r = static_cast<T>(a.r), al = static_cast<T>(alpha);
    // The gradient's coefficient is 1 on the first update (T == 0).
    const T be = a.t > 0 ? static_cast<T>(beta) : T(1);
    return ForEachGroup<T>(ctx, a, 3, 2, [&](const T* const* in, T* const* out, uint64_t n) {
      const T *x = in[0], *g = in[1], *v = in[2];
      for (uint64_t e = 0; e < n; ++e) {
        const T gr = static_cast<T>(norm) * x[e] + g[e];
        const T vn = al * v[e] + be * gr;
        out[0][e] = nesterov ? x[e] - r * (gr + al * vn) : x[e] - r * vn;
        out[1][e] = vn;
      }
    });
  });
}

}  // namespace kern
}  // namespace epctx
