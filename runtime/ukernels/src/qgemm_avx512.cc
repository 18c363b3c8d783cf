// SPDX-License-Identifier: Apache-2.0
// The AVX-512 VNNI int8 kernels (qgemm.h). vpdpbusd multiplies four
// unsigned bytes of one operand by four signed bytes of the other and adds
// the four products to an int32 lane, without saturation: the tile keeps a
// panel group (16 columns x 4 K rows) in each of 3 zmm and broadcasts a
// row's four weight bytes, 8 rows x 3 vectors = 24 accumulators. Compiled
// for baseline x86-64 like the rest; only these functions carry the target
// attribute, and QTileKernel picks them only when cpuid says the CPU has
// AVX512_VNNI and AVX512BW and BestIsa() that AVX-512 is usable.
#include "epctx_uk/qgemm.h"

#if defined(__x86_64__)
#include <cstring>

#include "avx512.h"
#include "qgemm_common.h"

#define EPCTX_VNNI __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512vnni")))
#define EPCTX_VNNI_VBMI \
  __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512vnni,avx512vbmi")))

namespace epctx {
namespace uk {
namespace detail {
namespace {

EPCTX_VNNI inline __m512i Word(const uint8_t* p, __m512i flip) {
  int32_t v;
  memcpy(&v, p, 4);
  return _mm512_xor_si512(_mm512_set1_epi32(v), flip);
}

template <int R, bool kFlip>
EPCTX_VNNI void Tile(const QTile& t) {
  __m512i c[R][3];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) c[r][0] = c[r][1] = c[r][2] = _mm512_setzero_si512();
  const __m512i flip = kFlip ? _mm512_set1_epi8(char(0x80)) : _mm512_setzero_si512();
  const uint8_t* x = t.x;
  const uint8_t* w = t.w;
  const int64_t ldw = t.ldw;
  for (int64_t g = 0; g < t.groups; ++g, x += kQCols * 4, w += 4) {
    const __m512i x0 = _mm512_loadu_si512(x), x1 = _mm512_loadu_si512(x + 64);
    const __m512i x2 = _mm512_loadu_si512(x + 128);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      int32_t v;
      memcpy(&v, w + r * ldw, 4);
      __m512i b = _mm512_set1_epi32(v);
      if (kFlip) b = _mm512_xor_si512(b, flip);
      c[r][0] = _mm512_dpbusd_epi32(c[r][0], x0, b);
      c[r][1] = _mm512_dpbusd_epi32(c[r][1], x1, b);
      c[r][2] = _mm512_dpbusd_epi32(c[r][2], x2, b);
    }
  }
  if (t.tail) {
    const __m512i x0 = _mm512_loadu_si512(x), x1 = _mm512_loadu_si512(x + 64);
    const __m512i x2 = _mm512_loadu_si512(x + 128);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i b = Word(reinterpret_cast<const uint8_t*>(t.tail + r), flip);
      c[r][0] = _mm512_dpbusd_epi32(c[r][0], x0, b);
      c[r][1] = _mm512_dpbusd_epi32(c[r][1], x1, b);
      c[r][2] = _mm512_dpbusd_epi32(c[r][2], x2, b);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_si512(t.out + r * kQCols, c[r][0]);
    _mm512_storeu_si512(t.out + r * kQCols + 16, c[r][1]);
    _mm512_storeu_si512(t.out + r * kQCols + 32, c[r][2]);
  }
}

template <bool kFlip>
EPCTX_VNNI void TileRows(const QTile& t) {
  switch (t.rows) {
    case 1: Tile<1, kFlip>(t); break;
    case 2: Tile<2, kFlip>(t); break;
    case 3: Tile<3, kFlip>(t); break;
    case 4: Tile<4, kFlip>(t); break;
    case 5: Tile<5, kFlip>(t); break;
    case 6: Tile<6, kFlip>(t); break;
    case 7: Tile<7, kFlip>(t); break;
    case 8: Tile<8, kFlip>(t); break;
    default: break;
  }
}

// The wrapping int32 sum of a vector's lanes, all in vector adds (GCC's
// _mm512_reduce_add_epi32 ends in a scalar signed add, undefined on
// overflow; raw sums may wrap, qgemm.h).
EPCTX_VNNI inline int32_t SumLanes(__m512i v) {
  __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  __m128i q = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x4e));
  q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0xb1));
  return _mm_cvtsi128_si32(q);
}

