/* SPDX-License-Identifier: Apache-2.0 */
// The body of the narrow-columns kernel for one instruction set, included
// by narrow.cc with EPCTX_NARROW_FN defined: 8-float vectors (ymm with
// AVX2). No include guard on purpose.
namespace epctx {
namespace uk {
namespace detail {
namespace {

typedef float NarrowV __attribute__((vector_size(32)));
typedef float NarrowVU __attribute__((vector_size(32), aligned(4), may_alias));

// 8 whole panels x NC columns over kc: 8 * NC accumulators in registers.
template <int NC>
inline void NarrowPanels8(const NarrowTile& t, const float* a, const float* b,
                          NarrowV (&acc)[8][3]) {
  for (int64_t k = 0; k < t.kc; ++k, b += t.b_ks) {
    NarrowV bv[NC];
    for (int j = 0; j < NC; ++j) bv[j] = NarrowV{} + b[j];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) {
      const NarrowV av = *reinterpret_cast<const NarrowVU*>(a + p * t.a_ps + k * 8);
      for (int j = 0; j < NC; ++j) acc[p][j] += av * bv[j];
    }
  }
}

}  // namespace

void EPCTX_NARROW_FN(const NarrowTile& t) {
  if (t.rows <= 0 || t.cols <= 0 || t.cols > kNarrowCols) return;
  typedef NarrowV V;
  typedef NarrowVU VU;
  constexpr int kPanels = 8, kCols = 3;
  const int64_t panels = (t.rows + 7) / 8;
  for (int64_t p0 = 0; p0 < panels; p0 += kPanels) {
    const int np = static_cast<int>(panels - p0 < kPanels ? panels - p0 : kPanels);
    for (int32_t j0 = 0; j0 < t.cols; j0 += kCols) {
      const int nc = t.cols - j0 < kCols ? t.cols - j0 : kCols;
      V acc[kPanels][kCols];
      for (int p = 0; p < kPanels; ++p)
        for (int j = 0; j < kCols; ++j) acc[p][j] = V{};
      const float* a = t.a + p0 * t.a_ps;
      const float* b = t.b + j0;
      // Whole groups of 8 panels in registers, whatever the columns left
      // (a 7x7 map leaves 1, a 14x14 one 3 + 1).
      if (np == kPanels && nc == 3) {
        NarrowPanels8<3>(t, a, b, acc);
      } else if (np == kPanels && nc == 2) {
        NarrowPanels8<2>(t, a, b, acc);
      } else if (np == kPanels && nc == 1) {
        NarrowPanels8<1>(t, a, b, acc);
      } else {
        for (int64_t k = 0; k < t.kc; ++k, b += t.b_ks)
          for (int p = 0; p < np; ++p) {
            const V av = *reinterpret_cast<const VU*>(a + p * t.a_ps + k * 8);
            for (int j = 0; j < nc; ++j) acc[p][j] += av * b[j];
          }
      }
      for (int p = 0; p < np; ++p)
        for (int r = 0; r < 8; ++r) {
          const int64_t row = (p0 + p) * 8 + r;
          if (row >= t.rows) break;
          float* cr = t.c + row * t.ldc + j0;
          for (int j = 0; j < nc; ++j) {
            float v = acc[p][j][r];
            if (t.accumulate) v += cr[j];
            if (t.last) {
              if (t.row_bias) v += t.row_bias[row];
              v = v < t.lo ? t.lo : v;
              v = v > t.hi ? t.hi : v;
            }
            cr[j] = v;
          }
        }
    }
  }
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx
