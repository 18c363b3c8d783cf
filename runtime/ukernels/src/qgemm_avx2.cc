// SPDX-License-Identifier: Apache-2.0
// The AVX2 int8 kernels (qgemm.h): the tile, the dot rows, the depthwise
// plane, and the requantising, QBINARY, QUANTIZE and DEQUANTIZE rows (the
// panel packer is qpack_avx2.cc). Each gives the portable kernel's integers
// and bytes.
//
// The tile is exact. vpmaddubsw (unsigned x signed bytes)
// adds each pair of products in saturating int16, and 255 x -128 twice
// does not fit, so its sums are not ONNX's; this tile multiplies 16-bit
// words instead: vpmaddwd adds two exact int16 x int16 products into an
// int32 lane, 16 products a ymm.
//
// Both operands stay in the layouts the other ISAs read (a panel group of
// four unsigned K bytes per column; weight rows in place, four bytes a
// group) and are widened here:
//
//   * a panel vector (8 columns x bytes k0 k1 k2 k3) gives two word
//     vectors by one AND (k0, k2) and one shift (k1, k3), in registers,
//     used by the four rows of the sub-tile;
//   * the tile's weight rows are widened a chunk of 32 groups at a time
//     into a 2 KiB stack block as the matching sign-extended word pairs
//     (w0, w2) and (w1, w3), so the inner loop broadcasts them with a load
//     (vpbroadcastd m32) and no shuffle.
//
// The 8 x 48 tile is six 4 x 16 sub-tiles: 8 accumulators, 4 widened panel
// vectors, a broadcast and a product, within the 16 ymm registers. The
// file is compiled for baseline x86-64; only these functions carry
// target("avx2"), and QTileKernel picks them when cpuid says AVX2 (and the
// AVX-512 VNNI tile is not there).
#include "epctx_uk/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#define EPCTX_QAVX2 __attribute__((target("avx2,fma")))

namespace epctx {
namespace uk {
namespace detail {
namespace {

constexpr int64_t kChunk = 32;  // groups of weights widened at a time (2 KiB)
constexpr int32_t kSubRows = 4, kSubCols = 16;

// The widened weights of one chunk: per row, the (w0, w2) words of each
// group, then the (w1, w3) words.
struct Widened {
  int32_t w[kQRows][2][kChunk];
};

inline int32_t Pair(uint32_t lo_byte, uint32_t hi_byte) {
  return int32_t(uint32_t(uint16_t(int16_t(int8_t(uint8_t(lo_byte))))) |
                 (uint32_t(uint16_t(int16_t(int8_t(uint8_t(hi_byte))))) << 16));
}

// Groups [g0, g0 + n) of each row (those at or past t.groups from the
// tail), no byte past a row's groups read.
EPCTX_QAVX2 void Widen(const QTile& t, int64_t g0, int64_t n, Widened* out) {
  const __m256i flip = _mm256_set1_epi8(char(t.wflip));
  const uint32_t flip4 = uint32_t(t.wflip) * 0x01010101u;
  const int64_t from_w = t.groups - g0 < n ? t.groups - g0 : n;
  for (int32_t r = 0; r < t.rows; ++r) {
    const uint8_t* src = t.w + r * t.ldw + g0 * 4;
    int32_t* lo = out->w[r][0];
    int32_t* hi = out->w[r][1];
    int64_t g = 0;
    for (; g + 8 <= from_w; g += 8) {
      const __m256i v =
          _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + g * 4)), flip);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + g),
                          _mm256_srai_epi16(_mm256_slli_epi16(v, 8), 8));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + g), _mm256_srai_epi16(v, 8));
    }
    for (; g < n; ++g) {
      uint32_t v;
      if (g < from_w) memcpy(&v, src + g * 4, 4);
      else v = t.tail[r];  // the tail's padding meets zero panel bytes
      v ^= flip4;
      lo[g] = Pair(v, v >> 16);
      hi[g] = Pair(v >> 8, v >> 24);
    }
  }
}

