// SPDX-License-Identifier: Apache-2.0
// Validation of the int8-level ops (stream 1.2): ValidateInt8Op, which the
// validator's op switch (vnpu_validate.cc) calls for every other op type.
//
// Beyond what every op gets (references, dtypes, shapes), the quantisation
// fields are checked here once, so the kernels never see them unchecked:
// scales finite and > 0, zero points and clamp bounds inside the dtype, and
// reductions short enough that an int32 accumulator cannot overflow.
#include "vnpu_validate.h"

namespace epctx {
namespace vnpu {
namespace {

constexpr uint64_t kMaxReduction = 32768;  // 32768 * 255 * 255 < 2^31
constexpr uint16_t kClampedMinor = 10;     // QBINARY_CLAMPED (stream 1.10)

bool Scale(Checker& ck, float v, const char* field) {
  // !(v > 0): NaN fails too; v - v != 0 for infinity.
  if (v > 0.0f && v - v == 0.0f) return true;
  ck.OpErr().s(field).s(" is not a finite scale > 0");
  return false;
}

bool ZeroPoint(Checker& ck, int32_t zp, fb::DType d, const char* field) {
  const int32_t lo = d == fb::DType::INT8 ? -128 : 0, hi = d == fb::DType::INT8 ? 127 : 255;
  if (zp >= lo && zp <= hi) return true;
  ck.OpErr().s(field).s(" = ").i(zp).s(" outside [").i(lo).s(", ").i(hi).s("] of ").s(DTypeName(d));
  return false;
}

// The requantisation fields of QCONV2D / QGEMM writing tensor `out`.
bool Requant(Checker& ck, uint32_t out, uint64_t channels, int32_t zp, int32_t lo, int32_t hi,
             uint32_t multipliers, uint64_t reduction) {
  if (reduction > kMaxReduction) {
    ck.OpErr()
        .s("reduction of ")
        .u(reduction)
        .s(" products exceeds ")
        .u(kMaxReduction)
        .s(" (int32 accumulator)");
    return false;
  }
  const fb::DType d = ck.T(out)->dtype();
  if (d == fb::DType::INT32) return true;
  if (!ZeroPoint(ck, zp, d, "output_zero_point") || !ZeroPoint(ck, lo, d, "output_min") ||
      !ZeroPoint(ck, hi, d, "output_max"))
    return false;
  if (lo > hi) {
    ck.OpErr().s("output_min ").i(lo).s(" > output_max ").i(hi);
    return false;
  }
  return ck.RefD(multipliers, kF32, "multipliers") &&
         ck.ElemsIs(multipliers, channels, "multipliers");
}

bool InputZp(Checker& ck, uint32_t x, int32_t zp, bool has_tensor, uint32_t tensor) {
  if (!has_tensor) return ZeroPoint(ck, zp, ck.T(x)->dtype(), "input_zero_point");
  return ck.RefD(tensor, DTypeBit(ck.T(x)->dtype()), "input_zp_tensor") &&
         ck.ElemsIs(tensor, 1, "input_zp_tensor");
}

int QConv(Checker& ck, const fb::QConv2D* c) {
  uint32_t x = c->input(), y = c->output(), w = c->weights();
  if (!ck.RefD(x, kQ8, "input") || !ck.WritableD(y, kQ8 | kI32, "output") ||
      !ck.RefD(w, kQ8, "weights"))
    return ck.Fail();
  if (!ck.ConvShape(x, y, ConvWindow::Of(c))) return ck.Fail();
  int64_t cin = ck.Dim(x, 1), cout = ck.Dim(y, 1), g = c->groups();
  uint64_t per, t;  // per output: Cin_g * KH * KW products
  if (!Mul(uint64_t(cin / g), uint64_t(c->kernel_h()) * c->kernel_w(), &per) ||
      !Mul(per, uint64_t(cout), &t) || !ck.ElemsIs(w, t, "weights"))
    return ck.Fail();
  if (!ZeroPoint(ck, c->weight_zero_point(), ck.T(w)->dtype(), "weight_zero_point") ||
      !InputZp(ck, x, c->input_zero_point(), c->has_input_zp_tensor(), c->input_zp_tensor()) ||
      !Requant(ck, y, uint64_t(cout), c->output_zero_point(), c->output_min(), c->output_max(),
               c->multipliers(), per))
    return ck.Fail();
  if (c->has_bias() &&
      (!ck.RefD(c->bias(), kI32, "bias") || !ck.ElemsIs(c->bias(), uint64_t(cout), "bias")))
    return ck.Fail();
  return EPCTX_OK;
}

int QGemm(Checker& ck, const fb::QGemm* c) {
  if (!ck.RefD(c->input(), kQ8, "input") || !ck.WritableD(c->output(), kQ8 | kI32, "output") ||
      !ck.RefD(c->weights(), kQ8, "weights"))
    return ck.Fail();
  uint64_t m = c->m(), k = c->k(), n = c->n(), mk, mn, kn;
  if (m > uint64_t(kMaxDim) || k > uint64_t(kMaxDim) || n > uint64_t(kMaxDim) || !Mul(m, k, &mk) ||
      !Mul(m, n, &mn) || !Mul(n, k, &kn)) {
    ck.OpErr().s("m/k/n out of range");
    return ck.Fail();
  }
  if (!ck.ElemsIs(c->input(), mk, "input") || !ck.ElemsIs(c->output(), mn, "output") ||
      !ck.ElemsIs(c->weights(), kn, "weights"))
    return ck.Fail();
  if (!ZeroPoint(ck, c->weight_zero_point(), ck.T(c->weights())->dtype(), "weight_zero_point") ||
      !InputZp(ck, c->input(), c->input_zero_point(), c->has_input_zp_tensor(),
               c->input_zp_tensor()) ||
      !Requant(ck, c->output(), n, c->output_zero_point(), c->output_min(), c->output_max(),
               c->multipliers(), k))
    return ck.Fail();
  if (c->has_bias() && (!ck.RefD(c->bias(), kI32, "bias") || !ck.ElemsIs(c->bias(), n, "bias")))
    return ck.Fail();
  return EPCTX_OK;
}

int QBinary(Checker& ck, const fb::QBinary* c, bool clamped) {
  if (!ck.RefD(c->a(), kQ8, "a")) return ck.Fail();
  const uint32_t same = DTypeBit(ck.T(c->a())->dtype());
  if (!ck.RefD(c->b(), same, "b") || !ck.WritableD(c->output(), same, "output")) return ck.Fail();
  if (c->kind() != fb::BinaryKind::ADD && c->kind() != fb::BinaryKind::MUL) {
    ck.OpErr().s("kind ").u(uint64_t(c->kind())).s(", expected ADD or MUL");
    return ck.Fail();
  }
  const fb::DType d = ck.T(c->a())->dtype();
  if (!Scale(ck, c->a_scale(), "a_scale") || !Scale(ck, c->b_scale(), "b_scale") ||
      !Scale(ck, c->y_scale(), "y_scale") || !ZeroPoint(ck, c->a_zero_point(), d, "a_zero_point") ||
      !ZeroPoint(ck, c->b_zero_point(), d, "b_zero_point") ||
      !ZeroPoint(ck, c->y_zero_point(), d, "y_zero_point"))
    return ck.Fail();
  if (!clamped && (c->output_min() || c->output_max())) {
    ck.OpErr()
        .s("output_min ")
        .i(c->output_min())
        .s(" and output_max ")
        .i(c->output_max())
        .s(", expected 0 and 0 (QBINARY_CLAMPED clamps)");
    return ck.Fail();
  }
  if (clamped) {
    if (!ZeroPoint(ck, c->output_min(), d, "output_min") ||
        !ZeroPoint(ck, c->output_max(), d, "output_max"))
      return ck.Fail();
    if (c->output_min() > c->output_max()) {
      ck.OpErr().s("output_min ").i(c->output_min()).s(" > output_max ").i(c->output_max());
      return ck.Fail();
    }
  }
  // The broadcast checks are BINARY's (same fields, same meaning).
  return ck.Strides(c->output(), c->a(), c->b(), c->a_strides(), c->b_strides());
}

int QMaxPool(Checker& ck, const fb::QMaxPool* c) {
  uint32_t x = c->input(), y = c->output();
  if (!ck.RefD(x, kQ8, "input") || !ck.WritableD(y, DTypeBit(ck.T(x)->dtype()), "output"))
    return ck.Fail();
  if (!ck.RankIs(x, 4, "input") || !ck.RankIs(y, 4, "output")) return ck.Fail();
  if (!ck.Same(ck.Dim(y, 0), ck.Dim(x, 0), "output batch") ||
      !ck.Same(ck.Dim(y, 1), ck.Dim(x, 1), "output channels"))
    return ck.Fail();
  if (!ck.Window(c->kernel_h(), false, "kernel_h") ||
      !ck.Window(c->kernel_w(), false, "kernel_w") ||
      !ck.Window(c->stride_h(), false, "stride_h") ||
      !ck.Window(c->stride_w(), false, "stride_w") || !ck.Window(c->pad_top(), true, "pad_top") ||
      !ck.Window(c->pad_left(), true, "pad_left") ||
      !ck.Window(c->pad_bottom(), true, "pad_bottom") ||
      !ck.Window(c->pad_right(), true, "pad_right"))
    return ck.Fail();
  // A window wholly inside the padding would have no element to take the
  // max of: pads smaller than the kernel rule it out.
  if (c->pad_top() >= c->kernel_h() || c->pad_bottom() >= c->kernel_h() ||
      c->pad_left() >= c->kernel_w() || c->pad_right() >= c->kernel_w()) {
    ck.OpErr().s("pads must be smaller than the kernel");
    return ck.Fail();
  }
  int64_t ph = ck.Dim(x, 2) + c->pad_top() + c->pad_bottom() - c->kernel_h();
  int64_t pw = ck.Dim(x, 3) + c->pad_left() + c->pad_right() - c->kernel_w();
  if (ph < 0 || pw < 0) {
    ck.OpErr().s("kernel larger than padded input");
    return ck.Fail();
  }
  int64_t sh = c->stride_h(), sw = c->stride_w(), oh = ck.Dim(y, 2), ow = ck.Dim(y, 3);
  // Floor mode only: with ceil mode a last window could start in the padding.
  if (oh != ph / sh + 1 || ow != pw / sw + 1) {
    ck.OpErr().s("output ").i(oh).s("x").i(ow).s(" does not follow from the input and window");
    return ck.Fail();
  }
  return EPCTX_OK;
}

int QConcat(Checker& ck, const fb::QConcat* c) {
  uint32_t y = c->output();
  if (!ck.WritableD(y, kQ8, "output")) return ck.Fail();
  uint32_t r = ck.Rank(y), axis = c->axis();
  if (!c->inputs() || c->inputs()->size() == 0 || axis >= r) {
    ck.OpErr().s("needs inputs and axis < rank ").u(r);
    return ck.Fail();
  }
  int64_t sum = 0;
  for (uint32_t i = 0; i < c->inputs()->size(); ++i) {
    uint32_t x = c->inputs()->Get(i);
    if (!ck.RefD(x, DTypeBit(ck.T(y)->dtype()), "inputs") || !ck.RankIs(x, r, "input"))
      return ck.Fail();
    for (uint32_t d = 0; d < r; ++d)
      if (d != axis && !ck.Same(ck.Dim(x, d), ck.Dim(y, d), "input dim")) return ck.Fail();
    sum += ck.Dim(x, axis);
  }
  return ck.Same(sum, ck.Dim(y, axis), "output axis dim") ? EPCTX_OK : ck.Fail();
}

}  // namespace

int ValidateInt8Op(Checker& ck, const fb::Op* o) {
  switch (o->params_type()) {
    case fb::OpParams::Quantize: {
      ck.op_name = "QUANTIZE";
      const fb::Quantize* c = o->params_as_Quantize();
      if (!ck.RefD(c->input(), kF32, "input") || !ck.WritableD(c->output(), kQ8, "output") ||
          !ck.ElemsIs(c->output(), Elements(ck.T(c->input())), "output") ||
          !Scale(ck, c->scale(), "scale") ||
          !ZeroPoint(ck, c->zero_point(), ck.T(c->output())->dtype(), "zero_point"))
        return ck.Fail();
      return EPCTX_OK;
    }
    case fb::OpParams::Dequantize: {
      ck.op_name = "DEQUANTIZE";
      const fb::Dequantize* c = o->params_as_Dequantize();
      if (!ck.RefD(c->input(), kQ8 | kI32, "input") || !ck.WritableD(c->output(), kF32, "output") ||
          !ck.ElemsIs(c->output(), Elements(ck.T(c->input())), "output") ||
          !Scale(ck, c->scale(), "scale"))
        return ck.Fail();
      if (ck.T(c->input())->dtype() == fb::DType::INT32
              ? c->zero_point() != 0
              : !ZeroPoint(ck, c->zero_point(), ck.T(c->input())->dtype(), "zero_point")) {
        if (ck.T(c->input())->dtype() == fb::DType::INT32)
          ck.OpErr().s("zero_point of INT32 must be 0");
        return ck.Fail();
      }
      return EPCTX_OK;
    }
    case fb::OpParams::DynamicQuantize: {
      ck.op_name = "DYNAMIC_QUANTIZE";
      const fb::DynamicQuantize* c = o->params_as_DynamicQuantize();
      const uint32_t u8 = DTypeBit(fb::DType::UINT8);
      if (!ck.RefD(c->input(), kF32, "input") || !ck.WritableD(c->output(), u8, "output") ||
          !ck.ElemsIs(c->output(), Elements(ck.T(c->input())), "output") ||
          !ck.WritableD(c->scale(), kF32, "scale") || !ck.ElemsIs(c->scale(), 1, "scale") ||
          !ck.WritableD(c->zero_point(), u8, "zero_point") ||
          !ck.ElemsIs(c->zero_point(), 1, "zero_point"))
        return ck.Fail();
      return EPCTX_OK;
    }
    case fb::OpParams::QConv2D: ck.op_name = "QCONV2D"; return QConv(ck, o->params_as_QConv2D());
    case fb::OpParams::QGemm: ck.op_name = "QGEMM"; return QGemm(ck, o->params_as_QGemm());
    case fb::OpParams::QBinary:
      ck.op_name = "QBINARY";
      return QBinary(ck, o->params_as_QBinary(), false);
    case fb::OpParams::QBinaryClamped:
      ck.op_name = "QBINARY_CLAMPED";
      // A 1.9 driver refuses the unknown op type: so does this one in a 1.9
      // stream.
      if (ck.g->version_minor() < kClampedMinor) {
        ck.OpErr()
            .s("unknown op type ")
            .u(uint64_t(o->params_type()))
            .s(" in a stream 1.")
            .u(ck.g->version_minor())
            .s(" (QBINARY_CLAMPED came with 1.")
            .u(kClampedMinor)
            .s(")");
        return ck.Fail();
      }
      return QBinary(ck, o->params_as_QBinaryClamped(), true);
    case fb::OpParams::QLut: {
      ck.op_name = "QLUT";
      const fb::QLut* c = o->params_as_QLut();
      if (!ck.RefD(c->input(), kQ8, "input") || !ck.WritableD(c->output(), kQ8, "output") ||
          !ck.ElemsIs(c->output(), Elements(ck.T(c->input())), "output") ||
          !ck.RefD(c->table(), kQ8, "table") || !ck.ElemsIs(c->table(), 256, "table"))
        return ck.Fail();
      return EPCTX_OK;
    }
    case fb::OpParams::QMaxPool:
      ck.op_name = "QMAX_POOL";
      return QMaxPool(ck, o->params_as_QMaxPool());
    case fb::OpParams::QConcat: ck.op_name = "QCONCAT"; return QConcat(ck, o->params_as_QConcat());
    default: return ValidateTransformerOp(ck, o);
  }
}

}  // namespace vnpu
}  // namespace epctx
