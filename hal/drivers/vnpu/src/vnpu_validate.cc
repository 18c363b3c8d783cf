// SPDX-License-Identifier: Apache-2.0
// Load-time validation of a vnpu command stream.
//
// The flatbuffers Verifier has already proven that every table, vector and
// string lies inside the payload. This file proves the rest of what execute
// relies on: every tensor reference exists, every shape product fits, every
// ARENA and WEIGHT range lies inside its region (checked as `len > end - off`
// so nothing can wrap), ops only write to ARENA or OUTPUT tensors, and each
// op's shapes agree with its parameters. After this, the kernels index only
// within the shapes checked here.
#include <cstring>

#include <epctx/vnpu_layout.h>

#include "vnpu_validate.h"

namespace epctx {
namespace vnpu {

// The checks the float and the int8 ops share (vnpu_validate.h).
uint32_t Checker::num_tensors() const { return g->tensors() ? g->tensors()->size() : 0; }
const fb::Tensor* Checker::T(uint32_t i) const { return g->tensors()->Get(i); }
uint32_t Checker::Rank(uint32_t i) const { return T(i)->shape() ? T(i)->shape()->size() : 0; }
int64_t Checker::Dim(uint32_t i, uint32_t d) const { return I64(T(i)->shape(), d); }

Msg& Checker::OpErr() {
  return msg.s("vnpu: graph '").s(graph).s("' op ").u(op).s(" (").s(op_name).s("): ");
}

bool Checker::Ref(uint32_t t, const char* field) {
  if (t >= num_tensors()) {
    OpErr().s(field).s(" refers to tensor ").u(t).s(", graph has ").u(num_tensors());
    return false;
  }
  if (any_dtype || T(t)->dtype() == fb::DType::FLOAT32) return true;
  if (IsInt(T(t)->dtype())) {
    OpErr().s(field).s(" tensor ").u(t).s(" is an integer tensor; only the int8 ops read it");
    return false;
  }
  if (T(t)->location() == fb::Location::WEIGHT) return true;  // FLOAT16, read widened
  OpErr().s(field).s(" tensor ").u(t).s(" is FLOAT16; only CONVERT reads or writes FLOAT16");
  return false;
}

bool Checker::RefD(uint32_t t, uint32_t mask, const char* field) {
  if (t >= num_tensors()) {
    OpErr().s(field).s(" refers to tensor ").u(t).s(", graph has ").u(num_tensors());
    return false;
  }
  if (DTypeBit(T(t)->dtype()) & mask) return true;
  OpErr()
      .s(field)
      .s(" tensor ")
      .u(t)
      .s(" has dtype ")
      .s(DTypeName(T(t)->dtype()))
      .s(", expected ")
      .s(MaskName(mask));
  return false;
}

bool Checker::WritableD(uint32_t t, uint32_t mask, const char* field) {
  if (!RefD(t, mask, field)) return false;
  any_dtype = true;
  bool ok = Writable(t, field);
  any_dtype = false;
  return ok;
}

bool Checker::Writable(uint32_t t, const char* field) {
  if (!Ref(t, field)) return false;
  fb::Location l = T(t)->location();
  if (l == fb::Location::OUTPUT) output_written[T(t)->index()] = 1;
  if (l == fb::Location::ARENA || l == fb::Location::OUTPUT) return true;
  OpErr().s(field).s(" tensor ").u(t).s(" is an INPUT or WEIGHT; ops write only ARENA/OUTPUT");
  return false;
}

bool Checker::RankIs(uint32_t t, uint32_t r, const char* field) {
  if (Rank(t) == r) return true;
  OpErr().s(field).s(" rank ").u(Rank(t)).s(", expected ").u(r);
  return false;
}

bool Checker::ElemsIs(uint32_t t, uint64_t n, const char* field) {
  if (Elements(T(t)) == n) return true;
  OpErr().s(field).s(" has ").u(Elements(T(t))).s(" elements, expected ").u(n);
  return false;
}

bool Checker::Window(uint32_t v, bool zero_ok, const char* field) {
  if ((zero_ok || v > 0) && v <= kMaxWindow) return true;
  OpErr().s(field).s(" = ").u(v).s(" out of range");
  return false;
}

bool Checker::Same(int64_t found, int64_t expected, const char* field) {
  if (found == expected) return true;
  OpErr().s(field).s(" = ").i(found).s(", expected ").i(expected);
  return false;
}

bool Checker::ConvShape(uint32_t x, uint32_t y, const ConvWindow& k) {
  if (!RankIs(x, 4, "input") || !RankIs(y, 4, "output")) return false;
  if (!Window(k.kh, false, "kernel_h") || !Window(k.kw, false, "kernel_w") ||
      !Window(k.sh, false, "stride_h") || !Window(k.sw, false, "stride_w") ||
      !Window(k.dh, false, "dilation_h") || !Window(k.dw, false, "dilation_w") ||
      !Window(k.pt, true, "pad_top") || !Window(k.pl, true, "pad_left") ||
      !Window(k.pb, true, "pad_bottom") || !Window(k.pr, true, "pad_right") ||
      !Window(k.g, false, "groups"))
    return false;
  int64_t cin = Dim(x, 1), cout = Dim(y, 1), g = k.g;
  if (!Same(Dim(y, 0), Dim(x, 0), "output batch")) return false;
  if (cin % g != 0 || cout % g != 0) {
    OpErr().s("channels in ").i(cin).s(" / out ").i(cout).s(" not divisible by groups ").i(g);
    return false;
  }
  int64_t eh = int64_t(k.dh) * (k.kh - 1) + 1;
  int64_t ew = int64_t(k.dw) * (k.kw - 1) + 1;
  int64_t ph = Dim(x, 2) + k.pt + k.pb - eh;
  int64_t pw = Dim(x, 3) + k.pl + k.pr - ew;
  if (ph < 0 || pw < 0) {
    OpErr().s("kernel larger than padded input");
    return false;
  }
  return Same(Dim(y, 2), ph / k.sh + 1, "output height") &&
         Same(Dim(y, 3), pw / k.sw + 1, "output width");
}

int Checker::Strides(uint32_t out, uint32_t a, uint32_t b, const flatbuffers::Vector<int64_t>* sa,
                     const flatbuffers::Vector<int64_t>* sb) {
  uint32_t r = Rank(out);
  const flatbuffers::Vector<int64_t>* st[2] = {sa, sb};
  uint32_t src[2] = {a, b};
  const char* names[2] = {"a_strides", "b_strides"};
  if (Elements(T(out)) == 0) return EPCTX_OK;
  for (int s = 0; s < 2; ++s) {
    if ((st[s] ? st[s]->size() : 0) != r) {
      OpErr().s(names[s]).s(" has ").u(st[s] ? st[s]->size() : 0).s(" entries, output rank ").u(r);
      return Fail();
    }
    // Largest index read = sum stride_d * (dim_d - 1); must be < elements.
    uint64_t max = 0, term;
    for (uint32_t d = 0; d < r; ++d) {
      int64_t stride = I64(st[s], d);
      if (stride < 0 || stride > kMaxDim ||
          !Mul(uint64_t(stride), uint64_t(Dim(out, d) - 1), &term) ||
          __builtin_add_overflow(max, term, &max)) {
        OpErr().s(names[s]).s("[").u(d).s("] = ").i(stride).s(" out of range");
        return Fail();
      }
    }
    if (max >= Elements(T(src[s]))) {
      OpErr()
          .s(names[s])
          .s(" reach element ")
          .u(max)
          .s(" of a tensor with ")
          .u(Elements(T(src[s])));
      return Fail();
    }
  }
  return EPCTX_OK;
}

namespace {

// The whole-graph checks: tensors, bindings and the float ops.
struct GraphChecker : Checker {
  // HARD_SWISH came with stream 1.3: an older stream naming it is as wrong
  // as an unknown kind.
  fb::Activation MaxActivation() const {
    if (g->version_minor() >= 8) return fb::Activation::LOG;
    if (g->version_minor() >= 7) return fb::Activation::SWISH;
    if (g->version_minor() >= 5) return fb::Activation::LEAKY_RELU_MAX;
    return g->version_minor() >= 3 ? fb::Activation::HARD_SWISH : fb::Activation::TANH;
  }
  int CheckTensor(uint32_t i, uint64_t arena) {
    const fb::Tensor* t = T(i);
    msg.s("vnpu: graph '")
        .s(graph)
        .s("' tensor ")
        .u(i)
        .s(" '")
        .s(t->name() ? t->name()->c_str() : "")
        .s("': ");
    const bool f16 = t->dtype() == fb::DType::FLOAT16;
    if (t->dtype() != fb::DType::FLOAT32 && !f16 && !IsInt(t->dtype())) {
      msg.s("dtype ")
          .u(uint64_t(t->dtype()))
          .s(" unsupported, expected FLOAT32, FLOAT16, INT8, UINT8 or INT32");
      return Fail();
    }
    // FLOAT16 WEIGHT (1.2): widened once at bind, ops read the copy.
    if (f16 && t->location() == fb::Location::ARENA) {
      msg.s("FLOAT16 tensor in the ARENA (the vnpu computes in float32)");
      return Fail();
    }
    uint32_t rank = Rank(i);
    if (rank > kMaxRank) {
      msg.s("rank ").u(rank).s(" > 8");
      return Fail();
    }
    uint64_t elems = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      int64_t v = Dim(i, d);
      if (v < 0 || v > kMaxDim || !Mul(elems, uint64_t(v), &elems)) {
        msg.s("dim ").u(d).s(" = ").i(v).s(" out of range or shape product overflows");
        return Fail();
      }
    }
    uint64_t bytes;
    if (!Mul(elems, ElementSize(t), &bytes) || bytes != t->size()) {
      msg.s("size ")
          .u(t->size())
          .s(" does not match shape (expected ")
          .u(elems)
          .s(" x ")
          .u(ElementSize(t))
          .s(" bytes)");
      return Fail();
    }
    uint64_t off = t->offset();
    switch (t->location()) {
      case fb::Location::INPUT:
      case fb::Location::OUTPUT: break;
      case fb::Location::ARENA:
        if (off % 4 != 0 || bytes > arena || off > arena - bytes) {
          msg.s("arena range [")
              .u(off)
              .s(", +")
              .u(bytes)
              .s(") outside arena of ")
              .u(arena)
              .s(" bytes or misaligned");
          return Fail();
        }
        break;
      case fb::Location::WEIGHT:
        if (off % ElementSize(t) != 0 || bytes > weights_size || off > weights_size - bytes) {
          msg.s("weight range [")
              .u(off)
              .s(", +")
              .u(bytes)
              .s(") outside weight segment of ")
              .u(weights_size)
              .s(" bytes or misaligned");
          return Fail();
        }
        break;
      default: msg.s("unknown location ").u(uint64_t(t->location())); return Fail();
    }
    msg.reset();
    return EPCTX_OK;
  }

