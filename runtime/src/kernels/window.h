/* SPDX-License-Identifier: Apache-2.0 */
// Sliding-window geometry shared by Conv, ConvTranspose and the pools: reads
// kernel_shape/strides/dilations/pads/auto_pad and computes output sizes the
// way the ONNX spec (and ONNX Runtime, for ceil_mode) does.
//
// 1-D and 2-D windows are stored as 3-D ones with trivial leading axes (size
// 1, kernel 1, stride 1, no padding), so every consumer loops over three axes
// (depth, height, width).
#ifndef EPCTX_KERNELS_WINDOW_H
#define EPCTX_KERNELS_WINDOW_H

#include <cstdint>

#include "kernels/kernel.h"

namespace epctx {
namespace kern {

// Largest spatial size, kernel, stride, dilation or pad accepted; keeps every
// product of two of them inside int64.
constexpr int64_t kMaxWindowValue = int64_t{1} << 30;

// Spatial axes a window has at most.
constexpr uint32_t kMaxSpatial = 3;

struct Window {
  int64_t in[kMaxSpatial];
  int64_t kernel[kMaxSpatial];
  int64_t stride[kMaxSpatial];
  int64_t dilation[kMaxSpatial];
  int64_t pad_begin[kMaxSpatial];
  int64_t pad_end[kMaxSpatial];
  int64_t out[kMaxSpatial];

  // Spatial element counts; ReadWindowAttrs / CheckWindowOut keep both
  // inside int64.
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

// First Window axis used by `spatial` spatial axes.
inline uint32_t WindowBase(uint32_t spatial) { return kMaxSpatial - spatial; }

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// Reads and validates the window attributes shared by Conv, ConvTranspose
// and the pools for `spatial` (1 to 3) axes with input sizes `in`: the kernel
// (from the weights `kernel`, which a kernel_shape attribute must match, or
// null to require kernel_shape), strides, dilations, pads and auto_pad. Fills
// w->in, kernel, stride, dilation, and pad_begin/pad_end from the pads
// attribute (the caller resolves auto_pad); w->out is left at 1. Spatial
// axis i is w axis WindowBase(spatial) + i.
Status ReadWindowAttrs(KernelContext& ctx, uint32_t spatial, const int64_t* in,
                       const int64_t* kernel, Window* w, AutoPad* auto_pad);

// Fills w for `spatial` (1 to 3) axes with input sizes `in` and kernel sizes
// `kernel` (from the weights, or null to read the required kernel_shape
// attribute). Validates every attribute and that the (dilated) kernel fits the
// padded input. ceil_mode rounds the output size up, dropping a last window
// that would start in the end padding.
Status ComputeWindow(KernelContext& ctx, uint32_t spatial, const int64_t* in, const int64_t* kernel,
                     bool ceil_mode, Window* w);

// INVALID_ARGUMENT unless the product of w->out fits in int64 (an empty
// batch lets every spatial size be large).
Status CheckWindowOut(KernelContext& ctx, const Window& w);

// Reads the ints attribute `name` into out[0..n) when present with exactly n
// values, each in [min_value, kMaxWindowValue]; leaves out unchanged when
// absent.
Status ReadWindowInts(KernelContext& ctx, const char* name, uint32_t n, int64_t min_value,
                      int64_t* out);

// Output indices o in [0, out) with 0 <= o*stride + off < limit are
// [*lo, *hi) (empty when *lo == *hi). Used for input positions of a
// convolution row and for valid kernel taps of a window.
inline void ValidRange(int64_t off, int64_t stride, int64_t limit, int64_t out, int64_t* lo,
                       int64_t* hi) {
  int64_t l = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t h = limit - off <= 0 ? 0 : (limit - off - 1) / stride + 1;
  if (h > out) h = out;
  if (l > h) l = h;
  *lo = l;
  *hi = h;
}

}  // namespace kern
}  // namespace epctx

#endif
