// SPDX-License-Identifier: Apache-2.0
// The micro-kernel library (ukernels/): the best instruction set's tile and
// SGEMM against the portable kernel and a double-precision reference, on
// sizes that are not multiples of the 4 x 24 tile, K = 1, empty products,
// every transpose, biases, clamps and accumulation. Every vector kernel the
// CPU runs is checked on its own: AVX2+FMA and AVX-512 on x86-64, NEON on
// aarch64; elsewhere only the reference comparison bites.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "epctx_uk/depthwise.h"
#include "epctx_uk/elementwise.h"
#include "epctx_uk/im2col.h"
#include "epctx_uk/narrow.h"
#include "epctx_uk/pool.h"
#include "epctx_uk/rows.h"
#include "epctx_uk/sgemm.h"

namespace {

namespace uk = epctx::uk;

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// |a - b| within 1e-4 relative to the magnitude of the terms summed.
void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, double scale,
                 const char* what) {
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i]);
    if (!(err <= 1e-4 * scale + 1e-6)) {
      fprintf(stderr, "%s: element %zu is %.9g, expected %.9g\n", what, i, double(got[i]), want[i]);
      fail();
    }
  }
}

void best_isa_is_available_and_named(void**) {
  const uk::Isa best = uk::BestIsa();
  assert_true(best != uk::Isa::kAuto);
  assert_true(uk::IsaAvailable(best));
  assert_non_null(uk::TileKernel(best));
  assert_non_null(uk::TileKernel(uk::Isa::kPortable));
#if defined(__aarch64__)
  assert_int_equal(static_cast<int>(best), static_cast<int>(uk::Isa::kNeon));
#endif
  printf("ukernels: best instruction set %s\n", uk::IsaName(best));
}

// Every tile shape (rows 1..max_rows, cols 1..24, or 1..48 for a block
// tile) with strided A,
// unpacked-style B strides and a C wider than the tile: `best` and `port`
// (the portable kernel of the same row count) agree, and cells outside rows
// x cols keep their sentinel. segs > 1 runs K as that many slices.
// A is read through (a_rs, a_ks): by default both strided; (1, 8) is a
// packed panel and (37, 1) rows read in place, the layouts the x86 kernels
// have their own loops for.
void TileCases(uk::TileFn best, int64_t b_ss, int max_rows = uk::kMr, int segs = 1,
               bool leaky = false, int64_t a_rs = 37, int64_t a_ks = 5) {
  const uk::TileFn port =
      max_rows > uk::kMr ? uk::TileKernel2(uk::Isa::kPortable) : uk::TileKernel(uk::Isa::kPortable);
  const int max_cols = max_rows > uk::kMr ? uk::kNr2 : uk::kNr;
  const int64_t b_ks = 53, ldc = 55, a_seg = 3, b_seg = 11;
  const int64_t crows = max_rows + 1;
  for (int64_t kc : {0, 1, 2, 7, 33}) {
    const std::vector<float> a = Random(size_t(max_rows * a_rs + kc * a_ks + segs * a_seg + 1), 1);
    const std::vector<float> b = Random(size_t(kc * b_ks + 6 * b_ss + segs * b_seg + 8), 2);
    const std::vector<float> rb = Random(size_t(max_rows), 3), cb = Random(size_t(max_cols), 4);
    for (int rows = 1; rows <= max_rows; ++rows)
      for (int cols = 1; cols <= max_cols; ++cols)
        for (int mode = 0; mode < 4; ++mode) {
          std::vector<float> c0 = Random(size_t(crows * ldc), 5), c1 = c0;
          uk::Tile t{};
          t.kc = kc;
          t.a = a.data();
          t.a_rs = a_rs;
          t.a_ks = a_ks;
          t.b = b.data();
          t.b_ss = b_ss;
          t.b_ks = b_ks;
          t.ldc = ldc;
          t.rows = rows;
          t.cols = cols;
          t.accumulate = mode & 1;
          t.last = mode & 2;
          t.row_bias = rb.data();
          t.col_bias = cb.data();
          t.lo = -0.5f;
          t.hi = 0.75f;
          t.leaky = leaky;
          t.slope = 0.25f;
          t.segs = segs;
          t.a_seg = a_seg;
          t.b_seg = b_seg;
          t.c = c0.data();
          best(t);
          t.c = c1.data();
          port(t);
          std::vector<double> want(c0.size());
          for (size_t i = 0; i < c0.size(); ++i) want[i] = c1[i];
          ExpectClose(c0, want, double(kc * segs) + 2.0, "tile");
          const std::vector<float> orig = Random(size_t(crows * ldc), 5);
          for (int64_t r = 0; r < crows; ++r)
            for (int64_t j = 0; j < ldc; ++j)
              if (r >= rows || j >= cols) assert_true(c0[r * ldc + j] == orig[r * ldc + j]);
        }
  }
}

// Every vector instruction set this CPU runs (AVX-512 machines also run the
// AVX2 kernel), each on its own.
std::vector<uk::Isa> VectorIsas() {
  std::vector<uk::Isa> v;
  for (uk::Isa isa : {uk::Isa::kAvx2, uk::Isa::kAvx512, uk::Isa::kNeon})
    if (uk::IsaAvailable(isa)) v.push_back(isa);
  return v;
}

void avx512_implies_avx2(void**) {
  if (uk::IsaAvailable(uk::Isa::kAvx512)) assert_true(uk::IsaAvailable(uk::Isa::kAvx2));
  for (uk::Isa isa : VectorIsas()) assert_non_null(uk::TileKernel(isa));
}

// Both B layouts: strips side by side (b_ss == 8, one wide load on AVX-512)
// and strips apart (b_ss = 40).
void tile_matches_portable_on_every_edge_shape(void**) {
  for (uk::Isa isa : VectorIsas())
    for (int64_t b_ss : {8, 40}) {
      printf("ukernels: tile %s, B strip stride %d\n", uk::IsaName(isa), int(b_ss));
      TileCases(uk::TileKernel(isa), b_ss);
    }
  for (uk::Isa isa : VectorIsas())
    for (int64_t a_ks : {8, 1}) {
      const int64_t a_rs = a_ks == 8 ? 1 : 37;
      printf("ukernels: tile %s, A %s\n", uk::IsaName(isa), a_rs == 1 ? "panel" : "rows");
      TileCases(uk::TileKernel(isa), 8, uk::kMr, 1, false, a_rs, a_ks);
    }
}

// The block tile (TileKernel2, up to 8 x 48): every ISA against portable
// tiles, both B layouts, one and three K slices, clamp and leaky epilogues;
// on AVX-512 the full 8-row blocks of 16 to 48 columns are its own kernel.
void block_tile_matches_tiles_on_every_edge_shape(void**) {
  std::vector<uk::Isa> isas = VectorIsas();
  isas.push_back(uk::Isa::kPortable);
  for (uk::Isa isa : isas) {
    assert_non_null(uk::TileKernel2(isa));
    for (int64_t b_ss : {8, 40})
      for (int segs : {1, 3})
        for (bool leaky : {false, true}) {
          printf("ukernels: block tile %s, B strip stride %d, %d slice(s)%s\n", uk::IsaName(isa),
                 int(b_ss), segs, leaky ? ", leaky" : "");
          TileCases(uk::TileKernel2(isa), b_ss, uk::kMr2, segs, leaky);
        }
    // A as a packed panel (1, 8) and as rows in place (37, 1), B strips
    // side by side: the layouts of Sgemm's panels and of vnpu's GEMM.
    for (int64_t a_ks : {8, 1}) {
      const int64_t a_rs = a_ks == 8 ? 1 : 37;
      printf("ukernels: block tile %s, A %s\n", uk::IsaName(isa), a_rs == 1 ? "panel" : "rows");
      TileCases(uk::TileKernel2(isa), 8, uk::kMr2, 1, false, a_rs, a_ks);
    }
  }
}

// Tile::b_ps: B in two panels of 24 columns (uk::BlockPanelCols on AVX2,
// a dense convolution's im2col), columns 24..47 at b + b_ps, gives what the
// same block tile computes from those columns in 48-wide rows, on every
// edge shape, A as a packed panel and as rows.
void block_tile_reads_b_in_two_panels(void**) {
  std::vector<uk::Isa> isas = VectorIsas();
  isas.push_back(uk::Isa::kPortable);
  const int64_t ldc = 50;
  for (uk::Isa isa : isas) {
    const uk::TileFn tile = uk::TileKernel2(isa);
    printf("ukernels: block tile %s, B in 24-column panels\n", uk::IsaName(isa));
    for (int64_t kc : {1, 7, 33, 130})
      for (int64_t a_ks : {8, 1}) {
        const int64_t a_rs = a_ks == 8 ? 1 : kc + 3, b_ps = kc * uk::kNr + 5;
        const std::vector<float> a = Random(size_t(uk::kMr2 * a_rs + kc * a_ks), 31);
        const std::vector<float> panels = Random(size_t(2 * b_ps), 32);
        std::vector<float> rows(size_t(kc * uk::kNr2));
        for (int64_t k = 0; k < kc; ++k)
          for (int64_t j = 0; j < uk::kNr2; ++j)
            rows[size_t(k * uk::kNr2 + j)] =
                panels[size_t((j < uk::kNr ? 0 : b_ps) + k * uk::kNr + j % uk::kNr)];
        for (int r = 1; r <= uk::kMr2; ++r)
          for (int cols = 1; cols <= uk::kNr2; ++cols) {
            std::vector<float> c0 = Random(size_t(uk::kMr2 * ldc), 33), c1 = c0;
            uk::Tile t{};
            t.kc = kc;
            t.a = a.data();
            t.a_rs = a_rs;
            t.a_ks = a_ks;
            t.b_ss = 8;
            t.ldc = ldc;
            t.rows = r;
            t.cols = cols;
            t.accumulate = true;
            t.last = true;
            t.lo = -0.5f;
            t.hi = 0.75f;
            t.b = panels.data();
            t.b_ks = uk::kNr;
            t.b_ps = b_ps;
            t.c = c0.data();
            tile(t);
            t.b = rows.data();
            t.b_ks = uk::kNr2;
            t.b_ps = 0;
            t.c = c1.data();
            tile(t);
            std::vector<double> want(c1.begin(), c1.end());
            ExpectClose(c0, want, double(kc) + 2.0, "panels");
          }
      }
  }
}