  // INPUT(k) / OUTPUT(k) indices must be exactly 0..n-1, each once: one
  // pass with a flag per index (O(n) for any tensor count). `flags` receives
  // the n-byte array (zeroed again) for the caller to reuse and free.
  int CheckBindings(fb::Location loc, const char* what, uint32_t* count, uint8_t** flags) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < num_tensors(); ++i) n += T(i)->location() == loc;
    uint8_t* seen = static_cast<uint8_t*>(host.alloc(host.user, n ? n : 1, 1));
    if (!seen) {
      msg.s("vnpu: graph '").s(graph).s("': out of memory for ").u(n).s(" ").s(what).s(" flags");
      return EPCTX_OUT_OF_MEMORY;
    }
    memset(seen, 0, n);
    for (uint32_t i = 0; i < num_tensors(); ++i) {
      if (T(i)->location() != loc) continue;
      uint32_t k = T(i)->index();
      bool dup = k < n && seen[k];
      if (k >= n || dup) {
        msg.s("vnpu: graph '")
            .s(graph)
            .s("' tensor ")
            .u(i)
            .s(": ")
            .s(what)
            .s(" index ")
            .u(k)
            .s(dup ? " bound twice" : " out of range")
            .s(" (graph has ")
            .u(n)
            .s(" ")
            .s(what)
            .s("s)");
        host.free(host.user, seen);
        return Fail();
      }
      seen[k] = 1;
    }
    memset(seen, 0, n);
    *count = n;
    if (flags) *flags = seen;
    else host.free(host.user, seen);
    return EPCTX_OK;
  }

