// SPDX-License-Identifier: Apache-2.0
// The AVX2+FMA tile kernel (x86-64). The file is compiled for baseline
// x86-64 like the rest; only these functions carry target("avx2,fma"), and
// BestIsa() calls them only on a CPU whose cpuid and OS (xgetbv) say so.
//
// A 4 x 24 tile is 12 ymm accumulators; each k step loads three B vectors and
// broadcasts four A values: 7 loads for 12 FMAs, and 12 independent FMA
// chains cover the FMA latency x throughput of current cores (4-5 cycles x
// 2 ports).
#include "tile_common.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace epctx {
namespace uk {
namespace detail {
namespace {

#define EPCTX_AVX2 __attribute__((target("avx2,fma")))

template <int S>
EPCTX_AVX2 inline void Full(const Tile& t) {
  const float* a0 = RowA(t, 0);
  const float* a1 = RowA(t, 1);
  const float* a2 = RowA(t, 2);
  const float* a3 = RowA(t, 3);
  const float* b = t.b;
  const int64_t ks = t.a_ks, bks = t.b_ks, bss = t.b_ss;
  __m256 c0[S], c1[S], c2[S], c3[S];
  for (int s = 0; s < S; ++s) {
    c0[s] = _mm256_setzero_ps();
    c1[s] = _mm256_setzero_ps();
    c2[s] = _mm256_setzero_ps();
    c3[s] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < t.kc; ++k) {
    __m256 bv[S];
    for (int s = 0; s < S; ++s) bv[s] = _mm256_loadu_ps(b + s * bss);
    __m256 x = _mm256_broadcast_ss(a0);
    for (int s = 0; s < S; ++s) c0[s] = _mm256_fmadd_ps(x, bv[s], c0[s]);
    x = _mm256_broadcast_ss(a1);
    for (int s = 0; s < S; ++s) c1[s] = _mm256_fmadd_ps(x, bv[s], c1[s]);
    x = _mm256_broadcast_ss(a2);
    for (int s = 0; s < S; ++s) c2[s] = _mm256_fmadd_ps(x, bv[s], c2[s]);
    x = _mm256_broadcast_ss(a3);
    for (int s = 0; s < S; ++s) c3[s] = _mm256_fmadd_ps(x, bv[s], c3[s]);
    a0 += ks;
    a1 += ks;
    a2 += ks;
    a3 += ks;
    b += bks;
  }
  float* c = t.c;
  const int64_t ldc = t.ldc;
  if (t.accumulate)
    for (int s = 0; s < S; ++s) {
      c0[s] = _mm256_add_ps(c0[s], _mm256_loadu_ps(c + s * 8));
      c1[s] = _mm256_add_ps(c1[s], _mm256_loadu_ps(c + ldc + s * 8));
      c2[s] = _mm256_add_ps(c2[s], _mm256_loadu_ps(c + 2 * ldc + s * 8));
      c3[s] = _mm256_add_ps(c3[s], _mm256_loadu_ps(c + 3 * ldc + s * 8));
    }
  if (t.last) {
    if (t.row_bias) {
      const __m256 r0 = _mm256_broadcast_ss(t.row_bias), r1 = _mm256_broadcast_ss(t.row_bias + 1),
                   r2 = _mm256_broadcast_ss(t.row_bias + 2),
                   r3 = _mm256_broadcast_ss(t.row_bias + 3);
      for (int s = 0; s < S; ++s) {
        c0[s] = _mm256_add_ps(c0[s], r0);
        c1[s] = _mm256_add_ps(c1[s], r1);
        c2[s] = _mm256_add_ps(c2[s], r2);
        c3[s] = _mm256_add_ps(c3[s], r3);
      }
    }
    if (t.col_bias)
      for (int s = 0; s < S; ++s) {
        const __m256 cb = _mm256_loadu_ps(t.col_bias + s * 8);
        c0[s] = _mm256_add_ps(c0[s], cb);
        c1[s] = _mm256_add_ps(c1[s], cb);
        c2[s] = _mm256_add_ps(c2[s], cb);
        c3[s] = _mm256_add_ps(c3[s], cb);
      }
    // max/min return the second operand when either is NaN: put the value
    // second so a NaN passes through as in the portable kernel.
    const __m256 lo = _mm256_set1_ps(t.lo), hi = _mm256_set1_ps(t.hi);
    for (int s = 0; s < S; ++s) {
      c0[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c0[s]));
      c1[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c1[s]));
      c2[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c2[s]));
      c3[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c3[s]));
    }
  }
  for (int s = 0; s < S; ++s) {
    _mm256_storeu_ps(c + s * 8, c0[s]);
    _mm256_storeu_ps(c + ldc + s * 8, c1[s]);
    _mm256_storeu_ps(c + 2 * ldc + s * 8, c2[s]);
    _mm256_storeu_ps(c + 3 * ldc + s * 8, c3[s]);
  }
}

EPCTX_AVX2 void FullStrips(const Tile& t, int strips) {
  if (strips == 3)
    Full<3>(t);
  else if (strips == 2)
    Full<2>(t);
  else
    Full<1>(t);
}

}  // namespace

void TileAvx2(const Tile& t) { RunTile(t, FullStrips); }

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
