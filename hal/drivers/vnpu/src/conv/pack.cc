// SPDX-License-Identifier: Apache-2.0
// Row packers the conv strategies share: a conv's im2col geometry (the
// packer itself is the micro-kernel library's, uk::Im2colKernel, chosen at
// plan time), a row split into its even and odd columns, a zero-padded row.
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {
uk::Im2colShape Im2colOf(const Shape& s) {
  return uk::Im2colShape{s.H, s.W, s.OW, s.KH, s.KW, s.sh, s.sw, s.dh, s.dw, s.pt, s.pl, s.H * s.W};
}

void SplitCols(const float* src, int64_t W, int64_t c0, int64_t n, float* ev, float* od) {
  auto one = [&](int64_t k) {
    const int64_t je = c0 + 2 * k, jo = je + 1;
    ev[k] = je >= 0 && je < W ? src[je] : 0.0f;
    od[k] = jo >= 0 && jo < W ? src[jo] : 0.0f;
  };
  int64_t i = 0;
  for (; i < n && c0 + 2 * i < 0; ++i) one(i);
  for (; i + 4 <= n && c0 + 2 * i + 8 <= W; i += 4) {
    const V4 a = Load4(src + c0 + 2 * i), b = Load4(src + c0 + 2 * i + 4);
    Store4(ev + i, __builtin_shufflevector(a, b, 0, 2, 4, 6));
    Store4(od + i, __builtin_shufflevector(a, b, 1, 3, 5, 7));
  }
  for (; i < n; ++i) one(i);
}

void PadRow(const float* src, int64_t w, int64_t pl, int64_t PW, float* dst) {
  const int64_t lo = pl < PW ? pl : PW;
  const int64_t n = w < PW - lo ? w : PW - lo;
  for (int64_t j = 0; j < lo; ++j) dst[j] = 0.0f;
  if (n > 0) __builtin_memcpy(dst + lo, src, size_t(n) * 4);
  for (int64_t j = lo + (n > 0 ? n : 0); j < PW; ++j) dst[j] = 0.0f;
}

}  // namespace vnpu
}  // namespace epctx
