// SPDX-License-Identifier: Apache-2.0
// DepthwiseLanes (depthwise.h): 16 channels in the lanes of a zmm vector,
// or of two ymm vectors on AVX2.
//
// Work: the padded block T [PH][PWa][16] of a band of output rows (padded
// row r, column q: input row top + r - pt, column q - pl of every channel,
// zero outside the input and for channels past nc), then the weights
// [taps][16] and the bias [16]. Bands are as many output rows as the block
// (at most kDwLanesMaxFloats) holds the input rows of. PWa
// covers the columns of whole 16-pixel output chunks (the pixels past OW
// compute from zeros or real columns and are never stored), rounded up to
// 16 for the transposes in. Output pixel (oh, ow), tap (kh, kw) reads T at
// row oh * sh + kh * dh, column ow * sw + kw * dw.
#include "epctx_uk/depthwise.h"

#if defined(__x86_64__)
#include "avx2.h"
#include "avx512.h"
#endif

namespace epctx {
namespace uk {
namespace {

#if defined(__x86_64__)
constexpr int64_t kLanes = 16;
constexpr int64_t kMaxTaps = 49;
// Output columns up to which lanes beat rows: 64 on AVX-512; on AVX2 (8-lane
// rows waste less of a vector, the transposes cost twice as many
// instructions per float) 16: MobileNetV2's depthwise layers on an AVX2-only
// core, vnpu, 1 thread, rows -> lanes: 7x7 0.22 -> 0.12 ms, 14x14 0.2 ->
// 0.14 ms, 28x28 0.15 -> 0.23 ms, 56x56 0.38 -> 0.63 ms.
int64_t MaxOutCols(Isa isa) { return isa == Isa::kAvx512 ? 64 : 16; }

int64_t RoundUp16(int64_t v) { return (v + kLanes - 1) / kLanes * kLanes; }

struct Geometry {
  int64_t PH, PWa, nt;
  int64_t band;    // output rows per pass (the block holds their input rows)
  uint64_t block;  // T's floats
};

// False for shapes the path does not take (see DepthwiseLanesFloats).
bool GeometryOf(const DwShape& s, Isa isa, Geometry* g) {
  const int64_t dims[] = {s.H, s.W, s.OH, s.OW, s.KH, s.KW, s.sh, s.sw, s.dh, s.dw};
  for (int64_t d : dims)
    if (d < 1 || d > (int64_t(1) << 16)) return false;
  if (s.pt < 0 || s.pl < 0 || s.pt > (int64_t(1) << 16) || s.pl > (int64_t(1) << 16)) return false;
  if (s.OW > MaxOutCols(isa)) return false;  // rows this wide vectorise well
  g->nt = s.KH * s.KW;
  if (g->nt > kMaxTaps) return false;
  g->PWa = RoundUp16((RoundUp16(s.OW) - 1) * s.sw + (s.KW - 1) * s.dw + 1);
  // As many output rows per pass as the block holds the input rows of.
  const int64_t rows = int64_t(kDwLanesMaxFloats) / (g->PWa * kLanes), span = (s.KH - 1) * s.dh;
  if (rows <= span) return false;
  g->band = (rows - span - 1) / s.sh + 1;
  g->band = g->band < s.OH ? g->band : s.OH;
  g->PH = (g->band - 1) * s.sh + span + 1;
  g->block = uint64_t(g->PH) * uint64_t(g->PWa) * kLanes;
  return true;
}

// Lanes [lo, hi) of a 16-lane mask (empty when hi <= lo).
inline __mmask16 Lanes(int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo;
  hi = hi > kLanes ? kLanes : hi;
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// The block's padded rows [0, PH) from input rows top - pt on: 16
// column-chunk transposes per row (channels past nc zero).
EPCTX_AVX512 void FillBlock(const DwShape& s, const Geometry& g, int nc, const float* x,
                            int64_t x_cs, int64_t top, int64_t PH, float* T) {
  const int64_t rowf = g.PWa * kLanes;
  for (int64_t r = 0; r < PH; ++r) {
    float* tr = T + r * rowf;
    const int64_t ih = top + r - s.pt;
    if (ih < 0 || ih >= s.H) {
      for (int64_t i = 0; i < rowf; i += kLanes) _mm512_storeu_ps(tr + i, _mm512_setzero_ps());
      continue;
    }
    for (int64_t q0 = 0; q0 < g.PWa; q0 += kLanes) {
      const int64_t iw0 = q0 - s.pl;  // input column of lane 0
      const __mmask16 m = Lanes(-iw0, s.W - iw0);
      __m512 v[16];
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c)
        v[c] = c < nc && m ? _mm512_maskz_loadu_ps(m, x + c * x_cs + ih * s.W + iw0)
                           : _mm512_setzero_ps();
      detail::Transpose16(v);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) _mm512_storeu_ps(tr + (q0 + i) * kLanes, v[i]);
    }
  }
}

// Depthwise (kGrouped false: output lane c from input lane c, weights
// wt[tap][16]) or one group of 16 -> 16 channels (kGrouped: output lane o
// from every input lane i, weights wt[tap][i][16 o]), over the block in
// bands; bias bv[16]; nc output planes stored.
template <bool kGrouped>
EPCTX_AVX512 void LanesAvx512(const DwShape& s, const Geometry& g, int nc_in, int nc,
                              const float* x, int64_t x_cs, const float* wt, const float* bv,
                              float* y, int64_t y_cs, float* T) {
  const int64_t rowf = g.PWa * kLanes;
  const __m512 b = _mm512_loadu_ps(bv);
  for (int64_t oh0 = 0; oh0 < s.OH; oh0 += g.band) {
    const int64_t oh1 = s.OH - oh0 < g.band ? s.OH : oh0 + g.band;
    const int64_t top = oh0 * s.sh, PH = (oh1 - oh0 - 1) * s.sh + (s.KH - 1) * s.dh + 1;
    FillBlock(s, g, nc_in, x, x_cs, top, PH, T);
    // 16 output pixels of a row at a time, transposed into the planes.
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow0 = 0; ow0 < s.OW; ow0 += kLanes) {
        __m512 acc[16];
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) acc[j] = b;
        const int64_t step = s.sw * kLanes;
        for (int64_t kh = 0; kh < s.KH; ++kh) {
          const float* row = T + ((oh - oh0) * s.sh + kh * s.dh) * rowf + ow0 * step;
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            const int64_t tap = kh * s.KW + kw;
            const float* p = row + kw * s.dw * kLanes;
            if (kGrouped) {
              for (int i = 0; i < 16; ++i) {
                const __m512 wv = _mm512_loadu_ps(wt + (tap * 16 + i) * kLanes);
#pragma GCC unroll 16
                for (int j = 0; j < 16; ++j)
                  acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(p[j * step + i]), wv, acc[j]);
              }
            } else {
              const __m512 wv = _mm512_loadu_ps(wt + tap * kLanes);
#pragma GCC unroll 16
              for (int j = 0; j < 16; ++j)
                acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(p + j * step), wv, acc[j]);
            }
          }
        }
        detail::Transpose16(acc);
        const __mmask16 m = Lanes(0, s.OW - ow0);
        float* yo = y + oh * s.OW + ow0;
