/* SPDX-License-Identifier: Apache-2.0 */
// Convolution taps that only ever read padding, cut off the kernel.
//
// With static shapes the compiler knows, per spatial axis, which kernel
// taps land inside the input for at least one output position. A tap that
// never does multiplies only padding zeros; when such taps sit at the ends
// of the kernel they are removed: the weights are sliced, kernel_shape
// shrinks, the pads shrink by the dilated width removed (so every output
// keeps its position and value), and an axis left with one tap gets
// dilation 1. Results are unchanged; the work falls by the share of dead
// taps (DeepLabV3's atrous rates 24 and 36 on a 16 x 16 map: 3x3 -> 1x1).
//
// Taken: Conv (ai.onnx) with a static input, constant float32 weights that
// are not a graph input, explicit pads (auto_pad absent or NOTSET), any
// number of spatial axes and groups. An axis whose cut would need a
// negative pad keeps its kernel; a kernel with no live tap stays as it is.
// Weights shared with another node are copied under a new name.
#ifndef EPCTX_HOST_DEAD_TAPS_H
#define EPCTX_HOST_DEAD_TAPS_H

#include <cstddef>
#include <cstdint>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

// The live taps of one axis: [first, last], or first > last when none.
struct LiveTaps {
  int64_t first, last;
};
LiveTaps LiveTapsOf(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                    int64_t pad_begin);

// Cuts the dead end taps of every eligible Conv of `graph` (info describes
// it); returns how many convolutions changed. Output shapes stay the same.
size_t TrimDeadTaps(onnx::GraphProto& graph, const GraphInfo& info);

}  // namespace host
}  // namespace epctx

#endif