  int Conv(const fb::Conv2D* c);
  int Gemm(const fb::Gemm* c);
  int Binary(const fb::Binary* c);
  int Pool(const fb::Pool* c);
  int Transpose(const fb::Transpose* c);
  int Concat(const fb::Concat* c);
  int ConvTranspose(const fb::ConvTranspose2D* c);
  int Op(const fb::Op* o);
  // False (named error) when op `name`, type `type`, is newer than the
  // stream's minor version: an older stream naming it is an unknown op.
  bool OpSince(fb::OpParams type, uint16_t minor);
};

int GraphChecker::ConvTranspose(const fb::ConvTranspose2D* c) {
  uint32_t x = c->input(), y = c->output(), w = c->weights();
  if (!Ref(x, "input") || !Writable(y, "output") || !Ref(w, "weights")) return Fail();
  if (!RankIs(x, 4, "input") || !RankIs(y, 4, "output")) return Fail();
  if (!Window(c->kernel_h(), false, "kernel_h") || !Window(c->kernel_w(), false, "kernel_w") ||
      !Window(c->stride_h(), false, "stride_h") || !Window(c->stride_w(), false, "stride_w") ||
      !Window(c->dilation_h(), false, "dilation_h") ||
      !Window(c->dilation_w(), false, "dilation_w") || !Window(c->pad_top(), true, "pad_top") ||
      !Window(c->pad_left(), true, "pad_left") || !Window(c->pad_bottom(), true, "pad_bottom") ||
      !Window(c->pad_right(), true, "pad_right") ||
      !Window(c->output_pad_h(), true, "output_pad_h") ||
      !Window(c->output_pad_w(), true, "output_pad_w") || !Window(c->groups(), false, "groups"))
    return Fail();
  if (uint32_t(c->activation()) > uint32_t(MaxActivation())) {
    OpErr().s("unknown activation ").u(uint64_t(c->activation()));
    return Fail();
  }
  int64_t cin = Dim(x, 1), cout = Dim(y, 1), g = c->groups();
  if (!Same(Dim(y, 0), Dim(x, 0), "output batch")) return Fail();
  if (cin % g != 0 || cout % g != 0) {
    OpErr().s("channels in ").i(cin).s(" / out ").i(cout).s(" not divisible by groups ").i(g);
    return Fail();
  }
  // Every term is below 2^31 * 2^16 or 2^32: the sums stay far inside int64.
  int64_t oh = (Dim(x, 2) - 1) * c->stride_h() + int64_t(c->dilation_h()) * (c->kernel_h() - 1) +
               1 + c->output_pad_h() - c->pad_top() - c->pad_bottom();
  int64_t ow = (Dim(x, 3) - 1) * c->stride_w() + int64_t(c->dilation_w()) * (c->kernel_w() - 1) +
               1 + c->output_pad_w() - c->pad_left() - c->pad_right();
  if (Dim(x, 2) < 1 || Dim(x, 3) < 1 || oh < 1 || ow < 1) {
    OpErr().s("empty input or padding larger than the output");
    return Fail();
  }
  if (!Same(Dim(y, 2), oh, "output height") || !Same(Dim(y, 3), ow, "output width")) return Fail();
  uint64_t n, t;
  if (!Mul(uint64_t(cin), uint64_t(cout / g), &n) ||
      !Mul(n, uint64_t(c->kernel_h()) * c->kernel_w(), &t) || !ElemsIs(w, t, "weights"))
    return Fail();
  if (c->has_bias() && (!Ref(c->bias(), "bias") || !ElemsIs(c->bias(), uint64_t(cout), "bias")))
    return Fail();
  return EPCTX_OK;
}

