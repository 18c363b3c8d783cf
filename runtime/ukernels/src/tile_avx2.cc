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
#include "avx2.h"

namespace epctx {
namespace uk {
namespace detail {
namespace {

// The stores of a finished 4-row tile: accumulate into C, biases, clamp.
template <int S>
EPCTX_AVX2 inline __attribute__((always_inline)) void Finish(const Tile& t, __m256* c0, __m256* c1,
                                                             __m256* c2, __m256* c3);

// One k step of a 4 x (8 * S) tile: B's strips at BP, rows 0-3 of A at
// A0..A3; accumulates into e<row><strip>. Packed and Rows differ only in
// how they address A.
#define EPCTX_TILE_STEP(A0, A1, A2, A3, BP)                   \
  {                                                           \
    __m256 b0 = _mm256_loadu_ps(BP);                          \
    __m256 b1 = S > 1 ? _mm256_loadu_ps((BP) + 8) : b0;       \
    __m256 b2 = S > 2 ? _mm256_loadu_ps((BP) + 16) : b0;      \
    /* In registers: GCC would fold each B load into all four \
     * rows' FMAs (16 loads per 12 FMAs: load-bound). */      \
    __asm__("" : "+x"(b0), "+x"(b1), "+x"(b2));               \
    __m256 x = _mm256_broadcast_ss(A0);                       \
    e00 = _mm256_fmadd_ps(x, b0, e00);                        \
    if (S > 1) e01 = _mm256_fmadd_ps(x, b1, e01);             \
    if (S > 2) e02 = _mm256_fmadd_ps(x, b2, e02);             \
    x = _mm256_broadcast_ss(A1);                              \
    e10 = _mm256_fmadd_ps(x, b0, e10);                        \
    if (S > 1) e11 = _mm256_fmadd_ps(x, b1, e11);             \
    if (S > 2) e12 = _mm256_fmadd_ps(x, b2, e12);             \
    x = _mm256_broadcast_ss(A2);                              \
    e20 = _mm256_fmadd_ps(x, b0, e20);                        \
    if (S > 1) e21 = _mm256_fmadd_ps(x, b1, e21);             \
    if (S > 2) e22 = _mm256_fmadd_ps(x, b2, e22);             \
    x = _mm256_broadcast_ss(A3);                              \
    e30 = _mm256_fmadd_ps(x, b0, e30);                        \
    if (S > 1) e31 = _mm256_fmadd_ps(x, b1, e31);             \
    if (S > 2) e32 = _mm256_fmadd_ps(x, b2, e32);             \
  }

// The common layout: A a packed panel (its rows side by side, a_rs == 1)
// and B strips side by side (b_ss == 8). One A pointer with the rows at
// immediate offsets and one B pointer: the general loop below spends five
// pointer adds per k step on its four row pointers and B (19 vector and 7
// scalar instructions per 12 FMAs), which kept this tile at 67% of the FMA
// peak on an AVX2-only core. This loop and Rows' run four k steps per
// iteration (GCC unroll): one step per iteration kept the 8 x 48 block at
// 70-75% of a Zen 3 core's peak, four at 80-93% (tests/bench/ukernel-peak).
template <int S>
EPCTX_AVX2 inline void Packed(const Tile& t) {
  const float* a = t.a;
  const float* b = t.b;
  const int64_t ks = t.a_ks, bks = t.b_ks;
  __m256 e00 = _mm256_setzero_ps(), e10 = e00, e20 = e00, e30 = e00;
  __m256 e01 = e00, e11 = e00, e21 = e00, e31 = e00, e02 = e00, e12 = e00, e22 = e00, e32 = e00;
#pragma GCC unroll 4
  for (int64_t k = t.kc; k > 0; --k, a += ks, b += bks) EPCTX_TILE_STEP(a, a + 1, a + 2, a + 3, b)
  __m256 c0[3] = {e00, e01, e02}, c1[3] = {e10, e11, e12}, c2[3] = {e20, e21, e22},
         c3[3] = {e30, e31, e32};
  Finish<S>(t, c0, c1, c2, c3);
}

// Rows of A read in place (a_ks == 1: each row contiguous in k, rows a_rs
// apart) with B strips side by side, as the vnpu GEMM reads its
// activations: two A pointers with rows 1 and 3 at fixed offsets from
// them (index registers), so a k step costs three pointer adds where
// Full's four row pointers cost five, and nothing is packed.
template <int S>
EPCTX_AVX2 inline void Rows(const Tile& t) {
  const float* a0 = RowA(t, 0);
  const float* a2 = RowA(t, 2);
  // Rows 1 and 3 by their own offsets: RowA repeats the last row of a
  // partial tile.
  const int64_t d1 = RowA(t, 1) - a0, d3 = RowA(t, 3) - a2;
  const float* b = t.b;
  const int64_t bks = t.b_ks;
  __m256 e00 = _mm256_setzero_ps(), e10 = e00, e20 = e00, e30 = e00;
  __m256 e01 = e00, e11 = e00, e21 = e00, e31 = e00, e02 = e00, e12 = e00, e22 = e00, e32 = e00;
#pragma GCC unroll 4
  for (int64_t k = t.kc; k > 0; --k, ++a0, ++a2, b += bks)
    EPCTX_TILE_STEP(a0, a0 + d1, a2, a2 + d3, b)
  __m256 c0[3] = {e00, e01, e02}, c1[3] = {e10, e11, e12}, c2[3] = {e20, e21, e22},
         c3[3] = {e30, e31, e32};
  Finish<S>(t, c0, c1, c2, c3);
}
#undef EPCTX_TILE_STEP

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
  int64_t k = 0;
  if constexpr (S == 1) {
    // One strip is only 4 FMA chains, half what hides the FMA latency: odd
    // k steps go to a second set of accumulators (a narrow product, e.g. a
    // convolution with few output pixels, would run at half speed).
    __m256 d0 = _mm256_setzero_ps(), d1 = d0, d2 = d0, d3 = d0;
    for (; k + 2 <= t.kc; k += 2) {
      const __m256 u = _mm256_loadu_ps(b), v = _mm256_loadu_ps(b + bks);
      c0[0] = _mm256_fmadd_ps(_mm256_broadcast_ss(a0), u, c0[0]);
      d0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + ks), v, d0);
      c1[0] = _mm256_fmadd_ps(_mm256_broadcast_ss(a1), u, c1[0]);
      d1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + ks), v, d1);
      c2[0] = _mm256_fmadd_ps(_mm256_broadcast_ss(a2), u, c2[0]);
      d2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a2 + ks), v, d2);
      c3[0] = _mm256_fmadd_ps(_mm256_broadcast_ss(a3), u, c3[0]);
      d3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a3 + ks), v, d3);
      a0 += 2 * ks;
      a1 += 2 * ks;
      a2 += 2 * ks;
      a3 += 2 * ks;
      b += 2 * bks;
    }
    c0[0] = _mm256_add_ps(c0[0], d0);
    c1[0] = _mm256_add_ps(c1[0], d1);
    c2[0] = _mm256_add_ps(c2[0], d2);
    c3[0] = _mm256_add_ps(c3[0], d3);
  }
  // The strips are spelled out with constant indices and the arrays copied
  // to locals: with loops over s, GCC kept the accumulators in memory (a
  // store after every FMA).
  __m256 e00 = c0[0], e10 = c1[0], e20 = c2[0], e30 = c3[0];
  __m256 e01 = e00, e11 = e00, e21 = e00, e31 = e00, e02 = e00, e12 = e00, e22 = e00, e32 = e00;
  for (; k < t.kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = S > 1 ? _mm256_loadu_ps(b + bss) : b0;
    const __m256 b2 = S > 2 ? _mm256_loadu_ps(b + 2 * bss) : b0;
    __m256 x = _mm256_broadcast_ss(a0);
    e00 = _mm256_fmadd_ps(x, b0, e00);
    if (S > 1) e01 = _mm256_fmadd_ps(x, b1, e01);
    if (S > 2) e02 = _mm256_fmadd_ps(x, b2, e02);
    x = _mm256_broadcast_ss(a1);
    e10 = _mm256_fmadd_ps(x, b0, e10);
    if (S > 1) e11 = _mm256_fmadd_ps(x, b1, e11);
    if (S > 2) e12 = _mm256_fmadd_ps(x, b2, e12);
    x = _mm256_broadcast_ss(a2);
    e20 = _mm256_fmadd_ps(x, b0, e20);
    if (S > 1) e21 = _mm256_fmadd_ps(x, b1, e21);
    if (S > 2) e22 = _mm256_fmadd_ps(x, b2, e22);
    x = _mm256_broadcast_ss(a3);
    e30 = _mm256_fmadd_ps(x, b0, e30);
    if (S > 1) e31 = _mm256_fmadd_ps(x, b1, e31);
    if (S > 2) e32 = _mm256_fmadd_ps(x, b2, e32);
    a0 += ks;
    a1 += ks;
    a2 += ks;
    a3 += ks;
    b += bks;
  }
  c0[0] = e00;
  c1[0] = e10;
  c2[0] = e20;
  c3[0] = e30;
  if constexpr (S > 1) {
    c0[1] = e01;
    c1[1] = e11;
    c2[1] = e21;
    c3[1] = e31;
  }
  if constexpr (S > 2) {
    c0[2] = e02;
    c1[2] = e12;
    c2[2] = e22;
    c3[2] = e32;
  }
  Finish<S>(t, c0, c1, c2, c3);
}

template <int S>
EPCTX_AVX2 inline __attribute__((always_inline)) void Finish(const Tile& t, __m256* c0, __m256* c1,
                                                             __m256* c2, __m256* c3) {
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
    if (t.leaky) {
      // (a > b ? a : b) with the value first: a NaN becomes lo.
      const __m256 sl = _mm256_set1_ps(t.slope);
      for (int s = 0; s < S; ++s) {
        c0[s] = _mm256_max_ps(_mm256_max_ps(c0[s], _mm256_mul_ps(c0[s], sl)), lo);
        c1[s] = _mm256_max_ps(_mm256_max_ps(c1[s], _mm256_mul_ps(c1[s], sl)), lo);
        c2[s] = _mm256_max_ps(_mm256_max_ps(c2[s], _mm256_mul_ps(c2[s], sl)), lo);
        c3[s] = _mm256_max_ps(_mm256_max_ps(c3[s], _mm256_mul_ps(c3[s], sl)), lo);
      }
    } else {
      for (int s = 0; s < S; ++s) {
        c0[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c0[s]));
        c1[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c1[s]));
        c2[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c2[s]));
        c3[s] = _mm256_min_ps(hi, _mm256_max_ps(lo, c3[s]));
      }
    }
  }
  for (int s = 0; s < S; ++s) {
    _mm256_storeu_ps(c + s * 8, c0[s]);
    _mm256_storeu_ps(c + ldc + s * 8, c1[s]);
    _mm256_storeu_ps(c + 2 * ldc + s * 8, c2[s]);
    _mm256_storeu_ps(c + 3 * ldc + s * 8, c3[s]);
  }
}

