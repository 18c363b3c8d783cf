// SPDX-License-Identifier: Apache-2.0
// The portable int8 tile and dot kernels (qgemm.h), the panel interleave,
// and the choice of kernel. The AVX-512 VNNI kernels are in
// qgemm_avx512.cc, the AVX2 ones in qgemm_avx2.cc.
#include "epctx_uk/qgemm.h"
#include "qgemm_common.h"

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace epctx {
namespace uk {
namespace detail {
void QTileVnni(const QTile& t);
void QDotVnni(const QDot& d);
void QRequantVnni(const QRequant& q);
void QPackVnni(const QConvPanel& c);
void QDwVnni(const QDwPlane& d);
void QBinaryVnni(const QBinaryRow& r);
void QLutVnni(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n);
void QuantizeVnni(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi,
                  uint8_t* y);
void DequantizeVnni(const uint8_t* x, int64_t n, bool is_signed, int32_t zp, float scale, float* y);
void QTileAvx2(const QTile& t);
void QRequantAvx2(const QRequant& q);
void QBinaryAvx2(const QBinaryRow& r);
void QDwAvx2(const QDwPlane& d);
void QPackAvx2(const QConvPanel& c);
void QDotAvx2(const QDot& d);
void QuantizeAvx2(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi,
                  uint8_t* y);
void DequantizeAvx2(const uint8_t* x, int64_t n, bool is_signed, int32_t zp, float scale, float* y);
}  // namespace detail

namespace {

inline int32_t SignedByte(uint8_t b) { return int32_t(int8_t(b)); }

// Accumulates one group (four weight bytes of each row) over the panel's
// columns.
inline void Group(int32_t (&acc)[kQRows][kQCols], const uint8_t* x, const uint8_t (*w)[4],
                  int32_t rows) {
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t w0 = SignedByte(w[r][0]), w1 = SignedByte(w[r][1]);
    const int32_t w2 = SignedByte(w[r][2]), w3 = SignedByte(w[r][3]);
    int32_t* a = acc[r];
    for (int32_t p = 0; p < kQCols; ++p) {
      const uint8_t* xp = x + p * 4;
      a[p] += w0 * int32_t(xp[0]) + w1 * int32_t(xp[1]) + w2 * int32_t(xp[2]) + w3 * int32_t(xp[3]);
    }
  }
}

void QTilePortable(const QTile& t) {
  int32_t acc[kQRows][kQCols] = {};
  uint8_t w[kQRows][4];
  const uint8_t* x = t.x;
  for (int64_t g = 0; g < t.groups; ++g, x += kQCols * 4) {
    for (int32_t r = 0; r < t.rows; ++r)
      for (int j = 0; j < 4; ++j) w[r][j] = uint8_t(t.w[r * t.ldw + g * 4 + j] ^ t.wflip);
    Group(acc, x, w, t.rows);
  }
  if (t.tail) {
    for (int32_t r = 0; r < t.rows; ++r) {
      uint8_t b[4];
      memcpy(b, &t.tail[r], 4);
      // The tail's padding bytes meet zero panel bytes: any value adds 0.
      for (int j = 0; j < 4; ++j) w[r][j] = uint8_t(b[j] ^ t.wflip);
    }
    Group(acc, x, w, t.rows);
  }
  for (int32_t r = 0; r < t.rows; ++r) memcpy(t.out + r * kQCols, acc[r], sizeof acc[r]);
}

void QDotPortable(const QDot& d) {
  for (int64_t j = 0; j < d.n; ++j) {
    const uint8_t* w = d.w + j * d.ldw;
    // Wrapping int32 sums, as the vector kernels' adds wrap (signed overflow
    // would be undefined).
    uint32_t acc = 0;
    for (int64_t k = 0; k < d.k; ++k)
      acc += uint32_t(int32_t(d.a[k]) * SignedByte(uint8_t(w[k] ^ d.wflip)));
    d.out[j] = int32_t(acc);
  }
}

void QRequantPortable(const QRequant& q) {
  for (int32_t r = 0; r < q.rows; ++r) {
    const int32_t* raw = q.raw + r * kQCols;
    uint8_t* y = q.y + r * q.y_row;
    for (int32_t c = 0; c < q.cols; ++c) {
      uint32_t acc = uint32_t(raw[c]) + uint32_t(q.rowc[r]);
      if (q.colsum) acc -= uint32_t(q.wz) * uint32_t(q.colsum[c]);
      y[c] = uint8_t(QRequantizeOne(float(int32_t(acc)) * q.mult[r], q.zp, q.lo, q.hi));
    }
  }
}

// Each K row built in a buffer of kQCols bytes (a run: left padding, a
// copy, right padding), four rows interleaved into a group. A 1x1 stride-1
// unpadded convolution's full panel reads its rows in place (48
// consecutive bytes of each input plane).
void QPackPortable(const QConvPanel& c) {
  detail::QRun runs[kQCols];
  const int32_t nr = detail::QRuns(c, runs);
  uint8_t rows[4][kQCols];
  const uint8_t* src_rows[4];
  const int64_t taps = c.KH * c.KW;
  const bool in_place = c.KH == 1 && c.KW == 1 && c.sh == 1 && c.sw == 1 && c.pt == 0 &&
                        c.pl == 0 && c.OW == c.W && c.cols == kQCols && c.p0 + kQCols <= c.H * c.W;
  for (int64_t gi = 0; gi < (c.K + 3) / 4; ++gi) {
    for (int j = 0; j < 4; ++j) {
      uint8_t* row = rows[j];
      src_rows[j] = row;
      const int64_t k = gi * 4 + j;
      if (k >= c.K) {
        memset(row, c.xflip, kQCols);
        continue;
      }
      if (in_place) {
        src_rows[j] = c.x + k * c.H * c.W + c.p0;
        continue;
      }
      if (c.cols < kQCols) memset(row + c.cols, c.xflip, size_t(kQCols - c.cols));
      const int64_t ic = k / taps, t = k % taps, kh = t / c.KW;
      const detail::QSpan sp = detail::QSpanOf(c, t % c.KW);
      for (int32_t r = 0; r < nr; ++r) {
        const detail::QRun& u = runs[r];
        uint8_t* dst = row + u.q0;
        const int64_t ih = u.oh * c.sh - c.pt + kh * c.dh;
        if (ih < 0 || ih >= c.H) {
          memset(dst, c.pad, size_t(u.len));
          continue;
        }
        const uint8_t* src = c.x + (ic * c.H + ih) * c.W;
        const int64_t a = detail::QClamp(sp.vlo - u.ow0, 0, u.len);
        const int64_t e = detail::QClamp(sp.vhi + 1 - u.ow0, a, u.len);
        if (a > 0) memset(dst, c.pad, size_t(a));
        if (e < u.len) memset(dst + e, c.pad, size_t(u.len - e));
        if (c.sw == 1) {
          if (e > a) memcpy(dst + a, src + u.ow0 + a + sp.off, size_t(e - a));
        } else {
          for (int64_t i = a; i < e; ++i) dst[i] = src[(u.ow0 + i) * c.sw + sp.off];
        }
      }
    }
    Interleave4(src_rows[0], src_rows[1], src_rows[2], src_rows[3], c.xflip,
                c.panel + gi * kQCols * 4);
  }
}

void QDwPortable(const QDwPlane& d) {
  for (int64_t oh = 0; oh < d.OH; ++oh)
    for (int64_t ow = 0; ow < d.OW; ++ow) {
      int32_t acc = 0;
      for (int32_t kh = 0; kh < d.KH; ++kh) {
        const uint8_t* row = d.x + (oh * d.sh + kh * d.dh) * d.pitch + ow * d.sw;
        for (int32_t kw = 0; kw < d.KW; ++kw) acc += int32_t(d.w[kh * d.KW + kw]) * row[kw * d.dw];
      }
      d.out[oh * d.OW + ow] = acc;
    }
}

void QBinaryPortable(const QBinaryRow& r) {
  for (int64_t i = 0; i < r.n; ++i) {
    const uint8_t ba = r.a[r.a_one ? 0 : i], bb = r.b[r.b_one ? 0 : i];
    const int32_t qa = r.is_signed ? int32_t(int8_t(ba)) : int32_t(ba);
    const int32_t qb = r.is_signed ? int32_t(int8_t(bb)) : int32_t(bb);
    const float va = float(qa - r.az) * r.as, vb = float(qb - r.bz) * r.bs;
    r.y[i] = uint8_t(QRequantizeOne((r.mul ? va * vb : va + vb) / r.ys, r.yz, r.lo, r.hi));
  }
}

void QLutPortable(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

void QuantizePortable(const float* x, int64_t n, float scale, int32_t zp, int32_t lo, int32_t hi,
                      uint8_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = uint8_t(QRequantizeOne(x[i] / scale, zp, lo, hi));
}

void DequantizePortable(const uint8_t* x, int64_t n, bool is_signed, int32_t zp, float scale,
                        float* y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = float((is_signed ? int32_t(int8_t(x[i])) : int32_t(x[i])) - zp) * scale;
}

#if defined(__x86_64__)
// AVX512F/VL usable (BestIsa) and AVX512_VNNI (cpuid 7, ecx bit 11) and
// AVX512BW (ebx bit 30: the byte masks of the dot kernel's tail).
bool CpuHasVnni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  return (c & (1u << 11)) && (b & (1u << 30));
}
// AVX512_VBMI (cpuid 7, ecx bit 1): vpermb, for the depthwise row.
bool CpuHasVbmi() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid_count(7, 0, a, b, c, d);
  return c & (1u << 1);
}

// The cpuid answers, asked once: bit 0 asked, bit 1 VNNI, bit 2 VBMI (racing
// first calls compute the same answer). The CPU kernels pick their kernels
// on every run, so cpuid is not asked each time.
std::atomic<uint32_t> g_features{0};

uint32_t Features() {
  uint32_t v = g_features.load(std::memory_order_relaxed);
  if (v == 0) {
    v = 1u | (CpuHasVnni() ? 2u : 0u) | (CpuHasVbmi() ? 4u : 0u);
    g_features.store(v, std::memory_order_relaxed);
  }
  return v;
}
#endif

bool UseVnni(Isa isa) {
#if defined(__x86_64__)
  return ResolveIsa(isa) == Isa::kAvx512 && (Features() & 2u);
#else
  (void)isa;
  return false;
#endif
}

#if defined(__x86_64__)
// AVX2 (every AVX-512 CPU has it too); UseAvx2: where the VNNI kernels do
// not run.
bool HasAvx2(Isa isa) {
  const Isa r = ResolveIsa(isa);
  return r == Isa::kAvx2 || r == Isa::kAvx512;
}
bool UseAvx2(Isa isa) { return HasAvx2(isa) && !UseVnni(isa); }
#endif

}  // namespace

QTileFn QTileKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa)) return detail::QTileVnni;
  if (UseAvx2(isa)) return detail::QTileAvx2;
#endif
  (void)isa;
  return QTilePortable;
}

QDotFn QDotKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa)) return detail::QDotVnni;
  if (UseAvx2(isa)) return detail::QDotAvx2;
#endif
  (void)isa;
  return QDotPortable;
}

QRequantFn QRequantKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa)) return detail::QRequantVnni;
  if (UseAvx2(isa)) return detail::QRequantAvx2;
#endif
  (void)isa;
  return QRequantPortable;
}

QPackFn QPackKernel(Isa isa, int64_t KW, int64_t sw) {
#if defined(__x86_64__)
  if (UseVnni(isa) && (Features() & 4u) && KW <= 16 && (sw == 1 || sw == 2))
    return detail::QPackVnni;
  if (HasAvx2(isa) && KW <= 16 && (sw == 1 || sw == 2)) return detail::QPackAvx2;
#endif
  (void)isa;
  (void)KW;
  (void)sw;
  return QPackPortable;
}

QDwFn QDwKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa) && (Features() & 4u)) return detail::QDwVnni;
  if (HasAvx2(isa)) return detail::QDwAvx2;
#endif
  (void)isa;
  return QDwPortable;
}

