// SPDX-License-Identifier: Apache-2.0
// The AVX2 im2col packer (im2col.h), stride 1: the AVX-512 packer's plan
// (im2col_avx512.cc) at 8 columns a store. Per tap (the same for every
// input channel) each destination vector's lanes are cut into the input
// runs they read; a channel's vector is one load where all 8 lanes read one
// run, else one masked load per run from the run's first input shifted
// back by its first lane (lane l reads input src - la + l, lanes outside
// the run masked off, so never read, and zero), the runs ORed together.
// Portable, the 7x7 and 14x14 maps of a 48-column piece were a scalar
// gather per element and wider ones 4-float copies: 14% of ResNet-18's
// vnpu time on an AVX2-only core. Other strides use the portable packer.
#include "im2col_common.h"

#if defined(__x86_64__)
#include "avx2.h"

namespace epctx {
namespace uk {
namespace detail {
namespace {

// A destination vector of 8 columns reads at most 9 runs (8 single-column
// runs between padding, and one more when a run starts mid-vector).
constexpr int kMaxParts = 9;
struct VecPart {
  int64_t base;    // src - la: lane l of the part reads base + l
  int32_t la, lb;  // its lanes [la, lb) (the mask is made at each use: a
                   // plan of vector masks took 5.4 KiB of stack)
};
struct VecPlan {
  VecPart part[kMaxParts];
  int n;
  bool whole;  // one part of all 8 lanes: a plain load
};

// Lanes [la, lb) of 8 as a maskload mask.
EPCTX_AVX2 inline __m256i LaneMask(int64_t la, int64_t lb) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(la)), idx),
                             _mm256_cmpgt_epi32(_mm256_set1_epi32(int(lb)), idx));
}

EPCTX_AVX2 inline __m256 Gather8(const VecPlan& v, const float* xc) {
  if (v.whole) return _mm256_loadu_ps(xc + v.part[0].base);
  __m256 r = _mm256_setzero_ps();
  for (int i = 0; i < v.n; ++i)
    r = _mm256_or_ps(r,
                     _mm256_maskload_ps(xc + v.part[i].base, LaneMask(v.part[i].la, v.part[i].lb)));
  return r;
}

}  // namespace

// Tap by tap, as Im2colAvx512: the plan is made once per tap and piece and
// the channels' K rows (T = KH * KW rows apart) are a load or a few and a
// store per vector.
EPCTX_AVX2 void Im2colAvx2(const Im2colShape& s, const float* x, int64_t k0, int64_t kc, int64_t p0,
                           int64_t np, float* dst, int64_t pitch) {
  if (s.sw != 1) return Im2colPortable(s, x, k0, kc, p0, np, dst, pitch);
  const int64_t taps = s.KH * s.KW, k1 = k0 + kc;
  constexpr int kVecs = kIm2colPiece / 8;
  Im2colRuns r;
  VecPlan vp[kVecs];
  for (int64_t j0 = 0; j0 < np; j0 += kIm2colPiece) {
    const int64_t n = PieceCols(j0, np), padded = PieceWrites(j0, n, np);
    const int64_t nv = padded / 8;  // PieceWrites is a whole number of strips of 8
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
        for (int64_t ca = sg.j + (a - sg.ow0), cb = sg.j + (b - sg.ow0), src = ih * s.W + off + a;
             ca < cb;) {
          const int64_t v = ca / 8, e = (v + 1) * 8 < cb ? (v + 1) * 8 : cb;
          VecPlan& p = vp[v];
          const int64_t la = ca - v * 8, lb = e - v * 8;
          p.part[p.n++] = VecPart{src - la, int32_t(la), int32_t(lb)};
          src += e - ca;
          ca = e;
        }
      }
      for (int64_t v = 0; v < nv; ++v) {
        VecPlan& p = vp[v];
        p.whole = p.n == 1 && p.part[0].la == 0 && p.part[0].lb == 8;
      }
      for (int64_t k = c0 * taps + t; k < k1; k += taps) {
        float* d = dst + (k - k0) * pitch + j0;
        const float* xc = x + (k / taps) * s.plane;
        for (int64_t v = 0; v < nv; ++v) _mm256_storeu_ps(d + 8 * v, Gather8(vp[v], xc));
      }
    }
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
