// SPDX-License-Identifier: Apache-2.0
// Lowering of the transformer level (stream 1.8; transformer_ops.h says
// what is claimed): the Lowerer members for UNARY kinds, REDUCE,
// LAYER_NORM, BATCH_MATMUL and STRIDED_COPY, and the fusions that make a
// transformer block a few passes over memory instead of dozens:
//  - LayerNorm as exporters decompose it (ReduceMean, Sub, Pow 2,
//    ReduceMean, Add eps, Sqrt, Div, then Mul by a scale and Add of a bias)
//    is one LAYER_NORM;
//  - exact GELU (Div or Mul by a constant, Erf, Add 1, Mul by the input,
//    Mul 0.5) is one GELU, fused into the GEMM before it when that GEMM's
//    output feeds nothing else;
//  - a MatMul's bias Add folds into its GEMM;
//  - the Transposes in front of a batched MatMul (heads split, K^T) and a
//    scalar Mul or Div on an operand fold into BATCH_MATMUL's strides and
//    alpha, so the transposed copies are never made.
// Every fusion is taken only when each intermediate value has its one
// consumer inside the partition and is not a partition output.
#include <cmath>

#include "lowerer.h"
#include "onnx_util.h"
#include "transformer_ops.h"

namespace epctx {
namespace host {
namespace vnpu {

void Lowerer::UnaryNode(const onnx::NodeProto& n) {
  IrOp op;
  op.kind = fb::OpParams::Unary;
  op.act = kUnaryOps.at(n.op_type());
  if (op.act == fb::Activation::POW) {
    std::string why = PowExponent(n, info_, &op.alpha);
    if (!why.empty()) Fail(why);
  }
  op.ins = {In(n.input(0))};
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

void Lowerer::ReduceNode(const onnx::NodeProto& n) {
  if (n.op_type() == "ReduceMean" && LayerNormPattern(n)) return;
  ReduceView v;
  std::string why = ReduceOf(n, info_, &v);
  if (!why.empty()) Fail(why);
  IrOp op;
  op.kind = fb::OpParams::Reduce;
  op.reduce = v.kind;
  op.m = v.outer, op.k = v.axis, op.n = v.inner;
  op.ins = {In(n.input(0))};
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

// The constant of a binary node n whose other operand is `value`, with as
// many values as `count` (1: one value); empty when n is not that.
std::vector<float> Lowerer::ConstOperand(const onnx::NodeProto& n, const std::string& value,
                                         uint64_t count) {
  if (n.input_size() != 2) return {};
  const int other = n.input(0) == value ? 1 : 0;
  if (n.input(1 - other) != value || n.input(other) == value) return {};
  const auto* c = info_.constant(n.input(other));
  if (!c ||
      (c->data_type() != onnx::TensorProto::FLOAT && c->data_type() != onnx::TensorProto::FLOAT16))
    return {};
  const std::vector<int64_t> vs = Shape(value);
  std::vector<int64_t> kd = Dims(*c);
  if (kd.size() > vs.size()) return {};
  std::vector<float> f = Floats(*c, NodeLabel(n));
  if (f.size() != count) return {};
  // Several values: the constant's dimensions (past leading 1s) are the
  // value's last ones, so element j of a row meets value j.
  while (count > 1 && !kd.empty() && kd.front() == 1) kd.erase(kd.begin());
  for (size_t i = 0; count > 1 && i < kd.size(); ++i)
    if (kd[i] != vs[vs.size() - kd.size() + i]) return {};
  return f;
}

bool Lowerer::LayerNormPattern(const onnx::NodeProto& r1) {
  ReduceView v1, v2;
  if (!ReduceOf(r1, info_, &v1).empty() || v1.inner != 1) return false;
  const std::string& x = r1.input(0);
  const onnx::NodeProto* sub = OnlyConsumer(r1.output(0));
  if (!sub || sub->op_type() != "Sub" || sub->input_size() != 2 || sub->input(0) != x ||
      sub->input(1) != r1.output(0) || Shape(sub->output(0)) != Shape(x))
    return false;
  const std::string& d = sub->output(0);
  auto it = consumers_.find(d);
  if (outputs_.count(d) || it == consumers_.end() || it->second.size() != 2) return false;
  const onnx::NodeProto *pow = nullptr, *div = nullptr;
  for (const onnx::NodeProto* c : it->second) {
    if (c->op_type() == "Pow" && c->input(0) == d) pow = c;
    if (c->op_type() == "Div" && c->input_size() == 2 && c->input(0) == d) div = c;
  }
  float e = 0.f;
  if (!pow || !div || !PowExponent(*pow, info_, &e).empty() || e != 2.f) return false;
  const onnx::NodeProto* r2 = OnlyConsumer(pow->output(0));
  if (!r2 || r2->op_type() != "ReduceMean" || !ReduceOf(*r2, info_, &v2).empty() ||
      v2.outer != v1.outer || v2.axis != v1.axis || v2.inner != 1)
    return false;
  const onnx::NodeProto* add = OnlyConsumer(r2->output(0));
  if (!add || add->op_type() != "Add") return false;
  std::vector<float> eps = ConstOperand(*add, r2->output(0), 1);
  if (eps.empty() || !(eps[0] >= 0.f)) return false;
  const onnx::NodeProto* sqrt = OnlyConsumer(add->output(0));
  if (!sqrt || sqrt->op_type() != "Sqrt" || OnlyConsumer(sqrt->output(0)) != div ||
      div->input(1) != sqrt->output(0))
    return false;
  // Then a scale and a bias, each optional: per element of the axis.
  std::string value = div->output(0);
  std::vector<const onnx::NodeProto*> tail;
  std::vector<float> scale, bias;
  if (const onnx::NodeProto* mul = OnlyConsumer(value)) {
    if (mul->op_type() == "Mul" && !(scale = ConstOperand(*mul, value, v1.axis)).empty() &&
        Shape(mul->output(0)) == Shape(value)) {
      tail.push_back(mul);
      value = mul->output(0);
    }
  }
  if (const onnx::NodeProto* b = OnlyConsumer(value)) {
    if (b->op_type() == "Add" && !(bias = ConstOperand(*b, value, v1.axis)).empty() &&
        Shape(b->output(0)) == Shape(value)) {
      tail.push_back(b);
      value = b->output(0);
    }
  }
  IrOp op;
  op.kind = fb::OpParams::LayerNorm;
  op.m = v1.outer, op.k = v1.axis, op.n = 1;
  op.eps = eps[0];
  op.ins = {In(x)};
  const int64_t axis = int64_t(v1.axis);
  if (!scale.empty()) op.weights = Weight(scale, {axis}, value + ":ln_scale");
  if (!bias.empty()) op.bias = Weight(bias, {axis}, value + ":ln_bias");
  op.out = Out(value);
  g_.ops.push_back(op);
  for (const onnx::NodeProto* c : {sub, pow, r2, add, sqrt, div}) consumed_.insert(c);
  for (const onnx::NodeProto* c : tail) consumed_.insert(c);
  return true;
}

void Lowerer::LayerNormNode(const onnx::NodeProto& n) {
  NormView v;
  std::string why = LayerNormOf(n, info_, &v);
  if (!why.empty()) Fail(why);
  IrOp op;
  op.kind = fb::OpParams::LayerNorm;
  op.m = v.outer, op.k = v.axis, op.n = 1;
  op.eps = v.eps;
  op.ins = {In(n.input(0))};
  const int64_t axis = int64_t(v.axis);
  op.weights =
      Weight(Floats(*info_.constant(n.input(1)), NodeLabel(n)), {axis}, n.output(0) + ":ln_scale");
  if (Has(n, 2))
    op.bias =
        Weight(Floats(*info_.constant(n.input(2)), NodeLabel(n)), {axis}, n.output(0) + ":ln_bias");
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

bool Lowerer::MatchGelu(const std::string& x, bool whole, Gelu* m) {
  if (outputs_.count(x)) return false;
  auto it = consumers_.find(x);
  if (it == consumers_.end()) return false;
  const onnx::NodeProto *scale = nullptr, *mul = nullptr;
  for (const onnx::NodeProto* c : it->second) {
    if ((c->op_type() == "Div" || c->op_type() == "Mul") && c->input_size() == 2 &&
        c->input(0) == x && !scale && !ConstOperand(*c, x, 1).empty())
      scale = c;
    else if (c->op_type() == "Mul" && c != scale) mul = c;
  }
  if (!scale || !mul || (whole && it->second.size() != 2)) return false;
  const float k = ConstOperand(*scale, x, 1)[0];
  const onnx::NodeProto* erf = OnlyConsumer(scale->output(0));
  if (!erf || erf->op_type() != "Erf") return false;
  const onnx::NodeProto* add = OnlyConsumer(erf->output(0));
  std::vector<float> one;
  if (!add || add->op_type() != "Add" || (one = ConstOperand(*add, erf->output(0), 1)).empty() ||
      one[0] != 1.f)
    return false;
  if (OnlyConsumer(add->output(0)) != mul || mul->input_size() != 2 ||
      !((mul->input(0) == x && mul->input(1) == add->output(0)) ||
        (mul->input(1) == x && mul->input(0) == add->output(0))))
    return false;
  const onnx::NodeProto* half = OnlyConsumer(mul->output(0));
  std::vector<float> h;
  if (!half || half->op_type() != "Mul" || (h = ConstOperand(*half, mul->output(0), 1)).empty())
    return false;
  const std::vector<int64_t> xs = Shape(x);
  if (Shape(half->output(0)) != xs || Shape(mul->output(0)) != xs) return false;
  m->alpha = scale->op_type() == "Div" ? 1.f / k : k;
  m->beta = h[0];
  m->nodes = {scale, erf, add, mul, half};
  m->output = half->output(0);
  return true;
}

std::string Lowerer::FuseGelu(IrOp& op, const std::string& x) {
  Gelu m;
  if (op.act != fb::Activation::NONE || !MatchGelu(x, true, &m)) return x;
  op.act = fb::Activation::GELU;
  op.alpha = m.alpha;
  op.beta = m.beta;
  for (const onnx::NodeProto* c : m.nodes) consumed_.insert(c);
  return m.output;
}

bool Lowerer::GeluNode(const onnx::NodeProto& scale) {
  Gelu m;
  if (scale.input_size() != 2 || !MatchGelu(scale.input(0), false, &m) || m.nodes[0] != &scale)
    return false;
  IrOp op;
  op.kind = fb::OpParams::Unary;
  op.act = fb::Activation::GELU;
  op.alpha = m.alpha;
  op.beta = m.beta;
  op.ins = {In(scale.input(0))};
  op.out = Out(m.output);
  g_.ops.push_back(op);
  for (const onnx::NodeProto* c : m.nodes) consumed_.insert(c);
  return true;
}

std::string Lowerer::FoldMatMulBias(const onnx::NodeProto& n, int64_t N, std::vector<float>* bias) {
  const std::string& y = n.output(0);
  const onnx::NodeProto* add = OnlyConsumer(y);
  if (!add || add->op_type() != "Add" || Shape(add->output(0)) != Shape(y)) return y;
  std::vector<float> b = ConstOperand(*add, y, uint64_t(N));
  if (b.empty() || N == 1) return y;  // one value per column, broadcast along rows
  *bias = b;
  consumed_.insert(add);
  return add->output(0);
}

void Lowerer::PlanFolds() {
  for (const onnx::NodeProto* n : p_.nodes) {
    if (n->op_type() != "MatMul" || n->input_size() != 2) continue;
    bool mine = false;
    if (!UnsupportedTransformer(*n, info_, &mine).empty() || !mine) continue;
    for (int i = 0; i < 2; ++i) {
      // Back through at most one scalar Mul/Div (operand A only: alpha),
      // then a chain of Transposes, each the only reader of its output.
      OperandView view;
      std::string v = n->input(i);
      const onnx::NodeProto* user = n;
      std::vector<const onnx::NodeProto*> chain;
      auto producer = [&](const std::string& name) -> const onnx::NodeProto* {
        auto p = ix_.producer.find(name);
        if (p == ix_.producer.end() || !InPartition(p->second)) return nullptr;
        return OnlyConsumer(name) == user ? p->second : nullptr;
      };
      const onnx::NodeProto* pn = producer(v);
      if (i == 0 && pn && (pn->op_type() == "Mul" || pn->op_type() == "Div")) {
        const std::string& src = pn->input(0);
        std::vector<float> k = ConstOperand(*pn, src, 1);
        if (!k.empty() && pn->input(0) == src && Shape(src) == Shape(v) && k[0] != 0.f) {
          view.alpha = pn->op_type() == "Div" ? 1.f / k[0] : k[0];
          chain.push_back(pn);
          user = pn;
          v = src;
          pn = producer(v);
        }
      }
      std::vector<int64_t> perm(Shape(v).size());
      for (size_t d = 0; d < perm.size(); ++d) perm[d] = int64_t(d);
      while (pn && pn->op_type() == "Transpose") {
        const std::vector<int64_t> xs = Shape(pn->input(0));
        std::vector<int64_t> p = AttrInts(*pn, "perm");
        if (p.empty())
          for (size_t d = xs.size(); d-- > 0;) p.push_back(int64_t(d));
        if (p.size() != perm.size()) break;
        for (int64_t& q : perm) q = p[size_t(q)];
        chain.push_back(pn);
        user = pn;
        v = pn->input(0);
        pn = producer(v);
      }
      if (chain.empty()) continue;
      const std::vector<int64_t> st = ContiguousStrides(Shape(v));
      view.source = v;
      for (int64_t q : perm) view.strides.push_back(st[size_t(q)]);
      const size_t r = perm.size();
      // A needs its K contiguous; B its N (plain) or its K (read as B^T).
      const bool ok = i == 0 ? view.strides[r - 1] == 1
                             : (view.strides[r - 1] == 1 || view.strides[r - 2] == 1);
      if (!ok) continue;
      for (const onnx::NodeProto* c : chain) consumed_.insert(c);
      folds_[n->output(0) + (i == 0 ? ":a" : ":b")] = view;
    }
  }
}

void Lowerer::BatchMatMul(const onnx::NodeProto& n) {
  std::string why = BatchMatMulFits(n, info_);
  if (!why.empty()) Fail(why);
  const std::vector<int64_t> ys = Shape(n.output(0));
  const size_t r = ys.size() - 2;
  IrOp op;
  op.kind = fb::OpParams::BatchMatMul;
  op.m = uint64_t(ys[r]), op.n = uint64_t(ys[r + 1]);
  op.batch.assign(ys.begin(), ys.begin() + long(r));
  // Each operand: its tensor and the element stride of each of its
  // dimensions (contiguous, or through the Transposes folded into it).
  int t[2];
  std::vector<int64_t> shape[2], strides[2];
  for (int i = 0; i < 2; ++i) {
    shape[i] = Shape(n.input(i));
    auto f = folds_.find(n.output(0) + (i == 0 ? ":a" : ":b"));
    if (f != folds_.end()) {
      t[i] = In(f->second.source);
      strides[i] = f->second.strides;
      if (i == 0) op.scale = f->second.alpha;
    } else {
      t[i] = In(n.input(i));
      strides[i] = ContiguousStrides(shape[i]);
    }
  }
  op.k = uint64_t(shape[0].back());
  // Batch strides aligned to the output's batch dims; 0 where broadcast.
  for (int i = 0; i < 2; ++i) {
    std::vector<int64_t>& out = i == 0 ? op.a_strides : op.b_strides;
    out.assign(r, 0);
    const size_t rb = shape[i].size() - 2;
    for (size_t d = 0; d < rb; ++d)
      if (shape[i][d] != 1) out[d + r - rb] = strides[i][d];
  }
  const size_t ra = shape[0].size(), rbk = shape[1].size();
  op.a_rs = uint64_t(strides[0][ra - 2]);
  if (strides[1][rbk - 1] == 1) {
    op.b_rs = uint64_t(strides[1][rbk - 2]);
  } else {
    op.trans_b = true;
    op.b_rs = uint64_t(strides[1][rbk - 1]);
  }
  op.ins = {t[0], t[1]};
  std::string value = n.output(0);
  // A scalar Mul or Div of the product folds into alpha too.
  if (const onnx::NodeProto* s = OnlyConsumer(value)) {
    std::vector<float> k;
    if ((s->op_type() == "Mul" || (s->op_type() == "Div" && s->input(0) == value)) &&
        !(k = ConstOperand(*s, value, 1)).empty() && k[0] != 0.f && Shape(s->output(0)) == ys) {
      op.scale *= s->op_type() == "Div" ? 1.f / k[0] : k[0];
      consumed_.insert(s);
      value = s->output(0);
    }
  }
  op.out = Out(FuseAct(op, value));
  g_.ops.push_back(op);
}

void Lowerer::StridedCopyNode(const onnx::NodeProto& n) {
  half_node_ = false;  // the copy keeps its input's dtype: float32
  const int in = In(n.input(0));
  const int outputs = n.op_type() == "Split" ? n.output_size() : 1;
  for (int k = 0; k < outputs; ++k) {
    if (n.output(k).empty()) continue;
    CopyView v;
    std::string why = StridedView(n, k, info_, &v);
    if (!why.empty()) Fail(why);
    IrOp op;
    op.kind = fb::OpParams::StridedCopy;
    op.offset = v.offset;
    op.ins = {in};
    // Neighbouring output dimensions that stay neighbours in the input
    // merge (a channel Split of NCHW is one run per image, not one per
    // row): the op writes an arena view of the output with fewer, longer
    // dimensions. A partition output keeps its shape (a view would cost a
    // copy).
    const std::vector<int64_t> ys = Shape(n.output(k));
    std::vector<int64_t> dims, strides;
    for (size_t d = 0; d < ys.size(); ++d) {
      if (ys[d] == 1) continue;
      if (!dims.empty() && strides.back() == v.strides[d] * ys[d]) {
        dims.back() *= ys[d];
        strides.back() = v.strides[d];
      } else {
        dims.push_back(ys[d]);
        strides.push_back(v.strides[d]);
      }
    }
    if (dims.size() < ys.size() && !outputs_.count(n.output(k))) {
      op.a_strides = strides;
      op.out = Add(IrTensor{n.output(k) + ":merged", dims});
      g_.ops.push_back(op);
      BindAs(op.out, n.output(k));
      continue;
    }
    op.a_strides = v.strides;
    op.out = Out(n.output(k));
    g_.ops.push_back(op);
  }
}

void Lowerer::ResizeNode(const onnx::NodeProto& n) {
  ResizeView v;
  std::string why = ResizeOf(n, info_, &v);
  if (!why.empty()) Fail(why);
  IrOp op;
  op.kind = fb::OpParams::Resize;
  op.resize = v;
  op.ins = {In(n.input(0))};
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

void Lowerer::PadNode(const onnx::NodeProto& n) {
  IrOp op;
  PadView v;
  std::string why = PadOf(n, info_, &v);
  if (!why.empty()) Fail(why);
  op.a_strides = v.begins;
  op.alpha = v.value;
  op.pad_mode = v.mode;
  op.kind = v.mode == fb::PadMode::CONSTANT ? fb::OpParams::Pad : fb::OpParams::PadMirror;
  op.ins = {In(n.input(0))};
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

void Lowerer::RecurrentNode(const onnx::NodeProto& n) {
  std::string why = RecurrentFits(n, info_);
  if (!why.empty()) Fail(why);
  const bool lstm = n.op_type() == "LSTM";
  const std::string dir = AttrString(n, "direction", "forward");
  const std::vector<int64_t> xs = Shape(n.input(0));
  const int64_t S = xs[0], B = xs[1], I = xs[2], H = AttrInt(n, "hidden_size", 0);
  const int64_t D = dir == "bidirectional" ? 2 : 1, G = lstm ? 4 : 3, GH = G * H;
  const bool lbr = !lstm && AttrInt(n, "linear_before_reset", 0) != 0;
  IrOp op;
  op.kind = fb::OpParams::Recurrent;
  op.rnn.lstm = lstm;
  op.rnn.seq = S, op.rnn.batch = B, op.rnn.input = I, op.rnn.hidden = H;
  op.rnn.dirs = uint32_t(D);
  op.rnn.reverse = dir == "reverse";
  op.rnn.lbr = lbr;
  op.rnn.x = In(n.input(0));
  op.rnn.w = Weight(Floats(*info_.constant(n.input(1)), NodeLabel(n)), {D, GH, I}, n.input(1));
  op.rnn.r = Weight(Floats(*info_.constant(n.input(2)), NodeLabel(n)), {D, GH, H}, n.input(2));
  // Wb + Rb per gate (the ONNX B is [D][Wb, Rb]); a GRU with
  // linear_before_reset keeps the h gate's Rb apart.
  std::vector<float> bsrc(size_t(D * 2 * GH), 0.f);
  if (Has(n, 3)) bsrc = Floats(*info_.constant(n.input(3)), NodeLabel(n));
  std::vector<float> bias(size_t(D * GH)), rbh(size_t(D * H));
  for (int64_t d = 0; d < D; ++d)
    for (int64_t i = 0; i < GH; ++i) {
      const float wb = bsrc[size_t(d * 2 * GH + i)], rb = bsrc[size_t(d * 2 * GH + GH + i)];
      const bool apart = lbr && i >= 2 * H;
      bias[size_t(d * GH + i)] = apart ? wb : wb + rb;
      if (apart) rbh[size_t(d * H + i - 2 * H)] = rb;
    }
  op.rnn.bias = Weight(bias, {D, GH}, n.output(0) + ":rnn_bias");
  if (lbr) op.rnn.rbh = Weight(rbh, {D, H}, n.output(0) + ":rnn_rbh");
  if (Has(n, 5)) op.rnn.h0 = In(n.input(5));
  if (lstm && Has(n, 6)) op.rnn.c0 = In(n.input(6));
  op.ins = {op.rnn.x};
  for (int t : {op.rnn.h0, op.rnn.c0})
    if (t >= 0) op.ins.push_back(t);
  int* outs[3] = {&op.rnn.y, &op.rnn.yh, &op.rnn.yc};
  for (int i = 0; i < n.output_size() && i < (lstm ? 3 : 2); ++i)
    if (!n.output(i).empty()) *outs[i] = Out(n.output(i));
  // The op's first output for the memory planner; the others touch too.
  op.out = op.rnn.y >= 0 ? op.rnn.y : (op.rnn.yh >= 0 ? op.rnn.yh : op.rnn.yc);
  if (op.out < 0) Fail("no output is read");
  g_.ops.push_back(op);
}

bool Lowerer::TransformerNode(const onnx::NodeProto& n) {
  const std::string& t = n.op_type();
  if ((t == "Div" || t == "Mul") && GeluNode(n)) return true;
  if (kUnaryOps.count(t)) {
    UnaryNode(n);
    return true;
  }
  if (t.rfind("Reduce", 0) == 0) {
    ReduceNode(n);
    return true;
  }
  if (t == "LayerNormalization") {
    LayerNormNode(n);
    return true;
  }
  if (t == "Resize") {
    ResizeNode(n);
    return true;
  }
  if (t == "Pad") {
    PadNode(n);
    return true;
  }
  if (t == "LSTM" || t == "GRU") {
    RecurrentNode(n);
    return true;
  }
  if (t == "Slice" || t == "Gather" || t == "Expand" || t == "Split") {
    StridedCopyNode(n);
    return true;
  }
  if (t == "MatMul") {
    bool mine = false;
    UnsupportedTransformer(n, info_, &mine);
    if (mine) {
      BatchMatMul(n);
      return true;
    }
  }
  return false;
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