// Four weight rows at a time against one activation row, 64 K bytes a
// step; the last step's bytes past K are masked to zero in both operands.
template <int J>
EPCTX_VNNI void Dot(const QDot& d, int64_t j0, __m512i flip) {
  __m512i c[J];
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) c[j] = _mm512_setzero_si512();
  const uint8_t* w = d.w + j0 * d.ldw;
  int64_t k = 0;
  for (; k + 64 <= d.k; k += 64) {
    const __m512i a = _mm512_loadu_si512(d.a + k);
#pragma GCC unroll 4
    for (int j = 0; j < J; ++j)
      c[j] = _mm512_dpbusd_epi32(c[j], a,
                                 _mm512_xor_si512(_mm512_loadu_si512(w + j * d.ldw + k), flip));
  }
  if (k < d.k) {
    const __mmask64 m = (uint64_t{1} << (d.k - k)) - 1;  // d.k - k < 64
    const __m512i a = _mm512_maskz_loadu_epi8(m, d.a + k);
#pragma GCC unroll 4
    for (int j = 0; j < J; ++j)
      c[j] = _mm512_dpbusd_epi32(
          c[j], a, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, w + j * d.ldw + k), flip));
  }
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) d.out[j0 + j] = SumLanes(c[j]);
}

// Four K rows (48 columns each, in the low bytes) as one panel group:
// bytes interleaved within 128-bit lanes (q_s lane L: columns 16L + 4s ..
// 16L + 4s + 3), then the lanes put in column order.
EPCTX_VNNI inline void StoreGroup(__m512i r0, __m512i r1, __m512i r2, __m512i r3, uint8_t* out) {
  const __m512i ab_lo = _mm512_unpacklo_epi8(r0, r1), ab_hi = _mm512_unpackhi_epi8(r0, r1);
  const __m512i cd_lo = _mm512_unpacklo_epi8(r2, r3), cd_hi = _mm512_unpackhi_epi8(r2, r3);
  const __m512i q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
  const __m512i q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
  const __m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44), t1 = _mm512_shuffle_i32x4(q2, q3, 0x44);
  const __m512i t2 = _mm512_shuffle_i32x4(q0, q1, 0xaa), t3 = _mm512_shuffle_i32x4(q2, q3, 0xaa);
  _mm512_storeu_si512(out, _mm512_shuffle_i32x4(t0, t1, 0x88));
  _mm512_storeu_si512(out + 64, _mm512_shuffle_i32x4(t0, t1, 0xdd));
  _mm512_storeu_si512(out + 128, _mm512_shuffle_i32x4(t2, t3, 0x88));
}

// Lanes [lo, hi) of a 64-lane byte mask.
inline __mmask64 Lanes(int64_t lo, int64_t hi) {
  const uint64_t upto = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return __mmask64(upto & ~((uint64_t{1} << lo) - 1));
}

// What a panel's K rows share, resolved once per panel: for each run and
// tap column its lanes and where lane q reads (stride 1: one masked load;
// stride 2: two masked loads and vpermt2b taking every other byte).
constexpr int32_t kPackMaxKW = 16;
struct PackPlan {
  int32_t nr;
  int64_t oh[kQCols];                    // per run
  __mmask64 lanes[kQCols][kPackMaxKW];   // per run and kw: lanes read from input
  int64_t delta[kQCols][kPackMaxKW];     // lane q reads base + q * sw, base = row + delta
  uint64_t even[kQCols][kPackMaxKW][2];  // stride 2: the bytes 2q of those lanes, per 64
};

