/* SPDX-License-Identifier: Apache-2.0 */
// What the int8 panel packers (qgemm.cc, qgemm_avx512.cc) share: a panel's
// pixels cut into runs of one output row, and each run's span of input
// columns for a tap.
#ifndef EPCTX_UK_QGEMM_COMMON_H
#define EPCTX_UK_QGEMM_COMMON_H

#include <cstdint>

#include "epctx_uk/qgemm.h"

namespace epctx {
namespace uk {
namespace detail {

// Pixels [q0, q0 + len) of a panel: output row oh, columns ow0 ...
struct QRun {
  int64_t oh, ow0, q0, len;
};

// Cuts the panel's pixels into runs; returns how many (at most kQCols).
inline int32_t QRuns(const QConvPanel& c, QRun* runs) {
  int32_t n = 0;
  for (int64_t q = 0; q < c.cols;) {
    const int64_t pix = c.p0 + q, oh = pix / c.OW, ow = pix % c.OW;
    const int64_t len = c.OW - ow < c.cols - q ? c.OW - ow : c.cols - q;
    runs[n++] = QRun{oh, ow, q, len};
    q += len;
  }
  return n;
}

inline int64_t QClamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Tap column kw: input column ow * sw + off; [vlo, vhi] the output columns
// whose tap lies inside the input (vhi < vlo: none). A run reads input for
// its pixels [a, e) (relative to q0) and pads the rest.
struct QSpan {
  int64_t off, vlo, vhi;
};
inline QSpan QSpanOf(const QConvPanel& c, int64_t kw) {
  const int64_t off = kw * c.dw - c.pl;
  const int64_t vlo = off >= 0 ? 0 : (-off + c.sw - 1) / c.sw;
  const int64_t vhi = c.W - 1 - off < 0 ? -1 : (c.W - 1 - off) / c.sw;
  return QSpan{off, vlo, vhi};
}

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
