/* SPDX-License-Identifier: Apache-2.0 */
// MatMulInteger, QLinearMatMul and com.microsoft QGemm on the int8
// micro-kernels (epctx_uk/qgemm.h) when B is a constant initializer.
//
// At create (PrepareMatMulInteger, PrepareQLinearMatMul, PrepareQGemm) B
// [K][N] (each of its matrices when it is batched; QGemm's transB [N][K]
// as it is) is stored transposed, [N][K], the weight rows uk::QTile and
// uk::QDot read in place,
// with each row's signed sum (uk::QWeightSums), its last partial group of K
// (uk::QTails), b_zero_point per column in the signed domain and, for
// QLinearMatMul and QGemm with constant float scales, the multipliers
// a_scale * b_scale[n] / y_scale (QGemm: times alpha; without y_scale its
// float output's alpha * a_scale * b_scale[n]). The tile, dot and requantisation kernels
// are chosen there, by cpuid (VNNI or portable).
//
// At Run, rows of A (INT8 read as unsigned: XOR 0x80) are packed 48 at a
// time into a panel (uk::QPackRows), every 8 rows of B^T sweep it, and the
// raw sums become ONNX's accumulators (qgemm.h):
//   acc[m][n] = raw - xz * wsum[n] - wz[n] * colsum[m] + K * xz * wz[n]
// in wrapping int32 -- the same value mod 2^32 as the reference loop's
// sum (a - a_zp)(b - b_zp), so MatMulInteger's int32 outputs are its bits;
// QLinearMatMul requantises float(acc) * mult[n] rounded half to even, as
// the reference's SaturateRound does, so its bytes are the reference's too.
// QGemm adds its int32 bias C[n] to acc (wrapping) first, and its float
// output is float(acc) * mult[n].
//
// A 2-D B serves all of A's rows (every batch) as one product; a batched B
// one product per output matrix, as the reference loop walks them. Shapes
// the state does not serve (another B, a B or b_zero_point that is not the
// constant it was made for, a per-row a_zero_point, per-batch zero points
// or scales) stay on the reference loop in qlinear.cc.
#ifndef EPCTX_KERNELS_QMATMUL_H
#define EPCTX_KERNELS_QMATMUL_H

#include <cstdint>

#include "epctx_uk/qgemm.h"
#include "kernels/kernel.h"
#include "kernels/linalg.h"

namespace epctx {
namespace kern {

// What the prepares leave; lives as long as the session, read-only.
struct QMatMulPrepared {
  const void* b;    // the state serves only this B ([..., K, N]),
  const void* bzp;  // this b_zero_point data (nullptr: none)
  const void* as;   // and, for mult, these a_scale, b_scale, y_scale data
  const void* bs;
  const void* ys;
  int64_t K, N;
  int64_t matrices;      // B's batch size (1: 2-D)
  uint8_t wflip;         // 0x80: UINT8 B, read as b - 128
  const uint8_t* wt;     // [matrices][N][K]: B transposed, raw bytes
  const int32_t* wsum;   // [matrices][N]: sum over K of int8(wt[n][k] ^ wflip)
  const uint32_t* tail;  // [matrices][N]: rows' last partial groups; nullptr when K % 4 == 0
  const int32_t* wz;     // [N]: b_zero_point - (wflip ? 128 : 0)
  bool wz_uniform;       // every wz[n] equal
  bool wz_any;           // some wz[n] != 0 (the panel's column sums are needed)
  const float* mult;     // [N], QLinearMatMul / QGemm with constant float scales; else nullptr
  uk::QTileFn tile;
  uk::QDotFn dot;
  uk::QRequantFn requant;
};

// The state ctx.prepared() holds when it was made for this B (as planned
// in p) and this b_zero_point input (nullptr: absent); else nullptr.
const QMatMulPrepared* QMatMulPreparedFor(const KernelContext& ctx, const TensorRef& b,
                                          const TensorRef* bzp, const MatMulPlan& p);

// The state's multipliers when they were made from these scales' data.
// (ys nullptr: QGemm's float output, which has no y_scale).
const float* QMatMulPreparedMult(const QMatMulPrepared& pp, const TensorRef& as,
                                 const TensorRef& bs, const TensorRef* ys);

// What Y holds: the int32 accumulators (MatMulInteger), requantised
// bytes (QLinearMatMul, QGemm with y_scale) or float(acc) * mult[n]
// (QGemm without y_scale).
enum class QMatMulOut : uint8_t { kInt32, kBytes, kFloat };

// One Run's operands.
struct QMatMulOperands {
  const void* a;
  int32_t a_dtype;
  int32_t azp;  // a_zero_point (per tensor) as read
  void* y;
  QMatMulOut out;
  const float* mult;    // [N] (bytes, float)
  int32_t zp, lo, hi;   // y_zero_point and the output dtype's range (bytes)
  const int32_t* bias;  // [N] added to every accumulator, or nullptr
};

// Computes Y (shaped by p) on the micro-kernels with pp's prepared B.
Status RunQMatMulPanels(KernelContext& ctx, const QMatMulPrepared& pp, const MatMulPlan& p,
                        const QMatMulOperands& op);

}  // namespace kern
}  // namespace epctx

#endif