EPCTX_VNNI_VBMI inline __m512i Row(const QConvPanel& c, const PackPlan& pp, int64_t ic, int64_t kh,
                                   int64_t kw, __m512i padv, __m512i even) {
  __m512i v = padv;
  for (int32_t r = 0; r < pp.nr; ++r) {
    const __mmask64 m = pp.lanes[r][kw];
    if (!m) continue;
    const int64_t ih = pp.oh[r] * c.sh - c.pt + kh * c.dh;
    if (ih < 0 || ih >= c.H) continue;
    // Lane q reads row[q * sw + delta]; masked-off lanes read nothing.
    const uintptr_t base =
        reinterpret_cast<uintptr_t>(c.x + (ic * c.H + ih) * c.W) + uintptr_t(pp.delta[r][kw]);
    if (c.sw == 1) {
      v = _mm512_mask_loadu_epi8(v, m, reinterpret_cast<const void*>(base));
    } else {
      // Byte 2q of the 128 from base, for the lanes of m.
      const __m512i a =
          _mm512_maskz_loadu_epi8(pp.even[r][kw][0], reinterpret_cast<const void*>(base));
      const __m512i b =
          _mm512_maskz_loadu_epi8(pp.even[r][kw][1], reinterpret_cast<const void*>(base + 64));
      v = _mm512_mask_mov_epi8(v, m, _mm512_permutex2var_epi8(a, even, b));
    }
  }
  return v;
}

}  // namespace

// A 1x1 stride-1 unpadded convolution's panel: 48 consecutive bytes of each
// input plane.
EPCTX_VNNI void PackPointwise(const QConvPanel& c) {
  const __m512i flip = _mm512_set1_epi8(char(c.xflip));
  const __mmask64 m = Lanes(0, c.cols);
  const int64_t plane = c.H * c.W;
  const uint8_t* x = c.x + c.p0;
  __m512i r[4];
  for (int64_t gi = 0; gi < (c.K + 3) / 4; ++gi) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const int64_t k = gi * 4 + j;
      r[j] = k < c.K ? _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + k * plane), flip)
                     : _mm512_setzero_si512();
    }
    StoreGroup(r[0], r[1], r[2], r[3], c.panel + gi * kQCols * 4);
  }
}

EPCTX_VNNI_VBMI void QPackVnni(const QConvPanel& c) {
  if (c.KH == 1 && c.KW == 1 && c.sh == 1 && c.sw == 1 && c.pt == 0 && c.pl == 0 && c.OW == c.W &&
      c.p0 + c.cols <= c.H * c.W) {
    PackPointwise(c);
    return;
  }
  QRun runs[kQCols];
  static_assert(sizeof(PackPlan) <= size_t(kQPackScratch), "the plan fits the caller's scratch");
  PackPlan& pp = *static_cast<PackPlan*>(c.scratch);
  pp.nr = QRuns(c, runs);
  for (int64_t kw = 0; kw < c.KW; ++kw) {
    const QSpan sp = QSpanOf(c, kw);
    for (int32_t r = 0; r < pp.nr; ++r) {
      const QRun& u = runs[r];
      const int64_t a = QClamp(sp.vlo - u.ow0, 0, u.len);
      const int64_t e = QClamp(sp.vhi + 1 - u.ow0, a, u.len);
      pp.oh[r] = u.oh;
      pp.lanes[r][kw] = Lanes(u.q0 + a, u.q0 + e);
      pp.delta[r][kw] = (u.ow0 - u.q0) * c.sw + sp.off;
      pp.even[r][kw][0] = pp.even[r][kw][1] = 0;
      for (int64_t q = u.q0 + a; q < u.q0 + e; ++q) {  // lanes below 32: the first 64 bytes
        if (q < 32) pp.even[r][kw][0] |= uint64_t{1} << (2 * q);
        else pp.even[r][kw][1] |= uint64_t{1} << (2 * q - 64);
      }
    }
  }
  alignas(64) uint8_t ev[64];
  for (int i = 0; i < 64; ++i) ev[i] = uint8_t(2 * i);
  const __m512i even = _mm512_load_si512(ev);
  const __m512i padv = _mm512_set1_epi8(char(c.pad)), flip = _mm512_set1_epi8(char(c.xflip));
  __m512i r[4];
  int64_t ic = 0, kh = 0, kw = 0;  // of row k, counted up
  for (int64_t gi = 0; gi < (c.K + 3) / 4; ++gi) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      if (gi * 4 + j >= c.K) {
        r[j] = _mm512_setzero_si512();
        continue;
      }
      r[j] = _mm512_xor_si512(Row(c, pp, ic, kh, kw, padv, even), flip);
      if (++kw == c.KW) {
        kw = 0;
        if (++kh == c.KH) kh = 0, ++ic;
      }
    }
    StoreGroup(r[0], r[1], r[2], r[3], c.panel + gi * kQCols * 4);
  }
}

