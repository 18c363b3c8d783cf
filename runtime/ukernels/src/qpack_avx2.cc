// SPDX-License-Identifier: Apache-2.0
// The AVX2 im2col panel packer (qgemm.h QPackFn) for strides 1 and 2 and
// windows up to 16 columns wide. The portable packer builds each K row
// with a memset and a memcpy per run of pixels (a libc call for 48 bytes
// or fewer); here the panel's runs and each tap column's lanes are planned
// once (into the caller's scratch), and a K row is the pad byte vector
// with, for each run whose input row exists, full vector loads of the
// input blended in on the run's lanes (stride 2: the even bytes of 96,
// by an AND and a saturating pack). A row whose loads would leave the
// group's input planes (the first bytes of the first plane under left
// padding, the last bytes of the last) is copied byte by byte instead.
// Four rows are then interleaved into a group (Interleave4).
#include "epctx_uk/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "qgemm_common.h"

#define EPCTX_QAVX2 __attribute__((target("avx2,fma")))

namespace epctx {
namespace uk {
namespace detail {
namespace {

constexpr int32_t kMaxKW = 16;

// Per run: its output row; per run and tap column: the lanes [lo, hi) that
// read the input, lane q reading row[q * sw + delta].
struct Plan {
  int32_t nr;
  int64_t oh[kQCols];
  int64_t delta[kQCols][kMaxKW];
  int8_t lo[kQCols][kMaxKW], hi[kQCols][kMaxKW];
};

// Lanes [lo, hi) of 32 (idx: the lane numbers) as a byte mask.
EPCTX_QAVX2 inline __m256i LaneMask(__m256i idx, int32_t lo, int32_t hi) {
  return _mm256_and_si256(_mm256_cmpgt_epi8(idx, _mm256_set1_epi8(char(lo - 1))),
                          _mm256_cmpgt_epi8(_mm256_set1_epi8(char(hi)), idx));
}

// Lanes 0-31 and 32-47 (in the low half of *v1) read from base.
template <int SW>
EPCTX_QAVX2 inline void Load48(const uint8_t* base, __m256i* v0, __m256i* v1) {
  if (SW == 1) {
    *v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base));
    *v1 = _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(base + 32)));
    return;
  }
  const __m256i even = _mm256_set1_epi16(0xff);
  const __m256i a =
      _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base)), even);
  const __m256i b =
      _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + 32)), even);
  const __m256i c =
      _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + 64)), even);
  *v0 = _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xd8);
  *v1 = _mm256_permute4x64_epi64(_mm256_packus_epi16(c, c), 0xd8);
}

template <int SW>
EPCTX_QAVX2 void Pack(const QConvPanel& c, Plan& pp) {
  const uint8_t* lo_bound = c.x;
  const uint8_t* hi_bound = c.x + c.K / (c.KH * c.KW) * c.H * c.W;
  const __m256i idx0 = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                        17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
  const __m256i idx1 = _mm256_add_epi8(idx0, _mm256_set1_epi8(32));
  // Lanes past cols hold xflip (0 after the XOR), the others the pad byte.
  const __m256i pad = _mm256_set1_epi8(char(c.pad)), none = _mm256_set1_epi8(char(c.xflip));
  const int32_t cols = int32_t(c.cols);
  const __m256i pad0 = _mm256_blendv_epi8(none, pad, LaneMask(idx0, 0, cols));
  const __m256i pad1 = _mm256_blendv_epi8(none, pad, LaneMask(idx1, 0, cols));
  alignas(32) uint8_t rows[4][64];
  int64_t ic = 0, kh = 0, kw = 0;  // of row k, counted up
  for (int64_t gi = 0; gi < (c.K + 3) / 4; ++gi) {
    for (int j = 0; j < 4; ++j) {
      uint8_t* row = rows[j];
      if (gi * 4 + j >= c.K) {
        memset(row, c.xflip, kQCols);  // 0 after the XOR
        continue;
      }
      __m256i v0 = pad0, v1 = pad1;
      for (int32_t r = 0; r < pp.nr; ++r) {
        const int32_t lo = pp.lo[r][kw], hi = pp.hi[r][kw];
        if (lo >= hi) continue;
        const int64_t ih = pp.oh[r] * c.sh - c.pt + kh * c.dh;
        if (ih < 0 || ih >= c.H) continue;
        const uint8_t* in = c.x + (ic * c.H + ih) * c.W;
        const int64_t delta = pp.delta[r][kw];
        // Compared as offsets: base may lie before the planes.
        if (in - lo_bound + delta >= 0 && hi_bound - in >= delta + 48 * SW) {
          __m256i l0, l1;
          Load48<SW>(in + delta, &l0, &l1);
          v0 = _mm256_blendv_epi8(v0, l0, LaneMask(idx0, lo, hi));
          v1 = _mm256_blendv_epi8(v1, l1, LaneMask(idx1, lo, hi));
          continue;
        }
        alignas(32) uint8_t b[64];
        _mm256_store_si256(reinterpret_cast<__m256i*>(b), v0);
        _mm256_store_si256(reinterpret_cast<__m256i*>(b + 32), v1);
        for (int32_t q = lo; q < hi; ++q) b[q] = in[q * SW + delta];
        v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b));
        v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 32));
      }
      _mm256_store_si256(reinterpret_cast<__m256i*>(row), v0);
      _mm256_store_si256(reinterpret_cast<__m256i*>(row + 32), v1);
      if (++kw == c.KW) {
        kw = 0;
        if (++kh == c.KH) kh = 0, ++ic;
      }
    }
    Interleave4(rows[0], rows[1], rows[2], rows[3], c.xflip, c.panel + gi * kQCols * 4);
  }
}

}  // namespace

EPCTX_QAVX2 void QPackAvx2(const QConvPanel& c) {
  if (c.KH == 1 && c.KW == 1 && c.sh == 1 && c.sw == 1 && c.pt == 0 && c.pl == 0 && c.OW == c.W &&
      c.cols == kQCols && c.p0 + kQCols <= c.H * c.W) {
    // A 1x1 stride-1 unpadded convolution's full panel: its rows in place.
    uint8_t none[kQCols];  // rows past K: 0 after the XOR
    memset(none, c.xflip, kQCols);
    const uint8_t* r[4];
    for (int64_t gi = 0; gi < (c.K + 3) / 4; ++gi) {
      for (int j = 0; j < 4; ++j) {
        const int64_t k = gi * 4 + j;
        r[j] = k < c.K ? c.x + k * c.H * c.W + c.p0 : none;
      }
      Interleave4(r[0], r[1], r[2], r[3], c.xflip, c.panel + gi * kQCols * 4);
    }
    return;
  }
  static_assert(sizeof(Plan) <= size_t(kQPackScratch), "the plan fits the caller's scratch");
  Plan& pp = *static_cast<Plan*>(c.scratch);
  QRun runs[kQCols];
  pp.nr = QRuns(c, runs);
  for (int64_t kw = 0; kw < c.KW; ++kw) {
    const QSpan sp = QSpanOf(c, kw);
    for (int32_t r = 0; r < pp.nr; ++r) {
      const QRun& u = runs[r];
      const int64_t a = QClamp(sp.vlo - u.ow0, 0, u.len);
      const int64_t e = QClamp(sp.vhi + 1 - u.ow0, a, u.len);
      pp.oh[r] = u.oh;
      pp.lo[r][kw] = int8_t(u.q0 + a);
      pp.hi[r][kw] = int8_t(u.q0 + e);
      pp.delta[r][kw] = (u.ow0 - u.q0) * c.sw + sp.off;
    }
  }
  if (c.sw == 1) Pack<1>(c, pp);
  else Pack<2>(c, pp);
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx
#endif
