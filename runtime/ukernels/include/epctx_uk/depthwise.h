/* SPDX-License-Identifier: Apache-2.0 */
// Depthwise convolution with channels in vector lanes, for small maps.
//
// Row by row (rows.h), a 3x3 on a 14x14 map fills one 16-float vector with
// 14 columns at best and pays each row's setup for 126 multiply-adds; ONNX
// Runtime's NCHWc kernels put 16 channels in the lanes instead. This does
// the same for 16 planes at a time: it transposes them into a zero-padded
// block of [padded row][padded column][16 channels], sums every output
// pixel's taps as one vector multiply-add each (16 pixels at once), and
// transposes the sums back into the 16 output planes. Any stride, dilation
// and padding; the padding costs nothing but the zeros in the block.
//
// AVX-512 (in-register 16 x 16 transposes) and AVX2 (two halves of 8
// lanes, 8 x 8 transposes); elsewhere DepthwiseLanesFloats is 0 and callers
// keep their row paths. Re-entrant.
#ifndef EPCTX_UK_DEPTHWISE_H
#define EPCTX_UK_DEPTHWISE_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {

struct DwShape {
  int64_t H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
};

// The padded block's floats (128 KiB): taller maps run in bands of output
// rows whose input rows it holds.
constexpr uint64_t kDwLanesMaxFloats = 32768;

// Work floats DepthwiseLanes needs for s (the block, the weights, and the
// bias), or 0 when it does not run: no AVX-512 (isa resolved), more than 49
// taps, more than 64 output columns (rows that wide vectorise well), a
// non-positive or absurd dimension, or a block that cannot hold the input
// rows of one output row.
uint64_t DepthwiseLanesFloats(const DwShape& s, Isa isa = Isa::kAuto);

// Whether this library has lanes kernels for isa (resolved) at all: what a
// caller preparing weights for GroupLanes before it knows the map asks.
bool HasLanesKernels(Isa isa = Isa::kAuto);

// nc channels (1..16): channel c's input plane (H x W) at x + c * x_cs,
// its tap t = kh * KW + kw at w[c * w_cs + t * w_ts], its bias bias[c]
// (none: bias nullptr), its output plane (OH x OW) at y + c * y_cs. work:
// DepthwiseLanesFloats(s, isa) floats, private to the caller.
void DepthwiseLanes(const DwShape& s, int nc, const float* x, int64_t x_cs, const float* w,
                    int64_t w_cs, int64_t w_ts, const float* bias, float* y, int64_t y_cs,
                    float* work, Isa isa = Isa::kAuto);

// A grouped convolution of 16 input and 16 output channels per group
// (RegNet's group width 16) the same way, one group per call: each output
// pixel and tap is 16 multiply-adds of a broadcast input channel by the
// 16 output channels' weights. Weights of output channel o, input channel
// i, tap t at w[(o / 8) * obs + (o % 8) * ocs + i * ics + t * ts] (ONNX's
// [O][I][KH][KW]: obs 8 * ocs; the vnpu's blocked layout: ocs 1).
//
// `gathered`, when set, replaces the layout: the group's weights already in
// the order the kernel reads them (GatherGroupLaneWeights, done once when a
// session is created), so a call gathers nothing.
struct LaneWeights {
  const float* w;
  int64_t obs, ocs, ics, ts;
  const float* gathered = nullptr;
};
// Floats of one group's gathered weights for `taps` kernel taps.
constexpr uint64_t GroupLaneWeightsFloats(int64_t taps) { return uint64_t(taps) * 16 * 16; }
// One group's weights (w, taps of them) into dst in the kernel's order.
void GatherGroupLaneWeights(const LaneWeights& w, int64_t taps, float* dst);
uint64_t GroupLanesFloats(const DwShape& s, Isa isa = Isa::kAuto);
void GroupLanes(const DwShape& s, const float* x, int64_t x_cs, const LaneWeights& w,
                const float* bias, float* y, int64_t y_cs, float* work, Isa isa = Isa::kAuto);

}  // namespace uk
}  // namespace epctx

#endif