int GraphChecker::Conv(const fb::Conv2D* c) {
  uint32_t x = c->input(), y = c->output(), w = c->weights();
  if (!Ref(x, "input") || !Writable(y, "output") || !Ref(w, "weights")) return Fail();
  if (uint32_t(c->activation()) > uint32_t(MaxActivation())) {
    OpErr().s("unknown activation ").u(uint64_t(c->activation()));
    return Fail();
  }
  if (!ConvShape(x, y, ConvWindow::Of(c))) return Fail();
  int64_t cin = Dim(x, 1), cout = Dim(y, 1), g = c->groups();
  uint64_t n = uint64_t(g) * uint64_t((cout / g + layout::kBlock - 1) / layout::kBlock), t;
  if (!Mul(n, uint64_t(cin / g), &n) ||
      !Mul(n, uint64_t(c->kernel_h()) * c->kernel_w() * layout::kBlock, &t)) {
    OpErr().s("packed weight size overflows");
    return Fail();
  }
  if (!ElemsIs(w, t, "weights")) return Fail();
  if (c->has_bias() && (!Ref(c->bias(), "bias") || !ElemsIs(c->bias(), uint64_t(cout), "bias")))
    return Fail();
  return EPCTX_OK;
}

bool GraphChecker::OpSince(fb::OpParams type, uint16_t minor) {
  if (g->version_minor() >= minor) return true;
  OpErr()
      .s("unknown op type ")
      .u(uint64_t(type))
      .s(" in a stream 1.")
      .u(g->version_minor())
      .s(" (")
      .s(op_name)
      .s(" came with 1.")
      .u(minor)
      .s(")");
  return false;
}

