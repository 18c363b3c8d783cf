/* SPDX-License-Identifier: Apache-2.0 */
// int8 GEMM micro-kernels: raw int32 sums of unsigned activation bytes times
// signed weight bytes, the products AVX-512 VNNI's vpdpbusd adds four at a
// time. Callers turn the raw sums into ONNX's zero-pointed accumulators:
//
//   sum_k (x - x_zp) (w - w_zp)
//     = raw - x_zp * sum_k w - w_zp * sum_k x + K * x_zp * w_zp
//
// with x read as unsigned (an INT8 activation XORed with 0x80 is x + 128,
// its zero point + 128) and w as signed (a UINT8 weight XORed with 0x80 is
// w - 128, its zero point - 128). Every term is exact in wrapping 32-bit
// arithmetic, and the true accumulator fits int32 (the vnpu validator
// bounds the reduction), so the result is the same bits on every ISA.
#ifndef EPCTX_UK_QGEMM_H
#define EPCTX_UK_QGEMM_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {

// The scalar requantisation: clamp(round_half_even(v) + zp, lo, hi), NaN
// giving lo.
inline int32_t QRequantizeOne(float v, int32_t zp, int32_t lo, int32_t hi) {
  const float flo = float(lo - zp), fhi = float(hi - zp);
  if (!(v >= flo)) v = flo;
  if (!(v <= fhi)) v = fhi;
  const float magic = 12582912.0f;  // 1.5 * 2^23: rounds half to even once
  return int32_t((v + magic) - magic) + zp;
}

// A tile's columns (a panel's width) and most rows.
constexpr int32_t kQCols = 48;
constexpr int32_t kQRows = 8;

// out[r][p] = sum over groups g and j < 4 of
//   int8(w[r * ldw + 4g + j] ^ wflip) * x[(g * kQCols + p) * 4 + j]
// for r < rows, p < kQCols. Groups 0 .. groups - 1 come from w; when `tail`
// is set, one more group per row comes from tail[r] (a row's last partial
// group, zero-padded, in memory order), so no byte past a row's K is read.
// The panel x holds groups (+1 with a tail) x kQCols x 4 bytes.
struct QTile {
  const uint8_t* w;
  int64_t ldw;
  int64_t groups;
  const uint32_t* tail;  // [rows] or null
  uint8_t wflip;         // 0x80: UINT8 weights, read as w - 128
  const uint8_t* x;
  int32_t* out;  // [rows][kQCols]
  int32_t rows;  // 1 .. kQRows
};
using QTileFn = void (*)(const QTile& t);

// out[j] = sum_k a[k] * int8(w[j * ldw + k] ^ wflip) for j < n: one
// activation row against n weight rows (few rows of activations: each weight
// byte is read once per row instead of once per 48-column panel).
struct QDot {
  const uint8_t* a;
  const uint8_t* w;
  int64_t ldw, k;
  uint8_t wflip;
  int32_t* out;
  int64_t n;
};
using QDotFn = void (*)(const QDot& d);

// Requantises a tile's raw sums (out of a QTile) into bytes:
//   y[r * y_row + q] = clamp(round_half_even(float(acc) * mult[r]) + zp, lo, hi)
//   acc = raw[r * kQCols + q] - wz * colsum[q] + rowc[r]   (wrapping int32)
// for r < rows, q < cols, where rowc holds each row's constant terms (the
// bias, K x_zp w_zp - x_zp * sum_k w). A NaN product gives lo, as the vnpu
// reference does. Callers use it only where acc + bias cannot leave int32
// (then float(acc) is the reference's float of the 64-bit sum).
struct QRequant {
  const int32_t* raw;
  int32_t rows, cols;
  const int32_t* colsum;  // [kQCols], or null when wz is 0
  int32_t wz;
  const int32_t* rowc;  // [rows]
  const float* mult;    // [rows]
  int32_t zp, lo, hi;
  uint8_t* y;
  int64_t y_row;
};
using QRequantFn = void (*)(const QRequant& q);

// The im2col panel of output pixels [p0, p0 + cols) of a convolution over
// one group's input planes x ([Cin_g][H][W] bytes): K row k = (ic, kh, kw)
// holds the byte each pixel's tap reads, `pad` (the raw input zero point)
// outside the input, rows past K and columns past cols 0 (after the XOR),
// every byte XORed with xflip; written as Interleave4 groups.
struct QConvPanel {
  const uint8_t* x;
  int64_t H, W, OW, KH, KW, sh, sw, dh, dw, pt, pl, K;
  int64_t p0, cols;
  uint8_t pad, xflip;
  uint8_t* panel;
  void* scratch;  // kQPackScratch bytes, 8-byte aligned: the packer's plan of the panel
};
constexpr int64_t kQPackScratch = 32768;
using QPackFn = void (*)(const QConvPanel& c);
// The vector packers (AVX-512 VBMI, AVX2) take KW <= 16 and strides 1 and
// 2; QPackKernel(isa, KW, sw) gives the portable one for other windows.

