/* SPDX-License-Identifier: Apache-2.0 */
// What RNN, GRU and LSTM share before any arithmetic: their attributes
// (direction, layout, hidden_size, clip, activations with their alpha/beta
// lists, linear_before_reset, input_forget) and the shapes of their inputs,
// read and checked once into an RnnSetup (rnn_setup.cc). The cells
// themselves are in rnn.cc.
//
// Activation alpha/beta values are consumed in the order of the activation
// functions, each function taking only the values it uses; a function whose
// values run out takes ORT's default (LeakyRelu 0.01, HardSigmoid 0.2/0.5,
// Elu 1.0, every other 0). ORT's GRU and LSTM do exactly this; ORT's RNN
// instead indexes alpha/beta by direction, which differs only when the
// activations mix functions with and without parameters.
#ifndef EPCTX_KERNELS_RNN_SETUP_H
#define EPCTX_KERNELS_RNN_SETUP_H

#include <cstdint>

#include "kernels/kernel.h"

namespace epctx {
namespace kern {

enum class Cell { kRnn, kGru, kLstm };

enum class Act : uint8_t {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Activation {
  Act kind = Act::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// Everything a cell needs; the tensor pointers are the kernel's inputs (nullptr
// when an optional input is absent) and live for the kernel call.
struct RnnSetup {
  Cell cell = Cell::kRnn;
  int64_t gates = 1;         // W/R rows per hidden unit: 1 (RNN), 3 (GRU), 4 (LSTM)
  int64_t dirs = 1;          // 2 when bidirectional
  bool reverse = false;      // direction == "reverse" (direction 1 of a
                             // bidirectional node always runs reversed)
  bool batch_major = false;  // layout == 1: X [batch, seq, input] and so on
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  float clip = 0.0f;                 // bound for gate pre-activations; 0 = no clip
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
  Activation act[2][3];              // per direction: f, g, h as the cell uses them
  int32_t dtype = 0;                 // float or double
  const TensorRef *x = nullptr, *w = nullptr, *r = nullptr, *b = nullptr;
  const TensorRef *lens = nullptr, *h0 = nullptr, *c0 = nullptr, *p = nullptr;
};

// Reads the attributes and inputs of an RNN/GRU/LSTM node and checks every
// shape against X, W and hidden_size. INVALID_GRAPH for bad attributes,
// INVALID_ARGUMENT for bad shapes or sequence lengths, NOT_IMPLEMENTED for
// element types other than float and double.
Status ReadRnnSetup(KernelContext& ctx, Cell cell, RnnSetup* s);

// Offsets (in elements) into the batch-major or sequence-major tensors.
inline int64_t XRow(const RnnSetup& s, int64_t t, int64_t b) {
  return s.batch_major ? b * s.seq + t : t * s.batch + b;
}
inline int64_t YOffset(const RnnSetup& s, int64_t t, int64_t d, int64_t b) {
  return (s.batch_major ? (b * s.seq + t) * s.dirs + d : (t * s.dirs + d) * s.batch + b) * s.hidden;
}
inline int64_t StateOffset(const RnnSetup& s, int64_t d, int64_t b) {
  return (s.batch_major ? b * s.dirs + d : d * s.batch + b) * s.hidden;
}

}  // namespace kern
}  // namespace epctx

#endif