int GraphChecker::Gemm(const fb::Gemm* c) {
  if (!Ref(c->input(), "input") || !Writable(c->output(), "output") ||
      !Ref(c->weights(), "weights"))
    return Fail();
  if (uint32_t(c->activation()) > uint32_t(MaxActivation())) {
    OpErr().s("unknown activation ").u(uint64_t(c->activation()));
    return Fail();
  }
  uint64_t m = c->m(), k = c->k(), n = c->n(), mk, mn, kn;
  if (m > uint64_t(kMaxDim) || k > uint64_t(kMaxDim) || n > uint64_t(kMaxDim) || !Mul(m, k, &mk) ||
      !Mul(m, n, &mn) || !Mul((n + layout::kBlock - 1) / layout::kBlock * layout::kBlock, k, &kn)) {
    OpErr().s("m/k/n out of range");
    return Fail();
  }
  if (!ElemsIs(c->input(), mk, "input") || !ElemsIs(c->output(), mn, "output") ||
      !ElemsIs(c->weights(), kn, "weights"))
    return Fail();
  if (c->has_bias() && (!Ref(c->bias(), "bias") || !ElemsIs(c->bias(), n, "bias"))) return Fail();
  return EPCTX_OK;
}

int GraphChecker::Binary(const fb::Binary* c) {
  if (!Ref(c->a(), "a") || !Ref(c->b(), "b") || !Writable(c->output(), "output")) return Fail();
  if (uint32_t(c->kind()) > uint32_t(fb::BinaryKind::MINIMUM)) {
    OpErr().s("unknown kind ").u(uint64_t(c->kind()));
    return Fail();
  }
  return Strides(c->output(), c->a(), c->b(), c->a_strides(), c->b_strides());
}