// Rows [r0, r0 + R) x columns [c0, c0 + 16) over the chunk's n groups of
// the panel x (at the chunk's first group); `first` starts the sums at 0,
// else adds to those in out.
template <int R>
EPCTX_QAVX2 void Sub(const uint8_t* x, const Widened& wd, int32_t r0, int64_t n, int32_t* out,
                     bool first) {
  __m256i c[R][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    if (first) {
      c[r][0] = c[r][1] = _mm256_setzero_si256();
    } else {
      c[r][0] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + r * kQCols));
      c[r][1] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + r * kQCols + 8));
    }
  }
  const __m256i low = _mm256_set1_epi16(0xff);
  for (int64_t g = 0; g < n; ++g, x += kQCols * 4) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32));
    const __m256i l0 = _mm256_and_si256(v0, low), l1 = _mm256_and_si256(v1, low);
    const __m256i h0 = _mm256_srli_epi16(v0, 8), h1 = _mm256_srli_epi16(v1, 8);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256i wl = _mm256_set1_epi32(wd.w[r0 + r][0][g]);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(l0, wl));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(l1, wl));
      const __m256i wh = _mm256_set1_epi32(wd.w[r0 + r][1][g]);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(h0, wh));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(h1, wh));
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * kQCols), c[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * kQCols + 8), c[r][1]);
  }
}

EPCTX_QAVX2 void SubRows(int32_t rows, const uint8_t* x, const Widened& wd, int32_t r0, int64_t n,
                         int32_t* out, bool first) {
  switch (rows) {
    case 1: Sub<1>(x, wd, r0, n, out, first); break;
    case 2: Sub<2>(x, wd, r0, n, out, first); break;
    case 3: Sub<3>(x, wd, r0, n, out, first); break;
    default: Sub<4>(x, wd, r0, n, out, first); break;
  }
}

// The low byte of each of v's eight lanes to y[0 .. min(n, 8)).
EPCTX_QAVX2 inline void StoreBytes(__m256i v, uint8_t* y, int64_t n) {
  const __m256i low_bytes =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i b = _mm256_shuffle_epi8(v, low_bytes);
  const uint64_t bytes = uint64_t(uint32_t(_mm256_extract_epi32(b, 0))) |
                         (uint64_t(uint32_t(_mm256_extract_epi32(b, 4))) << 32);
  if (n >= 8) memcpy(y, &bytes, 8);
  else memcpy(y, &bytes, size_t(n));
}

// Lanes [0, n) of p (all 8 when n >= 8), the rest 0 and not read.
EPCTX_QAVX2 inline __m256i LoadLanes(const int32_t* p, int64_t n) {
  if (n >= 8) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_maskload_epi32(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)), lane));
}

// The low bytes of a's lanes then b's, each in [-128, 255] (so the
// saturating pack to words keeps them), to y[0 .. min(n, 16)).
EPCTX_QAVX2 inline void StoreBytes16(__m256i a, __m256i b, uint8_t* y, int64_t n) {
  __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xd8);  // a0-7 | b0-7
  w = _mm256_and_si256(w, _mm256_set1_epi16(0xff));
  const __m128i bytes =
      _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08));
  if (n >= 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), bytes);
    return;
  }
  alignas(16) uint8_t t[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(t), bytes);
  memcpy(y, t, size_t(n));
}

// Eight bytes (fewer at the end of a row: the rest read as 0) as int32
// lanes, signed or unsigned.
EPCTX_QAVX2 inline __m256i LoadBytes(const uint8_t* x, int64_t n, bool is_signed) {
  uint64_t v = 0;
  if (n >= 8) memcpy(&v, x, 8);
  else memcpy(&v, x, size_t(n));
  const __m128i b = _mm_cvtsi64_si128(int64_t(v));
  return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

}  // namespace

