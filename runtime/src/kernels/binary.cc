// Elementwise binary ops with numpy broadcasting: Add, Sub, Mul, Div (float,
// int32, int64), Pow (float base; float or int exponent), and variadic Max,
// Min (float, int32, int64). Integer arithmetic wraps like two's complement
// instead of overflowing (signed overflow would be undefined behaviour);
// integer division by zero is INVALID_ARGUMENT.
#include <cmath>

#include "kernels/broadcast.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

template <typename T>
struct Unsigned;
template <> struct Unsigned<int32_t> { using type = uint32_t; };
template <> struct Unsigned<int64_t> { using type = uint64_t; };

template <typename T, typename Op>
void RunRows(const Broadcast& bc, const T* a, const T* b, T* out) {
  ForEachRow(bc, [&](int64_t oa, int64_t ob, int64_t oo, int64_t n, int64_t da,
                     int64_t db) {
    const T* __restrict pa = a + oa;
    const T* __restrict pb = b + ob;
    T* po = out + oo;  // may alias pa (in-place variadic fold)
    if (da == 1 && db == 1) {
      for (int64_t i = 0; i < n; ++i) po[i] = Op::Apply(pa[i], pb[i]);
    } else if (da == 0 && db == 1) {
      const T va = pa[0];
      for (int64_t i = 0; i < n; ++i) po[i] = Op::Apply(va, pb[i]);
    } else if (da == 1) {
      const T vb = pb[0];
      for (int64_t i = 0; i < n; ++i) po[i] = Op::Apply(pa[i], vb);
    } else {
      const T v = Op::Apply(pa[0], pb[0]);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    }
  });
}

struct AddOp {
  static float Apply(float a, float b) { return a + b; }
  template <typename T> static T Apply(T a, T b) {
    using U = typename Unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
};
struct SubOp {
  static float Apply(float a, float b) { return a - b; }
  template <typename T> static T Apply(T a, T b) {
    using U = typename Unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  }
};
struct MulOp {
  static float Apply(float a, float b) { return a * b; }
  template <typename T> static T Apply(T a, T b) {
    using U = typename Unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
};
struct DivOp {
  static float Apply(float a, float b) { return a / b; }
  // Divisors were checked for zero; MIN / -1 wraps to MIN.
  template <typename T> static T Apply(T a, T b) {
    using U = typename Unsigned<T>::type;
    return b == -1 ? static_cast<T>(U(0) - static_cast<U>(a)) : a / b;
  }
};
struct PowOp {
  static float Apply(float a, float b) { return powf(a, b); }
};
struct MaxOp {
  template <typename T> static T Apply(T a, T b) { return a < b ? b : a; }
};
struct MinOp {
  template <typename T> static T Apply(T a, T b) { return b < a ? b : a; }
};
struct TakeB {
  template <typename T> static T Apply(T, T b) { return b; }
};

template <typename T>
bool HasZero(const TensorRef& t) {
  const T* p = static_cast<const T*>(t.data);
  const uint64_t n = t.elements();
  for (uint64_t i = 0; i < n; ++i)
    if (p[i] == 0) return true;
  return false;
}

template <typename Op>
Status Arith(KernelContext& ctx, bool is_div) {
  const TensorRef *a, *b;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "A", &a));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "B", &b));
  if (a->dtype != b->dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "A is %s but B is %s; expected one type",
                    dtype_name(a->dtype), dtype_name(b->dtype));
  const int32_t dt = a->dtype;
  if (dt != EPCTX_DTYPE_FLOAT && dt != EPCTX_DTYPE_INT32 && dt != EPCTX_DTYPE_INT64)
    return UnsupportedDtype(ctx, "A", dt);
  Broadcast bc;
  EPCTX_RETURN_IF_ERROR(MakeBroadcast(ctx, a->rank, a->dims, b->rank, b->dims, &bc));
  if (is_div && ((dt == EPCTX_DTYPE_INT32 && HasZero<int32_t>(*b)) ||
                 (dt == EPCTX_DTYPE_INT64 && HasZero<int64_t>(*b))))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "integer division by zero (divisor B %s)",
                    ShapeOf(*b).s);
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, dt, bc.out_rank, bc.out_dims, &y));
  if (y->elements() == 0) return Status::Ok();
  switch (dt) {
    case EPCTX_DTYPE_FLOAT:
      RunRows<float, Op>(bc, static_cast<const float*>(a->data),
                         static_cast<const float*>(b->data), static_cast<float*>(y->data));
      break;
    case EPCTX_DTYPE_INT32:
      RunRows<int32_t, Op>(bc, static_cast<const int32_t*>(a->data),
                           static_cast<const int32_t*>(b->data),
                           static_cast<int32_t*>(y->data));
      break;
    default:
      RunRows<int64_t, Op>(bc, static_cast<const int64_t*>(a->data),
                           static_cast<const int64_t*>(b->data),
                           static_cast<int64_t*>(y->data));
      break;
  }
  return Status::Ok();
}