int GraphChecker::Pool(const fb::Pool* c) {
  uint32_t x = c->input(), y = c->output();
  if (!Ref(x, "input") || !Writable(y, "output")) return Fail();
  if (!RankIs(x, 4, "input") || !RankIs(y, 4, "output")) return Fail();
  if (!Same(Dim(y, 0), Dim(x, 0), "output batch") || !Same(Dim(y, 1), Dim(x, 1), "output channels"))
    return Fail();
  if (c->kind() == fb::PoolKind::GLOBAL_AVG) {
    if (!Same(Dim(y, 2), 1, "output height") || !Same(Dim(y, 3), 1, "output width")) return Fail();
    return EPCTX_OK;
  }
  if (uint32_t(c->kind()) > uint32_t(fb::PoolKind::GLOBAL_AVG)) {
    OpErr().s("unknown kind ").u(uint64_t(c->kind()));
    return Fail();
  }
  if (!Window(c->kernel_h(), false, "kernel_h") || !Window(c->kernel_w(), false, "kernel_w") ||
      !Window(c->stride_h(), false, "stride_h") || !Window(c->stride_w(), false, "stride_w") ||
      !Window(c->pad_top(), true, "pad_top") || !Window(c->pad_left(), true, "pad_left") ||
      !Window(c->pad_bottom(), true, "pad_bottom") || !Window(c->pad_right(), true, "pad_right"))
    return Fail();
  int64_t ph = Dim(x, 2) + c->pad_top() + c->pad_bottom() - c->kernel_h();
  int64_t pw = Dim(x, 3) + c->pad_left() + c->pad_right() - c->kernel_w();
  if (ph < 0 || pw < 0) {
    OpErr().s("kernel larger than padded input");
    return Fail();
  }
  // Floor or ceil mode.
  int64_t sh = c->stride_h(), sw = c->stride_w();
  int64_t oh = Dim(y, 2), ow = Dim(y, 3);
  if ((oh != ph / sh + 1 && oh != (ph + sh - 1) / sh + 1) ||
      (ow != pw / sw + 1 && ow != (pw + sw - 1) / sw + 1)) {
    OpErr().s("output ").i(oh).s("x").i(ow).s(" does not follow from the input and window");
    return Fail();
  }
  return EPCTX_OK;
}

int GraphChecker::Transpose(const fb::Transpose* c) {
  uint32_t x = c->input(), y = c->output();
  if (!Ref(x, "input") || !Writable(y, "output")) return Fail();
  uint32_t r = Rank(x);
  if (!RankIs(y, r, "output")) return Fail();
  if (!c->perm() || c->perm()->size() != r) {
    OpErr().s("perm must have ").u(r).s(" entries");
    return Fail();
  }
  for (uint32_t i = 0; i < r; ++i) {
    uint32_t p = c->perm()->Get(i);
    bool dup = false;
    for (uint32_t j = 0; j < i; ++j) dup |= c->perm()->Get(j) == p;
    if (p >= r || dup) {
      OpErr().s("perm is not a permutation of 0..").u(r - 1);
      return Fail();
    }
    if (!Same(Dim(y, i), Dim(x, p), "output dim")) return Fail();
  }
  return EPCTX_OK;
}

int GraphChecker::Concat(const fb::Concat* c) {
  uint32_t y = c->output();
  if (!Writable(y, "output")) return Fail();
  uint32_t r = Rank(y), axis = c->axis();
  if (!c->inputs() || c->inputs()->size() == 0 || axis >= r) {
    OpErr().s("needs inputs and axis < rank ").u(r);
    return Fail();
  }
  int64_t sum = 0;
  for (uint32_t i = 0; i < c->inputs()->size(); ++i) {
    uint32_t x = c->inputs()->Get(i);
    if (!Ref(x, "inputs") || !RankIs(x, r, "input")) return Fail();
    for (uint32_t d = 0; d < r; ++d)
      if (d != axis && !Same(Dim(x, d), Dim(y, d), "input dim")) return Fail();
    sum += Dim(x, axis);  // each <= 2^31, at most 2^32 inputs: no overflow
  }
  return Same(sum, Dim(y, axis), "output axis dim") ? EPCTX_OK : Fail();
}

