/* SPDX-License-Identifier: Apache-2.0 */
// Multiply-accumulate counts of ONNX nodes, from the shapes the specialise
// stage found (after folding): what the compile report uses to say how much
// of a model's arithmetic a backend takes.
//
// Counted (one MAC = one multiply and one add):
//   MatMul, MatMulInteger, QLinearMatMul  output elements x K, with numpy
//                                         broadcasting of the batch dims,
//                                         whether B is a weight or an
//                                         activation
//   Gemm                                  M x N x K (transA / transB honoured)
//   Conv, ConvInteger, QLinearConv,       output elements x C_in/group x kernel
//   com.microsoft FusedConv
//   ConvTranspose                         input elements x C_out/group x kernel
//   LSTM, GRU, RNN                        steps x batch x directions x
//                                         gates*hidden x (input + hidden)
//   Einsum (2+ operands)                  (operands - 1) x the product of every
//                                         label's size (ellipsis dims broadcast)
// Every other op counts 0: elementwise work is small next to these. A
// counted op whose shapes are still unknown is reported as such
// (MacCount::known false), never as 0 MACs that look like a fact.
#ifndef EPCTX_HOST_MACS_H
#define EPCTX_HOST_MACS_H

#include <cstdint>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

struct MacCount {
  uint64_t macs = 0;
  bool known = true;  // false: a counted op whose shapes are not static
};

// Saturates at UINT64_MAX instead of wrapping on absurd shapes.
MacCount NodeMacs(const onnx::NodeProto& node, const GraphInfo& info);

}  // namespace host
}  // namespace epctx

#endif
