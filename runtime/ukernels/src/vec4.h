/* SPDX-License-Identifier: Apache-2.0 */
// The portable 4-float vector (GCC/Clang generic vectors: SSE2 on baseline
// x86-64, NEON on aarch64, scalar code elsewhere) and its unaligned load
// and store, for the micro-kernels written without intrinsics.
#ifndef EPCTX_UK_VEC4_H
#define EPCTX_UK_VEC4_H

namespace epctx {
namespace uk {
namespace detail {

typedef float V4 __attribute__((vector_size(16)));

inline V4 Load4(const float* p) {
  V4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void Store4(float* p, V4 v) { __builtin_memcpy(p, &v, sizeof v); }

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