int GraphChecker::Op(const fb::Op* o) {
  // The Verifier accepts a union whose type is set and whose value is absent.
  if (!o->params()) {
    op_name = "OP";
    OpErr().s("params of type ").u(uint64_t(o->params_type())).s(" missing");
    return Fail();
  }
  switch (o->params_type()) {
    case fb::OpParams::Conv2D: op_name = "CONV2D"; return Conv(o->params_as_Conv2D());
    case fb::OpParams::Conv2DTaps: {
      // Stream 1.4: the taps-major weight layout of the transposed path.
      op_name = "CONV2D_TAPS";
      if (!OpSince(o->params_type(), 4)) return Fail();
      const fb::Conv2D* c = o->params_as_Conv2DTaps();
      int rc = Conv(c);
      if (rc != EPCTX_OK) return rc;
      const int64_t cout_g = Dim(c->output(), 1) / int64_t(c->groups());
      if (cout_g > layout::kTileCols) {
        OpErr()
            .s("output channels per group: expected at most ")
            .i(layout::kTileCols)
            .s(" (one tile's columns), found ")
            .i(cout_g);
        return Fail();
      }
      return EPCTX_OK;
    }
    case fb::OpParams::Gemm: op_name = "GEMM"; return Gemm(o->params_as_Gemm());
    case fb::OpParams::GemmBlocked:
      // Stream 1.6: the 48-column block layout; the same floats as GEMM's.
      op_name = "GEMM_BLOCKED";
      if (!OpSince(o->params_type(), 6)) return Fail();
      return Gemm(o->params_as_GemmBlocked());
    case fb::OpParams::Binary: op_name = "BINARY"; return Binary(o->params_as_Binary());
    case fb::OpParams::Unary: {
      op_name = "UNARY";
      const fb::Unary* c = o->params_as_Unary();
      if (!Ref(c->input(), "input") || !Writable(c->output(), "output") ||
          !ElemsIs(c->output(), Elements(T(c->input())), "output"))
        return Fail();
      if (c->kind() == fb::Activation::NONE || uint32_t(c->kind()) > uint32_t(MaxActivation())) {
        OpErr().s("unknown kind ").u(uint64_t(c->kind()));
        return Fail();
      }
      return EPCTX_OK;
    }
    case fb::OpParams::Pool: op_name = "POOL"; return Pool(o->params_as_Pool());
    case fb::OpParams::Softmax: {
      op_name = "SOFTMAX";
      const fb::Softmax* c = o->params_as_Softmax();
      uint64_t n;
      if (!Ref(c->input(), "input") || !Writable(c->output(), "output")) return Fail();
      if (!Mul(c->outer(), c->axis(), &n) || !Mul(n, c->inner(), &n)) {
        OpErr().s("outer x axis x inner overflows");
        return Fail();
      }
      if (!ElemsIs(c->input(), n, "input") || !ElemsIs(c->output(), n, "output")) return Fail();
      return EPCTX_OK;
    }
    case fb::OpParams::Transpose: op_name = "TRANSPOSE"; return Transpose(o->params_as_Transpose());
    case fb::OpParams::Concat: op_name = "CONCAT"; return Concat(o->params_as_Concat());
    case fb::OpParams::Copy: {
      op_name = "COPY";
      const fb::Copy* c = o->params_as_Copy();
      // Any dtype but FLOAT16, copied to the same dtype (an int8 reshape).
      const uint32_t same =
          c->input() < num_tensors() && T(c->input())->dtype() != fb::DType::FLOAT16
              ? DTypeBit(T(c->input())->dtype())
              : DTypeBit(fb::DType::FLOAT32);
      if (!RefD(c->input(), same, "input") || !WritableD(c->output(), same, "output") ||
          !ElemsIs(c->output(), Elements(T(c->input())), "output"))
        return Fail();
      return EPCTX_OK;
    }
    case fb::OpParams::ScaleShift: {
      op_name = "SCALE_SHIFT";
      const fb::ScaleShift* c = o->params_as_ScaleShift();
      uint64_t n;
      if (!Ref(c->input(), "input") || !Writable(c->output(), "output") ||
          !Ref(c->scale(), "scale") || !Ref(c->shift(), "shift"))
        return Fail();
      if (!Mul(c->outer(), c->channels(), &n) || !Mul(n, c->inner(), &n)) {
        OpErr().s("outer x channels x inner overflows");
        return Fail();
      }
      if (!ElemsIs(c->input(), n, "input") || !ElemsIs(c->output(), n, "output") ||
          !ElemsIs(c->scale(), c->channels(), "scale") ||
          !ElemsIs(c->shift(), c->channels(), "shift"))
        return Fail();
      return EPCTX_OK;
    }
    case fb::OpParams::Convert: {
      op_name = "CONVERT";
      const fb::Convert* c = o->params_as_Convert();
      any_dtype = true;
      // Ops see a FLOAT16 weight only as its widened float32 copy.
      if (c->input() < num_tensors() && T(c->input())->location() == fb::Location::WEIGHT) {
        OpErr().s("input tensor ").u(c->input()).s(" is a WEIGHT; CONVERT reads INPUT/ARENA");
        any_dtype = false;
        return Fail();
      }
      bool ok = Ref(c->input(), "input") && Writable(c->output(), "output") &&
                ElemsIs(c->output(), Elements(T(c->input())), "output");
      any_dtype = false;
      return ok ? EPCTX_OK : Fail();
    }
    case fb::OpParams::ConvTranspose2D:
      op_name = "CONV_TRANSPOSE2D";
      return ConvTranspose(o->params_as_ConvTranspose2D());
    default: return ValidateInt8Op(*this, o);
  }
}

}  // namespace

