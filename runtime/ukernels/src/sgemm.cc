// SPDX-License-Identifier: Apache-2.0
// The packed SGEMM of sgemm.h, after Goto & van de Geijn ("Anatomy of
// high-performance matrix multiplication"): C is computed in blocks of kNc
// columns; for each, K is cut into slices of kc (SgemmKc) and the kc x kNc slice of
// op(B) is packed into panels of 48 columns (the block tile's width), each
// panel its kc rows of 48 floats one after the other, zero-padded to 8
// columns (so strips lie side by side: one load per 16 columns on AVX-512,
// edges need no special case and the transposes are absorbed here), that
// stay in L2; for every kMc-row block the kMc x kc slice of op(A) is packed
// into 8-row panels. The block tile (TileKernel2, 8 x 48) then runs each
// B panel (in L1) down every A panel. Tiles accumulate into C over the K
// slices; the last slice adds the biases and clamps. A panel is one
// sequential run of memory: a tile reads its k steps 192 bytes apart,
// never a 96-byte piece of a block-wide row (rows 1.6 KiB apart, which a
// matrix-vector product, M = 1, streamed from L3 at 13 GB/s against ORT's
// 33 on its strip-major packing).
//
// alpha is folded into packed A; beta scales C once before the first slice.
#include "epctx_uk/sgemm.h"

#include "epctx_uk/elementwise.h"

#include "epctx_uk/narrow.h"
#include "vec4.h"

