/* SPDX-License-Identifier: Apache-2.0 */
// The body of the narrow-columns kernel for one instruction set, included
// by narrow.cc with EPCTX_NARROW_FN defined: 8-float vectors (ymm with
// AVX2). No include guard on purpose.
namespace epctx {
namespace uk {
namespace detail {

void EPCTX_NARROW_FN(const NarrowTile& t) {
  if (t.rows <= 0 || t.cols <= 0 || t.cols > kNarrowCols) return;
  typedef float V __attribute__((vector_size(32)));
  typedef float VU __attribute__((vector_size(32), aligned(4), may_alias));
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
      if (np == kPanels && nc == kCols) {
        for (int64_t k = 0; k < t.kc; ++k, b += t.b_ks) {
          const V b0 = V{} + b[0], b1 = V{} + b[1], b2 = V{} + b[2];
#pragma GCC unroll 8
          for (int p = 0; p < kPanels; ++p) {
            const V av = *reinterpret_cast<const VU*>(a + p * t.a_ps + k * 8);
            acc[p][0] += av * b0;
            acc[p][1] += av * b1;
            acc[p][2] += av * b2;
          }
        }
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