const char* DTypeName(fb::DType d) {
  switch (d) {
    case fb::DType::FLOAT32: return "FLOAT32";
    case fb::DType::FLOAT16: return "FLOAT16";
    case fb::DType::INT8: return "INT8";
    case fb::DType::UINT8: return "UINT8";
    case fb::DType::INT32: return "INT32";
  }
  return "unknown";
}

uint64_t ElementSize(const fb::Tensor* t) {
  switch (t->dtype()) {
    case fb::DType::FLOAT16: return 2;
    case fb::DType::INT8:
    case fb::DType::UINT8: return 1;
    default: return 4;
  }
}

uint64_t Elements(const fb::Tensor* t) { return t->size() / ElementSize(t); }

int ValidateGraph(const fb::Graph* g, uint64_t weights_size, const char* graph_name,
                  const epctx_hal_host& host, uint32_t* num_inputs, uint32_t* num_outputs,
                  Msg& msg) {
  GraphChecker c{{g, weights_size, graph_name, msg, host}};
  if (g->version_major() != kStreamMajor) {
    msg.s("vnpu: graph '")
        .s(graph_name)
        .s("' command stream version ")
        .u(g->version_major())
        .s(".")
        .u(g->version_minor())
        .s(", driver reads 1.x");
    return EPCTX_INVALID_GRAPH;
  }
  for (uint32_t i = 0; i < c.num_tensors(); ++i) {
    int rc = c.CheckTensor(i, g->arena_size());
    if (rc != EPCTX_OK) return rc;
  }
  int rc = c.CheckBindings(fb::Location::INPUT, "input", num_inputs, nullptr);
  if (rc == EPCTX_OK)
    rc = c.CheckBindings(fb::Location::OUTPUT, "output", num_outputs, &c.output_written);
  if (rc != EPCTX_OK) return rc;
  for (uint32_t i = 0; g->ops() && i < g->ops()->size() && rc == EPCTX_OK; ++i) {
    c.op = i;
    rc = c.Op(g->ops()->Get(i));
  }
  for (uint32_t i = 0; i < c.num_tensors() && rc == EPCTX_OK; ++i) {
    const fb::Tensor* t = c.T(i);
    if (t->location() != fb::Location::OUTPUT || c.output_written[t->index()]) continue;
    msg.s("vnpu: graph '")
        .s(graph_name)
        .s("' output ")
        .u(t->index())
        .s(" '")
        .s(t->name() ? t->name()->c_str() : "")
        .s("' is written by no op");
    rc = EPCTX_INVALID_GRAPH;
  }
  host.free(host.user, c.output_written);
  return rc;
}

}  // namespace vnpu
}  // namespace epctx
