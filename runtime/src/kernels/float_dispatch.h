/* SPDX-License-Identifier: Apache-2.0 */
// DispatchFloat: DispatchType over float, double, float16 and bfloat16 that
// instantiates f for those four types only, so float-only kernel templates
// (libm calls, Store<T> of a computed value) never see integer or bool
// types. Returns false for any other dtype.
#ifndef EPCTX_KERNELS_FLOAT_DISPATCH_H
#define EPCTX_KERNELS_FLOAT_DISPATCH_H

#include <cmath>
#include <type_traits>

#include "kernels/elem.h"

namespace epctx {
namespace kern {

template <typename F>
bool DispatchFloat(int32_t dtype, F&& f) {
  switch (dtype) {
    case EPCTX_DTYPE_FLOAT: f(float{}); return true;
    case EPCTX_DTYPE_DOUBLE: f(double{}); return true;
    case EPCTX_DTYPE_FLOAT16: f(Half{}); return true;
    case EPCTX_DTYPE_BFLOAT16: f(BFloat16{}); return true;
    default: return false;
  }
}

inline bool IsFloatType(int32_t dtype) {
  return dtype == EPCTX_DTYPE_FLOAT || dtype == EPCTX_DTYPE_DOUBLE ||
         dtype == EPCTX_DTYPE_FLOAT16 || dtype == EPCTX_DTYPE_BFLOAT16;
}

// libm in a compute type (double, else float).
template <typename A>
A Exp(A v) {
  if constexpr (std::is_same<A, double>::value) return exp(v);
  else return expf(v);
}
template <typename A>
A Log(A v) {
  if constexpr (std::is_same<A, double>::value) return log(v);
  else return logf(v);
}
template <typename A>
A Sqrt(A v) {
  if constexpr (std::is_same<A, double>::value) return sqrt(v);
  else return sqrtf(v);
}
template <typename A>
A Pow(A a, A b) {
  if constexpr (std::is_same<A, double>::value) return pow(a, b);
  else return powf(a, b);
}

}  // namespace kern
}  // namespace epctx

#endif
