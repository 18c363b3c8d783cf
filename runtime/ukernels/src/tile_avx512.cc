// SPDX-License-Identifier: Apache-2.0
// The AVX-512 tile kernel (x86-64, AVX512F + AVX512VL). Compiled for
// baseline x86-64 like the rest; only these functions carry the target
// attribute, and BestIsa() picks them only when cpuid and xgetbv say the CPU
// and the OS run them.
//
// A zmm vector is 16 floats, two B strips: one load when they lie side by
// side (strip stride 8, i.e. B rows of whole tiles, the layout the vnpu
// im2col chunks write), else two loads and an insert. One-strip tiles go to
// the AVX2 kernel. A 4 x 24 tile is 4 zmm + 4 ymm accumulators per k;
// two such sets (even and odd k) keep 16 FMA chains in flight, which covers
// the latency of two 512-bit FMA ports, and fit the 32 vector registers.
#include "tile_common.h"

#if defined(__x86_64__)
#include "avx512.h"

namespace epctx {
namespace uk {
namespace detail {
namespace {

// B strips 0 and 1 of one k as one vector.
template <bool kSideBySide>
EPCTX_AVX512 inline __m512 Load16(const float* b, int64_t bss) {
  if (kSideBySide) return _mm512_loadu_ps(b);
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(b))),
                         _mm256_castps_pd(_mm256_loadu_ps(b + bss)), 1));
}

// What follows the K loop, for R rows of NZ zmm (16 columns each) and, when
// kY, one ymm (8 more columns) per row: C's previous values when
// accumulating; on the last slice the biases, then the clamp or the leaky
// epilogue (Tile); the store. max/min return the second operand when either
// is NaN: for the clamp the value goes second, so a NaN passes through as
// in the portable kernel; for leaky, (a > b ? a : b) with the value first,
// so a NaN becomes lo.
template <int R, int NZ, bool kY>
EPCTX_AVX512 inline void Epilogue(const Tile& t, __m512 (&z)[R][NZ + (NZ == 0)], __m256 (&y)[R]) {
  float* c = t.c;
  const int64_t ldc = t.ldc;
  if (t.accumulate)
    for (int r = 0; r < R; ++r) {
      for (int i = 0; i < NZ; ++i)
        z[r][i] = _mm512_add_ps(z[r][i], _mm512_loadu_ps(c + r * ldc + 16 * i));
      if (kY) y[r] = _mm256_add_ps(y[r], _mm256_loadu_ps(c + r * ldc + 16 * NZ));
    }
  if (t.last) {
    if (t.row_bias)
      for (int r = 0; r < R; ++r) {
        const __m512 rb = _mm512_set1_ps(t.row_bias[r]);
        for (int i = 0; i < NZ; ++i) z[r][i] = _mm512_add_ps(z[r][i], rb);
        if (kY) y[r] = _mm256_add_ps(y[r], _mm512_castps512_ps256(rb));
      }
    if (t.col_bias) {
      for (int i = 0; i < NZ; ++i) {
        const __m512 cb = _mm512_loadu_ps(t.col_bias + 16 * i);
        for (int r = 0; r < R; ++r) z[r][i] = _mm512_add_ps(z[r][i], cb);
      }
      if (kY) {
        const __m256 cb = _mm256_loadu_ps(t.col_bias + 16 * NZ);
        for (int r = 0; r < R; ++r) y[r] = _mm256_add_ps(y[r], cb);
      }
    }
    const __m512 lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);
    const __m256 lo8 = _mm256_set1_ps(t.lo), hi8 = _mm256_set1_ps(t.hi);
    if (t.leaky) {
      const __m512 sl = _mm512_set1_ps(t.slope);
      const __m256 sl8 = _mm256_set1_ps(t.slope);
      for (int r = 0; r < R; ++r) {
        for (int i = 0; i < NZ; ++i)
          z[r][i] = _mm512_max_ps(_mm512_max_ps(z[r][i], _mm512_mul_ps(z[r][i], sl)), lo);
        if (kY) y[r] = _mm256_max_ps(_mm256_max_ps(y[r], _mm256_mul_ps(y[r], sl8)), lo8);
      }
    } else {
      for (int r = 0; r < R; ++r) {
        for (int i = 0; i < NZ; ++i) z[r][i] = _mm512_min_ps(hi, _mm512_max_ps(lo, z[r][i]));
        if (kY) y[r] = _mm256_min_ps(hi8, _mm256_max_ps(lo8, y[r]));
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < NZ; ++i) _mm512_storeu_ps(c + r * ldc + 16 * i, z[r][i]);
    if (kY) _mm256_storeu_ps(c + r * ldc + 16 * NZ, y[r]);
  }
}