namespace epctx {
namespace uk {
namespace {

constexpr int64_t kKc = 256;       // the longest K slice (SgemmKc)
constexpr int64_t kMc = 72;        // 9 panels of 8 rows
constexpr int64_t kNc = 384;       // 8 slices of the 48-column block tile
constexpr int32_t kNarrowMax = 4;  // columns of a last tile the narrow kernel takes

int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
// Floats of the packed B panels of kc rows x nc columns: panels of kNr2
// columns, kc rows of kNr2 floats each (whole cache lines: a zmm load that
// straddles two lines costs two).
int64_t PanelsFloats(int64_t kc, int64_t nc) { return kc * RoundUp(nc, kNr2); }
// Floats of packed A, rounded so packed B after it starts on a cache line
// (with a 64-byte aligned workspace).
int64_t PackedAFloats(int64_t mc, int64_t kc) { return RoundUp(mc * kc, 16); }

using detail::Load4;
using detail::Store4;
using detail::V4;

void PackB(bool trans, const float* B, int64_t ldb, int64_t kc, int64_t nc, float* dst, int64_t ks);

// Rows [0, mc) x cols [0, kc) of op(A) (already offset), times alpha, into
// panels of kMr2 rows: dst[panel][k][r]; rows past mc are zero. A whole
// panel of an untransposed A is PackB's transposed case (8 rows x 4 k by
// vector loads and transposes), then scaled.
void PackA(bool trans, const float* A, int64_t lda, int64_t mc, int64_t kc, float alpha,
           float* dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += kMr2) {
    const int64_t rows = Min(kMr2, mc - i0);
    if (!trans && rows == kMr2) {
      PackB(true, A + i0 * lda, lda, kc, kMr2, dst, kMr2);
      if (alpha != 1.0f)
        for (int64_t i = 0; i < kc * kMr2; ++i) dst[i] *= alpha;
      dst += kc * kMr2;
      continue;
    }
    // A partial panel (M = 1 for a vector times a matrix): zeroed once,
    // then each real row written down its lane.
    __builtin_memset(dst, 0, static_cast<unsigned long>(kc * kMr2) * sizeof(float));
    for (int64_t r = 0; r < rows; ++r) {
      float* __restrict d = dst + r;
      if (trans)
        for (int64_t k = 0; k < kc; ++k) d[k * kMr2] = alpha * A[k * lda + i0 + r];
      else
        for (int64_t k = 0; k < kc; ++k) d[k * kMr2] = alpha * A[(i0 + r) * lda + k];
    }
    dst += kc * kMr2;
  }
}

// Rows [0, kc) x cols [0, nc) of op(B) into dst[k * ks + j]; columns from nc
// to the next multiple of 8 are zero. The untransposed case copies B row by
// row; the transposed one reads 8 rows of B (8 columns of op(B)) x 4 k at a
// time with vector loads and two 4x4 transposes.
void PackB(bool trans, const float* B, int64_t ldb, int64_t kc, int64_t nc, float* dst,
           int64_t ks) {
  const int64_t padded = RoundUp(nc, kStrip);
  if (!trans) {
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = B + k * ldb;
      float* __restrict d = dst + k * ks;
      for (int64_t j = 0; j < nc; ++j) d[j] = src[j];
      for (int64_t j = nc; j < padded; ++j) d[j] = 0.0f;
    }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += kStrip) {
    const int64_t cols = Min(kStrip, nc - j0);
    int64_t k = 0;
    if (cols == kStrip)
      for (; k + 4 <= kc; k += 4) {
        float* d = dst + k * ks + j0;
        const float* b = B + j0 * ldb + k;
        for (int h = 0; h < 2; ++h, b += 4 * ldb) {
          const V4 r0 = Load4(b), r1 = Load4(b + ldb), r2 = Load4(b + 2 * ldb),
                   r3 = Load4(b + 3 * ldb);
          const V4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
          const V4 t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
          const V4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
          const V4 t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
          Store4(d + 4 * h, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
          Store4(d + ks + 4 * h, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
          Store4(d + 2 * ks + 4 * h, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
          Store4(d + 3 * ks + 4 * h, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
        }
      }
    for (; k < kc; ++k)
      for (int64_t j = 0; j < kStrip; ++j)
        dst[k * ks + j0 + j] = j < cols ? B[(j0 + j) * ldb + k] : 0.0f;
  }
}

// Rows [0, kc) x cols [0, nc) of op(B) (already offset) into panels of
// kNr2 columns at dst: panel p's row k at dst[(p * kstep + k) * kNr2],
// kstep floats-rows apart (kc for Sgemm's own slices, K for a PackedB).
// Columns past the last whole strip are never read; `zero_tail` zeroes
// them (a PackedB's bytes do not depend on the memory's).
void PackPanels(bool trans, const float* B, int64_t ldb, int64_t kc, int64_t nc, float* dst,
                int64_t kstep, bool zero_tail) {
  for (int64_t j0 = 0; j0 < nc; j0 += kNr2) {
    const int64_t w = Min(kNr2, nc - j0);
    float* panel = dst + (j0 / kNr2) * kstep * kNr2;
    PackB(trans, trans ? B + j0 * ldb : B + j0, ldb, kc, w, panel, kNr2);
    if (zero_tail)
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = RoundUp(w, kStrip); j < kNr2; ++j) panel[k * kNr2 + j] = 0.0f;
  }
}

// Whether Sgemm reads op(B) in place instead of packing it: untransposed,
// its rows not a multiple of 4 KiB apart (they would share L1's sets) and
// all of its K x N in L2 (1 MiB), so a tile's K rows come from L2 at
// most. Then a packed slice, a copy of K x N floats before M x K x N
// multiply-adds, costs more than it saves: MobileNetV2 on the CPU 7.2 ->
// 6.6 ms (its 1x1 convolutions, 16..960 channels on 7x7..112x112 maps),
// MnasNet 7.6 -> 7.0, ResNet-50 unchanged (its large 1x1s pass 1 MiB).
// The same rule as the vnpu dense 1x1's.
bool InPlaceB(const Gemm& g) {
  return !g.packed_b && !g.pack_b && !g.trans_b && g.ldb % 1024 != 0 &&
         g.K * g.ldb <= (int64_t(1) << 18);
}

}  // namespace

uint64_t SgemmPackedBFloats(int64_t K, int64_t N) {
  if (K <= 0 || N <= 0) return 0;
  return static_cast<uint64_t>(PanelsFloats(K, N));
}

void SgemmPackB(bool trans_b, const float* B, int64_t ldb, int64_t K, int64_t N, float* dst) {
  PackPanels(trans_b, B, ldb, K, N, dst, K, true);
}

uint64_t SgemmPackedAFloats(int64_t M, int64_t K) {
  if (K <= 0 || M <= 0) return 0;
  return static_cast<uint64_t>(RoundUp(M, kMr2) * K);
}

int64_t SgemmKc(Isa isa) { return Min(BlockKc(isa), kKc); }

void SgemmPackA(bool trans_a, const float* A, int64_t lda, int64_t M, int64_t K, float alpha,
                float* dst) {
  const int64_t rows = RoundUp(M, kMr2), step = SgemmKc(Isa::kAuto);
  for (int64_t pc = 0; pc < K; pc += step) {
    const int64_t kc = Min(step, K - pc);
    PackA(trans_a, trans_a ? A + pc * lda : A + pc, lda, M, kc, alpha, dst + pc * rows);
  }
}

uint64_t SgemmWorkspaceFloats(int64_t M, int64_t N, int64_t K) {
  const int64_t kc = K < 1 ? 1 : Min(K, kKc);
  const int64_t mc = RoundUp(M < 1 ? 1 : Min(M, kMc), kMr2);
  const int64_t nc = N < 1 ? 1 : Min(N, kNc);
  return static_cast<uint64_t>(PackedAFloats(mc, kc) + PanelsFloats(kc, nc));
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
  const TileFn block = TileKernel2(ResolveIsa(isa));
  // A last tile of at most kNarrowMax columns (a 7x7 map's 49th pixel, a
  // 14x14 one's last 4) goes to the narrow kernel, rows in the vectors,
  // where the ISA has one: the block tile would compute 8 padded columns
  // per row. Not with column biases (it has none). Wider ones keep the
  // block tile: the narrow kernel reads A once per 3 columns (an STFT's 5
  // frames, 257 x 512 weights, ran at 0.6x on it).
  const NarrowFn narrow = g.col_bias ? nullptr : NarrowKernel(ResolveIsa(isa));
  // A PackedA is in SgemmPackA's slices, whatever the tile's ISA.
  const int64_t step = SgemmKc(g.packed_a ? Isa::kAuto : isa);
  const int64_t kc_max = Min(K, step);
  const int64_t mc_max = RoundUp(Min(M, kMc), kMr2);
  float* packed_a = workspace;
  float* packed_b = packed_a + PackedAFloats(mc_max, kc_max);
  const bool in_place = InPlaceB(g);
  Tile t{};
  t.a_rs = 1;
  t.a_ks = kMr2;
  t.b_ss = kStrip;
  t.b_ks = kNr2;
  t.ldc = g.ldc;
  t.lo = g.lo;
  t.hi = g.hi;
  for (int64_t jc = 0; jc < N; jc += kNc) {
    const int64_t nc = Min(kNc, N - jc);
    for (int64_t pc = 0; pc < K; pc += step) {
      const int64_t kc = Min(step, K - pc);
      if (g.packed_b || in_place) {
        // Read in place, tile by tile (below).
      } else if (g.pack_b) {
        for (int64_t j0 = 0; j0 < nc; j0 += kNr2)
          g.pack_b(g.pack_b_ctx, pc, kc, jc + j0, Min(kNr2, nc - j0),
                   packed_b + (j0 / kNr2) * kc * kNr2, kStrip, kNr2);
      } else {
        const float* b_src = g.trans_b ? g.B + jc * g.ldb + pc : g.B + pc * g.ldb + jc;
        PackPanels(g.trans_b, b_src, g.ldb, kc, nc, packed_b, kc, false);
      }
      t.kc = kc;
      t.accumulate = pc > 0 || g.beta != 0.0f;
      t.last = pc + kc == K;
      for (int64_t ic = 0; ic < M; ic += kMc) {
        const int64_t mc = Min(kMc, M - ic);
        const float* a_panels = packed_a;
        if (g.packed_a) {
          a_panels =
              g.packed_a->data + pc * RoundUp(g.packed_a->M, kMr2) + (g.packed_a_row + ic) * kc;
        } else {
          const float* a_src = g.trans_a ? g.A + pc * g.lda + ic : g.A + ic * g.lda + pc;
          PackA(g.trans_a, a_src, g.lda, mc, kc, g.alpha, packed_a);
        }
        for (int64_t jr = 0; jr < nc; jr += kNr2) {
          t.b_ks = kNr2;
          if (g.packed_b) {
            // A 48-column tile at a multiple of 48 is one panel.
            const int64_t panel = (g.packed_b_col + jc + jr) / kNr2;
            t.b = g.packed_b->data + (panel * K + pc) * kNr2;
          } else if (in_place) {
            // Whole strips from B's rows; a last partial one (a tile
            // reads 8 columns) packed once per K slice.
            const int64_t cols = Min(kNr2, nc - jr);
            const float* src = g.B + pc * g.ldb + jc + jr;
            if (cols % kStrip == 0) {
              t.b = src;
              t.b_ks = g.ldb;
            } else {
              if (ic == 0) PackB(false, src, g.ldb, kc, cols, packed_b, kNr2);
              t.b = packed_b;
            }
          } else {
            t.b = packed_b + (jr / kNr2) * kc * kNr2;
          }
          t.cols = static_cast<int32_t>(Min(kNr2, nc - jr));
          t.col_bias = g.col_bias ? g.col_bias + jc + jr : nullptr;
          if (narrow && t.cols <= kNarrowMax) {
            NarrowTile nt{};
            nt.kc = kc;
            nt.a = a_panels;
            nt.a_ps = kc * kMr2;
            nt.b = t.b;
            nt.b_ks = t.b_ks;
            nt.c = g.C + ic * g.ldc + jc + jr;
            nt.ldc = g.ldc;
            nt.rows = static_cast<int32_t>(mc);
            nt.cols = t.cols;
            nt.accumulate = t.accumulate;
            nt.last = t.last;
            nt.row_bias = g.row_bias ? g.row_bias + ic : nullptr;
            nt.lo = g.lo;
            nt.hi = g.hi;
            narrow(nt);
            continue;
          }
          for (int64_t ir = 0; ir < mc; ir += kMr2) {
            t.a = a_panels + ir * kc;
            t.rows = static_cast<int32_t>(Min(kMr2, mc - ir));
            t.c = g.C + (ic + ir) * g.ldc + jc + jr;
            t.row_bias = g.row_bias ? g.row_bias + ic + ir : nullptr;
            block(t);
          }
        }
      }
    }
  }
}

void SgemmBt(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
             int64_t ldb, float* C, int64_t ldc, float* workspace) {
  if (M > 4) {
    Gemm g;
    g.trans_b = true;
    g.M = M, g.N = N, g.K = K;
    g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = C, g.ldc = ldc;
    Sgemm(g, workspace);
    return;
  }
  for (int64_t m = 0; m < M; ++m) DotRows(A + m * lda, B, ldb, N, K, C + m * ldc);
}

}  // namespace uk
}  // namespace epctx
