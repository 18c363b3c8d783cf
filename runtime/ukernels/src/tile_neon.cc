// SPDX-License-Identifier: Apache-2.0
// The NEON tile kernel (aarch64): a 4 x 24 tile is 24 q-register accumulators,
// with six B vectors and one broadcast A value live per k step (31 of the 32
// vector registers), multiply and add fused (FMLA).
#include "tile_common.h"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace epctx {
namespace uk {
namespace detail {
namespace {

template <int S>
inline void Full(const Tile& t) {
  constexpr int V = 2 * S;  // 4-float vectors per row
  const float* a0 = RowA(t, 0);
  const float* a1 = RowA(t, 1);
  const float* a2 = RowA(t, 2);
  const float* a3 = RowA(t, 3);
  const float* b = t.b;
  const int64_t ks = t.a_ks, bks = t.b_ks, bss = t.b_ss;
  float32x4_t c0[V], c1[V], c2[V], c3[V];
  for (int v = 0; v < V; ++v) c0[v] = c1[v] = c2[v] = c3[v] = vdupq_n_f32(0.0f);
  for (int64_t k = 0; k < t.kc; ++k) {
    float32x4_t bv[V];
    for (int v = 0; v < V; ++v) bv[v] = vld1q_f32(b + (v / 2) * bss + (v % 2) * 4);
    float32x4_t x = vld1q_dup_f32(a0);
    for (int v = 0; v < V; ++v) c0[v] = vfmaq_f32(c0[v], x, bv[v]);
    x = vld1q_dup_f32(a1);
    for (int v = 0; v < V; ++v) c1[v] = vfmaq_f32(c1[v], x, bv[v]);
    x = vld1q_dup_f32(a2);
    for (int v = 0; v < V; ++v) c2[v] = vfmaq_f32(c2[v], x, bv[v]);
    x = vld1q_dup_f32(a3);
    for (int v = 0; v < V; ++v) c3[v] = vfmaq_f32(c3[v], x, bv[v]);
    a0 += ks;
    a1 += ks;
    a2 += ks;
    a3 += ks;
    b += bks;
  }
  float* c = t.c;
  const int64_t ldc = t.ldc;
  if (t.accumulate)
    for (int v = 0; v < V; ++v) {
      c0[v] = vaddq_f32(c0[v], vld1q_f32(c + v * 4));
      c1[v] = vaddq_f32(c1[v], vld1q_f32(c + ldc + v * 4));
      c2[v] = vaddq_f32(c2[v], vld1q_f32(c + 2 * ldc + v * 4));
      c3[v] = vaddq_f32(c3[v], vld1q_f32(c + 3 * ldc + v * 4));
    }
  if (t.last) {
    if (t.row_bias) {
      const float32x4_t r0 = vdupq_n_f32(t.row_bias[0]), r1 = vdupq_n_f32(t.row_bias[1]),
                        r2 = vdupq_n_f32(t.row_bias[2]), r3 = vdupq_n_f32(t.row_bias[3]);
      for (int v = 0; v < V; ++v) {
        c0[v] = vaddq_f32(c0[v], r0);
        c1[v] = vaddq_f32(c1[v], r1);
        c2[v] = vaddq_f32(c2[v], r2);
        c3[v] = vaddq_f32(c3[v], r3);
      }
    }
    if (t.col_bias)
      for (int v = 0; v < V; ++v) {
        const float32x4_t cb = vld1q_f32(t.col_bias + v * 4);
        c0[v] = vaddq_f32(c0[v], cb);
        c1[v] = vaddq_f32(c1[v], cb);
        c2[v] = vaddq_f32(c2[v], cb);
        c3[v] = vaddq_f32(c3[v], cb);
      }
    // Compare-and-select rather than FMAX/FMIN so a NaN passes through as in
    // the portable kernel.
    const float32x4_t lo = vdupq_n_f32(t.lo), hi = vdupq_n_f32(t.hi);
    if (t.leaky) {
      // (a > b ? a : b) with the value first: a NaN becomes lo.
      const float32x4_t sl = vdupq_n_f32(t.slope);
      auto leaky = [&](float32x4_t x) {
        const float32x4_t l = vmulq_f32(x, sl);
        x = vbslq_f32(vcgtq_f32(x, l), x, l);
        return vbslq_f32(vcgtq_f32(x, lo), x, lo);
      };
      for (int v = 0; v < V; ++v) {
        c0[v] = leaky(c0[v]);
        c1[v] = leaky(c1[v]);
        c2[v] = leaky(c2[v]);
        c3[v] = leaky(c3[v]);
      }
    } else {
      for (int v = 0; v < V; ++v) {
        c0[v] = vbslq_f32(vcltq_f32(c0[v], lo), lo, c0[v]);
        c0[v] = vbslq_f32(vcgtq_f32(c0[v], hi), hi, c0[v]);
        c1[v] = vbslq_f32(vcltq_f32(c1[v], lo), lo, c1[v]);
        c1[v] = vbslq_f32(vcgtq_f32(c1[v], hi), hi, c1[v]);
        c2[v] = vbslq_f32(vcltq_f32(c2[v], lo), lo, c2[v]);
        c2[v] = vbslq_f32(vcgtq_f32(c2[v], hi), hi, c2[v]);
        c3[v] = vbslq_f32(vcltq_f32(c3[v], lo), lo, c3[v]);
        c3[v] = vbslq_f32(vcgtq_f32(c3[v], hi), hi, c3[v]);
      }
    }
  }
  for (int v = 0; v < V; ++v) {
    vst1q_f32(c + v * 4, c0[v]);
    vst1q_f32(c + ldc + v * 4, c1[v]);
    vst1q_f32(c + 2 * ldc + v * 4, c2[v]);
    vst1q_f32(c + 3 * ldc + v * 4, c3[v]);
  }
}

void FullStrips(const Tile& t, int strips) {
  if (strips == 3) Full<3>(t);
  else if (strips == 2) Full<2>(t);
  else Full<1>(t);
}

}  // namespace

void TileNeon(const Tile& t) {
  RunTile(t, [](const Tile& u, int strips) { ForSegments(u, strips, FullStrips); });
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