// The stores of a finished one-row tile of S strips (Row1, Row1Wide):
// accumulate into C, biases and clamp (or leaky) on the last slice.
template <int S>
EPCTX_AVX2 inline __attribute__((always_inline)) void FinishRow(const Tile& t, __m256* v) {
  float* c = t.c;
  if (t.accumulate)
    for (int j = 0; j < S; ++j) v[j] = _mm256_add_ps(v[j], _mm256_loadu_ps(c + j * 8));
  if (t.last) {
    if (t.row_bias) {
      const __m256 rb = _mm256_broadcast_ss(t.row_bias);
      for (int j = 0; j < S; ++j) v[j] = _mm256_add_ps(v[j], rb);
    }
    if (t.col_bias)
      for (int j = 0; j < S; ++j) v[j] = _mm256_add_ps(v[j], _mm256_loadu_ps(t.col_bias + j * 8));
    const __m256 lo = _mm256_set1_ps(t.lo), hi = _mm256_set1_ps(t.hi);
    if (t.leaky) {
      const __m256 sl = _mm256_set1_ps(t.slope);
      for (int j = 0; j < S; ++j)
        v[j] = _mm256_max_ps(_mm256_max_ps(v[j], _mm256_mul_ps(v[j], sl)), lo);
    } else {
      for (int j = 0; j < S; ++j) v[j] = _mm256_min_ps(hi, _mm256_max_ps(lo, v[j]));
    }
  }
  for (int j = 0; j < S; ++j) _mm256_storeu_ps(c + j * 8, v[j]);
}

// One row of A (a GEMM with M = 1, a fully connected layer on one sample):
// the four-row tile would compute three copies and keep only 3 FMA chains
// per strip busy. Here four k phases of accumulators give 4 * S chains.
template <int S>
EPCTX_AVX2 inline void Row1(const Tile& t) {
  const float* a = t.a;
  const float* b = t.b;
  const int64_t ks = t.a_ks, bks = t.b_ks, bss = t.b_ss;
  const __m256 z = _mm256_setzero_ps();
  __m256 p0 = z, p1 = z, p2 = z, q0 = z, q1 = z, q2 = z;
  __m256 r0 = z, r1 = z, r2 = z, s0 = z, s1 = z, s2 = z;
#define EPCTX_ROW_STEP(X0, X1, X2, AP, BP)                                   \
  {                                                                          \
    const __m256 x = _mm256_broadcast_ss(AP);                                \
    X0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(BP), X0);                        \
    if (S > 1) X1 = _mm256_fmadd_ps(x, _mm256_loadu_ps((BP) + bss), X1);     \
    if (S > 2) X2 = _mm256_fmadd_ps(x, _mm256_loadu_ps((BP) + 2 * bss), X2); \
  }
  int64_t k = 0;
  for (; k + 4 <= t.kc; k += 4, a += 4 * ks, b += 4 * bks) {
    EPCTX_ROW_STEP(p0, p1, p2, a, b)
    EPCTX_ROW_STEP(q0, q1, q2, a + ks, b + bks)
    EPCTX_ROW_STEP(r0, r1, r2, a + 2 * ks, b + 2 * bks)
    EPCTX_ROW_STEP(s0, s1, s2, a + 3 * ks, b + 3 * bks)
  }
  for (; k < t.kc; ++k, a += ks, b += bks) EPCTX_ROW_STEP(p0, p1, p2, a, b)
