/* SPDX-License-Identifier: Apache-2.0 */
// The validator's state and checks that every op uses (vnpu_validate.cc
// checks the tensors, bindings and float ops, vnpu_validate_int8.cc the
// int8 ops). A Checker lives for one ValidateGraph call; it borrows the
// graph, the message buffer and the host, and owns output_written until
// ValidateGraph frees it.
#ifndef EPCTX_VNPU_VALIDATE_H
#define EPCTX_VNPU_VALIDATE_H

#include <cstdint>

#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {

// Limits that keep every index computation of the kernels inside int64.
constexpr int64_t kMaxDim = int64_t(1) << 31;
constexpr uint32_t kMaxWindow = 1u << 16;  // kernel, stride, pad, dilation
constexpr uint32_t kMaxRank = 8;

inline bool Mul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// The window of a CONV2D or QCONV2D, and the shapes it implies.
struct ConvWindow {
  uint32_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g;
  template <typename C>
  static ConvWindow Of(const C* c) {
    return {c->kernel_h(),   c->kernel_w(),   c->stride_h(),   c->stride_w(),
            c->pad_top(),    c->pad_left(),   c->pad_bottom(), c->pad_right(),
            c->dilation_h(), c->dilation_w(), c->groups()};
  }
};

// What every op's check reads and reports through: the graph, the op being
// checked (named in messages) and which outputs the ops write.
struct Checker {
  const fb::Graph* g;
  uint64_t weights_size;
  const char* graph;
  Msg& msg;
  const epctx_hal_host& host;
  uint32_t op = 0;
  const char* op_name = "";
  // One flag per OUTPUT(k): set when an op writes it, so a stream that
  // leaves an output unwritten (whose bytes would be whatever the caller's
  // buffer held) is refused.
  uint8_t* output_written = nullptr;
  // Every op but CONVERT computes in float32: references are FLOAT32
  // tensors unless the op allows float16 (any_dtype).
  bool any_dtype = false;

  // Tensor i of the graph (i < num_tensors()), its rank and dimension d.
  // Out of line, like the checks: one copy serves both files.
  uint32_t num_tensors() const;
  const fb::Tensor* T(uint32_t i) const;
  uint32_t Rank(uint32_t i) const;
  int64_t Dim(uint32_t i, uint32_t d) const;

  int Fail() { return EPCTX_INVALID_GRAPH; }
  // Starts the message about the current op: graph, op index and op_name.
  Msg& OpErr();

  // The checks below (vnpu_validate.cc) return false with the op's message
  // written, naming `field`.
  // Tensor t exists and is FLOAT32 (or a FLOAT16 WEIGHT, or any with any_dtype).
  bool Ref(uint32_t t, const char* field);
  // A reference whose dtype must be one of `mask` (bits DTypeBit).
  bool RefD(uint32_t t, uint32_t mask, const char* field);
  // A reference the op writes: ARENA or OUTPUT, marked in output_written.
  bool WritableD(uint32_t t, uint32_t mask, const char* field);
  bool Writable(uint32_t t, const char* field);
  bool RankIs(uint32_t t, uint32_t r, const char* field);
  bool ElemsIs(uint32_t t, uint64_t n, const char* field);
  // A kernel, stride, pad or dilation: at most kMaxWindow, 0 if zero_ok.
  bool Window(uint32_t v, bool zero_ok, const char* field);
  bool Same(int64_t found, int64_t expected, const char* field);
  // The input, output and window of a CONV2D or QCONV2D agree.
  bool ConvShape(uint32_t x, uint32_t y, const ConvWindow& k);
  // Broadcast strides of BINARY / QBINARY: one per output dimension, and the
  // largest index each reaches inside its source.
  int Strides(uint32_t out, uint32_t a, uint32_t b, const flatbuffers::Vector<int64_t>* sa,
              const flatbuffers::Vector<int64_t>* sb);
};

// The checks of the int8-level ops (stream 1.2; vnpu_validate_int8.cc),
// which pass every other op type to the transformer level's (stream 1.8;
// vnpu_validate_transformer.cc), which refuses an unknown op type.
int ValidateInt8Op(Checker& ck, const fb::Op* o);
int ValidateTransformerOp(Checker& ck, const fb::Op* o);

}  // namespace vnpu
}  // namespace epctx

#endif
