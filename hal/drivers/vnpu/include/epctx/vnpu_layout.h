/* SPDX-License-Identifier: Apache-2.0 */
// What the vnpu compiler (host_tools/backends/vnpu) and driver decide alike:
// the predicates that pick a weight layout, so the compiler never writes a
// layout the driver would run another way or refuse. C++ only, header only,
// freestanding (the driver includes it); not part of the installed SDK.
#ifndef EPCTX_VNPU_LAYOUT_H
#define EPCTX_VNPU_LAYOUT_H

#include <cstdint>

namespace epctx {
namespace vnpu {
namespace layout {

// Output channels per weight block of CONV2D ([..][ceil(Cout_g / 8)][..][8])
// and columns per strip of GEMM's B ([ceil(N / 8)][K][8]).
constexpr int64_t kBlock = 8;
// GEMM_BLOCKED's column block (stream 1.6): the block tile's 48 columns.
constexpr int64_t kGemmBlockCols = 48;
// The compiler writes GEMM_BLOCKED from this many rows of A (the block
// tile's 8) and GEMM's 8-column strips below: a block of fewer rows runs as
// 24-column tiles, each sweeping the whole 48-wide block (twice the bytes
// of a memory-bound product such as a batch-1 classifier).
constexpr bool GemmBlockedFits(int64_t m) { return m >= 8; }

// The transposed conv path (README "Weight layouts"): 4 output pixels of a
// row are the micro-kernel tile's rows and at most its 24 columns the
// output channels; each tap is one pass of K = Cin_g, its input row kept on
// the stack for at most kMaxTaps taps.
constexpr int64_t kTileRows = 4;
constexpr int64_t kTileCols = 24;
constexpr int64_t kMaxTaps = 49;
// Fewer input channels than this pack cheaply enough as dense im2col.
constexpr int64_t kTransposedMinCin = 16;

// Whether a convolution of cin_g -> cout_g channels per group, a kh x kw
// window and ow output columns runs transposed. The compiler writes such a
// convolution as CONV2D_TAPS (taps-major weights) when its window is wider
// than one column (TapsLayout); the driver runs a CONV2D of this shape
// transposed too, over its blocked weights.
constexpr bool TransposedFits(int64_t cin_g, int64_t cout_g, int64_t kh, int64_t kw, int64_t ow) {
  return cout_g <= kTileCols && cin_g >= kTransposedMinCin && kh * kw > 1 && kh * kw <= kMaxTaps &&
         ow >= kTileRows;
}
constexpr bool TapsLayout(int64_t cin_g, int64_t cout_g, int64_t kh, int64_t kw, int64_t ow) {
  return kw > 1 && TransposedFits(cin_g, cout_g, kh, kw, ow);
}

}  // namespace layout
}  // namespace vnpu
}  // namespace epctx

#endif