// Tile::leaky: the epilogue's LeakyRelu-then-at-least-lo gives the same
// bits as ActivateRow's Act::kLeakyMax on every kernel and tile shape
// (partial tiles through RunTile's private copy), NaN (becomes lo), -0, +0
// and denormals included, for slopes 0.1, 0.5 and 1 (slope 0 is not
// fused: +inf * 0 would be a NaN).
void tile_leaky_epilogue_matches_leaky_max_bit_for_bit(void**) {
  std::vector<uk::TileFn> kernels{uk::TileKernel(uk::Isa::kPortable)};
  for (uk::Isa isa : VectorIsas()) kernels.push_back(uk::TileKernel(isa));
  const int64_t ldc = 26;
  std::vector<float> base = Random(size_t(4 * ldc), 21);
  const float specials[] = {__builtin_nanf(""), -0.0f,           0.0f, 1e-40f, -1e-40f, -3.0f, 2.5f,
                            -__builtin_inff(),  __builtin_inff()};
  for (size_t i = 0; i < base.size(); i += 3) base[i] = specials[(i / 3) % 9];
  for (float slope : {0.1f, 0.5f, 1.0f})
    for (float lo : {-0.25f, -__builtin_inff()})
      for (uk::TileFn k : kernels)
        for (int rows = 1; rows <= 4; ++rows)
          for (int cols = 1; cols <= 24; ++cols) {
            std::vector<float> c = base;
            uk::Tile t{};
            t.kc = 0;  // C = 0 + C, then the epilogue
            t.ldc = ldc;
            t.rows = rows;
            t.cols = cols;
            t.accumulate = true;
            t.last = true;
            t.leaky = true;
            t.slope = slope;
            t.lo = lo;
            t.hi = 0.5f;  // unused by the leaky epilogue
            t.c = c.data();
            k(t);
            for (int r = 0; r < 4; ++r) {
              std::vector<float> in(static_cast<size_t>(cols)), want(static_cast<size_t>(cols));
              for (int j = 0; j < cols; ++j) in[size_t(j)] = 0.0f + base[size_t(r * ldc + j)];
              uk::ActivateRow(uk::Act::kLeakyMax, in.data(), want.data(), cols, slope, lo,
                              uk::Isa::kPortable);
              for (int j = 0; j < ldc; ++j) {
                const float got = c[size_t(r * ldc + j)];
                const float exp =
                    r < rows && j < cols ? want[size_t(j)] : base[size_t(r * ldc + j)];
                assert_memory_equal(&got, &exp, sizeof got);
              }
            }
          }
}

// Tile::segs: a K of several slices (a convolution's taps: A and B offset by
// a_seg and b_seg per slice) in one call equals one call per slice, the later
// ones accumulating, bias and clamp on the last: exactly on the portable
// kernel (which runs slices that way), within rounding on every vector one
// (whose accumulators run on across slices), on every tile shape.
void tile_slices_equal_one_call_per_slice(void**) {
  const uk::TileFn port = uk::TileKernel(uk::Isa::kPortable);
  std::vector<uk::TileFn> kernels{port};
  for (uk::Isa isa : VectorIsas()) kernels.push_back(uk::TileKernel(isa));
  const int64_t a_rs = 3, a_ks = 11, b_ks = 24, ldc = 27, a_seg = 1, b_seg = 7;
  for (int32_t segs : {2, 3, 5})
    for (int64_t kc : {0, 1, 6, 24}) {
      const std::vector<float> a = Random(size_t(4 * a_rs + kc * a_ks + segs * a_seg + 1), 11);
      const std::vector<float> b = Random(size_t(kc * b_ks + segs * b_seg + 24), 12);
      const std::vector<float> rb = Random(4, 13), cb = Random(24, 14);
      for (int rows : {1, 3, 4})
        for (int cols : {5, 8, 16, 24})
          for (int mode = 0; mode < 4; ++mode)
            for (size_t ki = 0; ki < kernels.size(); ++ki) {
              uk::Tile t{};
              t.kc = kc;
              t.a = a.data();
              t.a_rs = a_rs;
              t.a_ks = a_ks;
              t.b = b.data();
              t.b_ss = 8;
              t.b_ks = b_ks;
              t.ldc = ldc;
              t.rows = rows;
              t.cols = cols;
              t.row_bias = rb.data();
              t.col_bias = cb.data();
              t.lo = -1.5f;
              t.hi = 1.75f;
              std::vector<float> one = Random(size_t(4 * ldc), 15), each = one;
              uk::Tile u = t;
              u.c = each.data();
              for (int32_t sg = 0; sg < segs; ++sg) {
                u.a = a.data() + sg * a_seg;
                u.b = b.data() + sg * b_seg;
                u.accumulate = (mode & 1) || sg > 0;
                u.last = (mode & 2) && sg == segs - 1;
                port(u);
              }
              t.segs = segs;
              t.a_seg = a_seg;
              t.b_seg = b_seg;
              t.accumulate = mode & 1;
              t.last = mode & 2;
              t.c = one.data();
              kernels[ki](t);
              if (ki == 0) {
                assert_memory_equal(one.data(), each.data(), one.size() * sizeof(float));
              } else {
                std::vector<double> want(each.begin(), each.end());
                ExpectClose(one, want, double(kc * segs) + 2.0, "tile slices");
              }
            }
    }
}

struct Case {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
  bool bias, clamp;
};

void RunCase(const Case& k, uk::Isa isa, std::vector<float>* out) {
  const int64_t lda = (k.ta ? k.M : k.K) + 3, ldb = (k.tb ? k.K : k.N) + 2, ldc = k.N + 5;
  const std::vector<float> A = Random(size_t((k.ta ? k.K : k.M) * lda + 1), 11);
  const std::vector<float> B = Random(size_t((k.tb ? k.N : k.K) * ldb + 1), 12);
  const std::vector<float> rb = Random(size_t(k.M + 1), 13), cb = Random(size_t(k.N + 1), 14);
  *out = Random(size_t(k.M * ldc + 1), 15);
  std::vector<float> ws(uk::SgemmWorkspaceFloats(k.M, k.N, k.K));
  uk::Gemm g;
  g.trans_a = k.ta;
  g.trans_b = k.tb;
  g.M = k.M;
  g.N = k.N;
  g.K = k.K;
  g.alpha = k.alpha;
  g.A = A.data();
  g.lda = lda;
  g.B = B.data();
  g.ldb = ldb;
  g.beta = k.beta;
  g.C = out->data();
  g.ldc = ldc;
  if (k.bias) {
    g.row_bias = rb.data();
    g.col_bias = cb.data();
  }
  if (k.clamp) {
    g.lo = -1.0f;
    g.hi = 2.0f;
  }
  uk::Sgemm(g, ws.data(), isa);
  if (isa != uk::Isa::kPortable) return;
  // Check the portable result against double precision here, once per case.
  const std::vector<float> C0 = Random(size_t(k.M * ldc + 1), 15);
  std::vector<double> want(C0.begin(), C0.end());
  for (int64_t i = 0; i < k.M; ++i)
    for (int64_t j = 0; j < k.N; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k.K; ++p)
        s += double(k.ta ? A[p * lda + i] : A[i * lda + p]) *
             double(k.tb ? B[j * ldb + p] : B[p * ldb + j]);
      double v = k.alpha * s + (k.beta != 0.0f ? k.beta * double(C0[i * ldc + j]) : 0.0);
      if (k.bias) v += double(rb[i]) + double(cb[j]);
      if (k.clamp) v = v < -1.0 ? -1.0 : (v > 2.0 ? 2.0 : v);
      want[i * ldc + j] = v;
    }
  ExpectClose(*out, want, double(k.K) + 4.0, "portable sgemm vs double");
}

