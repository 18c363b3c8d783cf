/* SPDX-License-Identifier: Apache-2.0 */
// Multiply-accumulate counts of ONNX nodes, from the shapes shape inference
// found: what the compile report uses to say how much of a model's
// arithmetic a backend takes.
#ifndef EPCTX_HOST_MACS_H
#define EPCTX_HOST_MACS_H

#include <cstdint>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

// Conv, ConvTranspose, Gemm, MatMul, LSTM, GRU and RNN count their
// multiply-accumulates; every other op, and any node whose shapes are not
// static, counts 0 (elementwise work is small next to these).
uint64_t NodeMacs(const onnx::NodeProto& node, const GraphInfo& info);

}  // namespace host
}  // namespace epctx

#endif
