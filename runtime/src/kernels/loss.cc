// SPDX-License-Identifier: Apache-2.0
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (float, double,
// float16, bfloat16; int32 or int64 labels).
//
// Input is [N, C, d1..dk] (k >= 0), labels [N, d1..dk], weight [C]. Both ops
// view the input as [N, C, D] with D = d1*...*dk, so the class axis has
// stride D. SCE first takes log-softmax over C (max-shifted, in float for the
// 16-bit types, kept in scratch so the loss reads unrounded values), writes
// it to the optional log_prob output, then runs the NLL core on it.
//
// As ONNX Runtime: element loss = -logp[n, t, d] * weight[t] (0 where
// t == ignore_index), summed in double; mean divides by the sum of the weights
// of the labels not ignored (their count without weight) and, when that is 0,
// returns the plain sum rather than NaN. A label outside [0, C) that is not
// ignore_index is INVALID_ARGUMENT (ORT, whose ignore_index defaults to -1,
// silently ignores -1 even when the attribute is absent; the spec does not).
#include <cmath>
#include <limits>

#include "kernels/elem.h"
#include "kernels/float_math.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossArgs {
  const TensorRef *input, *target, *weight;
  int64_t N, C, D;
  Reduction reduction;
  bool has_ignore;
  int64_t ignore_index;
};

// Reads the attributes and checks the shapes shared by both ops.
Status ReadLoss(KernelContext& ctx, const char* in_name, const char* target_name,
                const char* weight_name, LossArgs* a) {
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, in_name, &a->input));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, target_name, &a->target));
  a->weight = ctx.input(2);
  const TensorRef& x = *a->input;
  const TensorRef& t = *a->target;
  constexpr uint32_t kTypes = kFloats;
  if (!InMask(x.dtype, kTypes)) return UnsupportedDtype(ctx, in_name, x.dtype);
  if (t.dtype != EPCTX_DTYPE_INT32 && t.dtype != EPCTX_DTYPE_INT64)
    return UnsupportedDtype(ctx, target_name, t.dtype);
  const StrView r = ctx.AttrString("reduction", "mean");
  if (r.eq("none")) {
    a->reduction = Reduction::kNone;
  } else if (r.eq("sum")) {
    a->reduction = Reduction::kSum;
  } else if (r.eq("mean")) {
    a->reduction = Reduction::kMean;
  } else {
    return ctx.Fail(EPCTX_INVALID_GRAPH, "reduction is '%.*s', expected none, sum or mean", r.len(),
                    r.data);
  }
  a->has_ignore = ctx.node().attr("ignore_index") != nullptr;
  a->ignore_index = ctx.AttrInt("ignore_index", 0);
  bool ok = x.rank >= 2 && t.rank + 1 == x.rank && t.dims[0] == x.dims[0];
  for (uint32_t i = 1; ok && i < t.rank; ++i) ok = t.dims[i] == x.dims[i + 1];
  if (!ok)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "%s %s must be [N, C, d1..dk] (rank >= 2) and %s [N, d1..dk], found %s",
                    in_name, ShapeOf(x).s, target_name, ShapeOf(t).s);
  a->N = x.dims[0];
  a->C = x.dims[1];
  Product(x.dims, 2, x.rank, &a->D);
  if (a->weight) {
    const TensorRef& w = *a->weight;
    if (w.dtype != x.dtype)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has dtype %s, expected %s's %s", weight_name,
                      dtype_name(w.dtype), in_name, dtype_name(x.dtype));
    if (w.rank != 1 || w.dims[0] != a->C)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must have shape [%lld], found %s", weight_name,
                      static_cast<long long>(a->C), ShapeOf(w).s);
  }
  return Status::Ok();
}