void sgemm_best_matches_portable_and_reference(void**) {
  std::vector<Case> cases;
  const int64_t sizes[][3] = {{1, 1, 1},    {3, 5, 1},    {4, 24, 8},     {5, 25, 9},
                              {7, 23, 129}, {73, 385, 3}, {130, 50, 300}, {1, 100, 257},
                              {100, 1, 64}, {0, 5, 5},    {5, 0, 5},      {6, 7, 0}};
  for (const auto& s : sizes)
    for (int t = 0; t < 4; ++t)
      cases.push_back({s[0], s[1], s[2], bool(t & 1), bool(t & 2), 1.0f, 0.0f, false, false});
  cases.push_back({9, 30, 40, false, false, 0.5f, 1.0f, true, true});
  cases.push_back({9, 30, 40, true, true, 2.0f, -0.5f, true, false});
  cases.push_back({6, 7, 0, false, false, 1.0f, 0.25f, true, true});
  cases.push_back({33, 61, 200, false, false, 1.0f, 0.0f, true, true});
  for (const Case& k : cases) {
    std::vector<float> port;
    RunCase(k, uk::Isa::kPortable, &port);
    std::vector<double> want(port.begin(), port.end());
    for (uk::Isa isa : VectorIsas()) {
      std::vector<float> got;
      RunCase(k, isa, &got);
      ExpectClose(got, want, double(k.K) + 4.0, uk::IsaName(isa));
    }
  }
}

// C [M x N] = A [M x K] * B [K x N] (rows ldb apart), all row-major.
uk::Gemm Plain(int64_t M, int64_t N, int64_t K, const float* A, const float* B, int64_t ldb,
               float* C) {
  uk::Gemm g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.A = A;
  g.lda = K;
  g.B = B;
  g.ldb = ldb;
  g.C = C;
  g.ldc = N;
  return g;
}

// pack_b replaces B: a callback that packs the same matrix gives the same C.
void sgemm_pack_b_callback_matches_plain_b(void**) {
  const int64_t M = 10, N = 50, K = 300;
  const std::vector<float> A = Random(size_t(M * K), 21), B = Random(size_t(K * N), 22);
  std::vector<float> c0(size_t(M * N)), c1(size_t(M * N));
  std::vector<float> ws(uk::SgemmWorkspaceFloats(M, N, K));
  uk::Gemm g = Plain(M, N, K, A.data(), B.data(), N, c0.data());
  uk::Sgemm(g, ws.data());
  g.B = nullptr;
  g.C = c1.data();
  g.pack_b_ctx = B.data();
  g.pack_b = [](const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, float* dst,
                int64_t ss, int64_t ks) {
    const float* b = static_cast<const float*>(ctx);
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t j = 0; j < (nc + 7) / 8 * 8; ++j)
        dst[(j / 8) * ss + k * ks + j % 8] = j < nc ? b[(k0 + k) * 50 + j0 + j] : 0.0f;
  };
  uk::Sgemm(g, ws.data());
  for (size_t i = 0; i < c0.size(); ++i) assert_true(c0[i] == c1[i]);
}

// An untransposed B that fits L2 is read in place (its rows, a last
// partial strip packed); a transposed copy of it is packed: the two give
// the same bits on every instruction set, whole strips or not, and rows
// 4 KiB apart (packed again) too.
void sgemm_in_place_b_gives_packed_bits(void**) {
  const int64_t shapes[][4] = {{24, 96, 64, 96}, {17, 196, 40, 200}, {9, 50, 300, 1024}};
  for (const auto& sh : shapes) {
    const int64_t M = sh[0], N = sh[1], K = sh[2], ldb = sh[3];
    const std::vector<float> A = Random(size_t(M * K), 41), B = Random(size_t(K * ldb), 42);
    std::vector<float> bt(size_t(N * K));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) bt[size_t(j * K + k)] = B[size_t(k * ldb + j)];
    const std::vector<float> rb = Random(size_t(M), 43);
    for (uk::Isa isa : VectorIsas()) {
      std::vector<float> c0(size_t(M * N)), c1(size_t(M * N));
      std::vector<float> ws(uk::SgemmWorkspaceFloats(M, N, K));
      uk::Gemm g = Plain(M, N, K, A.data(), B.data(), ldb, c0.data());
      g.row_bias = rb.data();
      g.lo = -0.5f;
      uk::Sgemm(g, ws.data(), isa);
      g.trans_b = true;
      g.B = bt.data();
      g.ldb = K;
      g.C = c1.data();
      uk::Sgemm(g, ws.data(), isa);
      for (size_t i = 0; i < c0.size(); ++i)
        if (c0[i] != c1[i])
          fail_msg("%s M %lld N %lld K %lld: element %zu: %g in place, %g packed", uk::IsaName(isa),
                   (long long)M, (long long)N, (long long)K, i, double(c0[i]), double(c1[i]));
    }
  }
}

// One product over rows [i0, i1) x columns [j0, j1) of a larger one, with A
// and/or B pre-packed or not; every instruction set.
struct PackedCase {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
};

std::vector<float> RunPackedCase(const PackedCase& k, uk::Isa isa, bool pack_a, bool pack_b,
                                 int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const int64_t lda = (k.ta ? k.M : k.K) + 1, ldb = (k.tb ? k.K : k.N) + 3, ldc = k.N;
  const std::vector<float> A = Random(size_t((k.ta ? k.K : k.M) * lda + 1), 31);
  const std::vector<float> B = Random(size_t((k.tb ? k.N : k.K) * ldb + 1), 32);
  const std::vector<float> cb = Random(size_t(k.N + 1), 33);
  std::vector<float> C = Random(size_t(k.M * ldc + 1), 34);
  // Packed operands start on a cache line, as the session allocates them;
  // the filler shows any byte the packing leaves unwritten.
  std::vector<float> pa(uk::SgemmPackedAFloats(k.M, k.K) + 16, 7.0f);
  std::vector<float> pb(uk::SgemmPackedBFloats(k.K, k.N) + 16, 7.0f);
  float* pa64 =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(pa.data()) + 63) & ~uintptr_t{63});
  float* pb64 =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(pb.data()) + 63) & ~uintptr_t{63});
  uk::SgemmPackA(k.ta, A.data(), lda, k.M, k.K, k.alpha, pa64);
  uk::SgemmPackB(k.tb, B.data(), ldb, k.K, k.N, pb64);
  const uk::PackedA packed_a{pa64, k.M, k.K};
  const uk::PackedB packed_b{pb64, k.K, k.N};
  std::vector<float> ws(uk::SgemmWorkspaceFloats(k.M, k.N, k.K));
  uk::Gemm g;
  g.trans_a = k.ta;
  g.trans_b = k.tb;
  g.M = i1 - i0;
  g.N = j1 - j0;
  g.K = k.K;
  g.alpha = k.alpha;
  g.beta = k.beta;
  g.A = k.ta ? A.data() + i0 : A.data() + i0 * lda;
  g.lda = lda;
  g.B = k.tb ? B.data() + j0 * ldb : B.data() + j0;
  g.ldb = ldb;
  g.C = C.data() + i0 * ldc + j0;
  g.ldc = ldc;
  g.col_bias = cb.data() + j0;
  if (pack_a) {
    g.A = nullptr;
    g.packed_a = &packed_a;
    g.packed_a_row = i0;
  }
  if (pack_b) {
    g.B = nullptr;
    g.packed_b = &packed_b;
    g.packed_b_col = j0;
  }
  uk::Sgemm(g, ws.data(), isa);
  return C;
}

// Pre-packed A and B give the bits Sgemm's own packing gives, at shapes on
// and off every block edge (8-row panels, 48-column tiles, 72-row and
// 384-column blocks, 256-deep K slices), with transposes, alpha and beta,
// and over the row and column sub-ranges a thread split reads.
void sgemm_prepacked_operands_match_unpacked_bit_for_bit(void**) {
  const int64_t sizes[][3] = {{1, 1, 1},     {1, 384, 256}, {1, 385, 257},  {8, 48, 1},
                              {9, 49, 255},  {7, 23, 129},  {72, 384, 512}, {73, 769, 300},
                              {130, 50, 33}, {3, 1000, 70}, {200, 10, 513}, {16, 96, 0}};
  std::vector<uk::Isa> isas = VectorIsas();
  isas.push_back(uk::Isa::kPortable);
  for (const auto& s : sizes)
    for (int t = 0; t < 4; ++t) {
      const PackedCase k{
          s[0], s[1], s[2], bool(t & 1), bool(t & 2), t == 1 ? 0.5f : 1.0f, t == 3 ? 1.0f : 0.0f};
      for (uk::Isa isa : isas) {
        const std::vector<float> plain = RunPackedCase(k, isa, false, false, 0, k.M, 0, k.N);
        for (int p = 1; p < 4; ++p) {
          const std::vector<float> got =
              RunPackedCase(k, isa, (p & 1) != 0, (p & 2) != 0, 0, k.M, 0, k.N);
          assert_memory_equal(got.data(), plain.data(), got.size() * sizeof(float));
        }
        // Sub-ranges starting on the grid a thread split uses.
        const int64_t i0 = k.M > uk::kMr2 ? uk::kMr2 : 0, j0 = k.N > uk::kNr2 ? uk::kNr2 : 0;
        const std::vector<float> rows = RunPackedCase(k, isa, false, false, i0, k.M, 0, k.N);
        const std::vector<float> rows_packed = RunPackedCase(k, isa, true, true, i0, k.M, 0, k.N);
        assert_memory_equal(rows.data(), rows_packed.data(), rows.size() * sizeof(float));
        const std::vector<float> cols = RunPackedCase(k, isa, false, false, 0, k.M, j0, k.N);
        const std::vector<float> cols_packed = RunPackedCase(k, isa, true, true, 0, k.M, j0, k.N);
        assert_memory_equal(cols.data(), cols_packed.data(), cols.size() * sizeof(float));
      }
    }
}