// Columns 0..15 of every row in zmm, columns 16..23 (when S == 3) in ymm.
// Written out by hand: GCC keeps arrays of accumulators in memory.
template <int S, bool kSideBySide>
EPCTX_AVX512 inline void Full(const Tile& t) {
  static_assert(S == 2 || S == 3, "one-strip tiles use the AVX2 kernel");
  const float* a0 = RowA(t, 0);
  const float* a1 = RowA(t, 1);
  const float* a2 = RowA(t, 2);
  const float* a3 = RowA(t, 3);
  const float* b = t.b;
  const int64_t ks = t.a_ks, bks = t.b_ks, bss = t.b_ss;
  __m512 z0 = _mm512_setzero_ps(), z1 = z0, z2 = z0, z3 = z0;  // even k
  __m512 w0 = z0, w1 = z0, w2 = z0, w3 = z0;                   // odd k
  __m256 y0 = _mm256_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
  __m256 v0 = y0, v1 = y0, v2 = y0, v3 = y0;
#define EPCTX_STEP(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, OFF, BP)                  \
  {                                                                          \
    const __m512 b0 = Load16<kSideBySide>(BP, bss);                          \
    const __m512 x0 = _mm512_set1_ps(a0[OFF]), x1 = _mm512_set1_ps(a1[OFF]); \
    const __m512 x2 = _mm512_set1_ps(a2[OFF]), x3 = _mm512_set1_ps(a3[OFF]); \
    Z0 = _mm512_fmadd_ps(x0, b0, Z0);                                        \
    Z1 = _mm512_fmadd_ps(x1, b0, Z1);                                        \
    Z2 = _mm512_fmadd_ps(x2, b0, Z2);                                        \
    Z3 = _mm512_fmadd_ps(x3, b0, Z3);                                        \
    if (S == 3) {                                                            \
      const __m256 b1 = _mm256_loadu_ps((BP) + 2 * bss);                     \
      Y0 = _mm256_fmadd_ps(_mm512_castps512_ps256(x0), b1, Y0);              \
      Y1 = _mm256_fmadd_ps(_mm512_castps512_ps256(x1), b1, Y1);              \
      Y2 = _mm256_fmadd_ps(_mm512_castps512_ps256(x2), b1, Y2);              \
      Y3 = _mm256_fmadd_ps(_mm512_castps512_ps256(x3), b1, Y3);              \
    }                                                                        \
  }
  // Slices (Tile::segs) continue the same accumulators.
  for (int32_t sg = 0, nsg = t.segs > 1 ? t.segs : 1; sg < nsg; ++sg) {
    if (sg) {
      a0 = RowA(t, 0) + sg * t.a_seg;
      a1 = RowA(t, 1) + sg * t.a_seg;
      a2 = RowA(t, 2) + sg * t.a_seg;
      a3 = RowA(t, 3) + sg * t.a_seg;
      b = t.b + sg * t.b_seg;
    }
    int64_t k = 0;
    for (; k + 2 <= t.kc; k += 2) {
      EPCTX_STEP(z0, z1, z2, z3, y0, y1, y2, y3, 0, b)
      EPCTX_STEP(w0, w1, w2, w3, v0, v1, v2, v3, ks, b + bks)
      a0 += 2 * ks;
      a1 += 2 * ks;
      a2 += 2 * ks;
      a3 += 2 * ks;
      b += 2 * bks;
    }
    if (k < t.kc) EPCTX_STEP(z0, z1, z2, z3, y0, y1, y2, y3, 0, b)
  }
#undef EPCTX_STEP
  __m512 z[kMr][1] = {{_mm512_add_ps(z0, w0)},
                      {_mm512_add_ps(z1, w1)},
                      {_mm512_add_ps(z2, w2)},
                      {_mm512_add_ps(z3, w3)}};
  __m256 y[kMr] = {_mm256_add_ps(y0, v0), _mm256_add_ps(y1, v1), _mm256_add_ps(y2, v2),
                   _mm256_add_ps(y3, v3)};
  Epilogue<kMr, 1, S == 3>(t, z, y);
}