#undef EPCTX_ROW_STEP
  __m256 v[3] = {_mm256_add_ps(_mm256_add_ps(p0, q0), _mm256_add_ps(r0, s0)),
                 _mm256_add_ps(_mm256_add_ps(p1, q1), _mm256_add_ps(r1, s1)),
                 _mm256_add_ps(_mm256_add_ps(p2, q2), _mm256_add_ps(r2, s2))};
  FinishRow<S>(t, v);
}

// One row of A against a whole 48-column block of B with strips side by
// side (b_ss == 8): each k step reads B's 192 bytes in order, so a packed
// panel streams once from memory (a vector times a matrix is bound by
// B's bytes; two 24-column Row1 calls read each k row in halves, 192
// bytes apart). Two k phases of 6 accumulators give 12 FMA chains.
EPCTX_AVX2 inline void Row1Wide(const Tile& t) {
  const float* a = t.a;
  const float* b = t.b;
  const int64_t ks = t.a_ks, bks = t.b_ks;
  const __m256 z = _mm256_setzero_ps();
  __m256 p[6] = {z, z, z, z, z, z}, q[6] = {z, z, z, z, z, z};
  int64_t k = 0;
  for (; k + 2 <= t.kc; k += 2, a += 2 * ks, b += 2 * bks) {
    const __m256 x = _mm256_broadcast_ss(a), y = _mm256_broadcast_ss(a + ks);
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) p[j] = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 8 * j), p[j]);
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) q[j] = _mm256_fmadd_ps(y, _mm256_loadu_ps(b + bks + 8 * j), q[j]);
  }
  if (k < t.kc) {
    const __m256 x = _mm256_broadcast_ss(a);
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) p[j] = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 8 * j), p[j]);
  }
  __m256 v[6];
#pragma GCC unroll 6
  for (int j = 0; j < 6; ++j) v[j] = _mm256_add_ps(p[j], q[j]);
  FinishRow<6>(t, v);
}

}  // namespace

EPCTX_AVX2 void FullStripsAvx2(const Tile& t, int strips) {
  if (t.rows == 1) {
    if (strips == 3) Row1<3>(t);
    else if (strips == 2) Row1<2>(t);
    else Row1<1>(t);
    return;
  }
  if (t.a_rs == 1 && t.b_ss == kStrip && strips > 1) {
    if (strips == 3) Packed<3>(t);
    else Packed<2>(t);
    return;
  }
  if (t.a_ks == 1 && t.b_ss == kStrip && strips > 1) {
    if (strips == 3) Rows<3>(t);
    else Rows<2>(t);
    return;
  }
  if (strips == 3) Full<3>(t);
  else if (strips == 2) Full<2>(t);
  else Full<1>(t);
}

void TileAvx2(const Tile& t) {
  RunTile(t, [](const Tile& u, int strips) { ForSegments(u, strips, FullStripsAvx2); });
}

// A whole 8 x 48 block in the common layouts (B strips side by side, one
// slice; A a packed panel or rows in place) is four 4 x 24 tiles called
// directly: through SplitBlock and RunTile each tile copied the Tile and
// re-tested its edges, and the block ran at 64% of the FMA peak against
// the tile's 80%.
EPCTX_AVX2 void Tile2Avx2(const Tile& t) {
  if (t.rows == 1 && t.cols == kNr2 && t.b_ss == kStrip && t.segs <= 1 && !t.b_ps) {
    Row1Wide(t);
    return;
  }
  const bool panel = t.a_rs == 1, rows = !panel && t.a_ks == 1;
  if (t.rows != kMr2 || t.cols != kNr2 || !(panel || rows) || t.b_ss != kStrip || t.segs > 1) {
    SplitBlock(t, TileAvx2);
    return;
  }
  Tile u = t;
  for (int half = 0; half < 2; ++half) {
    u.b = half ? (t.b_ps ? t.b + t.b_ps : t.b + kNr) : t.b;
    u.c = t.c + half * kNr;
    u.col_bias = t.col_bias ? t.col_bias + half * kNr : nullptr;
    for (int r = 0; r < kMr2; r += kMr) {
      u.a = t.a + r * t.a_rs;
      u.c = t.c + r * t.ldc + half * kNr;
      u.row_bias = t.row_bias ? t.row_bias + r : nullptr;
      if (panel) Packed<3>(u);
      else Rows<3>(u);
    }
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
