/* SPDX-License-Identifier: Apache-2.0 */
// The im2col packer of a 2-D convolution, the B side of its GEMM: rows
// k = (c, kh, kw) of one group's input channels, columns the output pixels
// in row-major order. Both the CPU Conv (implicit im2col into the packed
// SGEMM's B rows) and the vnpu dense convolution pack with it.
//
// Chosen per instruction set like the tile kernels: AVX-512 writes each K
// row 16 columns a store, each vector loaded (expand-loads where it spans
// several output-row runs or padding) from a per-tap plan shared by all
// channels (no scalar tails, no per-pixel bounds); the portable packer (4-float vectors: SSE2 on
// baseline x86-64, NEON on aarch64; AVX2 machines use it too) gathers the
// rows of narrow maps through a per-tap offset table and copies the rest
// run by run. Both write the same floats.
#ifndef EPCTX_UK_IM2COL_H
#define EPCTX_UK_IM2COL_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {

// One group's geometry. Input channel c's plane starts plane floats after
// channel 0's; row ih of it ih * W floats after its start.
struct Im2colShape {
  int64_t H, W, OW;
  int64_t KH, KW;
  int64_t sh, sw, dh, dw;
  int64_t pt, pl;
  int64_t plane;
};

// Rows [k0, k0 + kc) x columns [p0, p0 + np) of the im2col matrix of x into
// dst[k * pitch + j] (k, j relative to k0, p0); columns np up to the next
// multiple of 8 are zero, nothing past them is written. Taps outside the
// input read as zero.
using Im2colFn = void (*)(const Im2colShape& s, const float* x, int64_t k0, int64_t kc, int64_t p0,
                          int64_t np, float* dst, int64_t pitch);

// The packer for isa (kAuto: the best this CPU runs), never null.
Im2colFn Im2colKernel(Isa isa = Isa::kAuto);

}  // namespace uk
}  // namespace epctx

#endif