EPCTX_AVX512 void FullStrips(const Tile& t, int strips) {
  const bool side = t.b_ss == kStrip;
  if (t.rows == 1 || strips == 1)
    ForSegments(t, strips, FullStripsAvx2);  // its one-row and one-strip kernels
  else if (strips == 3) side ? Full<3, true>(t) : Full<3, false>(t);
  else side ? Full<2, true>(t) : Full<2, false>(t);
}

// The block tile (TileKernel2) when all 8 rows and NZ * 16 + (kY ? 8 : 0)
// columns lie inside C and its B strips lie side by side (b_ss == 8, the
// layout Sgemm and the vnpu dense conv and GEMM pack): NZ zmm (and a ymm)
// accumulators per row, 8 * NZ (+ 8) in all, 8 to 24, enough independent
// FMA chains for two ports without the tile's even/odd split; per k each B
// vector serves 8 rows.
//
// A is read one of two ways, so that the loop needs few address registers
// (GCC spills them to the stack otherwise, and the reloads share the ports
// with the FMAs): kPanel, a packed panel (a_rs 1, a_ks 8: Sgemm's packed A,
// the vnpu conv weights), at constant offsets from one pointer; else rows
// a_rs apart (the vnpu GEMM's activations) from two row pointers, rows 0-3
// and 4-7, and the strides a_rs and 3 * a_rs. Two k per trip halve the
// loop's own instructions: with both, the 8 x 48 block runs at ~86% of
// the FMA peak in L1 (74% before). Same k order, same bits.
template <int NZ, bool kY, bool kPanel>
EPCTX_AVX512 void Block8(const Tile& t) {
  const int64_t ars = t.a_rs, ars3 = 3 * t.a_rs, ks = kPanel ? kMr2 : t.a_ks, bks = t.b_ks;
  __m512 z[kMr2][NZ + (NZ == 0)];
  __m256 y[kMr2];
  for (int r = 0; r < kMr2; ++r) {
    for (int i = 0; i < NZ; ++i) z[r][i] = _mm512_setzero_ps();
    y[r] = _mm256_setzero_ps();
  }
  // Row r of A at k: a0 (rows 0-3) or a4 (rows 4-7) plus 0, ars, 2 ars, ars3.
  const auto row = [&](const float* a0, const float* a4, int r) {
    if (kPanel) return a0[r];
    const float* p = r < 4 ? a0 : a4;
    switch (r & 3) {
      case 0: return p[0];
      case 1: return p[ars];
      case 2: return p[2 * ars];
      default: return p[ars3];
    }
  };
  const auto step = [&](const float* a0, const float* a4, const float* b) EPCTX_AVX512 {
    __m512 bz[NZ + (NZ == 0)];
#pragma GCC unroll 3
    for (int i = 0; i < NZ; ++i) bz[i] = _mm512_loadu_ps(b + 16 * i);
    __m256 by = _mm256_setzero_ps();
    if (kY) by = _mm256_loadu_ps(b + 16 * NZ);
      // Unrolled: r and i are constants, each accumulator a register.
#pragma GCC unroll 8
    for (int r = 0; r < kMr2; ++r) {
      const __m512 x = _mm512_set1_ps(row(a0, a4, r));
#pragma GCC unroll 3
      for (int i = 0; i < NZ; ++i) z[r][i] = _mm512_fmadd_ps(x, bz[i], z[r][i]);
      if (kY) y[r] = _mm256_fmadd_ps(_mm512_castps512_ps256(x), by, y[r]);
    }
  };
  for (int32_t sg = 0, nsg = t.segs > 1 ? t.segs : 1; sg < nsg; ++sg) {
    const float* a0 = t.a + sg * t.a_seg;
    const float* a4 = a0 + 4 * ars;
    const float* b = t.b + sg * t.b_seg;
    int64_t k = 0;
    for (; k + 2 <= t.kc; k += 2, a0 += 2 * ks, a4 += 2 * ks, b += 2 * bks) {
      step(a0, a4, b);
      step(a0 + ks, a4 + ks, b + bks);
    }
    if (k < t.kc) step(a0, a4, b);
  }
  Epilogue<kMr2, NZ, kY>(t, z, y);
}

