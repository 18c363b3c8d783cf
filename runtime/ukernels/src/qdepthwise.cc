// SPDX-License-Identifier: Apache-2.0
// The int8 depthwise convolution (qconv.h: QDepthwiseRun). Each channel's
// input is copied once into the worker's workspace as unsigned bytes with
// its padding written out as the input zero point, so every output row is
// branch-free: uk::QDwPlane computes sum w * x over the taps (VNNI: 16
// outputs and four taps a vpdpbusd), and the zero point comes in as
// -x_zp * sum w (the job's weight sums, made when the weights were bound), with the bias; then the
// plane is requantised like the panel convolution's tiles.
#include <cstring>

#include "epctx_uk/qconv.h"

namespace epctx {
namespace uk {
namespace {

// The padded plane of one channel: rows from input row -pad_top, columns
// from -pad_left, each row 64 bytes longer than any window reaches.
struct Padded {
  int64_t rows, width, reach;  // reach: columns any window reads
};
Padded PaddedOf(const QConvJob& j) {
  const int64_t reach_h = (j.OH - 1) * j.sh + (j.KH - 1) * j.dh;
  const int64_t reach_w = (j.OW - 1) * j.sw + (j.KW - 1) * j.dw;
  const int64_t wide = j.W + j.pl > reach_w + 1 ? j.W + j.pl : reach_w + 1;
  return Padded{reach_h + 1, wide + 64, reach_w + 1};
}

// The plane's bytes, rounded up so the int32 sums after it start on a
// cache line (the workspace is 64-byte aligned).
int64_t PlaneBytes(const Padded& pd) { return (pd.rows * pd.width + 63) / 64 * 64; }

}  // namespace

bool QDepthwiseFits(const QConvJob& j) {
  return j.G == j.C && j.CO == j.C && j.wz == 0 && j.KH * j.KW <= 64 &&
         QDwFits(j.KH, j.KW, j.sw, j.dw);
}

uint64_t QDepthwiseWorkBytes(const QConvJob& j) {
  const Padded pd = PaddedOf(j);
  return uint64_t(PlaneBytes(pd)) + uint64_t(j.OH * j.OW) * 4;
}

void QDepthwiseRun(const QConvJob& j, int64_t lo, int64_t hi, void* work) {
  const Padded pd = PaddedOf(j);
  const int64_t taps = j.KH * j.KW, P = j.OH * j.OW;
  uint8_t* plane = static_cast<uint8_t*>(work);
  int32_t* raw = reinterpret_cast<int32_t*>(plane + PlaneBytes(pd));
  const uint8_t zpb = uint8_t(j.xz);  // the zero point, unsigned
  int8_t ws[64];
  for (int64_t u = lo; u < hi; ++u) {
    const int64_t ch = u % j.C;
    const uint8_t* xc = j.x + u * j.H * j.W;
    for (int64_t i = 0; i < pd.rows; ++i) {
      uint8_t* dst = plane + i * pd.width;
      const int64_t ih = i - j.pt;
      if (ih < 0 || ih >= j.H) {
        memset(dst, zpb, size_t(pd.reach > j.pl + j.W ? pd.reach : j.pl + j.W));
        continue;
      }
      memset(dst, zpb, size_t(j.pl));
      memcpy(dst + j.pl, xc + ih * j.W, size_t(j.W));
      if (j.xflip)
        for (int64_t k = j.pl; k < j.pl + j.W; ++k) dst[k] ^= j.xflip;
      // Past the last column a window reaches, bytes only feed lanes that
      // are never stored: zero points up to the reach, the slack unwritten.
      if (pd.reach > j.pl + j.W) memset(dst + j.pl + j.W, zpb, size_t(pd.reach - j.pl - j.W));
    }
    for (int64_t t = 0; t < taps; ++t) ws[t] = int8_t(uint8_t(j.w[ch * taps + t] ^ j.wflip));
    j.depthwise(QDwPlane{plane, pd.width, ws, int32_t(j.KH), int32_t(j.KW), int32_t(j.sh),
                         int32_t(j.sw), int32_t(j.dh), int32_t(j.dw), j.OH, j.OW, raw});
    // acc = raw - xz * sum w (wz is 0), then the bias as QConvRun adds it.
    const uint32_t c = uint32_t(0) - uint32_t(j.xz) * uint32_t(j.wsum[ch]);
    const uint64_t base = uint64_t(u * P);
    if (j.requant && !j.int32_out) {
      const int32_t rowc = int32_t(c + uint32_t(j.bias ? j.bias[ch] : 0));
      j.requant(QRequant{raw, 1, int32_t(P), nullptr, 0, &rowc, j.mult + ch, j.zp, j.lo, j.hi,
                         static_cast<uint8_t*>(j.y) + base, 0});
      continue;
    }
    const int32_t b = j.bias ? j.bias[ch] : 0;
    for (int64_t o = 0; o < P; ++o) {
      const uint32_t acc = uint32_t(raw[o]) + c;
      const int64_t v =
          j.wide_bias ? int64_t(int32_t(acc)) + b : int64_t(int32_t(acc + uint32_t(b)));
      if (j.int32_out) {
        static_cast<int32_t*>(j.y)[base + uint64_t(o)] = int32_t(uint32_t(uint64_t(v)));
        continue;
      }
      static_cast<uint8_t*>(j.y)[base + uint64_t(o)] =
          uint8_t(QRequantizeOne(float(v) * j.mult[ch], j.zp, j.lo, j.hi));
    }
  }
}

}  // namespace uk
}  // namespace epctx