// One channel of a depthwise int8 convolution, from its input already
// padded (unsigned bytes, rows `pitch` apart, each readable 64 bytes past
// the last byte a tap reads):
//   out[oh * OW + ow] = sum over kh < KH, kw < KW of
//       w[kh * KW + kw] * x[(oh * sh + kh * dh) * pitch + ow * sw + kw * dw]
// The VNNI kernel puts 16 outputs in the lanes of a vector and four taps
// of a window row in each lane's bytes (vpermb from one 64-byte load), so
// it takes KH <= 8, KW <= 8 and 15 * sw + (KW - 1) * dw < 64 (QDwFits);
// the portable one takes any.
struct QDwPlane {
  const uint8_t* x;
  int64_t pitch;
  const int8_t* w;
  int32_t KH, KW, sh, sw, dh, dw;
  int64_t OH, OW;
  int32_t* out;
};
using QDwFn = void (*)(const QDwPlane& d);
inline bool QDwFits(int64_t KH, int64_t KW, int64_t sw, int64_t dw) {
  return KH >= 1 && KH <= 8 && KW >= 1 && KW <= 8 && 15 * sw + (KW - 1) * dw < 64;
}

// ADD or MUL of two quantised rows of one dtype (either may be one element
// broadcast over the row), as the
// vnpu reference: va = float(a - az) * as, vb likewise, then (va + vb) or
// (va * vb) divided by ys, rounded half to even, + yz, clamped to [lo, hi]
// (NaN: lo). No multiply-add is fused (the files are compiled with
// -ffp-contract=off), so every ISA gives the same bytes.
struct QBinaryRow {
  const uint8_t* a;
  const uint8_t* b;
  uint8_t* y;
  int64_t n;
  bool is_signed;     // INT8 (else UINT8)
  bool mul;           // MUL (else ADD)
  bool a_one, b_one;  // the operand is one element, read for every output
  float as, bs, ys;
  int32_t az, bz, yz, lo, hi;
};
using QBinaryFn = void (*)(const QBinaryRow& r);

// Element rows of the int8 level, as the vnpu reference computes them:
// y[i] = table[x[i]] (QLUT); y[i] = clamp(round_half_even(x[i] / scale) + zp,
// lo, hi), NaN giving lo (QUANTIZE); y[i] = float(q[i] - zp) * scale with q
// read as int8 or uint8 (DEQUANTIZE).
using QLutFn = void (*)(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n);
using QuantizeFn = void (*)(const float* x, int64_t n, float scale, int32_t zp, int32_t lo,
                            int32_t hi, uint8_t* y);
using DequantizeFn = void (*)(const uint8_t* x, int64_t n, bool is_signed, int32_t zp, float scale,
                              float* y);

// The kernels for `isa` (kAuto: BestIsa()): AVX-512 VNNI where the CPU has
// it (cpuid 7 ecx bit 11, with AVX-512 usable), else AVX2 where it has that
// (AVX-512 CPUs without VNNI included: tile, dot, requantisation, packer,
// depthwise, binary, quantise and dequantise rows; the LUT row stays
// portable), else portable C. All compute the same integers and bytes.
QTileFn QTileKernel(Isa isa = Isa::kAuto);
QDotFn QDotKernel(Isa isa = Isa::kAuto);
QRequantFn QRequantKernel(Isa isa = Isa::kAuto);
QPackFn QPackKernel(Isa isa = Isa::kAuto, int64_t KW = 1, int64_t sw = 1);
QDwFn QDwKernel(Isa isa = Isa::kAuto);
QBinaryFn QBinaryKernel(Isa isa = Isa::kAuto);
QLutFn QLutKernel(Isa isa = Isa::kAuto);
QuantizeFn QuantizeKernel(Isa isa = Isa::kAuto);
DequantizeFn DequantizeKernel(Isa isa = Isa::kAuto);
// Whether QTileKernel(kAuto) is the VNNI one (benchmarks print it).
bool QHasVnni();

// Panel packing. Row r (of 4 consecutive K rows) and column p land at
// panel[(g * kQCols + p) * 4 + r]: Interleave4 writes one group from four
// rows of kQCols bytes each, XORing every byte with xflip (0x80: INT8
// activations read as x + 128).
void Interleave4(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2, const uint8_t* r3,
                 uint8_t xflip, uint8_t* group);

}  // namespace uk
}  // namespace epctx

#endif