#pragma GCC unroll 16
        for (int c = 0; c < 16; ++c)
          if (c < nc) _mm512_mask_storeu_ps(yo + c * y_cs, m, acc[c]);
      }
  }
}

// AVX2: the same block and bands, 8 lanes at a time. A pixel's 16 channel
// slots are two halves of 8; a half is skipped when no channel of it is
// asked for. 8 x 8 transposes in and out.
// Lanes [lo, hi) of 8 as a maskload/maskstore mask.
EPCTX_AVX2 inline __m256i Lanes8(int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo > 8 ? 8 : lo;
  hi = hi < 0 ? 0 : hi > 8 ? 8 : hi;
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(lo)), idx),
                             _mm256_cmpgt_epi32(_mm256_set1_epi32(int(hi)), idx));
}

EPCTX_AVX2 void FillBlockAvx2(const DwShape& s, const Geometry& g, int nc, const float* x,
                              int64_t x_cs, int64_t top, int64_t PH, float* T) {
  const int64_t rowf = g.PWa * kLanes;
  const int halves = nc > 8 ? 2 : 1;
  for (int64_t r = 0; r < PH; ++r) {
    float* tr = T + r * rowf;
    const int64_t ih = top + r - s.pt;
    if (ih < 0 || ih >= s.H) {
      for (int64_t i = 0; i < rowf; i += 8) _mm256_storeu_ps(tr + i, _mm256_setzero_ps());
      continue;
    }
    for (int64_t q0 = 0; q0 < g.PWa; q0 += 8) {
      const int64_t iw0 = q0 - s.pl;  // input column of lane 0
      const bool any = -iw0 < 8 && s.W - iw0 > 0;
      const __m256i m = Lanes8(-iw0, s.W - iw0);
      for (int h = 0; h < halves; ++h) {
        __m256 v[8];
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c)
          v[c] = h * 8 + c < nc && any
                     ? _mm256_maskload_ps(x + (h * 8 + c) * x_cs + ih * s.W + iw0, m)
                     : _mm256_setzero_ps();
        detail::Transpose8(v);
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(tr + (q0 + i) * kLanes + h * 8, v[i]);
      }
    }
  }
}

