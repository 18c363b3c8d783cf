/* SPDX-License-Identifier: Apache-2.0 */
// The vnpu compiler's intermediate form: the command stream before memory
// planning and serialisation. Lowering (lower.cc) builds it from ONNX nodes,
// the memory planner (memory_planner.cc) gives every ARENA tensor an offset,
// and emit.cc writes it as a vnpu.fbs flatbuffer.
#ifndef EPCTX_HOST_VNPU_IR_H
#define EPCTX_HOST_VNPU_IR_H

#include <cstdint>
#include <string>
#include <vector>

#include <epctx_host/backend.h>

#include "vnpu_generated.h"

namespace epctx {
namespace host {
namespace vnpu {

namespace fb = ::epctx::vnpu::fb;

struct IrTensor {
  std::string name;
  std::vector<int64_t> shape;
  fb::Location loc = fb::Location::ARENA;
  uint32_t index = 0;                    // INPUT / OUTPUT
  uint64_t offset = 0;                   // ARENA (after planning) / WEIGHT
  int alias_of = -1;                     // ARENA tensor sharing this one's bytes (reshape)
  fb::DType dtype = fb::DType::FLOAT32;  // FLOAT16 only for INPUT / OUTPUT / WEIGHT
  uint64_t bytes() const {
    uint64_t n = dtype == fb::DType::FLOAT16                               ? 2
                 : (dtype == fb::DType::INT8 || dtype == fb::DType::UINT8) ? 1
                                                                           : 4;
    for (int64_t d : shape) n *= uint64_t(d);
    return n;
  }
};

// One op; only the fields of its kind are meaningful.
struct IrOp {
  fb::OpParams kind = fb::OpParams::NONE;
  std::vector<int> ins;  // data inputs (CONCAT: all), then weights/bias/scale/shift
  int out = -1;
  fb::Activation act = fb::Activation::NONE;  // CONV2D/GEMM fused, UNARY kind
  float alpha = 0.f, beta = 0.f;
  int weights = -1, bias = -1;  // CONV2D / GEMM / SCALE_SHIFT (scale, shift)
  uint32_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1,
           groups = 1, oph = 0, opw = 0;  // oph/opw: CONV_TRANSPOSE2D output padding
  uint64_t m = 0, k = 0, n = 0;           // GEMM; SOFTMAX / SCALE_SHIFT outer, axis, inner
  fb::BinaryKind binary = fb::BinaryKind::ADD;
  std::vector<int64_t> a_strides, b_strides;
  fb::PoolKind pool = fb::PoolKind::MAX_POOL;
  bool count_include_pad = false;
  std::vector<uint32_t> perm;
  uint32_t axis = 0;
  // int8 level: scales and zero points of [a / x, b / w, y]; the clamp of a
  // requantised output; per-channel multipliers (QCONV2D/QGEMM), the input
  // zero point as a tensor (dynamic), the lookup table (QLUT). A
  // DYNAMIC_QUANTIZE writes its scale to `weights` and zero point to `bias`.
  float qs[3] = {1.f, 1.f, 1.f};
  int32_t qz[3] = {0, 0, 0};
  int32_t lo = 0, hi = 0;
  int mult = -1, zp_tensor = -1, table = -1;
  // Transformer level (stream 1.8). REDUCE: kind over [m, k, n] (outer,
  // axis, inner). LAYER_NORM: [m, k, n], scale in `weights`, bias in
  // `bias`, eps, rms. BATCH_MATMUL: ins {a, b}, batch dims, a_strides and
  // b_strides per batch dim, a_rs / b_rs, trans_b, scale (alpha), the
  // addend and its strides (batch dims, then row and column), m/k/n, the
  // activation in act/alpha/beta. STRIDED_COPY: offset, a_strides. PAD:
  // begins in a_strides, the value in alpha, pad_mode.
  fb::ReduceKind reduce = fb::ReduceKind::SUM;
  fb::PadMode pad_mode = fb::PadMode::CONSTANT;
  std::vector<int64_t> batch, c_strides;
  uint64_t a_rs = 0, b_rs = 0, offset = 0;
  bool trans_b = false, rms = false;
  float scale = 1.f, eps = 0.f;
  int addend = -1;
  // RESIZE: mode, coordinates and each axis's scale and length.
  struct Resize {
    fb::ResizeMode mode = fb::ResizeMode::NEAREST;
    fb::ResizeCoord coord = fb::ResizeCoord::HALF_PIXEL;
    fb::ResizeRound round = fb::ResizeRound::PREFER_FLOOR;
    float scale_h = 1.f, scale_w = 1.f, len_h = 1.f, len_w = 1.f;
  } resize;
  // RECURRENT: its tensors (-1: absent) and sizes.
  struct Rnn {
    bool lstm = true, reverse = false, lbr = false;
    int x = -1, w = -1, r = -1, bias = -1, rbh = -1, h0 = -1, c0 = -1, y = -1, yh = -1, yc = -1;
    int64_t seq = 0, batch = 0, input = 0, hidden = 0;
    uint32_t dirs = 1;
  } rnn;
};

// Calls f(int& id) for every tensor an op names (inputs, output, weights,
// tables, recurrent states), -1 (absent) skipped.
template <typename F>
void ForEachTensor(IrOp& op, F f) {
  for (int& t : op.ins)
    if (t >= 0) f(t);
  for (int* t : {&op.out, &op.weights, &op.bias, &op.mult, &op.zp_tensor, &op.table, &op.addend,
                 &op.rnn.x, &op.rnn.w, &op.rnn.r, &op.rnn.bias, &op.rnn.rbh, &op.rnn.h0, &op.rnn.c0,
                 &op.rnn.y, &op.rnn.yh, &op.rnn.yc})
    if (*t >= 0) f(*t);
}

struct IrGraph {
  std::string name;
  std::vector<IrTensor> tensors;
  std::vector<IrOp> ops;
  uint64_t arena_size = 0;
};

// Lowers a partition to ops over INPUT/OUTPUT/ARENA/WEIGHT tensors, packing
// weights into `weights`. Throws CompileError naming the node.
IrGraph Lower(const Partition& partition, const GraphInfo& info, WeightStore& weights);

// Drops the tensors no op names (INPUT / OUTPUT ones stay), renumbering
// the rest in order.
void PruneTensors(IrGraph& g);

// Assigns every ARENA tensor an offset and sets arena_size (see the header
// comment of memory_planner.cc for the algorithm).
void PlanMemory(IrGraph& g, uint32_t alignment);

// Serialises to a vnpu command stream (vnpu.fbs).
std::vector<uint8_t> Emit(const IrGraph& g);

// Whether g needs the int8 level (stream 1.2, hardware vnpu-1.1, SDK 1.1).
inline bool UsesInt8(const IrGraph& g) {
  for (const IrTensor& t : g.tensors)
    if (t.dtype == fb::DType::INT8 || t.dtype == fb::DType::UINT8 || t.dtype == fb::DType::INT32)
      return true;
  return false;
}

// Whether a QBINARY's [lo, hi] is narrower than its output dtype's range
// (a fused Relu / Clip: stream 1.10's QBINARY_CLAMPED).
inline bool QBinaryClamps(const IrGraph& g, const IrOp& o) {
  const bool is_signed = g.tensors[size_t(o.out)].dtype == fb::DType::INT8;
  return o.lo > (is_signed ? -128 : 0) || o.hi < (is_signed ? 127 : 255);
}

// Why the vnpu cannot run `node` ("" when it can).
std::string Unsupported(const onnx::NodeProto& node, const GraphInfo& info);

}  // namespace vnpu
}  // namespace host
}  // namespace epctx

#endif