QBinaryFn QBinaryKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa)) return detail::QBinaryVnni;
  if (UseAvx2(isa)) return detail::QBinaryAvx2;
#endif
  (void)isa;
  return QBinaryPortable;
}

QLutFn QLutKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa) && (Features() & 4u)) return detail::QLutVnni;
#endif
  (void)isa;
  return QLutPortable;
}

QuantizeFn QuantizeKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa)) return detail::QuantizeVnni;
  if (UseAvx2(isa)) return detail::QuantizeAvx2;
#endif
  (void)isa;
  return QuantizePortable;
}

DequantizeFn DequantizeKernel(Isa isa) {
#if defined(__x86_64__)
  if (UseVnni(isa)) return detail::DequantizeVnni;
  if (UseAvx2(isa)) return detail::DequantizeAvx2;
#endif
  (void)isa;
  return DequantizePortable;
}

bool QHasVnni() { return UseVnni(Isa::kAuto); }

void Interleave4(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2, const uint8_t* r3,
                 uint8_t xflip, uint8_t* group) {
#if defined(__SSE2__)
  // 16 columns a step: bytes of rows 0/1 and 2/3 paired, then the pairs
  // paired (SSE2 is part of x86-64).
  const __m128i f = _mm_set1_epi8(char(xflip));
  for (int32_t p = 0; p < kQCols; p += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + p));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r2 + p));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r3 + p));
    const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
    const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
    __m128i* out = reinterpret_cast<__m128i*>(group + p * 4);
    _mm_storeu_si128(out, _mm_xor_si128(_mm_unpacklo_epi16(ab_lo, cd_lo), f));
    _mm_storeu_si128(out + 1, _mm_xor_si128(_mm_unpackhi_epi16(ab_lo, cd_lo), f));
    _mm_storeu_si128(out + 2, _mm_xor_si128(_mm_unpacklo_epi16(ab_hi, cd_hi), f));
    _mm_storeu_si128(out + 3, _mm_xor_si128(_mm_unpackhi_epi16(ab_hi, cd_hi), f));
  }
#else
  for (int32_t p = 0; p < kQCols; ++p) {
    group[p * 4 + 0] = uint8_t(r0[p] ^ xflip);
    group[p * 4 + 1] = uint8_t(r1[p] ^ xflip);
    group[p * 4 + 2] = uint8_t(r2[p] ^ xflip);
    group[p * 4 + 3] = uint8_t(r3[p] ^ xflip);
  }
#endif
}

}  // namespace uk
}  // namespace epctx
