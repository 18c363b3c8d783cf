// SPDX-License-Identifier: Apache-2.0
// The AVX-512 im2col packer (im2col.h). At stride 1 every K row is written
// 16 columns a store: per tap (the same for every input channel) each
// destination vector's lanes are cut into the input runs they read, and a
// channel's vector is one load where all 16 lanes read one run, else one
// expand-load per run (consecutive inputs into its lanes, the others zero:
// padding and columns past the piece). A 7x7 map's 48-pixel piece is three
// vectors of about three runs each; run by run (zero head, copy, zero tail,
// as stride 2 still goes) it was seven runs of five masked stores, and
// ResNet-18's 512 -> 512 3x3 on 7x7 took 1.95 ms instead of 1.40 (256 on
// 14x14: 1.45 -> 1.29, 64 on 56x56: 1.32 -> 1.26). Stride 2 cuts its
// vectors the same way; a run's lanes are the even lanes of two masked
// loads, expanded into place (its 3x3 convolutions 5% faster than run by
// run). Masked-off lanes are never read, so nothing outside the input row
// is touched. Other strides use the portable packer.
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

// One destination vector (16 columns of a piece) of a K row is
// at most kMaxParts input runs, each a contiguous range of lanes filled
// from consecutive inputs; lanes of no run (padding, columns past the
// piece) are zero.
constexpr int kMaxParts = 17;
struct VecPart {
  int64_t src;  // the first input the part reads, from the channel plane
  __mmask16 m;  // its lanes
};
struct VecPlan {
  VecPart part[kMaxParts];
  int n;
};

// A K row's vector: expand-loads read only the inputs of their lanes.
EPCTX_AVX512 inline __m512 Gather16(const VecPlan& v, const float* xc) {
  if (v.n == 0) return _mm512_setzero_ps();
  if (v.part[0].m == 0xffff) return _mm512_loadu_ps(xc + v.part[0].src);
  __m512 r = _mm512_maskz_expandloadu_ps(v.part[0].m, xc + v.part[0].src);
  for (int i = 1; i < v.n; ++i) r = _mm512_mask_expandloadu_ps(r, v.part[i].m, xc + v.part[i].src);
  return r;
}

// The same at stride 2: a part's lanes take every other input from src on
// (the even lanes of two masked loads, expanded into the part's lanes).
EPCTX_AVX512 inline __m512 Gather16S2(const VecPlan& v, const float* xc) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  __m512 r = _mm512_setzero_ps();
  for (int i = 0; i < v.n; ++i) {
    const VecPart& p = v.part[i];
    const int64_t in = 2 * __builtin_popcount(p.m) - 1;  // inputs it reads
    const float* q = xc + p.src;
    const __m512 lo = _mm512_maskz_loadu_ps(Lanes(in < 16 ? in : 16), q);
    const __m512 hi = _mm512_maskz_loadu_ps(Lanes(in > 16 ? in - 16 : 0), q + 16);
    r = _mm512_mask_expand_ps(r, p.m, _mm512_permutex2var_ps(lo, even, hi));
  }
  return r;
}

}  // namespace

// Tap by tap: a tap's vector plan (which lanes read which inputs) is the
// same for every input channel, so it is worked out once per tap and
// piece, and the channels' K rows (T = KH * KW rows apart) are then a load
// (or a few) and a store per vector: a 3x3 layer's K rows were a quarter
// of its time when every row recomputed its bounds.
EPCTX_AVX512 void Im2colAvx512(const Im2colShape& s, const float* x, int64_t k0, int64_t kc,
                               int64_t p0, int64_t np, float* dst, int64_t pitch) {
  if (s.sw > 2) return Im2colPortable(s, x, k0, kc, p0, np, dst, pitch);
  const int64_t taps = s.KH * s.KW, k1 = k0 + kc;
  constexpr int kVecs = kIm2colPiece / 16;
  Im2colRuns r;
  VecPlan vp[kVecs];
  for (int64_t j0 = 0; j0 < np; j0 += kIm2colPiece) {
    const int64_t n = PieceCols(j0, np), padded = PieceWrites(j0, n, np);
    const int64_t nv = (padded + 15) / 16;
    const __mmask16 last = Lanes(padded - (nv - 1) * 16);
    CutRuns(s, p0 + j0, n, &r);
    for (int64_t t = 0; t < taps; ++t) {
      // Channels whose row k = c * taps + t lies in [k0, k1).
      const int64_t c0 = k0 <= t ? 0 : (k0 - t + taps - 1) / taps;
      if (c0 * taps + t >= k1) continue;
      const int64_t kh = t / s.KW, kw = t % s.KW, off = kw * s.dw - s.pl;
      int64_t lo, hi;
      ValidColumns(s, off, &lo, &hi);
      for (int64_t v = 0; v < nv; ++v) vp[v].n = 0;
      for (int64_t g = 0; g < r.n; ++g) {
        const Im2colRun& sg = r.run[g];
        const int64_t ih = sg.oh * s.sh - s.pt + kh * s.dh;
        if (ih < 0 || ih >= s.H) continue;
        const int64_t a = lo > sg.ow0 ? lo : sg.ow0, b = hi < sg.ow1 ? hi : sg.ow1;
        // Piece columns [ca, cb) read the row's inputs from column a on.
        for (int64_t ca = sg.j + (a - sg.ow0), cb = sg.j + (b - sg.ow0),
                     src = ih * s.W + off + a * s.sw;
             ca < cb;) {
          const int64_t v = ca / 16, e = (v + 1) * 16 < cb ? (v + 1) * 16 : cb;
          VecPlan& p = vp[v];
          p.part[p.n++] =
              VecPart{src, static_cast<__mmask16>(Lanes(e - v * 16) & ~Lanes(ca - v * 16))};
          src += (e - ca) * s.sw;
          ca = e;
        }
      }
      for (int64_t k = c0 * taps + t; k < k1; k += taps) {
        float* d = dst + (k - k0) * pitch + j0;
        const float* xc = x + (k / taps) * s.plane;
        if (s.sw == 1) {
          for (int64_t v = 0; v + 1 < nv; ++v) _mm512_storeu_ps(d + 16 * v, Gather16(vp[v], xc));
          _mm512_mask_storeu_ps(d + 16 * (nv - 1), last, Gather16(vp[nv - 1], xc));
        } else {
          for (int64_t v = 0; v + 1 < nv; ++v) _mm512_storeu_ps(d + 16 * v, Gather16S2(vp[v], xc));
          _mm512_mask_storeu_ps(d + 16 * (nv - 1), last, Gather16S2(vp[nv - 1], xc));
        }
      }
    }
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
