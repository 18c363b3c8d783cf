// SPDX-License-Identifier: Apache-2.0
// Det: determinants of the square matrices in the last two axes, by LU
// decomposition with partial pivoting computed in double (float, double,
// float16 and bfloat16 in and out). An empty matrix has determinant 1.
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

inline double Abs(double v) { return v < 0 ? -v : v; }

}  // namespace

Status Det(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  const uint32_t r = x->rank;
  if (r < 2 || x->dims[r - 1] != x->dims[r - 2])
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "X must have shape [*, M, M] (square in the last two axes), found %s",
                    ShapeOf(*x).s);
  const int64_t m = x->dims[r - 1];
  int64_t mm = 0, batches = 1;
  if (!MulOk(m, m, &mm))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "X %s is too large", ShapeOf(*x).s);
  Product(x->dims, 0, r - 2, &batches);
  Status st = Status::Ok();
  const bool ok = Dispatch<kFloats>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      TensorRef* y = nullptr;
      st = ctx.AllocOutput(0, x->dtype, r - 2, x->dims, &y);
      if (!st.ok()) return;
      double* a = nullptr;
      if (batches > 0) {
        st = ScratchArray(ctx, static_cast<uint64_t>(mm), &a);
        if (!st.ok()) return;
      }
      const T* src = static_cast<const T*>(x->data);
      T* out = static_cast<T*>(y->data);
      for (int64_t b = 0; b < batches; ++b) {
        for (int64_t i = 0; i < mm; ++i) a[i] = static_cast<double>(Load(src[b * mm + i]));
        double det = 1.0;
        for (int64_t c = 0; c < m && det != 0.0; ++c) {
          int64_t p = c;
          for (int64_t i = c + 1; i < m; ++i)
            if (Abs(a[i * m + c]) > Abs(a[p * m + c])) p = i;
          if (a[p * m + c] == 0.0) {
            det = 0.0;
            break;
          }
          if (p != c) {
            for (int64_t j = 0; j < m; ++j) {
              const double t = a[c * m + j];
              a[c * m + j] = a[p * m + j];
              a[p * m + j] = t;
            }
            det = -det;
          }
          const double piv = a[c * m + c];
          det *= piv;
          for (int64_t i = c + 1; i < m; ++i) {
            const double f = a[i * m + c] / piv;
            for (int64_t j = c + 1; j < m; ++j) a[i * m + j] -= f * a[c * m + j];
          }
        }
        out[b] = Store<T>(static_cast<Compute<T>>(det));
      }
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "X", x->dtype);
  return st;
}

}  // namespace kern
}  // namespace epctx
