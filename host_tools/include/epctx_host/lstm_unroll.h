/* SPDX-License-Identifier: Apache-2.0 */
// LSTM unrolled into the primitive ops NPUs run (MatMul, Add, Mul, Sigmoid,
// Tanh, Concat, Reshape), so a backend without a recurrent unit still takes
// its multiply-accumulates. Only the plain, common form is unrolled: forward
// direction, default activations, no clip, no peepholes, no sequence_lens,
// input_forget 0, layout 0, static shapes, W/R/B constants, at most
// kMaxUnrollSteps steps; any other LSTM is left as it is (and stays on the
// CPU). One Split of X (a CPU node, no MACs) feeds the steps.
//
//   per step t, per gate g in (i, o, f, c) (ONNX's order):
//     a_g = X_t W_g^T + H R_g^T + (Wb_g + Rb_g)
//     i, o, f = Sigmoid(a_i, a_o, a_f); c~ = Tanh(a_c)
//     C = f * C + i * c~;  H = o * Tanh(C)
//   Y = Concat over t of H reshaped to [1, 1, B, hidden]; Y_h = H; Y_c = C.
#ifndef EPCTX_HOST_LSTM_UNROLL_H
#define EPCTX_HOST_LSTM_UNROLL_H

#include <cstddef>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

constexpr int64_t kMaxUnrollSteps = 64;

// Unrolls every eligible LSTM of info.graph (top level) in `graph`, the
// same graph; returns how many. Shape inference must run again afterwards.
size_t UnrollLstms(onnx::GraphProto& graph, const GraphInfo& info);

}  // namespace host
}  // namespace epctx

#endif