// The packed sizes: no more than the operand rounded to the packing grid.
void sgemm_packed_sizes_are_bounded(void**) {
  assert_int_equal(uk::SgemmPackedBFloats(0, 5), 0);
  assert_int_equal(uk::SgemmPackedAFloats(5, 0), 0);
  assert_int_equal(uk::SgemmPackedAFloats(9, 10), 16 * 10);
  // 384 columns: eight panels of 48-float rows.
  assert_int_equal(uk::SgemmPackedBFloats(3, 384), 3 * 384);
  // 385: and a ninth for the one column.
  assert_int_equal(uk::SgemmPackedBFloats(3, 385), 3 * 432);
}

// WeightedRows on every instruction set, at every length up to past four
// vectors of the widest (so every tail width runs), with 0, 1 and 9 taps,
// against a double reference; y past n keeps its sentinel.
void weighted_rows_match_reference_at_every_length(void**) {
  std::vector<uk::Isa> isas = VectorIsas();
  isas.push_back(uk::Isa::kPortable);
  const std::vector<float> x = Random(9 * 80, 31), w = Random(9, 32);
  for (uk::Isa isa : isas)
    for (int64_t nt : {0, 1, 9})
      for (int64_t n = 0; n <= 70; ++n) {
        const float* rows[9];
        for (int64_t t = 0; t < nt; ++t) rows[t] = x.data() + t * 80 + t % 3;
        std::vector<float> y(size_t(n + 1), 7.0f);
        uk::WeightedRows(rows, w.data(), nt, 0.25f, y.data(), n, isa);
        std::vector<double> want(size_t(n + 1), 7.0);
        for (int64_t i = 0; i < n; ++i) {
          double a = 0.25;
          for (int64_t t = 0; t < nt; ++t) a += double(w[size_t(t)]) * rows[t][i];
          want[size_t(i)] = a;
        }
        ExpectClose(y, want, 10.0, uk::IsaName(isa));
      }
}

// The scalar rule PoolRow promises: the first largest tap, or the first NaN
// in tap order; or the sum in tap order times scale.
float PoolRef(uk::PoolOp op, const float* const* rows, int64_t nt, int64_t c, float scale) {
  float a = op == uk::PoolOp::kMax ? -INFINITY : 0.f;
  for (int64_t t = 0; t < nt; ++t) {
    const float v = rows[t][c];
    if (op != uk::PoolOp::kMax) a += v;
    else if (v > a || (std::isnan(v) && !std::isnan(a))) a = v;
  }
  return op == uk::PoolOp::kMax ? a : a * scale;
}

// PoolRow on every instruction set, strides 1 to 3, 1 to 9 taps, every
// length up to past four vectors of the widest, bit for bit against the
// scalar rule (a NaN average only NaN): with plain data, with NaNs of distinct payloads in some
// windows (the first one in tap order must win), and with equal maxima of
// both signs of zero (the first in tap order must win). Each row ends
// exactly at its last tap (the allocation ends there), and y past n keeps
// its sentinel.
void pool_rows_match_scalar_rule_bit_for_bit(void**) {
  std::vector<uk::Isa> isas = VectorIsas();
  isas.push_back(uk::Isa::kPortable);
  const uk::PoolOp ops[] = {uk::PoolOp::kMax, uk::PoolOp::kAverage};
  for (int data = 0; data < 3; ++data)
    for (int64_t stride = 1; stride <= 3; ++stride)
      for (int64_t nt = 1; nt <= 9; ++nt)
        for (int64_t n = 0; n <= 70; ++n) {
          // Tap t reads row t at columns t % 3 + i * stride: each row its
          // own allocation of exactly what the taps read.
          std::vector<std::vector<float>> x(static_cast<size_t>(nt));
          const float* rows[9];
          for (int64_t t = 0; t < nt; ++t) {
            const int64_t len = t % 3 + (n > 0 ? (n - 1) * stride + 1 : 0);
            x[size_t(t)] = Random(size_t(len), uint32_t(100 + t * 7 + n));
            std::vector<float>& r = x[size_t(t)];
            for (int64_t c = 0; c < len; ++c) {
              float& v = r[size_t(c)];
              if (data == 1 && (c * 7 + t * 3 + n) % 29 == 0) {
                uint32_t bits = 0x7fc00000u | uint32_t(t + 1);  // NaN, payload t + 1
                std::memcpy(&v, &bits, sizeof v);
              } else if (data == 2) {
                v = (c + t) % 4 == 0 ? 0.0f : (c + t) % 4 == 1 ? -0.0f : -v * v - 1.0f;
              }
            }
            rows[t] = r.data() + t % 3;
          }
          for (uk::PoolOp op : ops)
            for (uk::Isa isa : isas) {
              std::vector<float> y(size_t(n + 2), 7.0f);
              uk::PoolRow(op, rows, nt, stride, 1.0f / float(nt), y.data(), n, isa);
              for (int64_t i = 0; i < n + 2; ++i) {
                const float want =
                    i < n ? PoolRef(op, rows, nt, i * stride, 1.0f / float(nt)) : 7.0f;
                // A sum of NaNs may carry either payload (addition commutes).
                const bool same = std::memcmp(&y[size_t(i)], &want, sizeof want) == 0 ||
                                  (op == uk::PoolOp::kAverage && i < n && std::isnan(want) &&
                                   std::isnan(y[size_t(i)]));
                if (!same)
                  fail_msg("PoolRow %s op %d data %d stride %lld taps %lld n %lld: y[%lld] = %g, "
                           "want %g",
                           uk::IsaName(isa), int(op), data, (long long)stride, (long long)nt,
                           (long long)n, (long long)i, (double)y[size_t(i)], (double)want);
              }
            }
        }
}

// No taps: the maximum of nothing is -inf, the average 0.
void pool_row_without_taps_is_neutral(void**) {
  float y[3] = {7, 7, 7};
  uk::PoolRow(uk::PoolOp::kMax, nullptr, 0, 1, 1.0f, y, 2);
  assert_true(std::isinf(y[0]) && y[0] < 0 && std::isinf(y[1]) && y[2] == 7.0f);
  uk::PoolRow(uk::PoolOp::kAverage, nullptr, 0, 2, 0.5f, y, 2);
  assert_true(y[0] == 0.0f && y[1] == 0.0f && y[2] == 7.0f);
}

// QMaxPoolRow, strides 1 to 3, 1 to 9 taps, every length up to past four
// vectors, uint8 and int8 (bytes on both sides of 0x80, where the two
// orders differ), against the scalar maximum; each row ends exactly at its
// last tap, and y past n keeps its sentinel.
void qmax_pool_rows_match_scalar_maximum(void**) {
  for (int is_signed = 0; is_signed < 2; ++is_signed)
    for (int64_t stride = 1; stride <= 3; ++stride)
      for (int64_t nt = 1; nt <= 9; ++nt)
        for (int64_t n = 0; n <= 70; ++n) {
          std::vector<std::vector<uint8_t>> x(static_cast<size_t>(nt));
          const uint8_t* rows[9];
          for (int64_t t = 0; t < nt; ++t) {
            const int64_t len = t % 3 + (n > 0 ? (n - 1) * stride + 1 : 0);
            std::vector<uint8_t>& r = x[size_t(t)];
            r.resize(size_t(len));
            for (int64_t c = 0; c < len; ++c)
              r[size_t(c)] = uint8_t((c * 37 + t * 101 + n * 13) * 7);
            rows[t] = r.data() + t % 3;
          }
          std::vector<uint8_t> y(size_t(n + 2), 0x5a);
          uk::QMaxPoolRow(rows, nt, stride, is_signed != 0, y.data(), n);
          for (int64_t i = 0; i < n + 2; ++i) {
            int want = 0x5a;
            if (i < n) {
              want = is_signed ? -128 : 0;
              for (int64_t t = 0; t < nt; ++t) {
                const uint8_t u = rows[t][i * stride];
                const int v = is_signed ? int(int8_t(u)) : int(u);
                want = v > want ? v : want;
              }
              want &= 0xff;
            }
            if (y[size_t(i)] != want)
              fail_msg("QMaxPoolRow signed %d stride %lld taps %lld n %lld: y[%lld] = %d, want %d",
                       is_signed, (long long)stride, (long long)nt, (long long)n, (long long)i,
                       int(y[size_t(i)]), want);
          }
        }
}