EPCTX_QAVX2 void QTileAvx2(const QTile& t) {
  const int64_t groups = t.groups + (t.tail ? 1 : 0);
  Widened wd;
  for (int64_t g0 = 0; g0 < groups || g0 == 0; g0 += kChunk) {
    const int64_t n = groups - g0 < kChunk ? groups - g0 : kChunk;
    Widen(t, g0, n, &wd);
    const uint8_t* x = t.x + g0 * kQCols * 4;
    for (int32_t r0 = 0; r0 < t.rows; r0 += kSubRows) {
      const int32_t rows = t.rows - r0 < kSubRows ? t.rows - r0 : kSubRows;
      for (int32_t c0 = 0; c0 < kQCols; c0 += kSubCols)
        SubRows(rows, x + c0 * 4, wd, r0, n, t.out + r0 * kQCols + c0, g0 == 0);
    }
  }
}

// Eight columns [c, c + 8) of a QRequant row (those past cols not read).
struct RequantRow {
  __m256i wz, zp, rowc;
  __m256 flo, fhi, m;
};
EPCTX_QAVX2 inline __m256i RequantEight(const QRequant& q, const RequantRow& k, const int32_t* raw,
                                        int64_t c) {
  __m256i acc = _mm256_add_epi32(LoadLanes(raw + c, q.cols - c), k.rowc);
  if (q.colsum)
    acc = _mm256_sub_epi32(acc, _mm256_mullo_epi32(k.wz, LoadLanes(q.colsum + c, q.cols - c)));
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), k.m);
  v = _mm256_min_ps(_mm256_max_ps(v, k.flo), k.fhi);
  return _mm256_add_epi32(_mm256_cvtps_epi32(v), k.zp);
}

// Sixteen columns a step (the last step's lanes past cols neither read nor
// stored). max(v, lo) returns lo for a NaN v (its second operand), then
// min cannot see a NaN; the conversion rounds half to even (the default
// MXCSR), as the portable QRequantizeOne.
EPCTX_QAVX2 void QRequantAvx2(const QRequant& q) {
  RequantRow k;
  k.wz = _mm256_set1_epi32(q.wz);
  k.zp = _mm256_set1_epi32(q.zp);
  k.flo = _mm256_set1_ps(float(q.lo - q.zp));
  k.fhi = _mm256_set1_ps(float(q.hi - q.zp));
  for (int32_t r = 0; r < q.rows; ++r) {
    const int32_t* raw = q.raw + r * kQCols;
    uint8_t* y = q.y + r * q.y_row;
    k.rowc = _mm256_set1_epi32(q.rowc[r]);
    k.m = _mm256_set1_ps(q.mult[r]);
    for (int64_t c = 0; c < q.cols; c += 16) {
      const __m256i a = RequantEight(q, k, raw, c);
      const __m256i b = q.cols - c > 8 ? RequantEight(q, k, raw, c + 8) : _mm256_setzero_si256();
      StoreBytes16(a, b, y + c, q.cols - c);
    }
  }
}

// Eight elements a step, as the portable row: the float operations in the
// same order, none fused, the conversion rounding half to even.
EPCTX_QAVX2 void QBinaryAvx2(const QBinaryRow& r) {
  if (r.n <= 0) return;
  const __m256i az = _mm256_set1_epi32(r.az), bz = _mm256_set1_epi32(r.bz);
  const __m256i yz = _mm256_set1_epi32(r.yz);
  const __m256 as = _mm256_set1_ps(r.as), bs = _mm256_set1_ps(r.bs), ys = _mm256_set1_ps(r.ys);
  const __m256 flo = _mm256_set1_ps(float(r.lo - r.yz)), fhi = _mm256_set1_ps(float(r.hi - r.yz));
  const __m256i a_one = LoadBytes(r.a, 1, r.is_signed), b_one = LoadBytes(r.b, 1, r.is_signed);
  const __m256i a1 = _mm256_permutevar8x32_epi32(a_one, _mm256_setzero_si256());
  const __m256i b1 = _mm256_permutevar8x32_epi32(b_one, _mm256_setzero_si256());
  for (int64_t i = 0; i < r.n; i += 8) {
    const __m256i qa = r.a_one ? a1 : LoadBytes(r.a + i, r.n - i, r.is_signed);
    const __m256i qb = r.b_one ? b1 : LoadBytes(r.b + i, r.n - i, r.is_signed);
    const __m256 va = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(qa, az)), as);
    const __m256 vb = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(qb, bz)), bs);
    __m256 v = _mm256_div_ps(r.mul ? _mm256_mul_ps(va, vb) : _mm256_add_ps(va, vb), ys);
    v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);
    StoreBytes(_mm256_add_epi32(_mm256_cvtps_epi32(v), yz), r.y + i, r.n - i);
  }
}

// Sixteen outputs of a row a step, two taps of a window row a vpmaddwd:
// the 16 outputs' bytes for tap t as words (stride 1: vpmovzxbw of 16
// bytes; stride 2: the even bytes of 32, by an AND), paired with tap t + 1's
// (zero past KW) by unpacking, which puts outputs 0-3 and 8-11 in one
// accumulator and 4-7, 12-15 in the other; the halves are put back in
// order at the store, masked to the outputs below OW. Loads reach at most
// 31 bytes past the last byte a tap reads (QDwPlane gives 64).
namespace {

// Tap bytes of 16 outputs as words.
template <int SW>
EPCTX_QAVX2 inline __m256i DwWords(const uint8_t* at) {
  if (SW == 1) return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
  return _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)),
                          _mm256_set1_epi16(0xff));
}

template <int SW>
EPCTX_QAVX2 void DwRows(const QDwPlane& d, const int32_t (*wp)[4], int32_t pairs) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t oh = 0; oh < d.OH; ++oh) {
    const uint8_t* top = d.x + oh * d.sh * d.pitch;
    int32_t* out = d.out + oh * d.OW;
    for (int64_t o = 0; o < d.OW; o += 16) {
      __m256i lo = _mm256_setzero_si256(), hi = lo;
      const uint8_t* r = top + o * SW;
      for (int32_t kh = 0; kh < d.KH; ++kh, r += d.dh * d.pitch) {
        for (int32_t p = 0; p < pairs; ++p) {
          const __m256i a = DwWords<SW>(r + 2 * p * d.dw);
          const __m256i b =
              2 * p + 1 < d.KW ? DwWords<SW>(r + (2 * p + 1) * d.dw) : _mm256_setzero_si256();
          const __m256i w = _mm256_set1_epi32(wp[kh][p]);
          lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w));
          hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w));
        }
      }
      const __m256i first = _mm256_permute2x128_si256(lo, hi, 0x20);
      const __m256i second = _mm256_permute2x128_si256(lo, hi, 0x31);
      const int64_t left = d.OW - o;
      if (left >= 16) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + o), first);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + o + 8), second);
        continue;
      }
      _mm256_maskstore_epi32(out + o, _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(left)), lane),
                             first);
      if (left > 8)
        _mm256_maskstore_epi32(
            out + o + 8, _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(left - 8)), lane), second);
    }
  }
}

}  // namespace

EPCTX_QAVX2 void QDwAvx2(const QDwPlane& d) {
  if (d.sw > 2) {  // no depthwise convolution of the zoo: the portable loops
    for (int64_t oh = 0; oh < d.OH; ++oh)
      for (int64_t ow = 0; ow < d.OW; ++ow) {
        int32_t acc = 0;
        for (int32_t kh = 0; kh < d.KH; ++kh)
          for (int32_t kw = 0; kw < d.KW; ++kw)
            acc += int32_t(d.w[kh * d.KW + kw]) *
                   d.x[(oh * d.sh + kh * d.dh) * d.pitch + ow * d.sw + kw * d.dw];
        d.out[oh * d.OW + ow] = acc;
      }
    return;
  }
  int32_t wp[8][4];  // [kh][pair]: the pair's weights as two words
  const int32_t pairs = (d.KW + 1) / 2;
  for (int32_t kh = 0; kh < d.KH; ++kh)
    for (int32_t p = 0; p < pairs; ++p) {
      const int8_t* w = d.w + kh * d.KW + 2 * p;
      wp[kh][p] = Pair(uint8_t(w[0]), 2 * p + 1 < d.KW ? uint8_t(w[1]) : 0u);
    }
  if (d.sw == 1) DwRows<1>(d, wp, pairs);
  else DwRows<2>(d, wp, pairs);
}

// Eight elements a step (the last under a lane mask), as the portable rows:
// a true division, NaN giving lo, half to even.
EPCTX_QAVX2 void QuantizeAvx2(const float* x, int64_t n, float scale, int32_t zp, int32_t lo,
                              int32_t hi, uint8_t* y) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256 flo = _mm256_set1_ps(float(lo - zp)), fhi = _mm256_set1_ps(float(hi - zp));
  const __m256i z = _mm256_set1_epi32(zp);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 xv = n - i >= 8
                          ? _mm256_loadu_ps(x + i)
                          : _mm256_maskload_ps(
                                x + i, _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n - i)), lane));
    __m256 v = _mm256_div_ps(xv, s);
    v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);
    StoreBytes(_mm256_add_epi32(_mm256_cvtps_epi32(v), z), y + i, n - i);
  }
}

EPCTX_QAVX2 void DequantizeAvx2(const uint8_t* x, int64_t n, bool is_signed, int32_t zp,
                                float scale, float* y) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i z = _mm256_set1_epi32(zp);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = _mm256_mul_ps(
        _mm256_cvtepi32_ps(_mm256_sub_epi32(LoadBytes(x + i, n - i, is_signed), z)), s);
    if (n - i >= 8) _mm256_storeu_ps(y + i, v);
    else _mm256_maskstore_ps(y + i, _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n - i)), lane), v);
  }
}

namespace {

// The wrapping int32 sum of a vector's lanes, in vector adds.
EPCTX_QAVX2 inline uint32_t SumLanes(__m256i v) {
  __m128i q = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x4e));
  q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0xb1));
  return uint32_t(_mm_cvtsi128_si32(q));
}

// J weight rows against the activation row, 16 K bytes a step as words
// (vpmaddwd, exact), the last K % 16 bytes in scalar.
template <int J>
EPCTX_QAVX2 void Dot(const QDot& d, int64_t j0) {
  const __m128i flip = _mm_set1_epi8(char(d.wflip));
  __m256i c[J];
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) c[j] = _mm256_setzero_si256();
  const uint8_t* w = d.w + j0 * d.ldw;
  int64_t k = 0;
  for (; k + 16 <= d.k; k += 16) {
    const __m256i a =
        _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d.a + k)));
#pragma GCC unroll 4
    for (int j = 0; j < J; ++j) {
      const __m128i wb =
          _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + j * d.ldw + k)), flip);
      c[j] = _mm256_add_epi32(c[j], _mm256_madd_epi16(a, _mm256_cvtepi8_epi16(wb)));
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) {
    uint32_t acc = SumLanes(c[j]);
    for (int64_t i = k; i < d.k; ++i)
      acc += uint32_t(d.a[i]) * uint32_t(int32_t(int8_t(uint8_t(w[j * d.ldw + i] ^ d.wflip))));
    d.out[j0 + j] = int32_t(acc);
  }
}

}  // namespace

EPCTX_QAVX2 void QDotAvx2(const QDot& d) {
  int64_t j = 0;
  for (; j + 4 <= d.n; j += 4) Dot<4>(d, j);
  for (; j < d.n; ++j) Dot<1>(d, j);
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx
#endif
