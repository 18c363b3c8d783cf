/* SPDX-License-Identifier: Apache-2.0 */
// What the AVX-512 micro-kernels (x86-64 only) share: EPCTX_AVX512, the
// target attribute of every function that uses the instructions (BestIsa()
// picks them only when cpuid and xgetbv say the CPU and the OS run them),
// and <immintrin.h>. GCC 12's avx512fintrin.h builds "undefined" vectors
// from a self-initialised variable (_mm512_undefined_ps), which
// -Wmaybe-uninitialized reports at every inlined max, min and cast, and
// -Wuninitialized at -Os (the size presets) in _mm512_insertf64x4: a false
// alarm in the header, not in the kernels, so both are off here.
#ifndef EPCTX_UK_AVX512_H
#define EPCTX_UK_AVX512_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#define EPCTX_AVX512 __attribute__((target("avx2,fma,avx512f,avx512vl")))

namespace epctx {
namespace uk {
namespace detail {

// r[i] (16 lanes each) becomes column i of the 16 x 16 matrix whose rows
// were r: r[i][j] = old r[j][i].
EPCTX_AVX512 inline void Transpose16(__m512 (&r)[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
      t[8 * i + 4 + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0xdd);
    }
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