// 16 outputs a step: for each kernel row one 64-byte load from the first
// output's window and, for each group of four taps, vpermb putting
// output p's taps (window byte p * sw + (4g + j) * dw) in lane p, and a
// vpdpbusd with the group's weights broadcast (zero past KW). A row's last
// step computes 16 lanes and stores those below OW.
EPCTX_VNNI_VBMI void QDwVnni(const QDwPlane& d) {
  const int32_t groups = (d.KW + 3) / 4;
  __m512i idx[2], wv[8][2];
  for (int32_t g = 0; g < groups; ++g) {
    alignas(64) uint8_t b[64];
    for (int32_t p = 0; p < 16; ++p)
      for (int32_t j = 0; j < 4; ++j) {
        const int32_t tap = 4 * g + j;
        b[4 * p + j] = uint8_t(tap < d.KW ? p * d.sw + tap * d.dw : 0);
      }
    idx[g] = _mm512_load_si512(b);
    for (int32_t kh = 0; kh < d.KH; ++kh) {
      int8_t w4[4];
      for (int32_t j = 0; j < 4; ++j)
        w4[j] = 4 * g + j < d.KW ? d.w[kh * d.KW + 4 * g + j] : int8_t{0};
      int32_t v;
      memcpy(&v, w4, 4);
      wv[kh][g] = _mm512_set1_epi32(v);
    }
  }
  for (int64_t oh = 0; oh < d.OH; ++oh) {
    const uint8_t* top = d.x + oh * d.sh * d.pitch;
    int32_t* out = d.out + oh * d.OW;
    for (int64_t o = 0; o < d.OW; o += 16) {
      __m512i acc = _mm512_setzero_si512();
      const uint8_t* r = top + o * d.sw;
      for (int32_t kh = 0; kh < d.KH; ++kh, r += d.dh * d.pitch) {
        const __m512i win = _mm512_loadu_si512(r);
        for (int32_t g = 0; g < groups; ++g)
          acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(idx[g], win), wv[kh][g]);
      }
      const __mmask16 m = d.OW - o >= 16 ? __mmask16(0xffff) : __mmask16((1u << (d.OW - o)) - 1);
      _mm512_mask_storeu_epi32(out + o, m, acc);
    }
  }
}

