// SPDX-License-Identifier: Apache-2.0
// Validation of the transformer-level ops (stream 1.8): REDUCE, LAYER_NORM,
// BATCH_MATMUL and STRIDED_COPY. Every element index the kernels
// (vnpu_transformer.cc) compute is bounded here, in 64-bit arithmetic that
// is checked for overflow: the largest offset a stride vector reaches must
// lie inside its tensor.
#include "vnpu_validate.h"

namespace epctx {
namespace vnpu {
namespace {

constexpr uint16_t kMinor = 8;
constexpr uint16_t kMirrorMinor = 9;  // negative STRIDED_COPY strides, PAD_MIRROR
constexpr uint32_t kMaxBatchRank = 6;

// An op of stream 1.`minor` in an older stream is refused by name.
bool Since(Checker& ck, fb::OpParams type, uint16_t minor = kMinor) {
  if (ck.g->version_minor() >= minor) return true;
  ck.OpErr()
      .s("unknown op type ")
      .u(uint64_t(type))
      .s(" in a stream 1.")
      .u(ck.g->version_minor())
      .s(" (")
      .s(ck.op_name)
      .s(" came with 1.")
      .u(minor)
      .s(")");
  return false;
}

// outer x axis x inner, each at least 1 for axis, as the element count of
// tensors `x` and `y` (y: outer x inner when `reduced`).
bool View(Checker& ck, uint64_t outer, uint64_t axis, uint64_t inner, uint32_t x, uint32_t y,
          bool reduced) {
  uint64_t oi, n;
  if (axis == 0 || !Mul(outer, inner, &oi) || !Mul(oi, axis, &n)) {
    ck.OpErr().s("outer x axis x inner overflows or axis is 0");
    return false;
  }
  return ck.ElemsIs(x, n, "input") && ck.ElemsIs(y, reduced ? oi : n, "output");
}

// The largest element a batch stride vector reaches (sum of stride_d *
// (dim_d - 1)) plus `tail`, below the element count of tensor t.
bool Reach(Checker& ck, const flatbuffers::Vector<int64_t>* dims,
           const flatbuffers::Vector<int64_t>* strides, uint32_t extra, uint64_t tail, uint32_t t,
           const char* field) {
  const uint32_t r = dims->size();
  if (!strides || strides->size() != r + extra) {
    ck.OpErr()
        .s(field)
        .s(" has ")
        .u(strides ? strides->size() : 0)
        .s(" entries, expected ")
        .u(r + extra);
    return false;
  }
  uint64_t max = tail, term;
  for (uint32_t d = 0; d < r; ++d) {
    const int64_t s = I64(strides, d);
    if (s < 0 || s > kMaxDim || !Mul(uint64_t(s), uint64_t(I64(dims, d) - 1), &term) ||
        __builtin_add_overflow(max, term, &max)) {
      ck.OpErr().s(field).s("[").u(d).s("] = ").i(s).s(" out of range");
      return false;
    }
  }
  if (max >= Elements(ck.T(t))) {
    ck.OpErr().s(field).s(" reach element ").u(max).s(" of a tensor with ").u(Elements(ck.T(t)));
    return false;
  }
  return true;
}

int Reduce(Checker& ck, const fb::Reduce* c) {
  if (!ck.Ref(c->input(), "input") || !ck.Writable(c->output(), "output")) return ck.Fail();
  if (uint32_t(c->kind()) > uint32_t(fb::ReduceKind::MINIMUM)) {
    ck.OpErr().s("unknown kind ").u(uint64_t(c->kind()));
    return ck.Fail();
  }
  return View(ck, c->outer(), c->axis(), c->inner(), c->input(), c->output(), true) ? EPCTX_OK
                                                                                    : ck.Fail();
}

int LayerNorm(Checker& ck, const fb::LayerNorm* c) {
  if (!ck.Ref(c->input(), "input") || !ck.Writable(c->output(), "output") ||
      !View(ck, c->outer(), c->axis(), c->inner(), c->input(), c->output(), false))
    return ck.Fail();
  if (c->has_scale() &&
      (!ck.Ref(c->scale(), "scale") || !ck.ElemsIs(c->scale(), c->axis(), "scale")))
    return ck.Fail();
  if (c->has_bias() && (!ck.Ref(c->bias(), "bias") || !ck.ElemsIs(c->bias(), c->axis(), "bias")))
    return ck.Fail();
  // !(e >= 0): NaN fails too; e - e != 0 for infinity.
  const float e = c->epsilon();
  if (!(e >= 0.0f) || e - e != 0.0f) {
    ck.OpErr().s("epsilon is not finite and >= 0");
    return ck.Fail();
  }
  return EPCTX_OK;
}

int BatchMatMul(Checker& ck, const fb::BatchMatMul* c) {
  const uint32_t a = c->a(), b = c->b(), y = c->output();
  if (!ck.Ref(a, "a") || !ck.Ref(b, "b") || !ck.Writable(y, "output")) return ck.Fail();
  const auto* dims = c->batch();
  const uint32_t r = dims ? dims->size() : 0;
  if (!dims || r > kMaxBatchRank) {
    ck.OpErr().s("batch has ").u(r).s(" dimensions, expected 0 to ").u(kMaxBatchRank);
    return ck.Fail();
  }
  const uint64_t m = c->m(), k = c->k(), n = c->n();
  if (m == 0 || k == 0 || n == 0 || m > uint64_t(kMaxDim) || k > uint64_t(kMaxDim) ||
      n > uint64_t(kMaxDim) || c->a_rs() > uint64_t(kMaxDim) || c->b_rs() > uint64_t(kMaxDim)) {
    ck.OpErr().s("m, k, n, a_rs or b_rs is 0 or above 2^31");
    return ck.Fail();
  }
  // The output [batch..., m, n] exactly.
  if (!ck.RankIs(y, r + 2, "output") || !ck.Same(ck.Dim(y, r), int64_t(m), "output rows") ||
      !ck.Same(ck.Dim(y, r + 1), int64_t(n), "output columns"))
    return ck.Fail();
  for (uint32_t d = 0; d < r; ++d) {
    if (I64(dims, d) < 1) {
      ck.OpErr().s("batch[").u(d).s("] = ").i(I64(dims, d)).s(", expected at least 1");
      return ck.Fail();
    }
    if (!ck.Same(ck.Dim(y, d), I64(dims, d), "output batch dim")) return ck.Fail();
  }
  // Rows may not overlap within a row: a row stride covers a row.
  const bool tb = c->trans_b();
  if (c->a_rs() < k || c->b_rs() < (tb ? k : n)) {
    ck.OpErr().s("a_rs ").u(c->a_rs()).s(" or b_rs ").u(c->b_rs()).s(" shorter than a row");
    return ck.Fail();
  }
  // Last element of one batch's A and B (bounded by 2^62: no overflow).
  const uint64_t a_tail = (m - 1) * c->a_rs() + (k - 1);
  const uint64_t b_tail = tb ? (n - 1) * c->b_rs() + (k - 1) : (k - 1) * c->b_rs() + (n - 1);
  if (!Reach(ck, dims, c->a_strides(), 0, a_tail, a, "a_strides") ||
      !Reach(ck, dims, c->b_strides(), 0, b_tail, b, "b_strides"))
    return ck.Fail();
  if (c->has_addend()) {
    if (!ck.Ref(c->addend(), "addend")) return ck.Fail();
    const auto* st = c->addend_strides();
    if (!st || st->size() != r + 2) {
      ck.OpErr().s("addend_strides has ").u(st ? st->size() : 0).s(" entries, expected ").u(r + 2);
      return ck.Fail();
    }
    const int64_t rs = I64(st, r), cs = I64(st, r + 1);
    uint64_t t1, t2, tail;
    if (rs < 0 || cs < 0 || rs > kMaxDim || cs > kMaxDim || !Mul(uint64_t(rs), m - 1, &t1) ||
        !Mul(uint64_t(cs), n - 1, &t2) || __builtin_add_overflow(t1, t2, &tail)) {
      ck.OpErr().s("addend row or column stride out of range");
      return ck.Fail();
    }
    if (!Reach(ck, dims, st, 2, tail, c->addend(), "addend_strides")) return ck.Fail();
  }
  if (c->activation() == fb::Activation::NONE ||
      uint32_t(c->activation()) <= uint32_t(fb::Activation::LOG))
    return EPCTX_OK;
  ck.OpErr().s("unknown activation ").u(uint64_t(c->activation()));
  return ck.Fail();
}

// STRIDED_COPY's strides (of either sign from 1.9, `negative`; before, not
// below 0): the lowest and the highest element reached (offset plus the
// negative, resp. positive, terms) lie inside input t.
bool SignedReach(Checker& ck, const flatbuffers::Vector<int64_t>* dims,
                 const flatbuffers::Vector<int64_t>* strides, uint64_t offset, uint32_t t,
                 bool negative) {
  const uint32_t r = dims->size();
  if (!strides || strides->size() != r) {
    ck.OpErr().s("strides has ").u(strides ? strides->size() : 0).s(" entries, expected ").u(r);
    return false;
  }
  uint64_t hi = offset, down = 0, term;
  for (uint32_t d = 0; d < r; ++d) {
    const int64_t s = I64(strides, d);
    const uint64_t mag = s < 0 ? uint64_t(0) - uint64_t(s) : uint64_t(s);
    if ((s < 0 && !negative) || mag > kMaxDim || !Mul(mag, uint64_t(I64(dims, d) - 1), &term) ||
        __builtin_add_overflow(s < 0 ? down : hi, term, s < 0 ? &down : &hi)) {
      ck.OpErr().s("strides[").u(d).s("] = ").i(s).s(" out of range");
      return false;
    }
  }
  if (down > offset) {
    ck.OpErr().s("strides reach ").u(down - offset).s(" elements before the input");
    return false;
  }
  if (hi >= Elements(ck.T(t))) {
    ck.OpErr().s("strides reach element ").u(hi).s(" of a tensor with ").u(Elements(ck.T(t)));
    return false;
  }
  return true;
}

int StridedCopy(Checker& ck, const fb::StridedCopy* c) {
  // Any dtype but FLOAT16, the same in and out (as COPY).
  const uint32_t same =
      c->input() < ck.num_tensors() && ck.T(c->input())->dtype() != fb::DType::FLOAT16
          ? DTypeBit(ck.T(c->input())->dtype())
          : DTypeBit(fb::DType::FLOAT32);
  if (!ck.RefD(c->input(), same, "input") || !ck.WritableD(c->output(), same, "output"))
    return ck.Fail();
  const fb::Tensor* yt = ck.T(c->output());
  if (Elements(yt) == 0) return EPCTX_OK;
  if (ck.Rank(c->output()) == 0) {  // one element, at offset
    if (c->offset() < Elements(ck.T(c->input()))) return EPCTX_OK;
    ck.OpErr().s("offset ").u(c->offset()).s(" outside the input");
    return ck.Fail();
  }
  if (c->offset() > uint64_t(kMaxDim) * kMaxDim) {
    ck.OpErr().s("offset ").u(c->offset()).s(" out of range");
    return ck.Fail();
  }
  const bool negative = ck.g->version_minor() >= kMirrorMinor;
  return SignedReach(ck, yt->shape(), c->strides(), c->offset(), c->input(), negative) ? EPCTX_OK
                                                                                       : ck.Fail();
}

// Scale finite and in (0, 1e9] (the CPU kernel's range); a length finite.
bool Finite(float v) { return v - v == 0.0f; }

int Resize(Checker& ck, const fb::Resize* c) {
  const uint32_t x = c->input(), y = c->output();
  if (!ck.Ref(x, "input") || !ck.Writable(y, "output")) return ck.Fail();
  const uint32_t r = ck.Rank(x);
  if (r < 2 || !ck.RankIs(y, r, "output")) {
    ck.OpErr().s("input rank ").u(r).s(": expected at least 2 (the last two are resized)");
    return ck.Fail();
  }
  for (uint32_t d = 0; d + 2 < r; ++d)
    if (!ck.Same(ck.Dim(y, d), ck.Dim(x, d), "output dim")) return ck.Fail();
  // An input axis of 0 elements has no element to take.
  if ((ck.Dim(x, r - 2) == 0 && ck.Dim(y, r - 2) != 0) ||
      (ck.Dim(x, r - 1) == 0 && ck.Dim(y, r - 1) != 0)) {
    ck.OpErr().s("resizes an empty axis");
    return ck.Fail();
  }
  if (uint32_t(c->mode()) > uint32_t(fb::ResizeMode::LINEAR) ||
      uint32_t(c->coord()) > uint32_t(fb::ResizeCoord::HALF_PIXEL_SYMMETRIC) ||
      c->coord() == fb::ResizeCoord::TF_CROP_AND_RESIZE_UNUSED ||
      uint32_t(c->round()) > uint32_t(fb::ResizeRound::CEIL)) {
    ck.OpErr().s("unknown mode, coord or round");
    return ck.Fail();
  }
  const float sh = c->scale_h(), sw = c->scale_w();
  if (!(sh > 0.0f && sh <= 1e9f) || !(sw > 0.0f && sw <= 1e9f) || !Finite(c->length_h()) ||
      !Finite(c->length_w())) {
    ck.OpErr().s("scale_h/scale_w outside (0, 1e9] or length_h/length_w not finite");
    return ck.Fail();
  }
  return EPCTX_OK;
}

int Pad(Checker& ck, const fb::Pad* c, bool mirror) {
  const uint32_t x = c->input(), y = c->output();
  if (!ck.Ref(x, "input") || !ck.Writable(y, "output")) return ck.Fail();
  const uint32_t r = ck.Rank(x);
  if (!ck.RankIs(y, r, "output")) return ck.Fail();
  if (!c->begins() || c->begins()->size() != r) {
    ck.OpErr()
        .s("begins has ")
        .u(c->begins() ? c->begins()->size() : 0)
        .s(" entries, expected ")
        .u(r);
    return ck.Fail();
  }
  // PAD is CONSTANT; PAD_MIRROR (1.9) REFLECT or EDGE.
  const fb::PadMode mode = c->mode();
  if (mirror != (mode == fb::PadMode::REFLECT || mode == fb::PadMode::EDGE)) {
    ck.OpErr()
        .s("mode ")
        .u(uint64_t(mode))
        .s(mirror ? ": expected REFLECT (1) or EDGE (2)" : ": expected CONSTANT (0)");
    return ck.Fail();
  }
  for (uint32_t d = 0; d < r; ++d) {
    // 0 <= begin and begin + input <= output (the end pad is what is left).
    const int64_t b = I64(c->begins(), d);
    if (b < 0 || b > ck.Dim(y, d) || ck.Dim(x, d) > ck.Dim(y, d) - b) {
      ck.OpErr()
          .s("begins[")
          .u(d)
          .s("] = ")
          .i(b)
          .s(": input ")
          .i(ck.Dim(x, d))
          .s(" does not fit output ")
          .i(ck.Dim(y, d));
      return ck.Fail();
    }
    // REFLECT mirrors once: each pad at most n - 1; EDGE needs an element.
    const int64_t n = ck.Dim(x, d), e = ck.Dim(y, d) - b - n;
    const bool padded = b > 0 || e > 0;
    if (padded && ((mode == fb::PadMode::REFLECT && (b > n - 1 || e > n - 1)) ||
                   (mode == fb::PadMode::EDGE && n == 0))) {
      ck.OpErr()
          .s("pads ")
          .i(b)
          .s(" and ")
          .i(e)
          .s(" of dim ")
          .u(d)
          .s(": expected at most ")
          .i(mode == fb::PadMode::REFLECT ? n - 1 : n)
          .s(mode == fb::PadMode::REFLECT ? " (input length - 1) in REFLECT mode"
                                          : " elements to repeat in EDGE mode");
      return ck.Fail();
    }
  }
  return EPCTX_OK;
}

// Tensor t (when `has`) holds exactly n FLOAT32 elements; `out`: written.
bool Part(Checker& ck, bool has, uint32_t t, uint64_t n, bool out, const char* field) {
  if (!has) return true;
  if (!(out ? ck.Writable(t, field) : ck.Ref(t, field))) return false;
  return ck.ElemsIs(t, n, field);
}

int Recurrent(Checker& ck, const fb::Recurrent* c) {
  const bool lstm = c->cell() == fb::RecurrentCell::LSTM;
  if (uint32_t(c->cell()) > uint32_t(fb::RecurrentCell::GRU) ||
      (c->directions() != 1 && c->directions() != 2)) {
    ck.OpErr().s("unknown cell or directions ").u(c->directions()).s(" (expected 1 or 2)");
    return ck.Fail();
  }
  const uint64_t S = c->seq(), B = c->batch(), I = c->input(), H = c->hidden(), D = c->directions(),
                 G = lstm ? 4 : 3;
  uint64_t sb, sbi, gh, dgh, w, r, dbh, y, sbgh;
  if (S == 0 || B == 0 || I == 0 || H == 0 || S > uint64_t(kMaxDim) || B > uint64_t(kMaxDim) ||
      I > uint64_t(kMaxDim) || H > uint64_t(kMaxDim) || !Mul(S, B, &sb) || !Mul(sb, I, &sbi) ||
      !Mul(G, H, &gh) || !Mul(D, gh, &dgh) || !Mul(dgh, I, &w) || !Mul(dgh, H, &r) ||
      !Mul(D * B, H, &dbh) || !Mul(sb * D, H, &y) || !Mul(sb, gh, &sbgh) ||
      sbgh > (uint64_t(1) << 31)) {
    ck.OpErr()
        .s("seq, batch, input or hidden is 0 or too large (seq x batch x gates x hidden ")
        .s("at most 2^31)");
    return ck.Fail();
  }
  if (c->has_c0() && !lstm) {
    ck.OpErr().s("c0 given to a GRU");
    return ck.Fail();
  }
  if (c->has_yc() && !lstm) {
    ck.OpErr().s("yc given to a GRU");
    return ck.Fail();
  }
  if (c->has_rbh() != (!lstm && c->linear_before_reset())) {
    ck.OpErr().s("rbh is given exactly for a GRU with linear_before_reset");
    return ck.Fail();
  }
  if (!Part(ck, true, c->x(), sbi, false, "x") || !Part(ck, true, c->w(), w, false, "w") ||
      !Part(ck, true, c->r(), r, false, "r") || !Part(ck, true, c->bias(), dgh, false, "bias") ||
      !Part(ck, c->has_rbh(), c->rbh(), D * H, false, "rbh") ||
      !Part(ck, c->has_h0(), c->h0(), dbh, false, "h0") ||
      !Part(ck, c->has_c0(), c->c0(), dbh, false, "c0") ||
      !Part(ck, c->has_y(), c->y(), y, true, "y") ||
      !Part(ck, c->has_yh(), c->yh(), dbh, true, "yh") ||
      !Part(ck, c->has_yc(), c->yc(), dbh, true, "yc"))
    return ck.Fail();
  return EPCTX_OK;
}

}  // namespace

int ValidateTransformerOp(Checker& ck, const fb::Op* o) {
  switch (o->params_type()) {
    case fb::OpParams::Reduce:
      ck.op_name = "REDUCE";
      return Since(ck, o->params_type()) ? Reduce(ck, o->params_as_Reduce()) : ck.Fail();
    case fb::OpParams::LayerNorm:
      ck.op_name = "LAYER_NORM";
      return Since(ck, o->params_type()) ? LayerNorm(ck, o->params_as_LayerNorm()) : ck.Fail();
    case fb::OpParams::BatchMatMul:
      ck.op_name = "BATCH_MATMUL";
      return Since(ck, o->params_type()) ? BatchMatMul(ck, o->params_as_BatchMatMul()) : ck.Fail();
    case fb::OpParams::StridedCopy:
      ck.op_name = "STRIDED_COPY";
      return Since(ck, o->params_type()) ? StridedCopy(ck, o->params_as_StridedCopy()) : ck.Fail();
    case fb::OpParams::Resize:
      ck.op_name = "RESIZE";
      return Since(ck, o->params_type()) ? Resize(ck, o->params_as_Resize()) : ck.Fail();
    case fb::OpParams::Pad:
      ck.op_name = "PAD";
      return Since(ck, o->params_type()) ? Pad(ck, o->params_as_Pad(), false) : ck.Fail();
    case fb::OpParams::PadMirror:
      ck.op_name = "PAD_MIRROR";
      return Since(ck, o->params_type(), kMirrorMinor) ? Pad(ck, o->params_as_PadMirror(), true)
                                                       : ck.Fail();
    case fb::OpParams::Recurrent:
      ck.op_name = "RECURRENT";
      return Since(ck, o->params_type()) ? Recurrent(ck, o->params_as_Recurrent()) : ck.Fail();
    default: ck.OpErr().s("unknown op type ").u(uint64_t(o->params_type())); return ck.Fail();
  }
}

}  // namespace vnpu
}  // namespace epctx
