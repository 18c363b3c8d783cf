// SPDX-License-Identifier: Apache-2.0
// The blocked SGEMM described in gemm.h.
#include "kernels/gemm.h"

namespace epctx {
namespace kern {
namespace {

// Register tile kMr x kNr: 4 x 8 floats = 8 SSE / 4 AVX / 8 NEON registers of
// accumulators, leaving room for the B row and the A broadcast.
constexpr int64_t kMr = 4;
constexpr int64_t kNr = 8;
// Cache blocks: an A panel (kMr x kKc = 4 KB) and a B panel (kKc x kNr = 8 KB)
// fit in L1; the packed B block (kKc x kNc = 256 KB) fits in L2.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 64;
constexpr int64_t kNc = 256;

int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Distance between packed B panels: one cache line more than the panel, so
// the panels written side by side while packing a row of B fall into
// different cache sets (kc * kNr floats is a power of two for full slices).
int64_t PanelStrideB(int64_t kc) { return kc * kNr + 16; }

// Packs rows [0, mc) x cols [0, kc) of op(A) (already offset) into panels of
// kMr rows: dst[panel][k][r]. Rows past mc are zero.
void PackA(bool trans, const float* A, int64_t lda, int64_t mc, int64_t kc,
           float* dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += kMr) {
    int64_t rows = Min(kMr, mc - i0);
    for (int64_t k = 0; k < kc; ++k) {
      for (int64_t r = 0; r < kMr; ++r) {
        float v = 0.0f;
        if (r < rows) v = trans ? A[k * lda + i0 + r] : A[(i0 + r) * lda + k];
        dst[r] = v;
      }
      dst += kMr;
    }
  }
}

// Packs rows [0, kc) x cols [0, nc) of op(B) into panels of kNr columns:
// dst[panel][k][j]. Columns past nc are zero. The untransposed case walks B
// row by row so the reads stream; walking panel by panel instead re-reads
// every row once per panel with a large stride, which thrashes the cache
// sets when ldb is (close to) a power of two.
void PackB(bool trans, const float* B, int64_t ldb, int64_t kc, int64_t nc,
           float* dst) {
  const int64_t full = nc / kNr * kNr;
  const int64_t panel_size = PanelStrideB(kc);
  if (!trans) {
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = B + k * ldb;
      float* d = dst + k * kNr;
      for (int64_t j0 = 0; j0 < full; j0 += kNr) {
        float* __restrict p = d + (j0 / kNr) * panel_size;
        for (int64_t j = 0; j < kNr; ++j) p[j] = src[j0 + j];
      }
      if (full < nc) {
        float* p = d + (full / kNr) * panel_size;
        for (int64_t j = 0; j < kNr; ++j) p[j] = full + j < nc ? src[full + j] : 0.0f;
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += kNr) {
    const int64_t cols = Min(kNr, nc - j0);
    float* d = dst + (j0 / kNr) * panel_size;
    for (int64_t k = 0; k < kc; ++k) {
      for (int64_t j = 0; j < kNr; ++j)
        d[j] = j < cols ? B[(j0 + j) * ldb + k] : 0.0f;
      d += kNr;
    }
  }
}

// c (+)= A panel (kc x kMr) times B panel (kc x kNr).
//
// The accumulators are GCC/Clang generic vectors (4 floats) rather than
// arrays: with arrays g++ -O2 vectorises the j loop but keeps the tile in
// memory (a load and store per FMA); as named vector values the 8
// accumulators stay in registers for the whole K slice. The generic vector
// type lowers to SSE on x86-64, NEON on aarch64/armhf and scalar code
// elsewhere; no target intrinsics.
typedef float V4 __attribute__((vector_size(16)));

inline V4 LoadV4(const float* p) {
  V4 v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

// Adds (or, when `first`, stores) the 4x8 tile product into c (row stride
// ldc floats; c is the contiguous accumulation block, never the caller's C).
inline void MicroKernel(int64_t kc, const float* __restrict a,
                        const float* __restrict b, float* __restrict c,
                        int64_t ldc, bool first) {
  static_assert(kMr == 4 && kNr == 8, "micro-kernel is written for 4x8");
  V4 c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {},
     c31 = {};
  for (int64_t k = 0; k < kc; ++k) {
    const V4 b0 = LoadV4(b), b1 = LoadV4(b + 4);
    const float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    c00 += a0 * b0;
    c01 += a0 * b1;
    c10 += a1 * b0;
    c11 += a1 * b1;
    c20 += a2 * b0;
    c21 += a2 * b1;
    c30 += a3 * b0;
    c31 += a3 * b1;
    a += kMr;
    b += kNr;
  }
  if (!first) {
    c00 += LoadV4(c);
    c01 += LoadV4(c + 4);
    c10 += LoadV4(c + ldc);
    c11 += LoadV4(c + ldc + 4);
    c20 += LoadV4(c + 2 * ldc);
    c21 += LoadV4(c + 2 * ldc + 4);
    c30 += LoadV4(c + 3 * ldc);
    c31 += LoadV4(c + 3 * ldc + 4);
  }
  __builtin_memcpy(c, &c00, 16);
  __builtin_memcpy(c + 4, &c01, 16);
  __builtin_memcpy(c + ldc, &c10, 16);
  __builtin_memcpy(c + ldc + 4, &c11, 16);
  __builtin_memcpy(c + 2 * ldc, &c20, 16);
  __builtin_memcpy(c + 2 * ldc + 4, &c21, 16);
  __builtin_memcpy(c + 3 * ldc, &c30, 16);
  __builtin_memcpy(c + 3 * ldc + 4, &c31, 16);
}

}  // namespace

uint64_t SgemmWorkspaceFloats(int64_t M, int64_t N, int64_t K) {
  int64_t kc = Min(K, kKc);
  if (kc < 1) kc = 1;
  const int64_t mc = RoundUp(Min(M, kMc) < 1 ? 1 : Min(M, kMc), kMr);
  const int64_t nc = RoundUp(Min(N, kNc) < 1 ? 1 : Min(N, kNc), kNr);
  return static_cast<uint64_t>(mc * kc + nc / kNr * PanelStrideB(kc) + mc * nc);
}

void Sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
           float alpha, const float* A, int64_t lda, const float* B,
           int64_t ldb, float beta, float* C, int64_t ldc, float* workspace) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    // op(A) * op(B) is all zeros: only the beta scaling remains.
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  const int64_t kc_max = Min(K, kKc);
  const int64_t mc_max = RoundUp(Min(M, kMc), kMr);
  const int64_t nc_max = RoundUp(Min(N, kNc), kNr);
  float* packed_a = workspace;
  float* packed_b = packed_a + mc_max * kc_max;
  // The mc x nc block of C accumulates here over all K slices and is
  // written to C once: C rows are ldc apart, and read-modify-writing them
  // per K slice thrashes cache sets when ldc is near a power of two.
  float* block = packed_b + nc_max / kNr * PanelStrideB(kc_max);