// 16 elements a step, the last under a mask.
EPCTX_VNNI void QBinaryVnni(const QBinaryRow& r) {
  const __m512i az = _mm512_set1_epi32(r.az), bz = _mm512_set1_epi32(r.bz);
  const __m512i yz = _mm512_set1_epi32(r.yz);
  const __m512 as = _mm512_set1_ps(r.as), bs = _mm512_set1_ps(r.bs), ys = _mm512_set1_ps(r.ys);
  const __m512 flo = _mm512_set1_ps(float(r.lo - r.yz)), fhi = _mm512_set1_ps(float(r.hi - r.yz));
  for (int64_t i = 0; i < r.n; i += 16) {
    const __mmask16 m = r.n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (r.n - i)) - 1);
    const __m128i ab = r.a_one ? _mm_set1_epi8(char(r.a[0])) : _mm_maskz_loadu_epi8(m, r.a + i);
    const __m128i bb = r.b_one ? _mm_set1_epi8(char(r.b[0])) : _mm_maskz_loadu_epi8(m, r.b + i);
    const __m512i qa = r.is_signed ? _mm512_cvtepi8_epi32(ab) : _mm512_cvtepu8_epi32(ab);
    const __m512i qb = r.is_signed ? _mm512_cvtepi8_epi32(bb) : _mm512_cvtepu8_epi32(bb);
    const __m512 va = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(qa, az)), as);
    const __m512 vb = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(qb, bz)), bs);
    __m512 v = _mm512_div_ps(r.mul ? _mm512_mul_ps(va, vb) : _mm512_add_ps(va, vb), ys);
    v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);
    _mm512_mask_cvtepi32_storeu_epi8(r.y + i, m, _mm512_add_epi32(_mm512_cvtps_epi32(v), yz));
  }
}

// 64 bytes a step: vpermt2b looks bits 0-6 up in each half of the table,
// bit 7 picks the half.
EPCTX_VNNI_VBMI void QLutVnni(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m = Lanes(0, n - i);
    const __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1),
                  hi = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
  }
}

EPCTX_VNNI void QuantizeVnni(const float* x, int64_t n, float scale, int32_t zp, int32_t lo,
                             int32_t hi, uint8_t* y) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512 flo = _mm512_set1_ps(float(lo - zp)), fhi = _mm512_set1_ps(float(hi - zp));
  const __m512i z = _mm512_set1_epi32(zp);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s);
    v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);
    _mm512_mask_cvtepi32_storeu_epi8(y + i, m, _mm512_add_epi32(_mm512_cvtps_epi32(v), z));
  }
}

EPCTX_VNNI void DequantizeVnni(const uint8_t* x, int64_t n, bool is_signed, int32_t zp, float scale,
                               float* y) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512i z = _mm512_set1_epi32(zp);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    const __m128i b = _mm_maskz_loadu_epi8(m, x + i);
    const __m512i q = is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(q, z)), s));
  }
}

EPCTX_VNNI void QTileVnni(const QTile& t) {
  if (t.wflip) TileRows<true>(t);
  else TileRows<false>(t);
}

EPCTX_VNNI void QDotVnni(const QDot& d) {
  const __m512i flip = _mm512_set1_epi8(char(d.wflip));
  int64_t j = 0;
  for (; j + 4 <= d.n; j += 4) Dot<4>(d, j, flip);
  for (; j < d.n; ++j) Dot<1>(d, j, flip);
}

// 16 columns a step, the last under a mask. max(v, lo) returns lo for a
// NaN v (the second operand), then min cannot see a NaN; the conversion
// rounds half to even (the default MXCSR), as the portable RoundEven.
EPCTX_VNNI void QRequantVnni(const QRequant& q) {
  const __m512i wz = _mm512_set1_epi32(q.wz), zp = _mm512_set1_epi32(q.zp);
  const __m512 flo = _mm512_set1_ps(float(q.lo - q.zp)), fhi = _mm512_set1_ps(float(q.hi - q.zp));
  for (int32_t r = 0; r < q.rows; ++r) {
    const int32_t* raw = q.raw + r * kQCols;
    uint8_t* y = q.y + r * q.y_row;
    const __m512i rowc = _mm512_set1_epi32(q.rowc[r]);
    const __m512 m = _mm512_set1_ps(q.mult[r]);
    for (int32_t c = 0; c < q.cols; c += 16) {
      const __mmask16 k =
          q.cols - c >= 16 ? __mmask16(0xffff) : __mmask16((1u << (q.cols - c)) - 1);
      __m512i acc = _mm512_add_epi32(_mm512_loadu_si512(raw + c), rowc);
      if (q.colsum)
        acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(wz, _mm512_loadu_si512(q.colsum + c)));
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), m);
      v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);
      const __m512i out = _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
      _mm512_mask_cvtepi32_storeu_epi8(y + c, k, out);
    }
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx
#endif
