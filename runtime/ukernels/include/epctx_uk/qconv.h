/* SPDX-License-Identifier: Apache-2.0 */
// An int8 2-D convolution on the int8 micro-kernels (qgemm.h), shared by
// the vnpu's QCONV2D and the CPU's QLinearConv / ConvInteger: for each
// block of 48 output pixels of one image and group, the im2col panel is
// packed (QPackFn), every 8 output channels of the group sweep it (QTileFn,
// weights read in place from W [Cout][Cin_g][KH][KW]) and the raw sums
// become accumulators
//   acc = raw - xz * wsum[c] - wz * colsum + K * xz * wz   (wrapping int32)
// (activations unsigned, weights signed: qgemm.h) that are written as int32
// (+ bias) or requantised:
//   y = clamp(round_half_even(float(acc + bias) * mult[c]) + zp, lo, hi)
// Callers cut the units (QConvUnits) into runs on their own threads; a
// unit's bytes do not depend on the cut.
#ifndef EPCTX_UK_QCONV_H
#define EPCTX_UK_QCONV_H

#include <cstdint>

#include "epctx_uk/qgemm.h"

namespace epctx {
namespace uk {

struct QConvJob {
  const uint8_t* x;  // [N][C][H][W]
  const uint8_t* w;  // [CO][C / G][KH][KW]
  void* y;           // [N][CO][OH][OW]: bytes, or int32 when int32_out
  int64_t N, C, H, W, CO, OH, OW, G, KH, KW, sh, sw, dh, dw, pt, pl;
  uint8_t xflip, wflip;  // 0x80: INT8 activations / UINT8 weights
  const int32_t* wsum;   // [CO]: sum over K of each row's signed weights (QWeightSums)
  int32_t xz, wz;        // zero points, unsigned and signed domains
  const int32_t* bias;   // [CO] or null
  const float* mult;     // [CO] (requantised outputs)
  int32_t zp, lo, hi;
  bool int32_out;
  // acc + bias as a 64-bit sum before the float conversion (the vnpu's
  // reference); else wrapping int32, as ORT's kernels. Equal unless the sum
  // leaves int32.
  bool wide_bias;
  QTileFn tile;
  QPackFn pack;
  QRequantFn requant;  // null: the scalar epilogue (needed when wide_bias may matter)
  QDwFn depthwise;     // QDepthwiseRun's kernel
};

// Units of work (one 48-pixel block of one image and group each, or, when
// there are fewer than 8 such blocks, a run of the block's 8-row output
// channel tiles: a 14x14 map's 5 blocks give two threads 3 and 2, its 20
// runs 10 and 10), and the workspace bytes one worker needs (64-byte
// aligned). The units never depend on the threads; consecutive units of
// one block pack its panel once.
int64_t QConvUnits(const QConvJob& j);
uint64_t QConvWorkBytes(const QConvJob& j);
// Runs units [lo, hi) with `work` (QConvWorkBytes, 64-byte aligned).
void QConvRun(const QConvJob& j, int64_t lo, int64_t hi, void* work);

// A depthwise job (one input and one output channel per group, weight zero
// point 0 as signed bytes, a window uk::QDwFits takes): each channel padded
// once into the workspace with the zero point, then uk::QDwPlane and the
// requantisation per channel. Units are channels of images (N x C).
bool QDepthwiseFits(const QConvJob& j);
uint64_t QDepthwiseWorkBytes(const QConvJob& j);
void QDepthwiseRun(const QConvJob& j, int64_t lo, int64_t hi, void* work);

// sums[r] = sum over k < K of int8(w[r * K + k] ^ wflip), for r < rows.
void QWeightSums(const uint8_t* w, int64_t rows, int64_t k, uint8_t wflip, int32_t* sums);

// The panel helpers QConvRun uses, for other panel users (the vnpu QGEMM,
// the CPU's MatMulInteger and QLinearMatMul): each panel column's sum over
// its groups; each row's last partial group of K bytes, zero-padded (no byte
// past a row is read).
void QColumnSums(const uint8_t* panel, int64_t groups, int32_t* colsum);
void QTails(const uint8_t* w, int64_t k, int32_t rows, uint32_t* tail);
// How panel users cut work into units that never depend on the threads:
// each of `blocks` panels is one unit, or, with fewer than 8 panels, each
// panel's `count` output rows (in tiles of kQRows) are cut into runs so
// that threads share a small job evenly (QConvRun; the vnpu QGEMM).
// QPanelRuns gives the runs per panel, QRunRows run `run`'s rows [lo, hi).
int64_t QPanelRuns(int64_t blocks, int64_t count);
void QRunRows(int64_t count, int64_t run, int64_t runs, int64_t* lo, int64_t* hi);
// A GEMM's activation panel: `cols` (<= kQCols) rows of a [rows][k] matrix
// `a`, each XORed with xflip, as the panel's columns (Interleave4's layout;
// a row's bytes past k and the columns past cols are 0).
void QPackRows(const uint8_t* a, int64_t k, int64_t cols, uint8_t xflip, uint8_t* panel);

}  // namespace uk
}  // namespace epctx

#endif
