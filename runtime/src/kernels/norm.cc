// SPDX-License-Identifier: Apache-2.0
// Normalisations: BatchNormalization (inference, and training_mode=1 from
// opset 14 with running_mean/running_var outputs), LayerNormalization
// (opset 17: axis, epsilon, stash_type, optional Mean/InvStdDev outputs),
// InstanceNormalization, LRN and MeanVarianceNormalization.
//
// Types: float, double, float16, bfloat16, computed in double for double
// data and in float otherwise, rounded once on store. Per-channel and scale
// parameters may have any of those types (opset 15 BatchNormalization
// allows them to differ from X). Means and variances are two-pass
// (mean((x - mean)^2)), which agrees with ORT's E[x^2] - E[x]^2 to
// rounding and never goes negative.
// Deviations: BatchNormalization training outputs before opset 14 (saved
// mean/var) and spatial=0 (opsets 7, 8) are NOT_IMPLEMENTED.
#include <cmath>
#include <type_traits>

#include "kernels/elem.h"
#include "kernels/float_math.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/reduce_layout.h"

namespace epctx {
namespace kern {
namespace {

// Element i of a float-like tensor as A.
template <typename A>
A LoadAs(const TensorRef& t, uint64_t i) {
  A v = 0;
  Dispatch<kFloats>(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<A>(Load(static_cast<const T*>(t.data)[i]));
  });
  return v;
}

// Stores v as element i of a float-like tensor.
template <typename A>
void StoreAs(TensorRef* t, uint64_t i, A v) {
  Dispatch<kFloats>(t->dtype, [&](auto tag) {
    using T = decltype(tag);
    static_cast<T*>(t->data)[i] = Store<T>(static_cast<Compute<T>>(v));
  });
}

bool Wanted(KernelContext& ctx, uint32_t i) {
  return i < ctx.num_outputs() && ctx.node().outputs && !ctx.node().outputs[i].empty();
}

// Input i (float-like, shape [C]) converted to A in scratch.
template <typename A>
Status ChannelParam(KernelContext& ctx, uint32_t i, const char* what, int64_t C, A** out) {
  const TensorRef* t;
  EPCTX_RETURN_IF_ERROR(Input(ctx, i, what, &t));
  if (!InMask(t->dtype, kFloats)) return UnsupportedDtype(ctx, what, t->dtype);
  if (t->rank != 1 || t->dims[0] != C)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must have shape [%lld], found %s", what,
                    static_cast<long long>(C), ShapeOf(*t).s);
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(C), out));
  for (int64_t c = 0; c < C; ++c) (*out)[c] = LoadAs<A>(*t, static_cast<uint64_t>(c));
  return Status::Ok();
}

// X (float-like, rank >= min_rank) for the N x C x ... normalisations.
Status ChannelInput(KernelContext& ctx, uint32_t min_rank, const TensorRef** x) {
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", x));
  if (!InMask((*x)->dtype, kFloats)) return UnsupportedDtype(ctx, "X", (*x)->dtype);
  if ((*x)->rank < min_rank)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X must have rank >= %u (N x C x ...), found shape %s",
                    min_rank, ShapeOf(**x).s);
  return Status::Ok();
}

// ---- BatchNormalization ----------------------------------------------------

template <typename T>
Status BatchNormT(KernelContext& ctx, const TensorRef& x, bool training, TensorRef* y) {
  using A = Compute<T>;
  const int64_t N = x.dims[0], C = x.dims[1];
  int64_t inner = 1;
  Product(x.dims, 2, x.rank, &inner);
  A *scale, *bias, *mean, *var;
  EPCTX_RETURN_IF_ERROR(ChannelParam(ctx, 1, "scale", C, &scale));
  EPCTX_RETURN_IF_ERROR(ChannelParam(ctx, 2, "B", C, &bias));
  EPCTX_RETURN_IF_ERROR(ChannelParam(ctx, 3, "input_mean", C, &mean));
  EPCTX_RETURN_IF_ERROR(ChannelParam(ctx, 4, "input_var", C, &var));
  const A eps = static_cast<A>(ctx.AttrFloat("epsilon", 1e-5f));
  const T* X = static_cast<const T*>(x.data);
  T* Y = static_cast<T*>(y->data);
  TensorRef* run_mean = nullptr;
  TensorRef* run_var = nullptr;
  if (training) {
    const int64_t cdim[1] = {C};
    const TensorRef* m = ctx.input(3);
    const TensorRef* v = ctx.input(4);
    if (Wanted(ctx, 1)) EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(1, m->dtype, 1, cdim, &run_mean));
    if (Wanted(ctx, 2)) EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(2, v->dtype, 1, cdim, &run_var));
  }
  const A momentum = static_cast<A>(ctx.AttrFloat("momentum", 0.9f));
  const A count = static_cast<A>(N * inner);
  for (int64_t c = 0; c < C; ++c) {
    A mu = mean[c], sigma2 = var[c];
    if (training) {
      A s = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) s += Load(X[(n * C + c) * inner + i]);
      mu = s / count;
      A q = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) {
          const A d = Load(X[(n * C + c) * inner + i]) - mu;
          q += d * d;
        }
      sigma2 = q / count;
      if (run_mean) StoreAs(run_mean, c, mean[c] * momentum + mu * (A(1) - momentum));
      if (run_var) StoreAs(run_var, c, var[c] * momentum + sigma2 * (A(1) - momentum));
    }
    const A a = scale[c] / Sqrt(sigma2 + eps);
    const A b = bias[c] - mu * a;
    for (int64_t n = 0; n < N; ++n) {
      const T* in = X + (n * C + c) * inner;
      T* out = Y + (n * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] = Store<T>(Load(in[i]) * a + b);
    }
  }
  return Status::Ok();
}

// ---- LayerNormalization ----------------------------------------------------

// Strides of t over x's dims (right-aligned, 0 where t broadcasts), or
// INVALID_ARGUMENT when t does not broadcast to x's shape.
Status BroadcastStrides(KernelContext& ctx, const TensorRef& t, const TensorRef& x,
                        const char* what, int64_t* strides) {
  bool ok = t.rank <= x.rank;
  int64_t s = 1;
  for (uint32_t i = x.rank; ok && i-- > 0;) {
    const uint32_t back = x.rank - 1 - i;
    if (back >= t.rank) {
      strides[i] = 0;
      continue;
    }
    const int64_t d = t.dims[t.rank - 1 - back];
    if (d != 1 && d != x.dims[i]) ok = false;
    strides[i] = d == 1 ? 0 : s;
    // An empty t's huge dims beside its zero would overflow; its strides
    // address nothing (X is empty too), so they may stay as they are.
    if (__builtin_mul_overflow(s, d, &s)) s = 0;
  }
  if (!ok)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s shape %s does not broadcast to X shape %s", what,
                    ShapeOf(t).s, ShapeOf(x).s);
  return Status::Ok();
}

// Input t converted to A in scratch (nullptr stays nullptr).
template <typename A>
Status ToScratch(KernelContext& ctx, const TensorRef* t, const A** out) {
  *out = nullptr;
  if (!t) return Status::Ok();
  A* p;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, t->elements(), &p));
  for (uint64_t i = 0; i < t->elements(); ++i) p[i] = LoadAs<A>(*t, i);
  *out = p;
  return Status::Ok();
}

template <typename T>
Status LayerNormT(KernelContext& ctx, const TensorRef& x, int64_t axis, float epsilon,
                  const TensorRef& scale, const int64_t* sstr, const TensorRef* bias,
                  const int64_t* bstr, TensorRef* y, TensorRef* mean_out, TensorRef* inv_out) {
  using A = Compute<T>;
  const A *sc, *bi;
  EPCTX_RETURN_IF_ERROR(ToScratch(ctx, &scale, &sc));
  EPCTX_RETURN_IF_ERROR(ToScratch(ctx, bias, &bi));
  int64_t outer = 1, norm = 1;
  Product(x.dims, 0, static_cast<uint32_t>(axis), &outer);
  Product(x.dims, static_cast<uint32_t>(axis), x.rank, &norm);
  // An empty X may have huge dims beside its zero: with no Mean/InvStdDev
  // to fill (whose allocation bounds `outer`) there is nothing to walk.
  if (x.elements() == 0 && !mean_out && !inv_out) return Status::Ok();
  const T* X = static_cast<const T*>(x.data);
  T* Y = static_cast<T*>(y->data);
  int64_t idx[kMaxRank] = {};
  int64_t so = 0, bo = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* in = X + o * norm;
    A s = 0;
    for (int64_t i = 0; i < norm; ++i) s += Load(in[i]);
    const A mu = s / static_cast<A>(norm);
    A q = 0;
    for (int64_t i = 0; i < norm; ++i) {
      const A d = Load(in[i]) - mu;
      q += d * d;
    }
    // Divided by the deviation, as ONNX Runtime's kernel and the decomposed
    // graph's Div do (a reciprocal's rounding moved a dynamically quantised
    // encoder past its tolerance).
    const A sd = Sqrt(q / static_cast<A>(norm) + static_cast<A>(epsilon));
    if (mean_out) StoreAs(mean_out, o, mu);
    if (inv_out) StoreAs(inv_out, o, A(1) / sd);
    T* out = Y + o * norm;
    for (int64_t i = 0; i < norm; ++i) {
      A v = (Load(in[i]) - mu) / sd * sc[so];
      if (bi) v += bi[bo];
      out[i] = Store<T>(v);
      NextIndex(x.rank, x.dims, idx, sstr, &so, bstr, &bo);
    }
  }
  return Status::Ok();
}