// LanesAvx512's contract: kGrouped false is depthwise (weights wt[tap][16]),
// true one group of 16 -> 16 (weights wt[tap][i][16 o]).
template <bool kGrouped>
EPCTX_AVX2 void LanesAvx2(const DwShape& s, const Geometry& g, int nc_in, int nc, const float* x,
                          int64_t x_cs, const float* wt, const float* bv, float* y, int64_t y_cs,
                          float* T) {
  const int64_t rowf = g.PWa * kLanes, step = s.sw * kLanes;
  const int halves = nc > 8 ? 2 : 1;
  for (int64_t oh0 = 0; oh0 < s.OH; oh0 += g.band) {
    const int64_t oh1 = s.OH - oh0 < g.band ? s.OH : oh0 + g.band;
    const int64_t top = oh0 * s.sh, PH = (oh1 - oh0 - 1) * s.sh + (s.KH - 1) * s.dh + 1;
    FillBlockAvx2(s, g, nc_in, x, x_cs, top, PH, T);
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow0 = 0; ow0 < s.OW; ow0 += 8)
        for (int h = 0; h < halves; ++h) {
          __m256 acc[8];
          const __m256 b = _mm256_loadu_ps(bv + h * 8);
#pragma GCC unroll 8
          for (int j = 0; j < 8; ++j) acc[j] = b;
          for (int64_t kh = 0; kh < s.KH; ++kh) {
            const float* row = T + ((oh - oh0) * s.sh + kh * s.dh) * rowf + ow0 * step;
            for (int64_t kw = 0; kw < s.KW; ++kw) {
              const int64_t tap = kh * s.KW + kw;
              const float* p = row + kw * s.dw * kLanes;
              if (kGrouped) {
                for (int i = 0; i < 16; ++i) {
                  const __m256 wv = _mm256_loadu_ps(wt + (tap * 16 + i) * kLanes + h * 8);
#pragma GCC unroll 8
                  for (int j = 0; j < 8; ++j)
                    acc[j] = _mm256_fmadd_ps(_mm256_broadcast_ss(p + j * step + i), wv, acc[j]);
                }
              } else {
                const __m256 wv = _mm256_loadu_ps(wt + tap * kLanes + h * 8);
#pragma GCC unroll 8
                for (int j = 0; j < 8; ++j)
                  acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(p + j * step + h * 8), wv, acc[j]);
              }
            }
          }
          detail::Transpose8(acc);
          const __m256i m = Lanes8(0, s.OW - ow0);
          float* yo = y + oh * s.OW + ow0;
#pragma GCC unroll 8
          for (int c = 0; c < 8; ++c)
            if (h * 8 + c < nc) _mm256_maskstore_ps(yo + (h * 8 + c) * y_cs, m, acc[c]);
        }
  }
}

// The ISAs with a lanes kernel.
bool HasLanes(Isa isa) { return isa == Isa::kAvx512 || isa == Isa::kAvx2; }

#endif

}  // namespace

bool HasLanesKernels(Isa isa) {
#if defined(__x86_64__)
  return HasLanes(ResolveIsa(isa));
#else
  (void)isa;
  return false;
#endif
}

