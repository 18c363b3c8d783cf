// SPDX-License-Identifier: Apache-2.0
// The micro-kernels against the core's own limit, one thread: the measured
// FMA peak of each instruction set this CPU runs (independent accumulator
// chains, nothing loaded), then the tile (4 x 24) and the block tile
// (8 x 48 and its narrower shapes) with A and B in L1, as GFLOP/s and as a
// share of that peak. What peer_bench.py --models gemm measures end to end
// (packing, caches, ORT beside it), this measures without the memory
// system, so the two together say whether a GEMM is limited by its kernel
// or by what feeds it.
//
// usage: ukernel-peak [--ms N]   (time per measurement, default 200)
// Prints one table; exit status 0, 2 on a bad argument.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "epctx_uk/sgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

namespace uk = epctx::uk;
using Clock = std::chrono::steady_clock;

double g_ms = 200;

// Runs f(n) with growing n until it takes g_ms; returns flops per second
// for `flops_per_iter` flops per unit of n.
template <typename F>
double Rate(double flops_per_iter, F f) {
  for (int64_t n = 1000;; n *= 2) {
    const auto t0 = Clock::now();
    f(n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s * 1e3 >= g_ms || n > (int64_t(1) << 40)) return flops_per_iter * double(n) / s;
  }
}

#if defined(__x86_64__)
// 16 independent FMA chains of one vector width: more than two FMA ports x
// four cycles of latency, so the loop runs at the ports' throughput.
__attribute__((target("avx2,fma,avx512f"), noinline)) float PeakAvx512(int64_t n) {
  __m512 a[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm512_set1_ps(float(i));
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-3f);
  for (int64_t k = 0; k < n; ++k)
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) a[i] = _mm512_fmadd_ps(a[i], x, y);
  __m512 s = a[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, a[i]);
  float v[16];
  _mm512_storeu_ps(v, s);
  return v[0];
}

__attribute__((target("avx2,fma"), noinline)) float PeakAvx2(int64_t n) {
  __m256 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(float(i));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f);
  for (int64_t k = 0; k < n; ++k)
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], x, y);
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
  float v[8];
  _mm256_storeu_ps(v, s);
  return v[0];
}
#endif

volatile float g_sink;

double PeakGflops(uk::Isa isa) {
#if defined(__x86_64__)
  if (isa == uk::Isa::kAvx512)
    return Rate(16 * 16 * 2, [](int64_t n) { g_sink = PeakAvx512(n); }) / 1e9;
  if (isa == uk::Isa::kAvx2) return Rate(12 * 8 * 2, [](int64_t n) { g_sink = PeakAvx2(n); }) / 1e9;
#endif
  (void)isa;
  return 0;
}

// GFLOP/s of `fn` on a rows x cols tile with kc = 128, A a packed panel
// [k][8] (or, when `rows_apart`, 8 rows kc apart: a GEMM's activations) and
// B [k][48] (strips side by side), both in L1 (28 KiB).
double TileGflops(uk::TileFn fn, int rows, int cols, bool rows_apart) {
  const int64_t kc = 128;
  std::vector<float> a(size_t(kc * 8), 0.5f), b(size_t(kc * 48), 0.25f), c(size_t(8 * 48));
  uk::Tile t{};
  t.kc = kc;
  t.a = a.data();
  t.a_rs = rows_apart ? kc : 1;
  t.a_ks = rows_apart ? 1 : 8;
  t.b = b.data();
  t.b_ss = 8;
  t.b_ks = 48;
  t.c = c.data();
  t.ldc = 48;
  t.rows = rows;
  t.cols = cols;
  t.accumulate = true;
  t.last = true;
  t.lo = -1e30f;
  t.hi = 1e30f;
  return Rate(2.0 * double(kc) * rows * cols,
              [&](int64_t n) {
                for (int64_t i = 0; i < n / 64 + 1; ++i) fn(t);
              }) /
         64 / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--ms") && i + 1 < argc) {
      g_ms = atof(argv[++i]);
    } else {
      fprintf(stderr, "usage: ukernel-peak [--ms N]\n");
      return 2;
    }
  }
  if (!(g_ms > 0)) g_ms = 200;
  printf("%-9s %-14s %8s %7s\n", "isa", "kernel", "GFLOP/s", "%peak");
  for (uk::Isa isa : {uk::Isa::kAvx512, uk::Isa::kAvx2, uk::Isa::kNeon, uk::Isa::kPortable}) {
    if (!uk::IsaAvailable(isa)) continue;
    const double peak = PeakGflops(isa);
    if (peak > 0) printf("%-9s %-14s %8.1f %7s\n", uk::IsaName(isa), "FMA peak", peak, "100");
    struct {
      const char* name;
      bool block;
      int rows, cols;
      bool rows_apart;
    } shapes[] = {{"tile 4x24", false, 4, 24, false}, {"block 8x48", true, 8, 48, false},
                  {"block 8x24", true, 8, 24, false}, {"block 8x16", true, 8, 16, false},
                  {"block 8x8", true, 8, 8, false},   {"gemm 8x48", true, 8, 48, true},
                  {"gemm 8x24", true, 8, 24, true}};
    for (const auto& s : shapes) {
      const uk::TileFn fn = s.block ? uk::TileKernel2(isa) : uk::TileKernel(isa);
      const double g = TileGflops(fn, s.rows, s.cols, s.rows_apart);
      if (peak > 0) printf("%-9s %-14s %8.1f %7.0f\n", uk::IsaName(isa), s.name, g, 100 * g / peak);
      else printf("%-9s %-14s %8.1f %7s\n", uk::IsaName(isa), s.name, g, "-");
    }
  }
  return 0;
}
