/* SPDX-License-Identifier: Apache-2.0 */
// Nodes that copy their input at inference, removed before partitioning.
//
// An exported transformer keeps torch's Dropout layers (an identity at
// inference, or with p = 0) and pads each block's input to a multiple of the window size
// with a Pad whose amounts fold to zero when the size already is one
// (swin_t at 224x224: 24 Dropouts, 15 Pads). A backend without those ops
// leaves them on the CPU, and each one splits a partition in two.
//
// Taken (ai.onnx only):
//   Dropout  whose mask output nothing reads, without training_mode or
//            with a constant false one (and no is_test = 0 of opset 1-6),
//            or with a constant ratio of 0 (torch exports p = 0 dropouts
//            with training_mode true: every element kept, scale 1);
//   Pad      whose pads are a constant (input or, before opset 11,
//            attribute) of zeros.
// Their readers read the input instead; a graph output keeps its name
// (fusion.h, BypassIdentities). Graphs with subgraph bodies are left whole.
#ifndef EPCTX_HOST_INFERENCE_NOOPS_H
#define EPCTX_HOST_INFERENCE_NOOPS_H

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Removes every inference no-op of the model's main graph; returns how many.
size_t DropInferenceNoops(onnx::ModelProto& model);

}  // namespace host
}  // namespace epctx

#endif