uint64_t DepthwiseLanesFloats(const DwShape& s, Isa isa) {
#if defined(__x86_64__)
  Geometry g;
  if (!HasLanes(ResolveIsa(isa)) || !GeometryOf(s, ResolveIsa(isa), &g)) return 0;
  return g.block + uint64_t(g.nt + 1) * kLanes;
#else
  (void)s;
  (void)isa;
  return 0;
#endif
}

void DepthwiseLanes(const DwShape& s, int nc, const float* x, int64_t x_cs, const float* w,
                    int64_t w_cs, int64_t w_ts, const float* bias, float* y, int64_t y_cs,
                    float* work, Isa isa) {
#if defined(__x86_64__)
  Geometry g;
  const Isa run = ResolveIsa(isa);
  if (nc < 1 || nc > 16 || !HasLanes(run) || !GeometryOf(s, run, &g)) return;
  float* wt = work + g.block;
  float* bv = wt + g.nt * kLanes;
  for (int64_t t = 0; t < g.nt; ++t)
    for (int64_t c = 0; c < kLanes; ++c) wt[t * kLanes + c] = c < nc ? w[c * w_cs + t * w_ts] : 0.f;
  for (int64_t c = 0; c < kLanes; ++c) bv[c] = bias && c < nc ? bias[c] : 0.f;
  if (run == Isa::kAvx512) LanesAvx512<false>(s, g, nc, nc, x, x_cs, wt, bv, y, y_cs, work);
  else LanesAvx2<false>(s, g, nc, nc, x, x_cs, wt, bv, y, y_cs, work);
#else
  (void)s, (void)nc, (void)x, (void)x_cs, (void)w, (void)w_cs, (void)w_ts, (void)bias, (void)y;
  (void)y_cs, (void)work, (void)isa;
#endif
}

void GatherGroupLaneWeights(const LaneWeights& w, int64_t taps, float* dst) {
  // The vnpu's blocked layout (ocs 1): each tap and input channel's 16
  // outputs are two runs of 8, one per block (RegNet-X at 2 threads spent
  // 4% of its time here one float at a time).
  if (w.ocs == 1) {
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t i = 0; i < 16; ++i) {
        const float* src = w.w + i * w.ics + t * w.ts;
        __builtin_memcpy(dst + (t * 16 + i) * 16, src, 8 * sizeof(float));
        __builtin_memcpy(dst + (t * 16 + i) * 16 + 8, src + w.obs, 8 * sizeof(float));
      }
    return;
  }
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t o = 0; o < 16; ++o)
        dst[(t * 16 + i) * 16 + o] = w.w[(o / 8) * w.obs + (o % 8) * w.ocs + i * w.ics + t * w.ts];
}

uint64_t GroupLanesFloats(const DwShape& s, Isa isa) {
#if defined(__x86_64__)
  Geometry g;
  if (!HasLanes(ResolveIsa(isa)) || !GeometryOf(s, ResolveIsa(isa), &g)) return 0;
  return g.block + uint64_t(g.nt * 16 + 1) * kLanes;
#else
  (void)s;
  (void)isa;
  return 0;
#endif
}

void GroupLanes(const DwShape& s, const float* x, int64_t x_cs, const LaneWeights& w,
                const float* bias, float* y, int64_t y_cs, float* work, Isa isa) {
#if defined(__x86_64__)
  Geometry g;
  const Isa run = ResolveIsa(isa);
  if (!HasLanes(run) || !GeometryOf(s, run, &g)) return;
  float* wt = work + g.block;
  float* bv = wt + g.nt * 16 * kLanes;
  if (!w.gathered) GatherGroupLaneWeights(w, g.nt, wt);
  for (int64_t o = 0; o < kLanes; ++o) bv[o] = bias ? bias[o] : 0.f;
  const float* gw = w.gathered ? w.gathered : wt;
  if (run == Isa::kAvx512) LanesAvx512<true>(s, g, 16, 16, x, x_cs, gw, bv, y, y_cs, work);
  else LanesAvx2<true>(s, g, 16, 16, x, x_cs, gw, bv, y, y_cs, work);
#else
  (void)s, (void)x, (void)x_cs, (void)w, (void)bias, (void)y, (void)y_cs, (void)work, (void)isa;
#endif
}

}  // namespace uk
}  // namespace epctx