  for (int64_t jc = 0; jc < N; jc += kNc) {
    const int64_t nc = Min(kNc, N - jc);
    const int64_t ldb_block = RoundUp(nc, kNr);
    for (int64_t ic = 0; ic < M; ic += kMc) {
      const int64_t mc = Min(kMc, M - ic);
      for (int64_t pc = 0; pc < K; pc += kKc) {
        const int64_t kc = Min(kKc, K - pc);
        // B is packed once per (jc, pc) when M fits one row block, the
        // common case; otherwise once per row block (cost K*nc against
        // 2*mc*K*nc flops).
        const float* b_src = trans_b ? B + jc * ldb + pc : B + pc * ldb + jc;
        PackB(trans_b, b_src, ldb, kc, nc, packed_b);
        const float* a_src = trans_a ? A + pc * lda + ic : A + ic * lda + pc;
        PackA(trans_a, a_src, lda, mc, kc, packed_a);
        for (int64_t jr = 0; jr < nc; jr += kNr)
          for (int64_t ir = 0; ir < mc; ir += kMr)
            MicroKernel(kc, packed_a + ir * kc,
                        packed_b + jr / kNr * PanelStrideB(kc),
                        block + ir * ldb_block + jr, ldb_block, pc == 0);
      }
      for (int64_t r = 0; r < mc; ++r) {
        float* __restrict crow = C + (ic + r) * ldc + jc;
        const float* __restrict brow = block + r * ldb_block;
        if (beta == 0.0f) {
          for (int64_t j = 0; j < nc; ++j) crow[j] = alpha * brow[j];
        } else {
          for (int64_t j = 0; j < nc; ++j) crow[j] = alpha * brow[j] + beta * crow[j];
        }
      }
    }
  }
}

}  // namespace kern
}  // namespace epctx
