/* SPDX-License-Identifier: Apache-2.0 */
// QDQ Linear layers, fused for the CPU: one com.microsoft QGemm, the op
// ONNX Runtime's QDQ transformer writes for a quantized Gemm.
//
// torch's FX export (and onnxruntime's quantize_static) writes each
// quantized Linear as DequantizeLinear(x) -> MatMul(DequantizeLinear of
// int8 weights) -> Add(DequantizeLinear of an int32 bias) ->
// QuantizeLinear, or the same around a Gemm: run as written, the CPU
// dequantises the weights on every run and multiplies in float32 on an
// unprepared B. QGemm keeps x, W and y integers and runs on the prepared
// int8 panels (kernels/qmatmul.h), the bias added to the accumulators.
//
// Taken: a MatMul (ai.onnx) whose A is a DequantizeLinear of a non-constant
// x with constant per-tensor scale and zero point and a static shape of
// rank 2 or more, whose B is a DequantizeLinear of a 2-D INT8/UINT8
// initializer [K, N] (scale per tensor or per column, axis 1), with an
// optional bias: its only reader an Add of a [N] float32 constant or a
// DequantizeLinear of an INT32 constant (rescaled into x_scale *
// w_scale[n] and rounded when its scale differs); or a Gemm of the same
// operands (transA 0, any transB with the weights' axis on N, beta 1 with
// a [N] bias C). The result's only reader a QuantizeLinear with constant
// per-tensor parameters gives a QGemm with y_scale (its output is that
// QuantizeLinear's), otherwise the QGemm writes the float result. An x of
// rank above 2 is reshaped to [rows, K] and the result back (Reshape is a
// view on the CPU). The DequantizeLinear nodes stay while other nodes read
// them. Run on graphs the CPU runs whole (--ep none).
#ifndef EPCTX_HOST_FUSE_QDQ_MATMUL_H
#define EPCTX_HOST_FUSE_QDQ_MATMUL_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Fuses every eligible QDQ MatMul and Gemm of the main graph; returns how
// many.
size_t FuseQdqMatMuls(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
