/* SPDX-License-Identifier: Apache-2.0 */
// Casts to the type their input already has, removed before partitioning.
//
// torch.onnx.export writes every quantized tensor as QuantizeLinear ->
// Cast(to uint8) -> DequantizeLinear: the Cast is an identity, but a
// backend that runs only float ops leaves it on the CPU and the graph
// falls apart into one partition per quantized op (ResNet-18: 41 Casts,
// 34 partitions).
//
// Taken: a Cast (ai.onnx) whose `to` equals its input's element type, as
// shape inference gives it or, for a QuantizeLinear output, as its zero
// point's type says (uint8 without one). Its readers read the input
// instead. When its output is a graph output, the input's producer writes
// that name instead (the graph's output names stay); a Cast from a graph
// input or initializer, or onto a value that is itself a graph output,
// stays. Graphs with subgraph bodies are left whole: a body may read any
// outer name.
#ifndef EPCTX_HOST_NOOP_CASTS_H
#define EPCTX_HOST_NOOP_CASTS_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Removes every no-op Cast of the model's main graph; returns how many.
size_t DropNoopCasts(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
