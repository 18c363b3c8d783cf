/* SPDX-License-Identifier: Apache-2.0 */
// libm in a kernel's compute type (Compute<T>: double for double, else
// float), for templates over the float dtypes (Dispatch<kFloats>).
#ifndef EPCTX_KERNELS_FLOAT_MATH_H
#define EPCTX_KERNELS_FLOAT_MATH_H

#include <cmath>
#include <type_traits>

#include "kernels/elem.h"

namespace epctx {
namespace kern {

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
A Tanh(A v) {
  if constexpr (std::is_same<A, double>::value) return tanh(v);
  else return tanhf(v);
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