// The scalar meaning of each activation and binary op, as the vnpu driver's
// Activate and BinOp spell it.
float ActRef(uk::Act k, float v, float alpha, float beta) {
  switch (k) {
    case uk::Act::kRelu: return v > 0.f ? v : 0.f;
    case uk::Act::kLeaky: return v >= 0.f ? v : v * alpha;
    case uk::Act::kLeakyMax: {
      const float l = v >= 0.f ? v : v * alpha;
      return l > beta ? l : beta;
    }
    case uk::Act::kClip: return v < alpha ? alpha : (v > beta ? beta : v);
    case uk::Act::kHardSwish: {
      float h = v + 3.f;
      h = h < 0.f ? 0.f : (h > 6.f ? 6.f : h);
      const float r = v * h / 6.f;
      return alpha == 1.f && beta == 0.f ? r : r * alpha + beta;
    }
    case uk::Act::kSigmoid: break;  // sigmoid_rows_* below
    case uk::Act::kSwish: break;    // swish_rows_* below
    case uk::Act::kErf: break;      // erf_rows_* below
    case uk::Act::kTanh: break;     // tanh_rows_* below
    case uk::Act::kGelu: break;     // gelu_rows_* below
    case uk::Act::kHardSigmoid: {
      const float h = v * alpha + beta;
      return h < 0.f ? 0.f : (h > 1.f ? 1.f : h);
    }
  }
  return v;
}
float BinRef(uk::Bin k, float a, float b) {
  switch (k) {
    case uk::Bin::kAdd: return a + b;
    case uk::Bin::kSub: return a - b;
    case uk::Bin::kMul: return a * b;
    case uk::Bin::kDiv: return a / b;
    case uk::Bin::kMax: return a > b ? a : b;
    case uk::Bin::kMin: return a < b ? a : b;
  }
  return a;
}
bool SameBits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

// WeightedRowBand: several output rows per call, each reading its taps
// in_stride further on and written out_stride further on, equal to one
// WeightedRows call per row (same instruction set: the same bits). Rows of
// padded width (in_stride n + 2) run as flat runs of several rows, 60 of
// them more than one run.
void weighted_row_band_equals_one_call_per_row(void**) {
  std::vector<uk::Isa> isas = VectorIsas();
  isas.push_back(uk::Isa::kPortable);
  const std::vector<float> x = Random(100 * 90, 33), w = Random(25, 34);
  for (uk::Isa isa : isas)
    for (int64_t n : {3, 20, 40, 70})
      for (int64_t nt : {1, 9, 25})
        for (int64_t padded : {0, 1}) {
          const int64_t rows = padded ? 60 : 5, in_stride = padded ? n + 2 : 2 * 90,
                        out_stride = n + 3;
          const float* taps[25];
          for (int64_t t = 0; t < nt; ++t) taps[t] = x.data() + (t / 5) * 90 + t % 5;
          std::vector<float> band(size_t(rows * out_stride), 7.0f), one(band.size(), 7.0f);
          uk::WeightedRowBand(taps, w.data(), nt, 0.5f, band.data(), n, rows, in_stride, out_stride,
                              isa);
          for (int64_t r = 0; r < rows; ++r) {
            const float* shifted[25];
            for (int64_t t = 0; t < nt; ++t) shifted[t] = taps[t] + r * in_stride;
            uk::WeightedRows(shifted, w.data(), nt, 0.5f, one.data() + r * out_stride, n, isa);
          }
          for (size_t i = 0; i < band.size(); ++i)
            if (!SameBits(band[i], one[i]))
              fail_msg("%s n %lld nt %lld in_stride %lld: [%zu] %g != %g", uk::IsaName(isa),
                       (long long)n, (long long)nt, (long long)in_stride, i, double(band[i]),
                       double(one[i]));
        }
}

// DepthwiseLanes (AVX-512 and AVX2, each this CPU has; elsewhere its size
// is 0): every channel
// count of a block, strides 1 to 3, dilation, asymmetric padding, maps whose
// output rows end inside a 16-pixel chunk, weights apart like the vnpu's
// (lane 0 of 8), maps taller than one block: within float rounding of a
// scalar depthwise convolution, and nothing written between the planes.
void depthwise_lanes_match_reference(void**) {
  struct C {
    int64_t H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
  };
  const C cases[] = {{14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                     {7, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
                     {28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                     {9, 11, 3, 3, 1, 1, 2, 1, 2, 1, 2, 3},
                     {12, 12, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0},
                     {5, 30, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3},
                     {20, 19, 7, 7, 2, 1, 1, 2, 3, 6, 3, 6},
                     // Taller than one block: bands of output rows.
                     {60, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                     {70, 20, 3, 3, 1, 1, 8, 1, 8, 1, 8, 1},
                     // Up to 64 output columns: 60, and 112 -> 56 at stride 2.
                     {9, 60, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                     {30, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                     // 16 columns (AVX2's widest) in bands.
                     {90, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}};
  const uk::Isa best = uk::BestIsa();
  for (const C& k : cases) {
    const int64_t OH = (k.H + k.pt + k.pb - (k.KH - 1) * k.dh - 1) / k.sh + 1;
    const int64_t OW = (k.W + k.pl + k.pr - (k.KW - 1) * k.dw - 1) / k.sw + 1;
    const uk::DwShape s{k.H, k.W, OH, OW, k.KH, k.KW, k.sh, k.sw, k.dh, k.dw, k.pt, k.pl};
    // Taken up to 64 output columns on AVX-512, 16 on AVX2, never elsewhere.
    assert_int_equal(uk::DepthwiseLanesFloats(s) > 0,
                     best == uk::Isa::kAvx512 ? OW <= 64 : best == uk::Isa::kAvx2 && OW <= 16);
    for (uk::Isa isa : {uk::Isa::kAvx2, uk::Isa::kAvx512}) {  // every lanes kernel this CPU has
      if (!uk::IsaAvailable(isa)) continue;
      const uint64_t floats = uk::DepthwiseLanesFloats(s, isa);
      if (!floats) continue;
      const int64_t HW = k.H * k.W, OHW = OH * OW, nt = k.KH * k.KW, ycs = OHW + 5;
      for (int nc : {1, 7, 16}) {
        const std::vector<float> x = Random(size_t(nc * HW), 61), wr = Random(size_t(nc * nt), 62),
                                 b = Random(16, 63);
        std::vector<float> w(size_t(nc * nt * 8), 99.f);  // tap t of channel c at c*nt*8 + t*8
        for (int c = 0; c < nc; ++c)
          for (int64_t t = 0; t < nt; ++t) w[size_t((c * nt + t) * 8)] = wr[size_t(c * nt + t)];
        std::vector<float> y(size_t(nc * ycs), -7.f), work(floats);
        uk::DepthwiseLanes(s, nc, x.data(), HW, w.data(), nt * 8, 8, b.data(), y.data(), ycs,
                           work.data(), isa);
        for (int c = 0; c < nc; ++c)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              double acc = b[size_t(c)];
              for (int64_t kh = 0; kh < k.KH; ++kh)
                for (int64_t kw = 0; kw < k.KW; ++kw) {
                  const int64_t ih = oh * k.sh - k.pt + kh * k.dh,
                                iw = ow * k.sw - k.pl + kw * k.dw;
                  if (ih >= 0 && ih < k.H && iw >= 0 && iw < k.W)
                    acc += double(x[size_t(c * HW + ih * k.W + iw)]) *
                           double(wr[size_t(c * nt + kh * k.KW + kw)]);
                }
              const float got = y[size_t(c * ycs + oh * OW + ow)];
              if (std::fabs(double(got) - acc) > 1e-5 * (1 + std::fabs(acc)))
                fail_msg("%s %lldx%lld k%lldx%lld nc %d: c %d (%lld, %lld) %g != %g",
                         uk::IsaName(isa), (long long)k.H, (long long)k.W, (long long)k.KH,
                         (long long)k.KW, nc, c, (long long)oh, (long long)ow, double(got), acc);
            }
        for (int c = 0; c < nc; ++c)
          for (int64_t i = OHW; i < ycs; ++i) assert_true(y[size_t(c * ycs + i)] == -7.f);
      }
    }
  }
}

// GroupLanes (AVX-512 and AVX2, each this CPU has): one group of 16 -> 16 channels on 4
// geometries, weights in ONNX's [O][I][KH][KW] and in the vnpu's taps-major
// and blocked layouts: within rounding of a scalar convolution; nothing written between
// the output planes.
void group_lanes_match_reference(void**) {
  struct C {
    int64_t H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
  };
  const C cases[] = {{14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                     {7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                     {28, 20, 3, 5, 1, 1, 2, 1, 2, 2, 2, 2},
                     {40, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}};
  for (const C& k : cases) {
    const int64_t OH = (k.H + k.pt + k.pb - (k.KH - 1) * k.dh - 1) / k.sh + 1;
    const int64_t OW = (k.W + k.pl + k.pr - (k.KW - 1) * k.dw - 1) / k.sw + 1;
    const uk::DwShape s{k.H, k.W, OH, OW, k.KH, k.KW, k.sh, k.sw, k.dh, k.dw, k.pt, k.pl};
    const uk::Isa best = uk::BestIsa();
    assert_int_equal(uk::GroupLanesFloats(s) > 0,
                     best == uk::Isa::kAvx512 ? OW <= 64 : best == uk::Isa::kAvx2 && OW <= 16);
    for (uk::Isa isa : {uk::Isa::kAvx2, uk::Isa::kAvx512}) {
      if (!uk::IsaAvailable(isa)) continue;
      const uint64_t floats = uk::GroupLanesFloats(s, isa);
      if (!floats) continue;
      const int64_t HW = k.H * k.W, OHW = OH * OW, nt = k.KH * k.KW, ycs = OHW + 3;
      const std::vector<float> x = Random(size_t(16 * HW), 81), w = Random(size_t(256 * nt), 82),
                               b = Random(16, 83);
      // The same weights taps-major: [t][i][o].
      std::vector<float> taps(w.size());
      for (int64_t o = 0; o < 16; ++o)
        for (int64_t i = 0; i < 16; ++i)
          for (int64_t t = 0; t < nt; ++t)
            taps[size_t((t * 16 + i) * 16 + o)] = w[size_t((o * 16 + i) * nt + t)];
      // And the vnpu's blocked CONV2D layout: [o / 8][i][t][o % 8].
      std::vector<float> blocked(w.size());
      for (int64_t o = 0; o < 16; ++o)
        for (int64_t i = 0; i < 16; ++i)
          for (int64_t t = 0; t < nt; ++t)
            blocked[size_t(((o / 8) * 16 + i) * nt * 8 + t * 8 + o % 8)] =
                w[size_t((o * 16 + i) * nt + t)];
      const uk::LaneWeights layouts[] = {{w.data(), 8 * 16 * nt, 16 * nt, nt, 1},
                                         {taps.data(), 8, 1, 16, 256},
                                         {blocked.data(), 16 * nt * 8, 1, nt * 8, 8}};
      for (const uk::LaneWeights& lw : layouts) {
        std::vector<float> y(size_t(16 * ycs), -7.f), work(floats);
        uk::GroupLanes(s, x.data(), HW, lw, b.data(), y.data(), ycs, work.data(), isa);
        for (int64_t o = 0; o < 16; ++o)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              double acc = b[size_t(o)];
              for (int64_t i = 0; i < 16; ++i)
                for (int64_t kh = 0; kh < k.KH; ++kh)
                  for (int64_t kw = 0; kw < k.KW; ++kw) {
                    const int64_t ih = oh * k.sh - k.pt + kh * k.dh,
                                  iw = ow * k.sw - k.pl + kw * k.dw;
                    if (ih >= 0 && ih < k.H && iw >= 0 && iw < k.W)
                      acc += double(x[size_t(i * HW + ih * k.W + iw)]) *
                             double(w[size_t((o * 16 + i) * nt + kh * k.KW + kw)]);
                  }
              const float got = y[size_t(o * ycs + oh * OW + ow)];
              if (std::fabs(double(got) - acc) > 1e-4 * (1 + std::fabs(acc)))
                fail_msg("%s %lldx%lld o %lld (%lld, %lld): %g != %g", uk::IsaName(isa),
                         (long long)k.H, (long long)k.W, (long long)o, (long long)oh, (long long)ow,
                         double(got), acc);
            }
        for (int64_t o = 0; o < 16; ++o)
          for (int64_t i = OHW; i < ycs; ++i) assert_true(y[size_t(o * ycs + i)] == -7.f);
      }
    }
  }
}

// DotRows (a recurrent step's matrix-vector product) on every instruction
// set: the same bits as the portable one (16 partial sums, lanes added in
// order; AVX-512 reduces 16 rows at once by a transpose), within rounding
// of a double dot product, at row counts around 4, 8 and 16 and lengths
// around 16.
void dot_rows_agree_bit_for_bit_across_isas(void**) {
  for (int64_t n : {1, 5, 8, 15, 16, 17, 33, 64})
    for (int64_t k : {1, 15, 16, 17, 128, 130}) {
      const int64_t ldb = k + 3;
      const std::vector<float> a = Random(size_t(k), 91), b = Random(size_t(n * ldb), 92);
      std::vector<float> want(static_cast<size_t>(n));
      uk::DotRows(a.data(), b.data(), ldb, n, k, want.data(), uk::Isa::kPortable);
      for (int64_t r = 0; r < n; ++r) {
        double ref = 0;
        for (int64_t t = 0; t < k; ++t)
          ref += double(a[size_t(t)]) * double(b[size_t(r * ldb + t)]);
        if (std::fabs(double(want[size_t(r)]) - ref) > 1e-5 * (1 + std::fabs(ref)))
          fail_msg("portable n %lld k %lld row %lld: %g != %g", (long long)n, (long long)k,
                   (long long)r, double(want[size_t(r)]), ref);
      }
      for (uk::Isa isa : VectorIsas()) {
        std::vector<float> got(size_t(n) + 1, 5.f);
        uk::DotRows(a.data(), b.data(), ldb, n, k, got.data(), isa);
        for (int64_t r = 0; r < n; ++r)
          if (!SameBits(got[size_t(r)], want[size_t(r)]))
            fail_msg("%s n %lld k %lld row %lld: %g != %g", uk::IsaName(isa), (long long)n,
                     (long long)k, (long long)r, double(got[size_t(r)]), double(want[size_t(r)]));
        assert_true(got[size_t(n)] == 5.f);
      }
    }
}

// The narrow-columns kernel on every instruction set that has one (AVX2,
// AVX-512; none portably): rows in panels of 8 (a partial last panel, more
// than 8 panels), 1 to 8 columns, K 1 to 37, with and without
// accumulation, bias and clamp: within rounding of a scalar GEMM; a NaN
// passes the clamp; nothing written outside the rows x cols of C.
void narrow_columns_match_reference(void**) {
  assert_null(uk::NarrowKernel(uk::Isa::kPortable));
  std::vector<uk::Isa> isas;
  for (uk::Isa isa : VectorIsas())
    if (isa == uk::Isa::kNeon) assert_null(uk::NarrowKernel(isa));
    else isas.push_back(isa);
  for (uk::Isa isa : isas)
    for (int32_t rows : {1, 7, 8, 9, 64, 70})
      for (int32_t cols = 1; cols <= uk::kNarrowCols; ++cols)
        for (int64_t kc : {1, 5, 37})
          for (int mode = 0; mode < 3; ++mode) {  // plain, accumulate+last, last+nan
            const int64_t panels = (rows + 7) / 8, a_ps = kc * 8 + 3, b_ks = cols + 5,
                          ldc = cols + 2;
            const std::vector<float> a = Random(size_t(panels * a_ps), 71),
                                     b = Random(size_t(kc * b_ks), 72),
                                     bias = Random(size_t(rows), 73);
            std::vector<float> c(size_t((rows + 1) * ldc), 3.5f), c0 = c;
            uk::NarrowTile t{};
            t.kc = kc;
            t.a = a.data();
            t.a_ps = a_ps;
            t.b = b.data();
            t.b_ks = b_ks;
            t.c = c.data();
            t.ldc = ldc;
            t.rows = rows;
            t.cols = cols;
            t.accumulate = mode == 1;
            t.last = mode > 0;
            t.row_bias = mode > 0 ? bias.data() : nullptr;
            t.lo = mode > 0 ? -0.25f : -__builtin_inff();
            t.hi = mode > 0 ? 0.5f : __builtin_inff();
            std::vector<float> bb = b;
            if (mode == 2) bb[0] = __builtin_nanf("");  // column 0 of k 0
            t.b = bb.data();
            const uk::NarrowFn fn = uk::NarrowKernel(isa);
            assert_non_null(fn);
            fn(t);
            for (int64_t r = 0; r <= rows; ++r)
              for (int64_t j = 0; j < ldc; ++j) {
                const float got = c[size_t(r * ldc + j)];
                if (r == rows || j >= cols) {
                  if (got != 3.5f)
                    fail_msg("%s wrote outside C at (%lld, %lld)", uk::IsaName(isa), (long long)r,
                             (long long)j);
                  continue;
                }
                double acc = 0;
                for (int64_t k = 0; k < kc; ++k)
                  acc += double(a[size_t((r / 8) * a_ps + k * 8 + r % 8)]) *
                         double(bb[size_t(k * b_ks + j)]);
                if (mode == 1) acc += c0[size_t(r * ldc + j)];
                if (mode > 0) {
                  acc += bias[size_t(r)];
                  if (!(acc != acc)) acc = acc < -0.25 ? -0.25 : acc > 0.5 ? 0.5 : acc;
                }
                if (acc != acc) {
                  if (!(got != got))
                    fail_msg("%s: NaN lost at (%lld, %lld)", uk::IsaName(isa), (long long)r,
                             (long long)j);
                } else if (std::fabs(double(got) - acc) > 1e-5 * (1 + std::fabs(acc))) {
                  fail_msg("%s rows %d cols %d kc %lld mode %d: (%lld, %lld) %g != %g",
                           uk::IsaName(isa), rows, cols, (long long)kc, mode, (long long)r,
                           (long long)j, double(got), acc);
                }
              }
          }
}

// ActivateRow and BinaryRow on every instruction set, at every length up to
// past two vectors of the widest (every tail runs), in place and not, with
// NaN, infinities and signed zeros among the inputs: bit for bit the scalar
// operations; y past n keeps its sentinel.
void elementwise_rows_match_scalar_bit_for_bit(void**) {
  std::vector<uk::Isa> isas = VectorIsas();
  isas.push_back(uk::Isa::kPortable);
  std::vector<float> x = Random(80, 41), z = Random(80, 42);
  for (size_t i = 0; i < x.size(); ++i) x[i] *= 8.f;
  x[3] = __builtin_nanf("");
  x[17] = __builtin_inff();
  x[18] = -__builtin_inff();
  x[33] = -0.0f;
  x[34] = -3.0f;
  z[5] = 0.0f;
  z[21] = __builtin_nanf("");
  const uk::Act acts[] = {uk::Act::kRelu,      uk::Act::kLeaky,    uk::Act::kClip,
                          uk::Act::kHardSwish, uk::Act::kLeakyMax, uk::Act::kHardSigmoid};
  const float params[][2] = {{0.1f, 6.f}, {1.f, 0.f}, {0.5f, 0.25f}};
  for (uk::Isa isa : isas)
    for (int64_t n = 0; n <= 70; ++n) {
      for (uk::Act k : acts)
        for (const auto& p : params)
          for (bool in_place : {false, true}) {
            std::vector<float> y(size_t(n + 1), 7.0f);
            if (in_place) std::copy(x.begin(), x.begin() + n, y.begin());
            uk::ActivateRow(k, in_place ? y.data() : x.data(), y.data(), n, p[0], p[1], isa);
            for (int64_t i = 0; i < n; ++i) {
              const float want = ActRef(k, x[size_t(i)], p[0], p[1]);
              if (!SameBits(y[size_t(i)], want) && !(want != want && y[size_t(i)] != y[size_t(i)]))
                fail_msg("%s act %u n %lld i %lld: %g, want %g", uk::IsaName(isa), unsigned(k),
                         (long long)n, (long long)i, double(y[size_t(i)]), double(want));
            }
            assert_true(y[size_t(n)] == 7.0f);
          }
      for (uint32_t kb = 0; kb < 6; ++kb)
        for (int sa : {0, 1})
          for (int sb : {0, 1}) {
            const uk::Bin k = static_cast<uk::Bin>(kb);
            std::vector<float> y(size_t(n + 1), 7.0f);
            uk::BinaryRow(k, x.data() + 1, z.data() + 2, y.data(), n, sa, sb, isa);
            for (int64_t i = 0; i < n; ++i) {
              const float want =
                  BinRef(k, x[size_t(1 + (sa ? i : 0))], z[size_t(2 + (sb ? i : 0))]);
              if (!SameBits(y[size_t(i)], want) && !(want != want && y[size_t(i)] != y[size_t(i)]))
                fail_msg("%s bin %u sa %d sb %d n %lld i %lld: %g, want %g", uk::IsaName(isa), kb,
                         sa, sb, (long long)n, (long long)i, double(y[size_t(i)]), double(want));
            }
            assert_true(y[size_t(n)] == 7.0f);
          }
    }
}

// A polynomial activation over x in [-100, 100] in steps of 5e-4, then NaN,
// +inf, -inf and -0 (the last four): the portable kernel's values are within
// `tol` of ref (relative, or absolute below 1e-30), and every instruction set
// gives the portable kernel's bits at every length (tails included): the
// rows end at the NaN, so at some lengths it falls in a scalar tail (a NaN
// converted to an integer there was undefined behaviour; fuzz_vnpu found it
// under UBSan, which the asan build runs this test with). Returns the
// portable values.
std::vector<float> CheckCurve(uk::Act k, const char* name, double (*ref)(double), double tol,
                              float alpha = 1.f, float beta = 0.f) {
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(float(i) * 5e-4f);
  x.push_back(__builtin_nanf(""));
  x.push_back(__builtin_inff());
  x.push_back(-__builtin_inff());
  x.push_back(-0.0f);
  const int64_t n = int64_t(x.size());
  std::vector<float> port(x.size());
  uk::ActivateRow(k, x.data(), port.data(), n, alpha, beta, uk::Isa::kPortable);
  double worst = 0;
  for (int64_t i = 0; i < n - 4; ++i) {
    const double want = ref(double(x[size_t(i)]));
    const double err = std::fabs(port[size_t(i)] - want);
    const double rel = std::fabs(want) > 1e-30 ? err / std::fabs(want) : err;
    worst = rel > worst ? rel : worst;
  }
  if (worst > tol) fail_msg("%s worst relative error %g", name, worst);
  assert_true(port[size_t(n - 4)] != port[size_t(n - 4)]);
  std::vector<uk::Isa> all = VectorIsas();
  all.push_back(uk::Isa::kPortable);
  for (uk::Isa isa : all) {
    for (int64_t len = 0; len <= 70; ++len) {
      std::vector<float> y(size_t(len + 1), 7.0f);
      uk::ActivateRow(k, x.data() + n - 3 - len, y.data(), len, alpha, beta, isa);
      for (int64_t i = 0; i < len; ++i) {
        const float want = port[size_t(n - 3 - len + i)];
        if (!SameBits(y[size_t(i)], want) && !(want != want && y[size_t(i)] != y[size_t(i)]))
          fail_msg("%s %s n %lld i %lld: %g, portable %g", uk::IsaName(isa), name, (long long)len,
                   (long long)i, double(y[size_t(i)]), double(want));
      }
      assert_true(y[size_t(len)] == 7.0f);
    }
    if (isa == uk::Isa::kPortable) continue;
    std::vector<float> y(x.size());
    uk::ActivateRow(k, x.data(), y.data(), n, alpha, beta, isa);
    for (int64_t i = 0; i < n; ++i)
      if (!SameBits(y[size_t(i)], port[size_t(i)]) && port[size_t(i)] == port[size_t(i)])
        fail_msg("%s %s(%a) = %a, portable %a", uk::IsaName(isa), name, double(x[size_t(i)]),
                 double(y[size_t(i)]), double(port[size_t(i)]));
  }
  return port;
}

// Sigmoid's polynomial exp: within 3e-7 of the exact value, the same bits on
// every instruction set; NaN stays NaN, +inf gives 1 and -inf nearly 0.
void sigmoid_rows_agree_across_isas_and_with_exp(void**) {
  const std::vector<float> y = CheckCurve(
      uk::Act::kSigmoid, "sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, 3e-7);
  const size_t n = y.size();
  assert_true(y[n - 3] == 1.0f);
  assert_true(y[n - 2] >= 0.0f && y[n - 2] < 1e-37f);
  assert_true(y[n - 1] == 0.5f);
}

// Swish (x * sigmoid(x), the vnpu's fused Sigmoid-Mul): within 4e-7 of
// v / (1 + exp(-v)), the same bits on every instruction set; +inf stays
// +inf and -0 stays -0.
void swish_rows_agree_across_isas_and_with_exp(void**) {
  const std::vector<float> y = CheckCurve(
      uk::Act::kSwish, "swish", [](double v) { return v / (1.0 + std::exp(-v)); }, 4e-7);
  const size_t n = y.size();
  assert_true(y[n - 3] == __builtin_inff());
  assert_true(y[n - 1] == 0.0f && std::signbit(y[n - 1]));
}

// Erf's two polynomials: within 4 ulp (2.4e-7 relative) of erf, the same
// bits on every instruction set; +-inf give +-1, -0 stays -0, and erf is odd
// to the bit.
void erf_rows_agree_across_isas_and_with_erf(void**) {
  const std::vector<float> y = CheckCurve(
      uk::Act::kErf, "erf", [](double v) { return std::erf(v); }, 2.4e-7);
  const size_t n = y.size();
  assert_true(y[n - 3] == 1.0f);
  assert_true(y[n - 2] == -1.0f);
  assert_true(y[n - 1] == 0.0f && std::signbit(y[n - 1]));
  for (size_t i = 0; i < 200000; ++i)
    if (!SameBits(y[i], -y[n - 5 - i])) fail_msg("erf is not odd at index %zu", i);
}

// GELU, (x * (erf(x / sqrt(2)) + 1)) * 0.5 (the vnpu's fused Div, Erf, Add,
// Mul, Mul): within 3e-7 * max(1, |x|) of the exact value (absolute: for
// large negative x it is 1 + erf, a difference of nearly equal numbers),
// the same bits on every instruction set; -inf gives NaN as the unfused
// graph does (-inf * 0), +inf stays +inf.
void gelu_rows_agree_across_isas_and_with_erf(void**) {
  auto exact = [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); };
  const std::vector<float> y =
      CheckCurve(uk::Act::kGelu, "gelu", exact, __builtin_inf(), 0.70710678f, 0.5f);
  const size_t n = y.size();
  for (size_t i = 0; i + 4 < n; ++i) {
    const double v = double(float(int(i) - 200000) * 5e-4f);
    if (std::fabs(double(y[i]) - exact(v)) > 3e-7 * std::fmax(1.0, std::fabs(v)))
      fail_msg("gelu(%g) = %.9g, want %.9g", v, double(y[i]), exact(v));
  }
  assert_true(y[n - 3] == __builtin_inff());
  assert_true(y[n - 2] != y[n - 2]);
}

// Tanh's polynomial and exp: within 4 ulp (2.4e-7 relative) of tanh, the
// same bits on every instruction set; +-inf give +-1, -0 stays -0, odd to
// the bit.
void tanh_rows_agree_across_isas_and_with_tanh(void**) {
  const std::vector<float> y = CheckCurve(
      uk::Act::kTanh, "tanh", [](double v) { return std::tanh(v); }, 2.4e-7);
  const size_t n = y.size();
  assert_true(y[n - 3] == 1.0f);
  assert_true(y[n - 2] == -1.0f);
  assert_true(y[n - 1] == 0.0f && std::signbit(y[n - 1]));
  for (size_t i = 0; i < 200000; ++i)
    if (!SameBits(y[i], -y[n - 5 - i])) fail_msg("tanh is not odd at index %zu", i);
}

// SoftmaxRow: within 1e-6 (absolute, the values are <= 1) of a double
// softmax at every length 1..70 and 197 (ViT's attention rows), the same
// bits on every instruction set, in place too; a masked (-inf) entry gets
// nothing to speak of and the row still sums to 1.
void softmax_rows_agree_across_isas_and_with_exp(void**) {
  std::vector<uk::Isa> all = VectorIsas();
  all.push_back(uk::Isa::kPortable);
  std::vector<int64_t> lens;
  for (int64_t n = 1; n <= 70; ++n) lens.push_back(n);
  lens.push_back(197);
  for (int64_t n : lens) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float((i * 37) % 29) * 0.7f - 9.f;
    if (n > 3) x[2] = -__builtin_inff();
    double m = -1e300, sum = 0;
    for (float v : x) m = v > m ? v : m;
    for (float v : x) sum += std::exp(double(v) - m);
    std::vector<float> port(static_cast<size_t>(n));
    uk::SoftmaxRow(x.data(), port.data(), n, uk::Isa::kPortable);
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::exp(double(x[size_t(i)]) - m) / sum;
      if (std::fabs(port[size_t(i)] - want) > 1e-6)
        fail_msg("softmax n %lld i %lld: %g, want %g", (long long)n, (long long)i,
                 double(port[size_t(i)]), want);
      total += port[size_t(i)];
    }
    assert_true(std::fabs(total - 1.0) < 1e-5);
    if (n > 3) assert_true(port[2] < 1e-30f);
    for (uk::Isa isa : all) {
      std::vector<float> y = x;
      uk::SoftmaxRow(y.data(), y.data(), n, isa);
      assert_memory_equal(y.data(), port.data(), size_t(n) * 4);
    }
  }
}

}  // namespace

// Every packer of this CPU (AVX-512 and AVX2 masked runs, the portable one) against
// a scalar im2col, on maps narrower and wider than a piece, strides 1 to 3,
// dilations, asymmetric pads wider than the kernel, K slices starting
// mid-tap and pixel ranges starting mid-row; the floats after each written
// row (up to the pitch) must keep their sentinel.
static void im2col_packers_match_reference_on_every_geometry(void** state) {
  (void)state;
  struct G {
    int64_t C, H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
  };
  const G cases[] = {
      {3, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   {2, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 9, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  {2, 12, 23, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {3, 20, 31, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3}, {2, 11, 40, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
      {2, 10, 17, 1, 5, 1, 3, 1, 1, 0, 2, 0, 2}, {1, 5, 100, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1},
      {2, 6, 9, 2, 4, 1, 2, 1, 3, 0, 6, 1, 6},   {1, 3, 1, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0},
      {2, 33, 33, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2}, {4, 4, 4, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
  };
  std::vector<uk::Isa> isas = {uk::Isa::kPortable};
  if (uk::IsaAvailable(uk::Isa::kAvx512)) isas.push_back(uk::Isa::kAvx512);
  if (uk::IsaAvailable(uk::Isa::kAvx2)) isas.push_back(uk::Isa::kAvx2);
  if (uk::IsaAvailable(uk::Isa::kNeon)) isas.push_back(uk::Isa::kNeon);
  const float kSentinel = 12345.0f;
  for (const G& g : cases) {
    const int64_t OH = (g.H + g.pt + g.pb - (g.KH - 1) * g.dh - 1) / g.sh + 1;
    const int64_t OW = (g.W + g.pl + g.pr - (g.KW - 1) * g.dw - 1) / g.sw + 1;
    const int64_t K = g.C * g.KH * g.KW, P = OH * OW, plane = g.H * g.W + 3;
    const std::vector<float> x = Random(static_cast<size_t>(g.C * plane), 7);
    const uk::Im2colShape sh{g.H, g.W, OW, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, plane};
    auto ref = [&](int64_t k, int64_t p) -> float {
      const int64_t kw = k % g.KW, kh = (k / g.KW) % g.KH, c = k / (g.KW * g.KH);
      const int64_t ih = (p / OW) * g.sh - g.pt + kh * g.dh;
      const int64_t iw = (p % OW) * g.sw - g.pl + kw * g.dw;
      if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) return 0.0f;
      return x[static_cast<size_t>(c * plane + ih * g.W + iw)];
    };
    // (k0, kc, p0, np) slices: all, a K slice from mid-tap, pixels from
    // mid-row, one pixel, a long range of several pieces.
    const int64_t sl[][4] = {{0, K, 0, P},
                             {1, K - 1 > 5 ? 5 : K - 1, OW / 2, P - OW / 2},
                             {K - 1, 1, P - 1, 1},
                             {0, K, 0, P > 7 ? 7 : P},
                             {0, K, P > 3 ? 3 : 0, P > 100 ? 100 : P - (P > 3 ? 3 : 0)}};
    for (const auto& q : sl) {
      const int64_t k0 = q[0], kc = q[1], p0 = q[2], np = q[3];
      if (kc <= 0 || np <= 0) continue;
      const int64_t padded = (np + 7) / 8 * 8, pitch = padded + 5;
      for (uk::Isa isa : isas) {
        std::vector<float> dst(static_cast<size_t>(kc * pitch), kSentinel);
        uk::Im2colKernel(isa)(sh, x.data(), k0, kc, p0, np, dst.data(), pitch);
        for (int64_t k = 0; k < kc; ++k)
          for (int64_t j = 0; j < pitch; ++j) {
            const float got = dst[static_cast<size_t>(k * pitch + j)];
            const float want = j < np ? ref(k0 + k, p0 + j) : j < padded ? 0.0f : kSentinel;
            if (got != want)
              fail_msg("im2col %s: %lldx%lld k%lldx%lld s%lld,%lld: row %lld col %lld: %g, want %g",
                       uk::IsaName(isa), (long long)g.H, (long long)g.W, (long long)g.KH,
                       (long long)g.KW, (long long)g.sh, (long long)g.sw, (long long)(k0 + k),
                       (long long)(p0 + j), (double)got, (double)want);
          }
      }
    }
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(best_isa_is_available_and_named),
      cmocka_unit_test(im2col_packers_match_reference_on_every_geometry),
      cmocka_unit_test(avx512_implies_avx2),
      cmocka_unit_test(tile_matches_portable_on_every_edge_shape),
      cmocka_unit_test(block_tile_matches_tiles_on_every_edge_shape),
      cmocka_unit_test(block_tile_reads_b_in_two_panels),
      cmocka_unit_test(tile_slices_equal_one_call_per_slice),
      cmocka_unit_test(tile_leaky_epilogue_matches_leaky_max_bit_for_bit),
      cmocka_unit_test(sgemm_best_matches_portable_and_reference),
      cmocka_unit_test(sgemm_pack_b_callback_matches_plain_b),
      cmocka_unit_test(sgemm_prepacked_operands_match_unpacked_bit_for_bit),
      cmocka_unit_test(sgemm_packed_sizes_are_bounded),
      cmocka_unit_test(sgemm_in_place_b_gives_packed_bits),
      cmocka_unit_test(weighted_rows_match_reference_at_every_length),
      cmocka_unit_test(weighted_row_band_equals_one_call_per_row),
      cmocka_unit_test(depthwise_lanes_match_reference),
      cmocka_unit_test(group_lanes_match_reference),
      cmocka_unit_test(dot_rows_agree_bit_for_bit_across_isas),
      cmocka_unit_test(narrow_columns_match_reference),
      cmocka_unit_test(pool_rows_match_scalar_rule_bit_for_bit),
      cmocka_unit_test(pool_row_without_taps_is_neutral),
      cmocka_unit_test(qmax_pool_rows_match_scalar_maximum),
      cmocka_unit_test(elementwise_rows_match_scalar_bit_for_bit),
      cmocka_unit_test(sigmoid_rows_agree_across_isas_and_with_exp),
      cmocka_unit_test(swish_rows_agree_across_isas_and_with_exp),
      cmocka_unit_test(erf_rows_agree_across_isas_and_with_erf),
      cmocka_unit_test(tanh_rows_agree_across_isas_and_with_tanh),
      cmocka_unit_test(gelu_rows_agree_across_isas_and_with_erf),
      cmocka_unit_test(softmax_rows_agree_across_isas_and_with_exp),
  };
  return cmocka_run_group_tests_name("ukernels", tests, nullptr, nullptr);
}