// Whole strips side by side (b_ss == 8): 48 columns in one kernel, fewer as
// 24, 16 and 8 column pieces (four instances keep the code small; the
// strips-apart layout goes to the 4-row tile).
template <bool kPanel>
EPCTX_AVX512 void Block8Cols(const Tile& t) {
  if (t.cols == 3 * 16) return Block8<3, false, kPanel>(t);
  Tile u = t;
  for (int32_t j = 0; j < t.cols;) {
    const int32_t n = t.cols - j >= 24 ? 24 : t.cols - j;
    u.cols = n;
    u.b = t.b + j;
    u.c = t.c + j;
    u.col_bias = t.col_bias ? t.col_bias + j : nullptr;
    if (n == 24) Block8<1, true, kPanel>(u);
    else if (n == 16) Block8<1, false, kPanel>(u);
    else Block8<0, true, kPanel>(u);
    j += n;
  }
}

// An 8-row block whose columns end inside a strip: its whole strips are
// computed into a private C (and column bias), as RunTile does for a tile,
// so a convolution's last pixel block of a few columns costs strips, not a
// 4-row tile per 24 columns.
template <bool kPanel>
EPCTX_AVX512 void Block8Edge(const Tile& t) {
  float cbuf[kMr2 * kNr2];
  float cb[kNr2];
  const int32_t cols = (t.cols + kStrip - 1) / kStrip * kStrip;
  Tile u = t;
  u.c = cbuf;
  u.ldc = kNr2;
  u.cols = cols;
  if (t.accumulate)
    for (int r = 0; r < kMr2; ++r)
      for (int32_t j = 0; j < t.cols; ++j) cbuf[r * kNr2 + j] = t.c[r * t.ldc + j];
  if (t.col_bias) {
    for (int32_t j = 0; j < cols; ++j) cb[j] = j < t.cols ? t.col_bias[j] : 0.0f;
    u.col_bias = cb;
  }
  Block8Cols<kPanel>(u);
  for (int r = 0; r < kMr2; ++r)
    for (int32_t j = 0; j < t.cols; ++j) t.c[r * t.ldc + j] = cbuf[r * kNr2 + j];
}

}  // namespace

void TileAvx512(const Tile& t) { RunTile(t, FullStrips); }

void Tile2Avx512(const Tile& t) {
  if (t.rows != kMr2 || t.b_ss != kStrip || t.b_ps) {
    SplitBlock(t, TileAvx512);
    return;
  }
  if (t.a_rs == 1 && t.a_ks == kMr2) t.cols % kStrip ? Block8Edge<true>(t) : Block8Cols<true>(t);
  else t.cols % kStrip ? Block8Edge<false>(t) : Block8Cols<false>(t);
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
