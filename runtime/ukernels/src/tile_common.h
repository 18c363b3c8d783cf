/* SPDX-License-Identifier: Apache-2.0 */
// What every instruction set's tile kernel shares: the edge handling.
//
// An ISA provides Full(t, strips): a tile of 4 rows x strips*8 columns
// that may read and write all of them in C and in the biases, and reads A
// row min(r, rows - 1) for row r (so A rows past `rows` are never touched;
// the spare rows compute a copy that is thrown away). RunTile gives it a
// private 4 x 24 copy of C and of the biases whenever the tile is partial,
// so the vector loops never test an edge.
#ifndef EPCTX_UK_TILE_COMMON_H
#define EPCTX_UK_TILE_COMMON_H

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {
namespace detail {

template <typename Full>
inline void RunTile(const Tile& t, Full full) {
  const int strips = (t.cols + kStrip - 1) / kStrip;
  if (t.rows == kMr && t.cols == strips * kStrip) {
    full(t, strips);
    return;
  }
  float cbuf[kMr * kNr];
  float cb[kNr];
  float rb[kMr];
  Tile u = t;
  u.c = cbuf;
  u.ldc = kNr;
  for (int i = 0; i < kMr * kNr; ++i) cbuf[i] = 0.0f;
  if (t.accumulate)
    for (int r = 0; r < t.rows; ++r)
      for (int j = 0; j < t.cols; ++j) cbuf[r * kNr + j] = t.c[r * t.ldc + j];
  if (t.row_bias) {
    for (int r = 0; r < kMr; ++r) rb[r] = t.row_bias[r < t.rows ? r : t.rows - 1];
    u.row_bias = rb;
  }
  if (t.col_bias) {
    for (int j = 0; j < kNr; ++j) cb[j] = j < t.cols ? t.col_bias[j] : 0.0f;
    u.col_bias = cb;
  }
  full(u, strips);
  for (int r = 0; r < t.rows; ++r)
    for (int j = 0; j < t.cols; ++j) t.c[r * t.ldc + j] = cbuf[r * kNr + j];
}

// For kernels without slices of their own: one call of `full` per slice,
// the slices after the first accumulating, bias and clamp on the last.
template <typename Full>
inline void ForSegments(const Tile& t, int strips, Full full) {
  if (t.segs <= 1) {
    full(t, strips);
    return;
  }
  Tile u = t;
  u.segs = 1;
  for (int32_t s = 0; s < t.segs; ++s) {
    u.a = t.a + s * t.a_seg;
    u.b = t.b + s * t.b_seg;
    u.accumulate = t.accumulate || s > 0;
    u.last = t.last && s == t.segs - 1;
    full(u, strips);
  }
}

// A row pointers for a tile: row r reads row min(r, rows - 1).
inline const float* RowA(const Tile& t, int r) {
  return t.a + (r < t.rows ? r : t.rows - 1) * t.a_rs;
}

// A block tile (sgemm.h, TileKernel2) as up to 2 x 2 calls of a tile
// kernel: column halves first, each as a top and a bottom 4-row tile.
inline void SplitBlock(const Tile& t, TileFn tile) {
  for (int32_t j = 0; j < t.cols; j += kNr) {
    Tile u = t;
    u.cols = t.cols - j < kNr ? t.cols - j : kNr;
    if (j) {
      u.b = t.b_ps ? t.b + t.b_ps : t.b + (j / kStrip) * t.b_ss;
      u.c = t.c + j;
      if (t.col_bias) u.col_bias = t.col_bias + j;
    }
    for (int32_t r = 0; r < t.rows; r += kMr) {
      Tile v = u;
      v.rows = t.rows - r < kMr ? t.rows - r : kMr;
      if (r) {
        v.a = u.a + r * t.a_rs;
        v.c = u.c + r * t.ldc;
        if (t.row_bias) v.row_bias = t.row_bias + r;
      }
      tile(v);
    }
  }
}

void TilePortable(const Tile& t);
void Tile2Portable(const Tile& t);
void Tile2Avx2(const Tile& t);
void Tile2Avx512(const Tile& t);
void Tile2Neon(const Tile& t);
void TileAvx2(const Tile& t);
void TileAvx512(const Tile& t);
// The AVX2 kernel's full tiles, which the AVX-512 one falls back to.
void FullStripsAvx2(const Tile& t, int strips);
void TileNeon(const Tile& t);

}  // namespace detail
}  // namespace uk
}  // namespace epctx

#endif
