// SPDX-License-Identifier: Apache-2.0
// Chooses the tile kernel. On x86-64 the AVX2 kernel needs the CPU's AVX2,
// FMA and AVX bits (cpuid) and the OS saving ymm state (OSXSAVE + xgetbv):
// asked once with inline cpuid/xgetbv, not __builtin_cpu_supports, which
// would pull libgcc's __cpu_model into the freestanding archive.
#include <atomic>

#include "tile_common.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace epctx {
namespace uk {
namespace {

#if defined(__x86_64__)
bool CpuHasAvx2Fma() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28);
  if (!fma || !osxsave || !avx) return false;
  unsigned xlo = 0, xhi = 0;
  __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
  if ((xlo & 6u) != 6u) return false;  // XMM and YMM state enabled by the OS
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  return b & (1u << 5);
}

// AVX512F and AVX512VL (cpuid 7: ebx bits 16, 31), and the OS saving the
// opmask and all 32 zmm registers (xgetbv bits 5-7). Asked after
// CpuHasAvx2Fma.
bool CpuHasAvx512() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid_count(7, 0, a, b, c, d);
  if (!(b & (1u << 16)) || !(b & (1u << 31))) return false;
  unsigned xlo = 0, xhi = 0;
  __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
  return (xlo & 0xe6u) == 0xe6u;
}
#endif

Isa Detect() {
#if defined(__x86_64__)
  if (CpuHasAvx2Fma()) return CpuHasAvx512() ? Isa::kAvx512 : Isa::kAvx2;
#elif defined(__aarch64__)
  return Isa::kNeon;
#endif
  return Isa::kPortable;
}

// 0 until the first BestIsa(); racing first calls compute the same answer.
std::atomic<uint32_t> g_best{0};

}  // namespace

Isa BestIsa() {
  uint32_t v = g_best.load(std::memory_order_relaxed);
  if (v == 0) {
    v = static_cast<uint32_t>(Detect());
    g_best.store(v, std::memory_order_relaxed);
  }
  return static_cast<Isa>(v);
}

bool IsaAvailable(Isa isa) {
  switch (isa) {
    case Isa::kAuto:
    case Isa::kPortable: return true;
    case Isa::kAvx2: return BestIsa() == isa || BestIsa() == Isa::kAvx512;
    case Isa::kAvx512:
    case Isa::kNeon: return BestIsa() == isa;
  }
  return false;
}

Isa ResolveIsa(Isa isa) {
  if (isa == Isa::kAuto) isa = BestIsa();
  return IsaAvailable(isa) ? isa : Isa::kPortable;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAuto: return IsaName(BestIsa());
    case Isa::kPortable: return "portable";
    case Isa::kAvx2: return "avx2-fma";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
  }
  return "?";
}

TileFn TileKernel(Isa isa) {
  if (isa == Isa::kAuto) isa = BestIsa();
  if (!IsaAvailable(isa)) return nullptr;
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx2: return detail::TileAvx2;
    case Isa::kAvx512: return detail::TileAvx512;
#endif
#if defined(__aarch64__)
    case Isa::kNeon: return detail::TileNeon;
#endif
    case Isa::kPortable: return detail::TilePortable;
    default: return nullptr;
  }
}

TileFn TileKernel2(Isa isa) {
  if (isa == Isa::kAuto) isa = BestIsa();
  if (!IsaAvailable(isa)) return nullptr;
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx2: return detail::Tile2Avx2;
    case Isa::kAvx512: return detail::Tile2Avx512;
#endif
#if defined(__aarch64__)
    case Isa::kNeon: return detail::Tile2Neon;
#endif
    case Isa::kPortable: return detail::Tile2Portable;
    default: return nullptr;
  }
}

int64_t BlockKc(Isa isa) {
  // AVX-512's block is one kernel: every B vector it loads serves 8 rows,
  // and ViT-B/16 ran 5% slower on slices of 256 than of 1024.
  return ResolveIsa(isa) == Isa::kAvx512 ? 1024 : 128;
}

int BlockPanelCols(Isa isa) { return ResolveIsa(isa) == Isa::kAvx2 ? kNr : kNr2; }

namespace detail {
void Tile2Portable(const Tile& t) { SplitBlock(t, TilePortable); }
#if defined(__aarch64__)
void Tile2Neon(const Tile& t) { SplitBlock(t, TileNeon); }
#endif
}  // namespace detail

}  // namespace uk
}  // namespace epctx
