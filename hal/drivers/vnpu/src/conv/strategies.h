/* SPDX-License-Identifier: Apache-2.0 */
// The conv strategies, one file each, and the row packers they share
// (pack.cc). Every strategy has one entry, a ConvEntry (plan.h); PlanConv
// alone decides where each applies (its *Applies predicate) and how much
// workspace it needs (its *Floats function), from the same Shape.
#ifndef EPCTX_VNPU_CONV_STRATEGIES_H
#define EPCTX_VNPU_CONV_STRATEGIES_H

#include "conv/plan.h"

namespace epctx {
namespace vnpu {

// dense.cc
constexpr int64_t kDenseKc = 512;  // K rows per packed B chunk
// Weights of a group, or its input planes, larger than this (bytes) do
// not stay in L2 while the pixel blocks sweep them: then kDenseMaxGroup
// blocks are packed per chunk of kDenseGroupKc rows (a 384 KiB slot).
constexpr int64_t kDenseL2Bytes = int64_t(1) << 20;
constexpr int64_t kDenseMaxGroup = 8;
constexpr int64_t kDenseGroupKc = 256;
// Units a dense conv offers the threads at least, where its output
// channels allow: fewer pixel block groups are cut across the channels.
constexpr int64_t kDenseMinUnits = 8;
void RunDense(const ConvCall& call);

// dense_rows.cc
bool DenseRowsApplies(const Shape& s);
uint64_t DenseRowsFloats(const Shape& s);
void RunDenseRows(const ConvCall& call);

// shifted.cc
bool ShiftApplies(const Shape& s);
bool ShiftPackApplies(const Shape& s);
uint64_t ShiftPackFloats(const Shape& s);
// K rows per chunk of a 1x1 kShifted pass that copies its rows into 24-column
// panels (OpPlan::panel), and the worker slot it needs.
constexpr int64_t kShiftPanelKc = 256;
uint64_t ShiftPanelFloats(const Shape& s);
void RunShifted(const ConvCall& call);
void RunShiftedPacked(const ConvCall& call);
// One image and group of a shifted-taps convolution over pixels [q0, q0 + n)
// (n >= 24): tap t reads B at xg + q + b0 + t * bstep with A at the tap's
// weights in call.L, all taps one tile call (slices). `packs`: copy the
// rows into the worker's slot first (ShiftPackApplies).
void ShiftedPass(const ConvCall& call, const float* xg, const float* wg, const float* bias,
                 float* yg, int64_t q0, int64_t n, int64_t taps, int64_t b0, int64_t bstep,
                 bool packs);

// row_shift.cc
bool RowShiftApplies(const Shape& s);
uint64_t EdgeWorkFloats(const Shape& s);
void RunRowShift(const ConvCall& call);

// transposed.cc
bool TransposedApplies(const Shape& s);
bool PackedRingApplies(const Shape& s);
uint64_t PackedRingFloats(const Shape& s);
void RunTransposed(const ConvCall& call);
void RunTransposedRing(const ConvCall& call);

// narrow.cc
bool NarrowApplies(const Shape& s);
void RunNarrow(const ConvCall& call);

// depthwise.cc
bool BandApplies(const Shape& s);
uint64_t BandFloats(const Shape& s);
bool S2Applies(const Shape& s);
uint64_t S2RingFloats(const Shape& s);
void RunDepthwise(const ConvCall& call);
void RunDepthwiseBand(const ConvCall& call);
void RunDepthwiseRing(const ConvCall& call);

// depthwise_lanes.cc: the workspace floats per slot, 0 where it does not
// run (not one channel in and out per group, no AVX-512, too large a map).
uint64_t LanesFloats(const Shape& s);
void RunDepthwiseLanes(const ConvCall& call);
// 16 -> 16 channels per group, either weight layout.
uint64_t GroupLanesFloatsOf(const Shape& s);
void RunGroupLanes(const ConvCall& call);

// pack.cc: the im2col geometry of one group (OpPlan::im2col packs rows
// [k0, k0 + kc) x pixels [p0, p0 + np) of it, rows `pitch` apart, columns
// past np zero-padded to whole strips), and row packers.
uk::Im2colShape Im2colOf(const Shape& s);
// Columns c0, c0 + 2, ... (n of them) of a row of W floats into ev and
// c0 + 1, c0 + 3, ... into od, zero outside [0, W).
void SplitCols(const float* src, int64_t W, int64_t c0, int64_t n, float* ev, float* od);
// Input row src (w floats) into dst as PW floats: pl zeros, the row, zeros
// (columns past PW dropped). Padded column j holds input column j - pl.
void PadRow(const float* src, int64_t w, int64_t pl, int64_t PW, float* dst);

}  // namespace vnpu
}  // namespace epctx

#endif