template <typename T, typename Op>
Status FoldInto(KernelContext& ctx, const TensorRef& out) {
  T* y = static_cast<T*>(out.data);
  for (uint32_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorRef* in = ctx.input(i);
    Broadcast bc;
    EPCTX_RETURN_IF_ERROR(
        MakeBroadcast(ctx, out.rank, out.dims, in->rank, in->dims, &bc));
    const T* src = static_cast<const T*>(in->data);
    if (i == 0) {
      RunRows<T, TakeB>(bc, y, src, y);
    } else {
      RunRows<T, Op>(bc, y, src, y);
    }
  }
  return Status::Ok();
}

template <typename Op>
Status Variadic(KernelContext& ctx) {
  if (ctx.num_inputs() == 0)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "expected at least one input, found none");
  const TensorRef* first;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data_0", &first));
  const int32_t dt = first->dtype;
  if (dt != EPCTX_DTYPE_FLOAT && dt != EPCTX_DTYPE_INT32 && dt != EPCTX_DTYPE_INT64)
    return UnsupportedDtype(ctx, "data_0", dt);
  uint32_t rank = first->rank;
  int64_t dims[kMaxRank];
  for (uint32_t d = 0; d < rank; ++d) dims[d] = first->dims[d];
  for (uint32_t i = 1; i < ctx.num_inputs(); ++i) {
    const TensorRef* in;
    EPCTX_RETURN_IF_ERROR(Input(ctx, i, "data", &in));
    if (in->dtype != dt)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input %u is %s, expected %s like input 0",
                      i, dtype_name(in->dtype), dtype_name(dt));
    int64_t next[kMaxRank];
    EPCTX_RETURN_IF_ERROR(BroadcastShape(ctx, rank, dims, in->rank, in->dims, &rank, next));
    for (uint32_t d = 0; d < rank; ++d) dims[d] = next[d];
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, dt, rank, dims, &y));
  if (y->elements() == 0) return Status::Ok();
  if (dt == EPCTX_DTYPE_FLOAT) return FoldInto<float, Op>(ctx, *y);
  if (dt == EPCTX_DTYPE_INT32) return FoldInto<int32_t, Op>(ctx, *y);
  return FoldInto<int64_t, Op>(ctx, *y);
}

}  // namespace

Status Add(KernelContext& ctx) { return Arith<AddOp>(ctx, false); }
Status Sub(KernelContext& ctx) { return Arith<SubOp>(ctx, false); }
Status Mul(KernelContext& ctx) { return Arith<MulOp>(ctx, false); }
Status Div(KernelContext& ctx) { return Arith<DivOp>(ctx, true); }
Status Max(KernelContext& ctx) { return Variadic<MaxOp>(ctx); }
Status Min(KernelContext& ctx) { return Variadic<MinOp>(ctx); }

Status Pow(KernelContext& ctx) {
  const TensorRef *x, *e;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "Y", &e));
  Broadcast bc;
  EPCTX_RETURN_IF_ERROR(MakeBroadcast(ctx, x->rank, x->dims, e->rank, e->dims, &bc));
  const float* exps = nullptr;
  const uint64_t ne = e->elements();
  if (e->dtype == EPCTX_DTYPE_FLOAT) {
    exps = static_cast<const float*>(e->data);
  } else if (e->dtype == EPCTX_DTYPE_INT32 || e->dtype == EPCTX_DTYPE_INT64 ||
             e->dtype == EPCTX_DTYPE_DOUBLE) {
    // Mixed-type exponent (allowed from opset 12): convert once.
    float* conv = nullptr;
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, ne, &conv));
    for (uint64_t i = 0; i < ne; ++i) {
      if (e->dtype == EPCTX_DTYPE_INT32)
        conv[i] = static_cast<float>(static_cast<const int32_t*>(e->data)[i]);
      else if (e->dtype == EPCTX_DTYPE_INT64)
        conv[i] = static_cast<float>(static_cast<const int64_t*>(e->data)[i]);
      else
        conv[i] = static_cast<float>(static_cast<const double*>(e->data)[i]);
    }
    exps = conv;
  } else {
    return UnsupportedDtype(ctx, "exponent Y", e->dtype);
  }
  TensorRef* z = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, bc.out_rank, bc.out_dims, &z));
  if (z->elements() == 0) return Status::Ok();
  const float* X = static_cast<const float*>(x->data);
  float* Z = static_cast<float*>(z->data);
  const uint64_t n = z->elements();
  if (ne == 1 && exps[0] == 2.0f && n == x->elements()) {
    // x^2, the common case, exactly and without powf.
    for (uint64_t i = 0; i < n; ++i) Z[i] = X[i] * X[i];
    return Status::Ok();
  }
  RunRows<float, PowOp>(bc, X, exps, Z);
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