// ---- InstanceNormalization ---------------------------------------------------

template <typename T>
Status InstanceNormT(KernelContext& ctx, const TensorRef& x, TensorRef* y) {
  using A = Compute<T>;
  const int64_t N = x.dims[0], C = x.dims[1];
  int64_t inner = 1;
  Product(x.dims, 2, x.rank, &inner);
  A *scale, *bias;
  EPCTX_RETURN_IF_ERROR(ChannelParam(ctx, 1, "scale", C, &scale));
  EPCTX_RETURN_IF_ERROR(ChannelParam(ctx, 2, "B", C, &bias));
  const A eps = static_cast<A>(ctx.AttrFloat("epsilon", 1e-5f));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const T* in = static_cast<const T*>(x.data) + (n * C + c) * inner;
      T* out = static_cast<T*>(y->data) + (n * C + c) * inner;
      A s = 0;
      for (int64_t i = 0; i < inner; ++i) s += Load(in[i]);
      const A mu = s / static_cast<A>(inner);
      A q = 0;
      for (int64_t i = 0; i < inner; ++i) {
        const A d = Load(in[i]) - mu;
        q += d * d;
      }
      const A a = scale[c] / Sqrt(q / static_cast<A>(inner) + eps);
      for (int64_t i = 0; i < inner; ++i) out[i] = Store<T>((Load(in[i]) - mu) * a + bias[c]);
    }
  }
  return Status::Ok();
}

// ---- LRN ---------------------------------------------------------------------

template <typename T>
void LrnT(const TensorRef& x, int64_t size, float alpha, float beta, float bias, TensorRef* y) {
  using A = Compute<T>;
  const int64_t N = x.dims[0], C = x.dims[1];
  int64_t inner = 1;
  Product(x.dims, 2, x.rank, &inner);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const T* X = static_cast<const T*>(x.data);
  T* Y = static_cast<T*>(y->data);
  const A k = static_cast<A>(alpha) / static_cast<A>(size);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const int64_t lo = c > before ? c - before : 0;
      const int64_t hi = c + after < C - 1 ? c + after : C - 1;
      for (int64_t i = 0; i < inner; ++i) {
        A sq = 0;
        for (int64_t j = lo; j <= hi; ++j) {
          const A v = Load(X[(n * C + j) * inner + i]);
          sq += v * v;
        }
        const int64_t at = (n * C + c) * inner + i;
        Y[at] = Store<T>(Load(X[at]) * Pow(static_cast<A>(bias) + k * sq, -static_cast<A>(beta)));
      }
    }
  }
}

// ---- MeanVarianceNormalization -------------------------------------------------

template <typename T>
void MvnT(const TensorRef& x, const ReduceLayout& l, TensorRef* y) {
  using A = Compute<T>;
  const T* X = static_cast<const T*>(x.data);
  T* Y = static_cast<T*>(y->data);
  const A n = static_cast<A>(l.group);
  ForEachGroup(l, [&](int64_t, int64_t base) {
    A s = 0;
    ForEachInGroup(l, base, [&](int64_t i) { s += Load(X[i]); });
    const A mu = s / n;
    A q = 0;
    ForEachInGroup(l, base, [&](int64_t i) {
      const A d = Load(X[i]) - mu;
      q += d * d;
    });
    const A denom = Sqrt(q / n) + static_cast<A>(1e-9);
    ForEachInGroup(l, base, [&](int64_t i) { Y[i] = Store<T>((Load(X[i]) - mu) / denom); });
  });
}

}  // namespace

Status BatchNormalization(KernelContext& ctx) {
  const bool training = ctx.opset() >= 14 && ctx.AttrInt("training_mode", 0) != 0;
  for (uint32_t i = 1; i < ctx.num_outputs(); ++i) {
    if (!Wanted(ctx, i) || training) continue;
    if (ctx.opset() < 14)
      return ctx.Fail(EPCTX_NOT_IMPLEMENTED,
                      "training output %u of opset %lld (before 14) is not supported", i,
                      static_cast<long long>(ctx.opset()));
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "output %u (running mean/var) needs training_mode=1, found 0", i);
  }
  if (ctx.opset() < 9 && ctx.AttrInt("spatial", 1) == 0)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "spatial=0 is not supported");
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(ChannelInput(ctx, 2, &x));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  Status st = Status::Ok();
  Dispatch<kFloats>(x->dtype,
                    [&](auto tag) { st = BatchNormT<decltype(tag)>(ctx, *x, training, y); });
  return st;
}

