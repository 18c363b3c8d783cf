/* SPDX-License-Identifier: Apache-2.0 */
// Transposes of dequantised constant weights, moved onto the constant.
//
// torch.onnx.export writes a quantized nn.Linear as DequantizeLinear(int8
// W [out, in]) -> Transpose -> MatMul: the MatMul's B is then computed, not
// a constant, and a backend that takes only constant weights leaves the
// layer on the CPU (a 4-layer encoder's 24 Linear layers).
//
// Taken: a Transpose (ai.onnx) whose input is read by it alone and is a
// DequantizeLinear of an INT8 / UINT8 / INT32 initializer with constant
// scale and zero point (per tensor, or per index of `axis`). It becomes one
// DequantizeLinear of a new initializer holding the transposed integers,
// its axis moved with the permutation; the weights stay integers (as fold
// keeps DequantizeLinear). Graphs with subgraph bodies are left whole.
#ifndef EPCTX_HOST_TRANSPOSE_DQ_H
#define EPCTX_HOST_TRANSPOSE_DQ_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Rewrites every such Transpose of the main graph; returns how many.
size_t TransposeDequantizedConstants(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
