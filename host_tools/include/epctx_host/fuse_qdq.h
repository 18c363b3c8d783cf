/* SPDX-License-Identifier: Apache-2.0 */
// QDQ convolutions, fused for the CPU: one QLinearConv, as ONNX Runtime's
// QDQ transformer writes it.
//
// A quantized model (torch's FX export, onnxruntime's quantize_static)
// writes each convolution as DequantizeLinear(x) -> Conv(DequantizeLinear
// of int8 weights, DequantizeLinear of an int32 bias) -> [Relu] ->
// QuantizeLinear: run as written, the CPU dequantises the weights and packs
// them on every run and convolves in float32. QLinearConv keeps x, W and y
// integers and runs on the int8 panels (epctx_uk/qconv.h), its weights'
// sums prepared at session create.
//
// Taken: a 2-D Conv (ai.onnx) whose x is a DequantizeLinear with constant
// per-tensor scale and zero point, whose weights are a DequantizeLinear of
// an INT8/UINT8 initializer (scale per tensor or per output channel, axis
// 0), whose bias (if any) is a float32 constant or a DequantizeLinear of an
// INT32 constant (rescaled into x_scale * w_scale[c] and rounded when its
// scale differs), and whose only consumer is a QuantizeLinear with constant
// per-tensor parameters, or a Relu whose only consumer is one and whose
// zero point is the type's minimum (the clamp already drops negatives).
// The DequantizeLinear nodes stay while other nodes read them. Run on
// graphs the CPU runs whole (--ep none).
#ifndef EPCTX_HOST_FUSE_QDQ_H
#define EPCTX_HOST_FUSE_QDQ_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Fuses every eligible QDQ convolution of the main graph; returns how many.
size_t FuseQdqConvs(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