Status LayerNormalization(KernelContext& ctx) {
  const TensorRef *x, *scale;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "Scale", &scale));
  const TensorRef* bias = ctx.input(2);
  if (!InMask(x->dtype, kFloats)) return UnsupportedDtype(ctx, "X", x->dtype);
  if (!InMask(scale->dtype, kFloats)) return UnsupportedDtype(ctx, "Scale", scale->dtype);
  if (bias && !InMask(bias->dtype, kFloats)) return UnsupportedDtype(ctx, "B", bias->dtype);
  int64_t axis;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", -1), x->rank, "axis", &axis));
  const int64_t stash = ctx.AttrInt("stash_type", EPCTX_DTYPE_FLOAT);
  if (stash < 0 || stash > 31 || !InMask(static_cast<int32_t>(stash), kFloats))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "stash_type %lld is not a float type (expected 1, 10, 11 or 16)",
                    static_cast<long long>(stash));
  int64_t sstr[kMaxRank], bstr[kMaxRank] = {};
  EPCTX_RETURN_IF_ERROR(BroadcastStrides(ctx, *scale, *x, "Scale", sstr));
  if (bias) EPCTX_RETURN_IF_ERROR(BroadcastStrides(ctx, *bias, *x, "B", bstr));
  TensorRef *y = nullptr, *mean = nullptr, *inv = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  int64_t sdims[kMaxRank];
  for (uint32_t i = 0; i < x->rank; ++i) sdims[i] = static_cast<int64_t>(i) < axis ? x->dims[i] : 1;
  if (Wanted(ctx, 1))
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(1, static_cast<int32_t>(stash), x->rank, sdims, &mean));
  if (Wanted(ctx, 2))
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(2, static_cast<int32_t>(stash), x->rank, sdims, &inv));
  const float eps = ctx.AttrFloat("epsilon", 1e-5f);
  Status st = Status::Ok();
  Dispatch<kFloats>(x->dtype, [&](auto tag) {
    st = LayerNormT<decltype(tag)>(ctx, *x, axis, eps, *scale, sstr, bias, bstr, y, mean, inv);
  });
  return st;
}

Status InstanceNormalization(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(ChannelInput(ctx, 3, &x));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  Status st = Status::Ok();
  Dispatch<kFloats>(x->dtype, [&](auto tag) { st = InstanceNormT<decltype(tag)>(ctx, *x, y); });
  return st;
}

Status LRN(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(ChannelInput(ctx, 2, &x));
  const int64_t size = ctx.AttrInt("size", 0);
  if (size <= 0)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute size must be a positive integer, found %lld",
                    static_cast<long long>(size));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  const float alpha = ctx.AttrFloat("alpha", 1e-4f), beta = ctx.AttrFloat("beta", 0.75f);
  const float bias = ctx.AttrFloat("bias", 1.0f);
  Dispatch<kFloats>(x->dtype,
                    [&](auto tag) { LrnT<decltype(tag)>(*x, size, alpha, beta, bias, y); });
  return Status::Ok();
}

Status MeanVarianceNormalization(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  if (!InMask(x->dtype, kFloats)) return UnsupportedDtype(ctx, "X", x->dtype);
  int64_t axes[kMaxRank] = {0, 2, 3};
  uint32_t naxes = 3;
  bool present = false;
  EPCTX_RETURN_IF_ERROR(ReadIntsAttr(ctx, "axes", axes, &naxes, &present));
  if (!present) {
    axes[0] = 0, axes[1] = 2, axes[2] = 3;
    naxes = 3;
  }
  bool reduced[kMaxRank] = {};
  for (uint32_t i = 0; i < naxes; ++i) {
    int64_t a;
    EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, axes[i], x->rank, "axes value", &a));
    if (reduced[a])
      return ctx.Fail(EPCTX_INVALID_GRAPH, "axis %lld is listed twice in axes",
                      static_cast<long long>(a));
    reduced[a] = true;
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  // Nothing to normalise; the layout of an empty input with huge dims
  // beside its zero would walk them all.
  if (x->elements() == 0) return Status::Ok();
  ReduceLayout l;
  MakeReduceLayout(x->rank, x->dims, reduced, &l);
  Dispatch<kFloats>(x->dtype, [&](auto tag) { MvnT<decltype(tag)>(*x, l, y); });
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