// The loss from log-probabilities logp ([N, C, D], element type P) into
// output 0 of type T.
template <typename T, typename P>
Status NllCore(KernelContext& ctx, const LossArgs& a, const P* logp) {
  TensorRef* out = nullptr;
  if (a.reduction == Reduction::kNone) {
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, a.input->dtype, a.target->rank, a.target->dims, &out));
  } else {
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, a.input->dtype, 0, nullptr, &out));
  }
  T* y = static_cast<T*>(out->data);
  const T* weight = a.weight ? static_cast<const T*>(a.weight->data) : nullptr;
  const int64_t N = a.N, C = a.C, D = a.D;
  double sum = 0.0, wsum = 0.0;
  Status st = Status::Ok();
  Dispatch<kIndexInts>(a.target->dtype, [&](auto tag) {
    using L = decltype(tag);
    const L* labels = static_cast<const L*>(a.target->data);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t t = labels[n * D + d];
        double l = 0.0;
        if (!(a.has_ignore && t == a.ignore_index)) {
          if (t < 0 || t >= C) {
            st = ctx.Fail(EPCTX_INVALID_ARGUMENT,
                          "label %lld at position %lld is outside [0, %lld) and is not "
                          "ignore_index",
                          static_cast<long long>(t), static_cast<long long>(n * D + d),
                          static_cast<long long>(C));
            return;
          }
          const double w = weight ? static_cast<double>(Load(weight[t])) : 1.0;
          l = -static_cast<double>(Load(logp[(n * C + t) * D + d])) * w;
          wsum += w;
        }
        if (a.reduction == Reduction::kNone) y[n * D + d] = Store<T>(static_cast<Compute<T>>(l));
        else sum += l;
      }
  });
  EPCTX_RETURN_IF_ERROR(st);
  if (a.reduction == Reduction::kMean && wsum != 0.0) sum /= wsum;
  if (a.reduction != Reduction::kNone) y[0] = Store<T>(static_cast<Compute<T>>(sum));
  return Status::Ok();
}

}  // namespace

Status NegativeLogLikelihoodLoss(KernelContext& ctx) {
  LossArgs a;
  EPCTX_RETURN_IF_ERROR(ReadLoss(ctx, "input", "target", "weight", &a));
  Status st = Status::Ok();
  Dispatch<kFloats>(a.input->dtype, [&](auto tag) {
    using T = decltype(tag);
    st = NllCore<T>(ctx, a, static_cast<const T*>(a.input->data));
  });
  return st;
}

Status SoftmaxCrossEntropyLoss(KernelContext& ctx) {
  LossArgs a;
  EPCTX_RETURN_IF_ERROR(ReadLoss(ctx, "scores", "labels", "weights", &a));
  Status st = Status::Ok();
  Dispatch<kFloats>(a.input->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    const int64_t N = a.N, Cn = a.C, D = a.D;
    const uint64_t total = a.input->elements();
    C *lp = nullptr, *mx = nullptr, *sm = nullptr;
    st = ScratchArray(ctx, total ? total : 1, &lp);
    if (st.ok()) st = ScratchArray(ctx, static_cast<uint64_t>(D ? D : 1), &mx);
    if (st.ok()) st = ScratchArray(ctx, static_cast<uint64_t>(D ? D : 1), &sm);
    if (!st.ok()) return;
    const T* x = static_cast<const T*>(a.input->data);
    for (int64_t n = 0; n < N; ++n) {
      const T* xn = x + n * Cn * D;
      C* ln = lp + n * Cn * D;
      for (int64_t d = 0; d < D; ++d) {
        mx[d] = -std::numeric_limits<C>::infinity();
        sm[d] = C(0);
      }
      for (int64_t c = 0; c < Cn; ++c)
        for (int64_t d = 0; d < D; ++d) {
          const C v = Load(xn[c * D + d]);
          mx[d] = v > mx[d] ? v : mx[d];
        }
      for (int64_t c = 0; c < Cn; ++c)
        for (int64_t d = 0; d < D; ++d) {
          ln[c * D + d] = Load(xn[c * D + d]) - mx[d];
          sm[d] += Exp(ln[c * D + d]);
        }
      for (int64_t d = 0; d < D; ++d) sm[d] = Log(sm[d]);
      for (int64_t c = 0; c < Cn; ++c)
        for (int64_t d = 0; d < D; ++d) ln[c * D + d] -= sm[d];
    }
    if (ctx.num_outputs() > 1) {
      TensorRef* out = nullptr;
      st = ctx.AllocOutput(1, a.input->dtype, a.input->rank, a.input->dims, &out);
      if (!st.ok()) return;
      T* o = static_cast<T*>(out->data);
      for (uint64_t i = 0; i < total; ++i) o[i] = Store<T>(lp[i]);
    }
    st = NllCore<T>(ctx, a, lp);
  });
  return st;
}

}  // namespace kern
}  // namespace epctx
