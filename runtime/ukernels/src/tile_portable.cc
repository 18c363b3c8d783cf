// SPDX-License-Identifier: Apache-2.0
// The portable tile kernel: GCC/Clang generic 4-float vectors, which lower to
// SSE2 on baseline x86-64, NEON on arm and scalar code elsewhere, with no
// intrinsics. One 4 x 8 strip at a time: its 8 accumulators fit the 16
// registers of SSE2, where a whole 4 x 24 tile would spill.
#include "tile_common.h"
#include "vec4.h"

namespace epctx {
namespace uk {
namespace detail {
namespace {

inline V4 Clamp(V4 v, V4 lo, V4 hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// The leaky tile epilogue (Tile::leaky) on a strip's stored 4 x 8 floats:
// max(v, v * slope), then at least lo, each (a > b ? a : b) with the value
// first, so a NaN becomes lo. A loop, not eight more vector expressions:
// this kernel serves the microcontrollers, where code size counts.
void LeakyStrip(float* c, int64_t ldc, float slope, float lo) {
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kStrip; ++j) {
      float v = c[r * ldc + j];
      const float l = v * slope;
      v = v > l ? v : l;
      c[r * ldc + j] = v > lo ? v : lo;
    }
}

void Strip(const Tile& t, int s) {
  const float* a0 = RowA(t, 0);
  const float* a1 = RowA(t, 1);
  const float* a2 = RowA(t, 2);
  const float* a3 = RowA(t, 3);
  const float* b = t.b + s * t.b_ss;
  const int64_t ks = t.a_ks, bks = t.b_ks;
  V4 c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {}, c31 = {};
  for (int64_t k = 0; k < t.kc; ++k) {
    const V4 b0 = Load4(b), b1 = Load4(b + 4);
    const float x0 = *a0, x1 = *a1, x2 = *a2, x3 = *a3;
    c00 += x0 * b0;
    c01 += x0 * b1;
    c10 += x1 * b0;
    c11 += x1 * b1;
    c20 += x2 * b0;
    c21 += x2 * b1;
    c30 += x3 * b0;
    c31 += x3 * b1;
    a0 += ks;
    a1 += ks;
    a2 += ks;
    a3 += ks;
    b += bks;
  }
  float* c = t.c + s * kStrip;
  const int64_t ldc = t.ldc;
  if (t.accumulate) {
    c00 += Load4(c);
    c01 += Load4(c + 4);
    c10 += Load4(c + ldc);
    c11 += Load4(c + ldc + 4);
    c20 += Load4(c + 2 * ldc);
    c21 += Load4(c + 2 * ldc + 4);
    c30 += Load4(c + 3 * ldc);
    c31 += Load4(c + 3 * ldc + 4);
  }
  if (t.last) {
    if (t.row_bias) {
      const float* rb = t.row_bias;
      c00 += rb[0];
      c01 += rb[0];
      c10 += rb[1];
      c11 += rb[1];
      c20 += rb[2];
      c21 += rb[2];
      c30 += rb[3];
      c31 += rb[3];
    }
    if (t.col_bias) {
      const V4 cb0 = Load4(t.col_bias + s * kStrip), cb1 = Load4(t.col_bias + s * kStrip + 4);
      c00 += cb0;
      c01 += cb1;
      c10 += cb0;
      c11 += cb1;
      c20 += cb0;
      c21 += cb1;
      c30 += cb0;
      c31 += cb1;
    }
    const V4 lo = V4{} + t.lo, hi = V4{} + t.hi;
    if (!t.leaky) {  // leaky: after the stores, below
      c00 = Clamp(c00, lo, hi);
      c01 = Clamp(c01, lo, hi);
      c10 = Clamp(c10, lo, hi);
      c11 = Clamp(c11, lo, hi);
      c20 = Clamp(c20, lo, hi);
      c21 = Clamp(c21, lo, hi);
      c30 = Clamp(c30, lo, hi);
      c31 = Clamp(c31, lo, hi);
    }
  }
  Store4(c, c00);
  Store4(c + 4, c01);
  Store4(c + ldc, c10);
  Store4(c + ldc + 4, c11);
  Store4(c + 2 * ldc, c20);
  Store4(c + 2 * ldc + 4, c21);
  Store4(c + 3 * ldc, c30);
  Store4(c + 3 * ldc + 4, c31);
  if (t.last && t.leaky) LeakyStrip(c, ldc, t.slope, t.lo);
}

}  // namespace

void TilePortable(const Tile& t) {
  RunTile(t, [](const Tile& u, int strips) {
    ForSegments(u, strips, [](const Tile& v, int n) {
      for (int s = 0; s < n; ++s) Strip(v, s);
    });
  });
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx
