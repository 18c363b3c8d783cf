// SPDX-License-Identifier: Apache-2.0
// The AVX-512 im2col packer (im2col.h): every K row is written run by run,
// each run as its zero head, its copied inputs and its zero tail, 16 floats a
// store with the run's ends masked, so a run of 7 pixels (a 7x7 map) is one
// masked load and store and a 56-pixel row four; stride 2 takes the even
// lanes of two masked loads. Masked-off lanes are never read, so nothing
// outside the input row is touched. Other strides use the portable packer.
// (No lambdas here: a lambda's body would not carry the target attribute.)
#include "im2col_common.h"

#if defined(__x86_64__)
#include "avx512.h"

namespace epctx {
namespace uk {
namespace detail {
namespace {

EPCTX_AVX512 inline __mmask16 Lanes(int64_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);  // n in [0, 16]
}

// d[0, n) = 0.
EPCTX_AVX512 inline void Zero(float* d, int64_t n) {
  const __m512 z = _mm512_setzero_ps();
  int64_t o = 0;
  for (; o + 16 <= n; o += 16) _mm512_storeu_ps(d + o, z);
  if (o < n) _mm512_mask_storeu_ps(d + o, Lanes(n - o), z);
}

// d[0, n) = s[0, n).
EPCTX_AVX512 inline void Copy(float* d, const float* s, int64_t n) {
  int64_t o = 0;
  for (; o + 16 <= n; o += 16) _mm512_storeu_ps(d + o, _mm512_loadu_ps(s + o));
  if (o < n) {
    const __mmask16 m = Lanes(n - o);
    _mm512_mask_storeu_ps(d + o, m, _mm512_maskz_loadu_ps(m, s + o));
  }
}

// d[0, n) = s[0], s[2], ... s[2n - 2]: inputs up to s[2n - 2] only.
EPCTX_AVX512 inline void CopyEven(float* d, const float* s, int64_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (int64_t o = 0; o < n; o += 16) {
    const int64_t m = n - o < 16 ? n - o : 16;  // outputs
    const int64_t in = 2 * m - 1;               // inputs they read
    const float* p = s + 2 * o;
    const __m512 lo = _mm512_maskz_loadu_ps(Lanes(in < 16 ? in : 16), p);
    const __m512 hi = _mm512_maskz_loadu_ps(Lanes(in > 16 ? in - 16 : 0), p + 16);
    _mm512_mask_storeu_ps(d + o, Lanes(m), _mm512_permutex2var_ps(lo, even, hi));
  }
}

// One run of a K row at one tap: `head` zeros from column `start` (of the
// piece), then `copy` inputs from the channel plane at `src` (every sw-th),
// then `tail` zeros.
struct TapRun {
  int64_t src;
  int32_t start, head, copy, tail;
};

}  // namespace

// Tap by tap: a tap's runs (where each reads, how many zeros around) are
// the same for every input channel, so they are worked out once per tap
// and piece, and the channels' K rows (T = KH * KW rows apart) are then
// plain masked copies: a 3x3 layer's K rows were a quarter of its time
// when every row recomputed its bounds.
EPCTX_AVX512 void Im2colAvx512(const Im2colShape& s, const float* x, int64_t k0, int64_t kc,
                               int64_t p0, int64_t np, float* dst, int64_t pitch) {
  if (s.sw > 2) return Im2colPortable(s, x, k0, kc, p0, np, dst, pitch);
  const int64_t taps = s.KH * s.KW, k1 = k0 + kc;
  Im2colRuns r;
  TapRun tr[kIm2colPiece];
  for (int64_t j0 = 0; j0 < np; j0 += kIm2colPiece) {
    const int64_t n = PieceCols(j0, np), padded = PieceWrites(j0, n, np);
    CutRuns(s, p0 + j0, n, &r);
    for (int64_t t = 0; t < taps; ++t) {
      // Channels whose row k = c * taps + t lies in [k0, k1).
      const int64_t c0 = k0 <= t ? 0 : (k0 - t + taps - 1) / taps;
      if (c0 * taps + t >= k1) continue;
      const int64_t kh = t / s.KW, kw = t % s.KW, off = kw * s.dw - s.pl;
      int64_t lo, hi;
      ValidColumns(s, off, &lo, &hi);
      for (int64_t g = 0; g < r.n; ++g) {
        const Im2colRun& sg = r.run[g];
        int64_t a = sg.ow1, b = sg.ow1, src = 0;
        const int64_t ih = sg.oh * s.sh - s.pt + kh * s.dh;
        if (ih >= 0 && ih < s.H) {
          const int64_t ra = lo > sg.ow0 ? lo : sg.ow0, rb = hi < sg.ow1 ? hi : sg.ow1;
          if (ra < rb) a = ra, b = rb;
          src = ih * s.W + off + a * s.sw;
        }
        tr[g] = TapRun{src, static_cast<int32_t>(sg.j), static_cast<int32_t>(a - sg.ow0),
                       static_cast<int32_t>(b - a), static_cast<int32_t>(sg.ow1 - b)};
      }
      for (int64_t k = c0 * taps + t; k < k1; k += taps) {
        float* d = dst + (k - k0) * pitch + j0;
        const float* xc = x + (k / taps) * s.plane;
        for (int64_t g = 0; g < r.n; ++g) {
          const TapRun& u = tr[g];
          float* ds = d + u.start;
          if (u.head) Zero(ds, u.head);
          if (u.copy) {
            if (s.sw == 1) Copy(ds + u.head, xc + u.src, u.copy);
            else CopyEven(ds + u.head, xc + u.src, u.copy);
          }
          if (u.tail) Zero(ds + u.head + u.copy, u.tail);
        }
        if (padded > n) Zero(d + n, padded - n);
      }
    }
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
