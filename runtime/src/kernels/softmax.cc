// SPDX-License-Identifier: Apache-2.0
// Softmax, LogSoftmax, Hardmax for float, double, float16 and bfloat16
// (the 16-bit types computed in float, rounded once on store).
//
// Before opset 13 the input is coerced to 2-D at `axis` (default 1) and the
// op runs over each row of prod(dims[axis:]) elements; from 13 it runs along
// the one axis (default -1). A scalar is a one-element group. Hardmax marks
// the first maximum of each group with 1.
#include <cmath>
#include <type_traits>

#include "epctx_uk/elementwise.h"
#include "kernels/elem.h"
#include "kernels/float_math.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

enum class Kind { kSoftmax, kLogSoftmax, kHardmax };

// The op over groups of `len` elements spaced `stride` apart: outer blocks
// of len * stride elements, each holding `stride` groups.
template <typename T, Kind K>
void Run(const T* in, T* out, int64_t outer, int64_t len, int64_t stride) {
  using A = Compute<T>;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < stride; ++s) {
      const T* x = in + o * len * stride + s;
      T* y = out + o * len * stride + s;
      A m = Load(x[0]);
      int64_t arg = 0;
      for (int64_t i = 1; i < len; ++i) {
        const A v = Load(x[i * stride]);
        if (v > m) {
          m = v;
          arg = i;
        }
      }
      if (K == Kind::kHardmax) {
        for (int64_t i = 0; i < len; ++i) y[i * stride] = Store<T>(A(i == arg ? 1 : 0));
        continue;
      }
      A sum = 0;
      if constexpr (std::is_same<T, A>::value) {
        // Keep the exponentials in the output, then scale.
        for (int64_t i = 0; i < len; ++i) {
          const A e = Exp(x[i * stride] - m);
          if (K == Kind::kSoftmax) y[i * stride] = e;
          sum += e;
        }
        if (K == Kind::kSoftmax) {
          const A inv = A(1) / sum;
          for (int64_t i = 0; i < len; ++i) y[i * stride] *= inv;
        }
      } else {
        for (int64_t i = 0; i < len; ++i) sum += Exp(Load(x[i * stride]) - m);
        if (K == Kind::kSoftmax) {
          const A inv = A(1) / sum;
          for (int64_t i = 0; i < len; ++i)
            y[i * stride] = Store<T>(Exp(Load(x[i * stride]) - m) * inv);
        }
      }
      if (K == Kind::kLogSoftmax) {
        const A ls = Log(sum);
        for (int64_t i = 0; i < len; ++i) y[i * stride] = Store<T>(Load(x[i * stride]) - m - ls);
      }
    }
  }
}

template <Kind K>
Status SoftmaxOp(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  if (!InMask(x->dtype, kFloats)) return UnsupportedDtype(ctx, "input", x->dtype);
  const bool per_axis = ctx.opset() >= 13;
  const int64_t rank = x->rank;
  int64_t axis = 0;
  EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, ctx.AttrInt("axis", per_axis ? -1 : 1),
                                      rank == 0 ? 1 : rank, "axis", &axis));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  if (y->elements() == 0) return Status::Ok();
  int64_t outer = 1, len = 1, stride = 1;
  const uint32_t a = static_cast<uint32_t>(axis);
  if (rank == 0) {
    // A scalar is a one-element group.
  } else if (per_axis) {
    Product(x->dims, 0, a, &outer);
    len = x->dims[a];
    Product(x->dims, a + 1, x->rank, &stride);
  } else {
    Product(x->dims, 0, a, &outer);
    Product(x->dims, a, x->rank, &len);
  }
  if (K == Kind::kSoftmax && x->dtype == EPCTX_DTYPE_FLOAT && stride == 1) {
    // Rows of the last axis (attention scores): vector rows, split by row.
    const float* in = static_cast<const float*>(x->data);
    float* out = static_cast<float*>(y->data);
    ctx.ParallelRange(outer, len * 16, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) uk::SoftmaxRow(in + o * len, out + o * len, len);
    });
    return Status::Ok();
  }
  Dispatch<kFloats>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    Run<T, K>(static_cast<const T*>(x->data), static_cast<T*>(y->data), outer, len, stride);
  });
  return Status::Ok();
}

}  // namespace

Status Softmax(KernelContext& ctx) { return SoftmaxOp<Kind::kSoftmax>(ctx); }
Status LogSoftmax(KernelContext& ctx) { return SoftmaxOp<Kind::kLogSoftmax>(ctx); }
Status Hardmax(KernelContext& ctx) { return SoftmaxOp<Kind::kHardmax>(ctx); }

}  // namespace kern
}  // namespace epctx
