// SPDX-License-Identifier: Apache-2.0
// Serialises a planned IrGraph as a vnpu command stream (vnpu.fbs).
#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace vnpu {

std::vector<uint8_t> Emit(const IrGraph& g) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const IrTensor& t : g.tensors)
    tensors.push_back(fb::CreateTensorDirect(fbb, t.name.c_str(), t.dtype, &t.shape, t.loc, t.index,
                                             t.offset, t.bytes()));
  std::vector<flatbuffers::Offset<fb::Op>> ops;
  for (const IrOp& o : g.ops) {
    const uint32_t in = o.ins.empty() ? 0 : uint32_t(o.ins[0]), out = uint32_t(o.out);
    flatbuffers::Offset<void> p;
    switch (o.kind) {
      case fb::OpParams::Conv2D:
      case fb::OpParams::Conv2DTaps:
        p = fb::CreateConv2D(fbb, in, uint32_t(o.weights), out, o.bias >= 0,
                             uint32_t(std::max(o.bias, 0)), o.kh, o.kw, o.sh, o.sw, o.pt, o.pl,
                             o.pb, o.pr, o.dh, o.dw, o.groups, o.act, o.alpha, o.beta)
                .Union();
        break;
      case fb::OpParams::Gemm:
      case fb::OpParams::GemmBlocked:
        p = fb::CreateGemm(fbb, in, uint32_t(o.weights), out, o.bias >= 0,
                           uint32_t(std::max(o.bias, 0)), o.m, o.k, o.n, o.act, o.alpha, o.beta)
                .Union();
        break;
      case fb::OpParams::Binary:
        p = fb::CreateBinaryDirect(fbb, o.binary, in, uint32_t(o.ins[1]), out, &o.a_strides,
                                   &o.b_strides)
                .Union();
        break;
      case fb::OpParams::Unary:
        p = fb::CreateUnary(fbb, o.act, in, out, o.alpha, o.beta).Union();
        break;
      case fb::OpParams::Pool:
        p = fb::CreatePool(fbb, o.pool, in, out, o.kh, o.kw, o.sh, o.sw, o.pt, o.pl, o.pb, o.pr,
                           o.count_include_pad)
                .Union();
        break;
      case fb::OpParams::Softmax: p = fb::CreateSoftmax(fbb, in, out, o.m, o.k, o.n).Union(); break;
      case fb::OpParams::Transpose:
        p = fb::CreateTransposeDirect(fbb, in, out, &o.perm).Union();
        break;
      case fb::OpParams::Concat: {
        std::vector<uint32_t> ins(o.ins.begin(), o.ins.end());
        p = fb::CreateConcatDirect(fbb, &ins, out, o.axis).Union();
        break;
      }
      case fb::OpParams::Copy: p = fb::CreateCopy(fbb, in, out).Union(); break;
      case fb::OpParams::ScaleShift:
        p = fb::CreateScaleShift(fbb, in, uint32_t(o.weights), uint32_t(o.bias), out, o.m, o.k, o.n)
                .Union();
        break;
      case fb::OpParams::Convert: p = fb::CreateConvert(fbb, in, out).Union(); break;
      case fb::OpParams::Reduce:
        p = fb::CreateReduce(fbb, o.reduce, in, out, o.m, o.k, o.n).Union();
        break;
      case fb::OpParams::LayerNorm:
        p = fb::CreateLayerNorm(fbb, in, out, o.weights >= 0, uint32_t(std::max(o.weights, 0)),
                                o.bias >= 0, uint32_t(std::max(o.bias, 0)), o.m, o.k, o.n, o.eps,
                                o.rms)
                .Union();
        break;
      case fb::OpParams::BatchMatMul:
        p = fb::CreateBatchMatMulDirect(fbb, in, uint32_t(o.ins[1]), out, &o.batch, &o.a_strides,
                                        &o.b_strides, o.m, o.k, o.n, o.a_rs, o.b_rs, o.trans_b,
                                        o.scale, o.addend >= 0, uint32_t(std::max(o.addend, 0)),
                                        o.addend >= 0 ? &o.c_strides : nullptr, o.act, o.alpha,
                                        o.beta)
                .Union();
        break;
      case fb::OpParams::Resize: {
        const IrOp::Resize& z = o.resize;
        p = fb::CreateResize(fbb, in, out, z.mode, z.coord, z.round, z.scale_h, z.scale_w, z.len_h,
                             z.len_w)
                .Union();
        break;
      }
      case fb::OpParams::Recurrent: {
        const IrOp::Rnn& z = o.rnn;
        auto u = [](int t) { return uint32_t(std::max(t, 0)); };
        p = fb::CreateRecurrent(fbb, z.lstm ? fb::RecurrentCell::LSTM : fb::RecurrentCell::GRU,
                                u(z.x), u(z.w), u(z.r), u(z.bias), z.rbh >= 0, u(z.rbh), z.h0 >= 0,
                                u(z.h0), z.c0 >= 0, u(z.c0), z.y >= 0, u(z.y), z.yh >= 0, u(z.yh),
                                z.yc >= 0, u(z.yc), uint64_t(z.seq), uint64_t(z.batch),
                                uint64_t(z.input), uint64_t(z.hidden), z.dirs, z.reverse, z.lbr)
                .Union();
        break;
      }
      case fb::OpParams::Pad:
      case fb::OpParams::PadMirror:
        p = fb::CreatePadDirect(fbb, in, out, &o.a_strides, o.alpha, o.pad_mode).Union();
        break;
      case fb::OpParams::StridedCopy:
        p = fb::CreateStridedCopyDirect(fbb, in, out, o.offset, &o.a_strides).Union();
        break;
      case fb::OpParams::ConvTranspose2D:
        p = fb::CreateConvTranspose2D(fbb, in, uint32_t(o.weights), out, o.bias >= 0,
                                      uint32_t(std::max(o.bias, 0)), o.kh, o.kw, o.sh, o.sw, o.pt,
                                      o.pl, o.pb, o.pr, o.dh, o.dw, o.oph, o.opw, o.groups, o.act,
                                      o.alpha, o.beta)
                .Union();
        break;
      case fb::OpParams::Quantize:
        p = fb::CreateQuantize(fbb, in, out, o.qs[2], o.qz[2]).Union();
        break;
      case fb::OpParams::Dequantize:
        p = fb::CreateDequantize(fbb, in, out, o.qs[0], o.qz[0]).Union();
        break;
      case fb::OpParams::DynamicQuantize:
        p = fb::CreateDynamicQuantize(fbb, in, out, uint32_t(o.weights), uint32_t(o.bias)).Union();
        break;
      case fb::OpParams::QConv2D:
        p = fb::CreateQConv2D(fbb, in, uint32_t(o.weights), out, o.bias >= 0,
                              uint32_t(std::max(o.bias, 0)), o.kh, o.kw, o.sh, o.sw, o.pt, o.pl,
                              o.pb, o.pr, o.dh, o.dw, o.groups, o.qz[0], o.zp_tensor >= 0,
                              uint32_t(std::max(o.zp_tensor, 0)), o.qz[1],
                              uint32_t(std::max(o.mult, 0)), o.qz[2], o.lo, o.hi)
                .Union();
        break;
      case fb::OpParams::QGemm:
        p = fb::CreateQGemm(fbb, in, uint32_t(o.weights), out, o.bias >= 0,
                            uint32_t(std::max(o.bias, 0)), o.m, o.k, o.n, o.qz[0], o.zp_tensor >= 0,
                            uint32_t(std::max(o.zp_tensor, 0)), o.qz[1],
                            uint32_t(std::max(o.mult, 0)), o.qz[2], o.lo, o.hi)
                .Union();
        break;
      case fb::OpParams::QBinary:
      case fb::OpParams::QBinaryClamped: {
        const bool clamped = o.kind == fb::OpParams::QBinaryClamped;
        p = fb::CreateQBinaryDirect(fbb, o.binary, in, uint32_t(o.ins[1]), out, &o.a_strides,
                                    &o.b_strides, o.qs[0], o.qz[0], o.qs[1], o.qz[1], o.qs[2],
                                    o.qz[2], clamped ? o.lo : 0, clamped ? o.hi : 0)
                .Union();
        break;
      }
      case fb::OpParams::QLut: p = fb::CreateQLut(fbb, in, out, uint32_t(o.table)).Union(); break;
      case fb::OpParams::QMaxPool:
        p = fb::CreateQMaxPool(fbb, in, out, o.kh, o.kw, o.sh, o.sw, o.pt, o.pl, o.pb, o.pr)
                .Union();
        break;
      case fb::OpParams::QConcat: {
        std::vector<uint32_t> ins(o.ins.begin(), o.ins.end());
        p = fb::CreateQConcatDirect(fbb, &ins, out, o.axis).Union();
        break;
      }
      default:
        throw CompileError("vnpu: internal error: op without a kind in graph '" + g.name + "'");
    }
    ops.push_back(fb::CreateOp(fbb, o.kind, p));
  }
  // 1.1 features (float16 edges, CONVERT, CONV_TRANSPOSE2D) make a 1.1 stream,
  // so a 1.0 driver's refusal names the version it lacks.
  uint16_t minor = 0;
  for (const IrTensor& t : g.tensors)
    if (t.dtype != fb::DType::FLOAT32) minor = 1;
  for (const IrOp& o : g.ops)
    if (o.kind == fb::OpParams::Convert || o.kind == fb::OpParams::ConvTranspose2D) minor = 1;
  // 1.2: FLOAT16 WEIGHT tensors (a 1.1 driver refuses them by location).
  for (const IrTensor& t : g.tensors)
    if (t.dtype != fb::DType::FLOAT32 && t.loc == fb::Location::WEIGHT) minor = 2;
  if (UsesInt8(g)) minor = 2;  // the int8 level
  // 1.3: the HARD_SWISH activation (a 1.2 driver refuses the unknown kind).
  for (const IrOp& o : g.ops)
    if (o.act == fb::Activation::HARD_SWISH) minor = 3;
  // 1.4: CONV2D_TAPS (a 1.3 driver refuses the unknown op type).
  for (const IrOp& o : g.ops)
    if (o.kind == fb::OpParams::Conv2DTaps) minor = 4;
  // 1.5: the LEAKY_RELU_MAX activation (a 1.4 driver refuses the unknown kind).
  for (const IrOp& o : g.ops)
    if (o.act == fb::Activation::LEAKY_RELU_MAX) minor = 5;
  // 1.6: GEMM_BLOCKED (a 1.5 driver refuses the unknown op type).
  for (const IrOp& o : g.ops)
    if (o.kind == fb::OpParams::GemmBlocked) minor = 6;
  // 1.7: the SWISH activation (a 1.6 driver refuses the unknown kind).
  for (const IrOp& o : g.ops)
    if (o.act == fb::Activation::SWISH) minor = 7;
  // 1.8: the transformer level (a 1.7 driver refuses the unknown kinds and
  // op types).
  for (const IrOp& o : g.ops)
    if (uint32_t(o.act) > uint32_t(fb::Activation::SWISH) || o.kind == fb::OpParams::Reduce ||
        o.kind == fb::OpParams::LayerNorm || o.kind == fb::OpParams::BatchMatMul ||
        o.kind == fb::OpParams::StridedCopy || o.kind == fb::OpParams::Resize ||
        o.kind == fb::OpParams::Pad || o.kind == fb::OpParams::Recurrent)
      minor = 8;
  // 1.9: negative STRIDED_COPY strides and the PAD modes (a 1.8 driver
  // refuses them).
  for (const IrOp& o : g.ops) {
    if (o.kind == fb::OpParams::PadMirror) minor = 9;
    if (o.kind == fb::OpParams::StridedCopy)
      for (int64_t s : o.a_strides)
        if (s < 0) minor = 9;
  }
  // 1.10: QBINARY_CLAMPED (a 1.9 driver refuses the unknown op type).
  for (const IrOp& o : g.ops)
    if (o.kind == fb::OpParams::QBinaryClamped) minor = 10;
  auto root = fb::CreateGraphDirect(fbb, 1, minor, g.name.c_str(), &tensors, g.arena_size, &ops);
  fb::FinishGraphBuffer(fbb, root);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
