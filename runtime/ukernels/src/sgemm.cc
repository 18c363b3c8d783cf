// SPDX-License-Identifier: Apache-2.0
// The packed SGEMM of sgemm.h, after Goto & van de Geijn ("Anatomy of
// high-performance matrix multiplication"): C is computed in blocks of kNc
// columns; for each, K is cut into slices of kKc and the kKc x kNc slice of
// op(B) is packed into 8-wide strips (contiguous, zero-padded, so edges need
// no special case and the transposes are absorbed here) that stay in L2; for
// every kMc-row block the kMc x kKc slice of op(A) is packed into 4-row
// panels that stay in L1 while the tile kernel sweeps the B strips. Tiles
// accumulate into C over the K slices; the last slice adds the biases and
// clamps. Packed strips are spaced one cache line more than their size, so
// the strips written side by side while packing a row of B fall into
// different cache sets (kKc x 8 floats is a power of two).
//
// alpha is folded into packed A; beta scales C once before the first slice.
#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {
namespace {

constexpr int64_t kKc = 128;
constexpr int64_t kMc = 72;
constexpr int64_t kNc = 384;  // a multiple of the 24-column tile

int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t StripStride(int64_t kc) { return kc * kStrip + 16; }

typedef float V4 __attribute__((vector_size(16)));
inline V4 Load4(const float* p) {
  V4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void Store4(float* p, V4 v) { __builtin_memcpy(p, &v, sizeof v); }

// Rows [0, mc) x cols [0, kc) of op(A) (already offset), times alpha, into
// panels of kMr rows: dst[panel][k][r]; rows past mc are zero.
void PackA(bool trans, const float* A, int64_t lda, int64_t mc, int64_t kc, float alpha,
           float* dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += kMr) {
    const int64_t rows = Min(kMr, mc - i0);
    if (!trans && rows == kMr) {
      const float* r0 = A + i0 * lda;
      for (int64_t k = 0; k < kc; ++k, dst += kMr) {
        dst[0] = alpha * r0[k];
        dst[1] = alpha * r0[lda + k];
        dst[2] = alpha * r0[2 * lda + k];
        dst[3] = alpha * r0[3 * lda + k];
      }
      continue;
    }
    for (int64_t k = 0; k < kc; ++k, dst += kMr)
      for (int64_t r = 0; r < kMr; ++r)
        dst[r] = r < rows ? alpha * (trans ? A[k * lda + i0 + r] : A[(i0 + r) * lda + k]) : 0.0f;
  }
}

// Rows [0, kc) x cols [0, nc) of op(B) into strips of 8 columns:
// dst[strip][k][j]; columns past nc are zero. The untransposed case walks B
// row by row so reads stream; walking strip by strip would re-read every row
// once per strip with a large stride, which thrashes the cache sets when ldb
// is (close to) a power of two.
void PackB(bool trans, const float* B, int64_t ldb, int64_t kc, int64_t nc, float* dst) {
  const int64_t full = nc / kStrip * kStrip;
  const int64_t ss = StripStride(kc);
  if (!trans) {
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = B + k * ldb;
      float* d = dst + k * kStrip;
      for (int64_t j0 = 0; j0 < full; j0 += kStrip) {
        float* __restrict p = d + (j0 / kStrip) * ss;
        for (int64_t j = 0; j < kStrip; ++j) p[j] = src[j0 + j];
      }
      if (full < nc) {
        float* p = d + (full / kStrip) * ss;
        for (int64_t j = 0; j < kStrip; ++j) p[j] = full + j < nc ? src[full + j] : 0.0f;
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += kStrip) {
    const int64_t cols = Min(kStrip, nc - j0);
    float* d = dst + (j0 / kStrip) * ss;
    int64_t k = 0;
    if (cols == kStrip)  // 8 rows x 4 k at a time: vector loads, two 4x4 transposes
      for (; k + 4 <= kc; k += 4, d += 4 * kStrip) {
        const float* b = B + j0 * ldb + k;
        for (int h = 0; h < 2; ++h, b += 4 * ldb) {
          const V4 r0 = Load4(b), r1 = Load4(b + ldb), r2 = Load4(b + 2 * ldb),
                   r3 = Load4(b + 3 * ldb);
          const V4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
          const V4 t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
          const V4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
          const V4 t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
          Store4(d + 4 * h, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
          Store4(d + kStrip + 4 * h, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
          Store4(d + 2 * kStrip + 4 * h, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
          Store4(d + 3 * kStrip + 4 * h, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
        }
      }
    for (; k < kc; ++k, d += kStrip)
      for (int64_t j = 0; j < kStrip; ++j) d[j] = j < cols ? B[(j0 + j) * ldb + k] : 0.0f;
  }
}

}  // namespace

uint64_t SgemmWorkspaceFloats(int64_t M, int64_t N, int64_t K) {
  const int64_t kc = K < 1 ? 1 : Min(K, kKc);
  const int64_t mc = RoundUp(M < 1 ? 1 : Min(M, kMc), kMr);
  const int64_t nc = RoundUp(N < 1 ? 1 : Min(N, kNc), kStrip);
  return static_cast<uint64_t>(mc * kc + nc / kStrip * StripStride(kc));
}

void Sgemm(const Gemm& g, float* workspace, Isa isa) {
  const int64_t M = g.M, N = g.N, K = g.K;
  if (M <= 0 || N <= 0) return;
  TileFn tile = TileKernel(isa);
  if (!tile) tile = TileKernel(Isa::kPortable);
  const bool scale_c = g.beta != 0.0f && g.beta != 1.0f;
  if (scale_c || K <= 0) {
    for (int64_t i = 0; i < M; ++i) {
      float* __restrict row = g.C + i * g.ldc;
      if (g.beta == 0.0f)
        for (int64_t j = 0; j < N; ++j) row[j] = 0.0f;
      else
        for (int64_t j = 0; j < N; ++j) row[j] *= g.beta;
    }
  }
  if (K <= 0) {
    // No product: C holds beta * C; the tile kernel adds the biases and
    // clamps over a zero-length K.
    Tile t{};
    t.kc = 0;
    t.a = g.A ? g.A : g.C;
    t.b = g.C;  // never read with kc == 0
    t.accumulate = true;
    t.last = true;
    t.lo = g.lo;
    t.hi = g.hi;
    t.ldc = g.ldc;
    for (int64_t i = 0; i < M; i += kMr)
      for (int64_t j = 0; j < N; j += kNr) {
        t.rows = static_cast<int32_t>(Min(kMr, M - i));
        t.cols = static_cast<int32_t>(Min(kNr, N - j));
        t.c = g.C + i * g.ldc + j;
        t.row_bias = g.row_bias ? g.row_bias + i : nullptr;
        t.col_bias = g.col_bias ? g.col_bias + j : nullptr;
        tile(t);
      }
    return;
  }
  const int64_t kc_max = Min(K, kKc);
  const int64_t mc_max = RoundUp(Min(M, kMc), kMr);
  float* packed_a = workspace;
  float* packed_b = packed_a + mc_max * kc_max;
  Tile t{};
  t.a_rs = 1;
  t.a_ks = kMr;
  t.b_ks = kStrip;
  t.ldc = g.ldc;
  t.lo = g.lo;
  t.hi = g.hi;
  for (int64_t jc = 0; jc < N; jc += kNc) {
    const int64_t nc = Min(kNc, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKc) {
      const int64_t kc = Min(kKc, K - pc);
      if (g.pack_b) {
        g.pack_b(g.pack_b_ctx, pc, kc, jc, nc, packed_b, StripStride(kc));
      } else {
        const float* b_src = g.trans_b ? g.B + jc * g.ldb + pc : g.B + pc * g.ldb + jc;
        PackB(g.trans_b, b_src, g.ldb, kc, nc, packed_b);
      }
      t.kc = kc;
      t.b_ss = StripStride(kc);
      t.accumulate = pc > 0 || g.beta != 0.0f;
      t.last = pc + kc == K;
      for (int64_t ic = 0; ic < M; ic += kMc) {
        const int64_t mc = Min(kMc, M - ic);
        const float* a_src = g.trans_a ? g.A + pc * g.lda + ic : g.A + ic * g.lda + pc;
        PackA(g.trans_a, a_src, g.lda, mc, kc, g.alpha, packed_a);
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          t.b = packed_b + jr / kStrip * t.b_ss;
          t.cols = static_cast<int32_t>(Min(kNr, nc - jr));
          t.col_bias = g.col_bias ? g.col_bias + jc + jr : nullptr;
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            t.a = packed_a + ir * kc;
            t.rows = static_cast<int32_t>(Min(kMr, mc - ir));
            t.c = g.C + (ic + ir) * g.ldc + jc + jr;
            t.row_bias = g.row_bias ? g.row_bias + ic + ir : nullptr;
            tile(t);
          }
        }
      }
    }
  }
}

}  // namespace uk
}  // namespace epctx
