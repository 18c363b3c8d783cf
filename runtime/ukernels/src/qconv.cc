// SPDX-License-Identifier: Apache-2.0
// The int8 convolution over panels (qconv.h).
#include "epctx_uk/qconv.h"

#include <cstring>

namespace epctx {
namespace uk {
namespace {

int64_t Groups(int64_t k) { return (k + 3) / 4; }
int64_t PanelBytes(int64_t k) { return Groups(k) * kQCols * 4; }
int64_t Taps(const QConvJob& j) { return (j.C / j.G) * j.KH * j.KW; }

// Writes one tile of output channels [c0, c0 + rows) x pixels [p0, p0 + cols).
void Finish(const QConvJob& j, int64_t n, int64_t c0, int32_t rows, int64_t p0, int64_t cols,
            const int32_t* raw, const int32_t* colsum) {
  const int64_t P = j.OH * j.OW, K = Taps(j);
  const uint32_t xz = uint32_t(j.xz), wz = uint32_t(j.wz), kzz = uint32_t(K) * xz * wz;
  const uint64_t base = uint64_t((n * j.CO + c0) * P + p0);
  int32_t rowc[kQRows];  // each row's constant terms (QRequant::rowc: with the bias)
  for (int32_t r = 0; r < rows; ++r) rowc[r] = int32_t(kzz - xz * uint32_t(j.wsum[c0 + r]));
  if (j.requant && !j.int32_out) {
    if (j.bias)
      for (int32_t r = 0; r < rows; ++r)
        rowc[r] = int32_t(uint32_t(rowc[r]) + uint32_t(j.bias[c0 + r]));
    j.requant(QRequant{raw, rows, int32_t(cols), wz ? colsum : nullptr, int32_t(wz), rowc,
                       j.mult + c0, j.zp, j.lo, j.hi, static_cast<uint8_t*>(j.y) + base, P});
    return;
  }
  for (int32_t r = 0; r < rows; ++r) {
    const int64_t c = c0 + r;
    const int32_t b = j.bias ? j.bias[c] : 0;
    for (int64_t q = 0; q < cols; ++q) {
      const uint32_t acc =
          uint32_t(raw[r * kQCols + q]) + uint32_t(rowc[r]) - (wz ? wz * uint32_t(colsum[q]) : 0u);
      const int64_t v =
          j.wide_bias ? int64_t(int32_t(acc)) + b : int64_t(int32_t(acc + uint32_t(b)));
      const uint64_t i = base + uint64_t(r * P + q);
      if (j.int32_out) {
        static_cast<int32_t*>(j.y)[i] = int32_t(uint32_t(uint64_t(v)));
        continue;
      }
      static_cast<uint8_t*>(j.y)[i] =
          uint8_t(QRequantizeOne(float(v) * j.mult[c], j.zp, j.lo, j.hi));
    }
  }
}

}  // namespace

namespace {

// Panels below which each panel's output rows are cut into runs.
constexpr int64_t kQMinUnits = 8;

int64_t RunsOf(const QConvJob& j) {
  return QPanelRuns(j.N * j.G * ((j.OH * j.OW + kQCols - 1) / kQCols), j.CO / j.G);
}

}  // namespace

int64_t QPanelRuns(int64_t blocks, int64_t count) {
  if (blocks >= kQMinUnits) return 1;
  const int64_t tiles = (count + kQRows - 1) / kQRows;
  const int64_t runs = (kQMinUnits + blocks - 1) / blocks;
  return runs < tiles ? runs : tiles;
}

void QRunRows(int64_t count, int64_t run, int64_t runs, int64_t* lo, int64_t* hi) {
  const int64_t tiles = (count + kQRows - 1) / kQRows;
  *lo = tiles * run / runs * kQRows;
  *hi = tiles * (run + 1) / runs * kQRows < count ? tiles * (run + 1) / runs * kQRows : count;
}

int64_t QConvUnits(const QConvJob& j) {
  return j.N * j.G * ((j.OH * j.OW + kQCols - 1) / kQCols) * RunsOf(j);
}

uint64_t QConvWorkBytes(const QConvJob& j) {
  return uint64_t(PanelBytes(Taps(j))) + uint64_t(kQPackScratch);
}

void QWeightSums(const uint8_t* w, int64_t rows, int64_t k, uint8_t wflip, int32_t* sums) {
  for (int64_t r = 0; r < rows; ++r) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += int32_t(int8_t(uint8_t(w[r * k + i] ^ wflip)));
    sums[r] = sum;
  }
}

void QColumnSums(const uint8_t* panel, int64_t groups, int32_t* colsum) {
  for (int32_t q = 0; q < kQCols; ++q) colsum[q] = 0;
  for (int64_t gi = 0; gi < groups; ++gi) {
    const uint8_t* pg = panel + gi * kQCols * 4;
    for (int32_t q = 0; q < kQCols; ++q)
      colsum[q] += int32_t(pg[q * 4]) + pg[q * 4 + 1] + pg[q * 4 + 2] + pg[q * 4 + 3];
  }
}

void QTails(const uint8_t* w, int64_t k, int32_t rows, uint32_t* tail) {
  const int64_t full = k / 4 * 4;
  for (int32_t r = 0; r < rows; ++r) {
    tail[r] = 0;
    memcpy(&tail[r], w + r * k + full, size_t(k - full));
  }
}

void QPackRows(const uint8_t* a, int64_t k, int64_t cols, uint8_t xflip, uint8_t* panel) {
  const uint32_t flip4 = uint32_t(xflip) * 0x01010101u;
  const int64_t full = k / 4, groups = Groups(k);
  for (int64_t q = 0; q < kQCols; ++q) {
    uint8_t* out = panel + q * 4;
    if (q >= cols) {
      for (int64_t gi = 0; gi < groups; ++gi) memset(out + gi * kQCols * 4, 0, 4);
      continue;
    }
    const uint8_t* row = a + q * k;
    for (int64_t gi = 0; gi < full; ++gi) {
      uint32_t v;
      memcpy(&v, row + gi * 4, 4);
      v ^= flip4;
      memcpy(out + gi * kQCols * 4, &v, 4);
    }
    if (full < groups) {
      uint8_t v[4] = {0, 0, 0, 0};
      for (int64_t j = 0; j < k - full * 4; ++j) v[j] = uint8_t(row[full * 4 + j] ^ xflip);
      memcpy(out + full * kQCols * 4, v, 4);
    }
  }
}

void QConvRun(const QConvJob& j, int64_t lo, int64_t hi, void* work) {
  const int64_t P = j.OH * j.OW, blocks = (P + kQCols - 1) / kQCols;
  const int64_t cig = j.C / j.G, cog = j.CO / j.G, K = Taps(j);
  uint8_t* panel = static_cast<uint8_t*>(work);
  void* scratch = panel + PanelBytes(K);
  const uint8_t pad = uint8_t(uint32_t(j.xz) ^ j.xflip);  // the raw zero point byte
  int32_t colsum[kQCols] = {};
  int32_t tile[kQRows * kQCols];
  uint32_t tail[kQRows];
  const int64_t runs = RunsOf(j);
  for (int64_t u = lo; u < hi; ++u) {
    const int64_t b = u / runs, run = u % runs;
    const int64_t n = b / (j.G * blocks), g = b / blocks % j.G, p0 = b % blocks * kQCols;
    const int64_t cols = P - p0 < kQCols ? P - p0 : kQCols;
    if (u == lo || run == 0) {  // a block this call has not packed yet
      j.pack(QConvPanel{j.x + (n * j.C + g * cig) * j.H * j.W, j.H, j.W, j.OW, j.KH, j.KW, j.sh,
                        j.sw, j.dh, j.dw, j.pt, j.pl, K, p0, cols, pad, j.xflip, panel, scratch});
      if (j.wz) QColumnSums(panel, Groups(K), colsum);
    }
    int64_t r_lo, r_hi;
    QRunRows(cog, run, runs, &r_lo, &r_hi);
    for (int64_t r0 = r_lo; r0 < r_hi; r0 += kQRows) {
      const int32_t rows = int32_t(cog - r0 < kQRows ? cog - r0 : kQRows);
      const int64_t c0 = g * cog + r0;
      const uint8_t* wr = j.w + c0 * K;
      if (K % 4) QTails(wr, K, rows, tail);
      j.tile(QTile{wr, K, K / 4, K % 4 ? tail : nullptr, j.wflip, panel, tile, rows});
      Finish(j, n, c0, rows, p0, cols, tile, colsum);
    }
  }
}

}  // namespace uk
}  // namespace epctx
