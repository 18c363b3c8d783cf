// SPDX-License-Identifier: Apache-2.0
// Lowering: ONNX nodes of one partition -> vnpu ops (vnpu_ir.h); the
// Lowerer (lowerer.h) members for the float ops, and Lower.
//
// Besides the one-to-one mappings it does the compile-time work the README
// promises: BatchNormalizations and Mul/Add by a constant (one value, or one
// per channel) right after a Conv or ConvTranspose are folded into its
// weights and bias, and an activation is fused into the CONV2D/GEMM/
// CONV_TRANSPOSE2D before it, all only when the intermediate value has that
// one consumer and is not a partition output (otherwise someone else still
// needs the unfused value).
// Reshape-like nodes whose input and output both live in the arena become
// aliases (no op); the others become COPY.
#include <cfloat>
#include <cmath>
#include <map>
#include <set>

#include <epctx/vnpu_layout.h>

#include "epctx_host/half.h"
#include "lowerer.h"
#include "onnx_util.h"
#include "vnpu_ops.h"

namespace epctx {
namespace host {
namespace vnpu {
namespace {

// The weight layouts the driver reads, decided by its predicates.
namespace layout = ::epctx::vnpu::layout;

// Tensors of at least this many float32 values that are all float16 values
// are stored as float16 (Lowerer::Weight).
constexpr size_t kHalfWeightMin = 1024;

}  // namespace

int64_t Product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

IrGraph Lowerer::Run() {
  g_.name = p_.name;
  for (size_t k = 0; k < p_.outputs.size(); ++k) outputs_[p_.outputs[k]] = uint32_t(k);
  for (const auto* n : p_.nodes)
    for (const auto& i : n->input())
      if (!i.empty()) consumers_[i].push_back(n);
  for (size_t k = 0; k < p_.inputs.size(); ++k) {
    IrTensor t{p_.inputs[k], Shape(p_.inputs[k]), fb::Location::INPUT, uint32_t(k)};
    t.dtype = ValueDType(t.name);
    if (!IsHalf(t.name)) {
      by_name_[t.name] = Add(t);
      continue;
    }
    // A float16 input is widened once into the arena; ops read that.
    t.dtype = fb::DType::FLOAT16;
    IrOp widen;
    widen.kind = fb::OpParams::Convert;
    widen.ins = {Add(t)};
    widen.out = Add(IrTensor{t.name + ":f32", t.shape});
    g_.ops.push_back(widen);
    by_name_[t.name] = widen.out;
  }
  PlanFolds();
  for (const auto* n : p_.nodes) {
    if (consumed_.count(n)) continue;
    node_ = n;
    Node(*n);
  }
  // Float16 outputs were computed in the arena: narrow them last.
  for (const auto& o : p_.outputs) {
    if (!IsHalf(o) || !by_name_.count(o)) continue;
    IrTensor t{o, Shape(o), fb::Location::OUTPUT, outputs_.at(o)};
    t.dtype = fb::DType::FLOAT16;
    IrOp narrow;
    narrow.kind = fb::OpParams::Convert;
    narrow.ins = {by_name_[o]};
    narrow.out = Add(t);
    g_.ops.push_back(narrow);
    by_name_[o] = narrow.out;
  }
  for (const auto& o : p_.outputs) {
    auto it = by_name_.find(o);
    if (it == by_name_.end() || g_.tensors[size_t(it->second)].loc != fb::Location::OUTPUT)
      throw CompileError("vnpu: partition '" + p_.name + "' output '" + o +
                         "' is not produced by any of its nodes");
  }
  FuseClampLuts();
  PruneTensors(g_);  // renumbers the tensors: by_name_ is stale from here
  return std::move(g_);
}

void Lowerer::Fail(const std::string& why) const {
  throw CompileError("vnpu: " + NodeLabel(*node_) + ": " + why);
}

int Lowerer::Add(const IrTensor& t) {
  g_.tensors.push_back(t);
  return int(g_.tensors.size() - 1);
}

std::vector<int64_t> Lowerer::Shape(const std::string& name) const {
  if (const auto* c = info_.constant(name)) return Dims(*c);
  const ValueType* t = info_.type(name);
  if (!t || !t->fully_static()) throw CompileError("vnpu: shape of '" + name + "' is not static");
  return t->dims;
}

int Lowerer::Weight(const std::vector<float>& v, std::vector<int64_t> shape,
                    const std::string& name) {
  IrTensor t{name, std::move(shape), fb::Location::WEIGHT};
  // Float16 when the node read float16 weights, or when a large tensor's
  // values all are float16 values (float16 weights widened by a Cast the
  // compiler folded): the package keeps them at half the bytes and the
  // driver widens them once, when the graph is bound.
  std::vector<uint16_t> half;
  if (half_node_ || v.size() >= kHalfWeightMin) {
    half.reserve(v.size());
    for (float f : v) {
      half.push_back(FloatToHalf(f));
      if (!(HalfToFloat(half.back()) == f)) {
        half.clear();
        break;
      }  // NaN too
    }
  }
  if (!half.empty()) {
    t.dtype = fb::DType::FLOAT16;
    t.offset = ws_.Add(half.data(), half.size() * 2);
  } else {
    t.offset = ws_.Add(v.data(), v.size() * 4);
  }
  return Add(t);
}

int Lowerer::In(const std::string& name) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  if (const auto* c = info_.constant(name)) {
    int t = Weight(Floats(*c, NodeLabel(*node_)), Dims(*c), name);
    by_name_[name] = t;
    return t;
  }
  const int lazy = LazyInt8(name);
  if (lazy >= 0) return lazy;
  Fail("input '" + name +
       "' is neither produced inside the partition, a partition input, "
       "nor a constant");
}

bool Lowerer::IsHalf(const std::string& name) const {
  const ValueType* t = info_.type(name);
  return t && t->dtype == onnx::TensorProto::FLOAT16 && !info_.constant(name);
}

int Lowerer::Out(const std::string& name) {
  IrTensor t{name, Shape(name)};
  t.dtype = ValueDType(name);
  auto o = outputs_.find(name);
  if (o != outputs_.end() && !IsHalf(name)) {
    t.loc = fb::Location::OUTPUT;
    t.index = o->second;
  }
  int id = Add(t);
  by_name_[name] = id;
  return id;
}

const onnx::NodeProto* Lowerer::SoleConsumer(const std::string& value,
                                             const std::set<std::string>& ops) {
  if (outputs_.count(value)) return nullptr;
  auto it = consumers_.find(value);
  if (it == consumers_.end() || it->second.size() != 1) return nullptr;
  const onnx::NodeProto* c = it->second[0];
  return ops.count(c->op_type()) && c->input(0) == value ? c : nullptr;
}

void Lowerer::SetAct(IrOp& op, const onnx::NodeProto& n) {
  const std::string& t = n.op_type();
  if (t == "Relu") op.act = fb::Activation::RELU;
  if (t == "Sigmoid") op.act = fb::Activation::SIGMOID;
  if (t == "Tanh") op.act = fb::Activation::TANH;
  if (t == "HardSwish") {
    op.act = fb::Activation::HARD_SWISH;
    op.alpha = 1.0f;
    op.beta = 0.0f;
  }
  if (t == "LeakyRelu") {
    op.act = fb::Activation::LEAKY_RELU;
    op.alpha = AttrFloat(n, "alpha", 0.01f);
  }
  if (t == "HardSigmoid") {
    op.act = fb::Activation::HARD_SIGMOID;
    op.alpha = AttrFloat(n, "alpha", 0.2f);
    op.beta = AttrFloat(n, "beta", 0.5f);
  }
  if (t == "Clip") {
    op.act = fb::Activation::CLIP;
    op.alpha = AttrFloat(n, "min", -FLT_MAX);
    op.beta = AttrFloat(n, "max", FLT_MAX);
    for (int i = 1; i < 3; ++i) {
      if (!Has(n, i)) continue;
      const auto* c = info_.constant(n.input(i));
      if (!c) throw CompileError("vnpu: " + NodeLabel(n) + ": min/max must be constants");
      auto v = Floats(*c, NodeLabel(n));
      if (v.size() != 1) throw CompileError("vnpu: " + NodeLabel(n) + ": min/max must be scalars");
      (i == 1 ? op.alpha : op.beta) = v[0];
    }
  }
}

const onnx::NodeProto* Lowerer::ChannelAffine(const std::string& value, int64_t C,
                                              std::vector<float>* v, bool* mul) {
  const onnx::NodeProto* c = OnlyConsumer(value);
  if (!c) return nullptr;
  if ((c->op_type() != "Mul" && c->op_type() != "Add") || c->input_size() != 2) return nullptr;
  const int other = c->input(0) == value ? 1 : 0;
  if (c->input(1 - other) != value || c->input(other) == value) return nullptr;
  const auto* k = info_.constant(c->input(other));
  if (!k || k->data_type() != onnx::TensorProto::FLOAT) return nullptr;
  const auto kd = Dims(*k);
  const size_t rank = Shape(value).size();
  if (kd.size() > rank) return nullptr;  // would raise the rank
  std::vector<float> f = Floats(*k, NodeLabel(*c));
  if (f.size() != 1) {
    // Per channel: every dimension 1 but axis 1 (aligned to the right).
    if (C <= 0 || f.size() != size_t(C) || rank < 2) return nullptr;
    for (size_t i = 0; i < kd.size(); ++i)
      if (kd[i] != 1 && i + rank - kd.size() != 1) return nullptr;
  }
  *v = f.size() == 1 ? std::vector<float>(size_t(C > 0 ? C : 1), f[0]) : f;
  *mul = c->op_type() == "Mul";
  return c;
}

const onnx::NodeProto* Lowerer::ScalarAffine(const std::string& value, float* v, bool* mul) {
  std::vector<float> f;
  const onnx::NodeProto* c = ChannelAffine(value, 0, &f, mul);
  if (c) *v = f[0];
  return c;
}

template <typename Scale>
std::string Lowerer::FoldChannelAffine(std::string value, int64_t CO, std::vector<float>& b,
                                       bool* has_bias, const Scale& scale) {
  for (;;) {
    std::vector<float> s, t;
    const onnx::NodeProto* n = SoleConsumer(value, {"BatchNormalization"});
    if (n) {
      ScaleShiftOf(*n, size_t(CO), &s, &t);
    } else {
      bool mul = false;
      std::vector<float> v;
      if (!(n = ChannelAffine(value, CO, &v, &mul))) return value;
      s.assign(size_t(CO), 1.f);
      t.assign(size_t(CO), 0.f);
      (mul ? s : t) = v;
    }
    for (size_t o = 0; o < size_t(CO); ++o) {
      if (s[o] != 1.f) scale(int64_t(o), s[o]);
      b[o] = b[o] * s[o] + t[o];
    }
    *has_bias = true;
    consumed_.insert(n);
    value = n->output(0);
  }
}

bool Lowerer::ScalarOperand(const onnx::NodeProto& n, const std::string& value, float* k) {
  if (n.input_size() != 2) return false;
  const int other = n.input(0) == value ? 1 : 0;
  if (n.input(1 - other) != value || n.input(other) == value) return false;
  const auto* c = info_.constant(n.input(other));
  if (!c || c->data_type() != onnx::TensorProto::FLOAT) return false;
  if (Dims(*c).size() > Shape(value).size()) return false;
  std::vector<float> f = Floats(*c, NodeLabel(n));
  if (f.size() != 1) return false;
  *k = f[0];
  return true;
}

const onnx::NodeProto* Lowerer::OnlyConsumer(const std::string& value) {
  if (outputs_.count(value)) return nullptr;
  auto it = consumers_.find(value);
  return it == consumers_.end() || it->second.size() != 1 ? nullptr : it->second[0];
}

std::string Lowerer::FuseHardSwish(IrOp& op, const std::string& x) {
  if (outputs_.count(x)) return x;
  auto it = consumers_.find(x);
  if (it == consumers_.end() || it->second.size() != 2) return x;
  const onnx::NodeProto *add = nullptr, *mul = nullptr;
  for (const onnx::NodeProto* c : it->second) {
    if (c->op_type() == "Add") add = c;
    if (c->op_type() == "Mul") mul = c;
  }
  float k = 0.f;
  if (!add || !mul || !ScalarOperand(*add, x, &k) || k != 3.f) return x;
  const onnx::NodeProto* clip = OnlyConsumer(add->output(0));
  if (!clip || clip->op_type() != "Clip") return x;
  for (int i = 1; i < 3; ++i) {  // SetAct refuses bounds that are not constant scalars
    if (!Has(*clip, i)) continue;
    const auto* bc = info_.constant(clip->input(i));
    if (!bc || bc->data_type() != onnx::TensorProto::FLOAT ||
        Floats(*bc, NodeLabel(*clip)).size() != 1)
      return x;
  }
  IrOp bounds;
  SetAct(bounds, *clip);
  if (bounds.alpha != 0.f || bounds.beta != 6.f) return x;
  const std::string& c = clip->output(0);
  if (OnlyConsumer(c) != mul || mul->input_size() != 2 ||
      !((mul->input(0) == x && mul->input(1) == c) || (mul->input(0) == c && mul->input(1) == x)))
    return x;
  const onnx::NodeProto* div = OnlyConsumer(mul->output(0));
  if (!div || div->op_type() != "Div" || div->input(0) != mul->output(0) ||
      !ScalarOperand(*div, mul->output(0), &k) || k != 6.f)
    return x;
  for (const onnx::NodeProto* n : {add, clip, mul, div}) consumed_.insert(n);
  op.act = fb::Activation::HARD_SWISH;
  op.alpha = 1.0f;
  op.beta = 0.0f;
  std::string value = div->output(0);
  float sv = 0.f;
  bool is_mul = false;
  const onnx::NodeProto* a = ScalarAffine(value, &sv, &is_mul);
  if (a && is_mul) {
    op.alpha = sv;
    consumed_.insert(a);
    value = a->output(0);
    a = ScalarAffine(value, &sv, &is_mul);
  }
  if (a && !is_mul) {
    op.beta = sv;
    consumed_.insert(a);
    value = a->output(0);
  }
  return value;
}

std::string Lowerer::FuseSwish(IrOp& op, const std::string& x) {
  if (outputs_.count(x)) return x;
  auto it = consumers_.find(x);
  if (it == consumers_.end() || it->second.size() != 2) return x;
  const onnx::NodeProto *sig = nullptr, *mul = nullptr;
  for (const onnx::NodeProto* c : it->second) {
    if (c->op_type() == "Sigmoid" && c->input(0) == x) sig = c;
    if (c->op_type() == "Mul") mul = c;
  }
  if (!sig || !mul || OnlyConsumer(sig->output(0)) != mul || mul->input_size() != 2) return x;
  const std::string& s = sig->output(0);
  if (!((mul->input(0) == x && mul->input(1) == s) || (mul->input(0) == s && mul->input(1) == x)))
    return x;
  consumed_.insert(sig);
  consumed_.insert(mul);
  op.act = fb::Activation::SWISH;
  op.alpha = 0.f;
  op.beta = 0.f;
  return mul->output(0);
}

std::string Lowerer::FuseAct(IrOp& op, const std::string& value) {
  const onnx::NodeProto* a = SoleConsumer(value, kActivationOps);
  if (!a) return value;
  SetAct(op, *a);
  consumed_.insert(a);
  std::string out = a->output(0);
  float floor = 0.f;
  if (op.act == fb::Activation::LEAKY_RELU)
    if (const onnx::NodeProto* m = OnlyConsumer(out))
      if (m->op_type() == "Max" && ScalarOperand(*m, out, &floor)) {
        op.act = fb::Activation::LEAKY_RELU_MAX;
        op.beta = floor;
        consumed_.insert(m);
        out = m->output(0);
      }
  return out;
}

void Lowerer::Pads(const onnx::NodeProto& n, const std::vector<int64_t>& in, int64_t kh, int64_t kw,
                   int64_t sh, int64_t sw, int64_t dh, int64_t dw, IrOp& op) {
  std::string ap = AttrString(n, "auto_pad", "NOTSET");
  auto pads = AttrInts(n, "pads", {0, 0, 0, 0});
  if (pads.size() == 2) pads = {0, pads[0], 0, pads[1]};  // 1-D: [begin, end] of L
  if (ap == "VALID") pads = {0, 0, 0, 0};
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    int64_t k[2] = {kh, kw}, s[2] = {sh, sw}, d[2] = {dh, dw};
    for (int i = 0; i < 2; ++i) {
      int64_t size = in[size_t(2 + i)], out = (size + s[i] - 1) / s[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - size);
      int64_t small = total / 2, big = total - small;
      pads[size_t(i)] = ap == "SAME_UPPER" ? small : big;
      pads[size_t(i + 2)] = ap == "SAME_UPPER" ? big : small;
    }
  }
  op.pt = uint32_t(pads[0]);
  op.pl = uint32_t(pads[1]);
  op.pb = uint32_t(pads[2]);
  op.pr = uint32_t(pads[3]);
}

int Lowerer::View(int t, std::vector<int64_t> shape, const std::string& name) {
  const IrTensor& src = g_.tensors[size_t(t)];
  IrTensor v{name, std::move(shape)};
  if (src.loc == fb::Location::ARENA) {
    v.alias_of = src.alias_of >= 0 ? src.alias_of : t;
    return Add(v);
  }
  int id = Add(v);
  IrOp copy;
  copy.kind = fb::OpParams::Copy;
  copy.ins = {t};
  copy.out = id;
  g_.ops.push_back(copy);
  return id;
}

void Lowerer::BindAs(int t, const std::string& name) {
  int id = Out(name);
  IrTensor& out = g_.tensors[size_t(id)];
  if (out.loc == fb::Location::ARENA) {
    const IrTensor& src = g_.tensors[size_t(t)];
    out.alias_of = src.alias_of >= 0 ? src.alias_of : t;
    return;
  }
  IrOp copy;
  copy.kind = fb::OpParams::Copy;
  copy.ins = {t};
  copy.out = id;
  g_.ops.push_back(copy);
}

void Lowerer::Conv(const onnx::NodeProto& n) {
  IrOp op;
  op.kind = fb::OpParams::Conv2D;
  auto xs = Shape(n.input(0));
  const auto* wc = info_.constant(n.input(1));
  auto wd = Dims(*wc);
  const bool one_d = wd.size() == 3;
  if (one_d) {
    xs.insert(xs.begin() + 2, 1);
    wd.insert(wd.begin() + 2, 1);
  }
  if (wd.size() != 4 || xs.size() != 4) Fail("weight and input must be 3-D or 4-D");
  std::vector<float> w = Floats(*wc, NodeLabel(n));
  const int64_t CO = wd[0], cig = wd[1], KH = wd[2], KW = wd[3], G = AttrInt(n, "group", 1);
  if (G < 1 || xs[1] != cig * G || CO % G != 0)
    Fail("channels do not match group " + std::to_string(G));
  std::vector<float> b(size_t(CO), 0.f);
  bool has_bias = Has(n, 2);
  if (has_bias) b = Floats(*info_.constant(n.input(2)), NodeLabel(n));
  if (b.size() != size_t(CO)) Fail("bias has " + std::to_string(b.size()) + " values");
  auto st = AttrInts(n, "strides", one_d ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1});
  auto dl = AttrInts(n, "dilations", one_d ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1});
  if (one_d) {
    st.insert(st.begin(), 1);
    dl.insert(dl.begin(), 1);
  }
  op.kh = uint32_t(KH), op.kw = uint32_t(KW), op.sh = uint32_t(st[0]), op.sw = uint32_t(st[1]);
  op.dh = uint32_t(dl[0]), op.dw = uint32_t(dl[1]), op.groups = uint32_t(G);
  Pads(n, xs, KH, KW, st[0], st[1], dl[0], dl[1], op);

  const size_t per = size_t(cig * KH * KW);
  std::string value = FoldChannelAffine(n.output(0), CO, b, &has_bias, [&](int64_t o, float sv) {
    for (size_t i = 0; i < per; ++i) w[size_t(o) * per + i] *= sv;
  });
  value = FuseAct(op, value);
  if (op.act == fb::Activation::NONE) value = FuseHardSwish(op, value);
  if (op.act == fb::Activation::NONE) value = FuseSwish(op, value);

  // Pack [G][ceil(CO_g/8)][cig][KH*KW][8], channel tail zero-padded; or,
  // for the driver's transposed path (few output channels from many
  // inputs, a window wider than one column), CONV2D_TAPS' taps-major
  // [G][KH*KW][cig][ceil(CO_g/8)*8], where one tap's weights for all
  // output channels are one row of the tile's B panel.
  constexpr int64_t B = layout::kBlock;
  const int64_t cog = CO / G, nb = (cog + B - 1) / B, ks = KH * KW;
  const std::vector<int64_t> ys = Shape(value);
  const int64_t OW = ys.empty() ? 0 : ys.back();
  // The driver's transposed path, by its own predicate (vnpu_layout.h).
  const bool taps = layout::TapsLayout(cig, cog, KH, KW, OW);
  if (taps) op.kind = fb::OpParams::Conv2DTaps;
  std::vector<float> packed(size_t(G * nb * cig * ks * B), 0.f);
  for (int64_t o = 0; o < CO; ++o) {
    int64_t gi = o / cog, ol = o % cog;
    for (int64_t i = 0; i < cig; ++i)
      for (int64_t k = 0; k < ks; ++k)
        packed[size_t(taps ? ((gi * ks + k) * cig + i) * nb * B + ol
                           : (((gi * nb + ol / B) * cig + i) * ks + k) * B + ol % B)] =
            w[size_t((o * cig + i) * ks + k)];
  }
  op.ins = {In(n.input(0))};
  if (one_d) op.ins[0] = View(op.ins[0], xs, n.input(0) + ":nchw");
  op.weights = Weight(packed, {int64_t(packed.size())}, n.input(1) + ":packed");
  if (has_bias) op.bias = Weight(b, {CO}, n.output(0) + ":bias");
  if (!one_d) {
    op.out = Out(value);
    g_.ops.push_back(op);
    return;
  }
  std::vector<int64_t> ys1 = ys;
  ys1.insert(ys1.begin() + 2, 1);
  op.out = Add(IrTensor{value + ":nchw", ys1});
  g_.ops.push_back(op);
  BindAs(op.out, value);
}

void Lowerer::ConvTranspose(const onnx::NodeProto& n) {
  IrOp op;
  op.kind = fb::OpParams::ConvTranspose2D;
  auto xs = Shape(n.input(0));
  auto ys = Shape(n.output(0));
  const auto* wc = info_.constant(n.input(1));
  auto wd = Dims(*wc);
  const bool one_d = wd.size() == 3;  // NCL runs as NCHW with H = 1
  const std::vector<int64_t> unit = one_d ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1};
  auto st = AttrInts(n, "strides", unit), dl = AttrInts(n, "dilations", unit);
  auto op_pad =
      AttrInts(n, "output_padding", one_d ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 0});
  auto pads =
      AttrInts(n, "pads", one_d ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{0, 0, 0, 0});
  if (one_d) {
    for (auto* v : {&xs, &ys, &wd}) v->insert(v->begin() + 2, 1);
    st.insert(st.begin(), 1);
    dl.insert(dl.begin(), 1);
    op_pad.insert(op_pad.begin(), 0);
    pads = {0, pads[0], 0, pads[1]};
  }
  if (xs.size() != 4 || ys.size() != 4 || wd.size() != 4)
    Fail("input, output and weight must be 3-D or 4-D");
  std::vector<float> w = Floats(*wc, NodeLabel(n));
  const int64_t G = AttrInt(n, "group", 1), CI = wd[0], cog = wd[1], KH = wd[2], KW = wd[3];
  if (G < 1 || xs[1] != CI || CI % G != 0 || ys[1] != cog * G)
    Fail("channels do not match group " + std::to_string(G));
  op.kh = uint32_t(KH), op.kw = uint32_t(KW), op.sh = uint32_t(st[0]), op.sw = uint32_t(st[1]);
  op.dh = uint32_t(dl[0]), op.dw = uint32_t(dl[1]), op.groups = uint32_t(G);
  // Total padding per axis from the output size shape inference found
  // (covers pads, auto_pad and output_shape alike); SAME_UPPER puts the
  // odd one at the end, everything else at the start as ONNX does.
  std::string ap = AttrString(n, "auto_pad", "NOTSET");
  int64_t k[2] = {KH, KW}, s[2] = {st[0], st[1]}, d[2] = {dl[0], dl[1]};
  uint32_t* begin[2] = {&op.pt, &op.pl};
  uint32_t* end[2] = {&op.pb, &op.pr};
  uint32_t* extra[2] = {&op.oph, &op.opw};
  for (int i = 0; i < 2; ++i) {
    const int64_t full = (xs[size_t(2 + i)] - 1) * s[i] + (k[i] - 1) * d[i] + 1;
    int64_t opad = op_pad[size_t(i)];
    int64_t total = full + opad - ys[size_t(2 + i)];
    if (total < 0) {  // output_shape larger than the formula: the extra goes to output padding
      opad -= total;
      total = 0;
    }
    int64_t b = pads[size_t(i)], e = pads[size_t(i + 2)];
    if (b + e != total || ap != "NOTSET" || Attr(n, "output_shape")) {
      b = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      e = total - b;
    }
    *begin[i] = uint32_t(b), *end[i] = uint32_t(e), *extra[i] = uint32_t(opad);
  }
  // A bias Add, BatchNormalization or per-channel Mul after it folds in
  // (the 2x2 upsampling of a detection head is ConvTranspose, Add, BN,
  // Relu), then the activation fuses.
  std::vector<float> b(size_t(ys[1]), 0.f);
  bool has_bias = Has(n, 2);
  if (has_bias) b = Floats(*info_.constant(n.input(2)), NodeLabel(n));
  if (b.size() != size_t(ys[1])) Fail("bias has " + std::to_string(b.size()) + " values");
  const int64_t cig = CI / G, taps = KH * KW;
  std::string value = FoldChannelAffine(n.output(0), ys[1], b, &has_bias, [&](int64_t o, float sv) {
    const int64_t gi = o / cog, ol = o % cog;
    for (int64_t ci = gi * cig; ci < (gi + 1) * cig; ++ci)
      for (int64_t t = 0; t < taps; ++t) w[size_t((ci * cog + ol) * taps + t)] *= sv;
  });
  value = FuseAct(op, value);
  op.ins = {In(n.input(0))};
  if (one_d) op.ins[0] = View(op.ins[0], xs, n.input(0) + ":nchw");
  op.weights = Weight(w, {int64_t(w.size())}, n.input(1) + ":weights");
  if (has_bias) op.bias = Weight(b, {ys[1]}, n.output(0) + ":bias");
  if (!one_d) {
    op.out = Out(value);
    g_.ops.push_back(op);
    return;
  }
  op.out = Add(IrTensor{value + ":nchw", ys});
  g_.ops.push_back(op);
  BindAs(op.out, value);
}

void Lowerer::ScaleShiftOf(const onnx::NodeProto& bn, size_t C, std::vector<float>* scale,
                           std::vector<float>* shift) {
  std::vector<float> p[4];
  for (int i = 0; i < 4; ++i) {
    const auto* c = info_.constant(bn.input(i + 1));
    if (!c) throw CompileError("vnpu: " + NodeLabel(bn) + ": parameters must be constants");
    p[i] = Floats(*c, NodeLabel(bn));
    if (p[i].size() != C)
      throw CompileError("vnpu: " + NodeLabel(bn) + ": parameter " + std::to_string(i + 1) +
                         " has " + std::to_string(p[i].size()) + " values, expected " +
                         std::to_string(C));
  }
  const float eps = AttrFloat(bn, "epsilon", 1e-5f);
  scale->resize(C);
  shift->resize(C);
  for (size_t c = 0; c < C; ++c) {
    (*scale)[c] = p[0][c] / std::sqrt(p[3][c] + eps);
    (*shift)[c] = p[1][c] - p[2][c] * (*scale)[c];
  }
}

void Lowerer::Gemm(const onnx::NodeProto& n) {
  IrOp op;
  op.kind = fb::OpParams::Gemm;
  auto as = Shape(n.input(0));
  const auto* bc = info_.constant(n.input(1));
  auto bd = Dims(*bc);
  std::vector<float> bv = Floats(*bc, NodeLabel(n));
  const bool gemm = n.op_type() == "Gemm";
  const bool tb = gemm && AttrInt(n, "transB", 0) != 0;
  const float alpha = gemm ? AttrFloat(n, "alpha", 1.f) : 1.f;
  const float beta = gemm ? AttrFloat(n, "beta", 1.f) : 1.f;
  const int64_t K = as.back(), M = Product(as, 0, as.size() - 1);
  const int64_t N = tb ? bd[0] : bd[1];
  if ((tb ? bd[1] : bd[0]) != K) Fail("B does not match K=" + std::to_string(K));
  // GEMM_BLOCKED's layout (vnpu.fbs): blocks of 48 columns, each K rows
  // of its width rounded up to 8; block j0 / 48 starts at float j0 * K.
  // GEMM's 8-column strips are the same with 8-column blocks.
  if (layout::GemmBlockedFits(M)) op.kind = fb::OpParams::GemmBlocked;
  const int64_t kCols = layout::GemmBlockedFits(M) ? layout::kGemmBlockCols : layout::kBlock;
  const int64_t n8 = (N + layout::kBlock - 1) / layout::kBlock * layout::kBlock;
  std::vector<float> packed(size_t(n8 * K), 0.f);
  for (int64_t j0 = 0; j0 < N; j0 += kCols) {
    const int64_t w = std::min<int64_t>(kCols, n8 - j0);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = j0; j < std::min(N, j0 + w); ++j)
        packed[size_t(j0 * K + k * w + (j - j0))] = alpha * bv[size_t(tb ? j * K + k : k * N + j)];
  }
  op.m = uint64_t(M), op.k = uint64_t(K), op.n = uint64_t(N);
  op.ins = {In(n.input(0))};
  op.weights = Weight(packed, {int64_t(packed.size())}, n.input(1) + ":packed");
  std::string value = n.output(0);
  if (gemm && Has(n, 2)) {
    std::vector<float> c = Floats(*info_.constant(n.input(2)), NodeLabel(n));
    std::vector<float> bias(static_cast<size_t>(N));
    if (c.size() != 1 && c.size() != size_t(N))
      Fail("C must have 1 or N values, has " + std::to_string(c.size()));
    for (int64_t j = 0; j < N; ++j) bias[size_t(j)] = beta * c[c.size() == 1 ? 0 : size_t(j)];
    op.bias = Weight(bias, {N}, n.input(2) + ":bias");
  } else if (!gemm) {
    // A MatMul's bias, an Add of one value per column, as GEMM's bias.
    std::vector<float> bias;
    value = FoldMatMulBias(n, N, &bias);
    if (!bias.empty()) op.bias = Weight(bias, {N}, value + ":bias");
  }
  value = FuseAct(op, value);
  op.out = Out(FuseGelu(op, value));
  g_.ops.push_back(op);
}

std::vector<int64_t> Lowerer::Strides(const std::vector<int64_t>& xs,
                                      const std::vector<int64_t>& ys) {
  if (xs.size() > ys.size()) Fail("operand rank exceeds output rank");
  std::vector<int64_t> st(ys.size(), 0);
  int64_t run = 1;
  for (size_t d = xs.size(); d-- > 0;) {
    size_t od = d + ys.size() - xs.size();
    if (xs[d] != 1 && xs[d] != ys[od]) Fail("operand shape does not broadcast to the output");
    st[od] = xs[d] == 1 ? 0 : run;
    run *= xs[d];
  }
  return st;
}

void Lowerer::PushBinary(fb::BinaryKind kind, int a, const std::vector<int64_t>& as, int b,
                         const std::vector<int64_t>& bs, int out, const std::vector<int64_t>& ys) {
  IrOp op;
  op.kind = fb::OpParams::Binary;
  op.binary = kind;
  op.a_strides = Strides(as, ys);
  op.b_strides = Strides(bs, ys);
  op.ins = {a, b};
  op.out = out;
  g_.ops.push_back(op);
}

void Lowerer::Binary(const onnx::NodeProto& n) {
  if (n.op_type() == "Mul" && SelfGated(n)) return;
  const int a = In(n.input(0)), b = In(n.input(1)), out = Out(n.output(0));
  PushBinary(kBinaryOps.at(n.op_type()), a, Shape(n.input(0)), b, Shape(n.input(1)), out,
             Shape(n.output(0)));
}

bool Lowerer::SelfGated(const onnx::NodeProto& mul) {
  const onnx::NodeProto* add = OnlyConsumer(mul.output(0));
  if (!add || add->op_type() != "Add" || add->input_size() != 2 || add->input(0) == add->input(1) ||
      mul.input(0) == mul.input(1))
    return false;
  const std::string& x = add->input(add->input(0) == mul.output(0) ? 1 : 0);
  const int xi = mul.input(0) == x ? 0 : (mul.input(1) == x ? 1 : -1);
  if (xi < 0) return false;
  const std::string& gate = mul.input(1 - xi);
  const auto xs = Shape(x), gs = Shape(gate), ys = Shape(add->output(0));
  if (xs != ys || Shape(mul.output(0)) != ys || gs.size() > ys.size() ||
      Product(gs, 0, gs.size()) * 16 > Product(ys, 0, ys.size()))
    return false;
  const int g = In(gate), one = Weight({1.0f}, {1}, mul.output(0) + ":one");
  const int plus1 = Add(IrTensor{mul.output(0) + ":gate+1", gs});
  PushBinary(fb::BinaryKind::ADD, g, gs, one, {1}, plus1, gs);
  const int xt = In(x), out = Out(add->output(0));
  PushBinary(fb::BinaryKind::MUL, xt, xs, plus1, gs, out, ys);
  consumed_.insert(add);
  return true;
}

void Lowerer::Pool(const onnx::NodeProto& n) {
  IrOp op;
  op.kind = fb::OpParams::Pool;
  auto xs = Shape(n.input(0));
  const std::string& t = n.op_type();
  if (t == "GlobalAveragePool") {
    op.pool = fb::PoolKind::GLOBAL_AVG;
  } else if (t == "GlobalMaxPool") {
    op.pool = fb::PoolKind::MAX_POOL;
    op.kh = uint32_t(xs[2]), op.kw = uint32_t(xs[3]);
  } else {
    op.pool = t == "MaxPool" ? fb::PoolKind::MAX_POOL : fb::PoolKind::AVG_POOL;
    auto ks = AttrInts(n, "kernel_shape");
    auto st = AttrInts(n, "strides", {1, 1});
    op.kh = uint32_t(ks[0]), op.kw = uint32_t(ks[1]), op.sh = uint32_t(st[0]),
    op.sw = uint32_t(st[1]);
    Pads(n, xs, ks[0], ks[1], st[0], st[1], 1, 1, op);
    op.count_include_pad = AttrInt(n, "count_include_pad", 0) != 0;
  }
  op.ins = {In(n.input(0))};
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

void Lowerer::Softmax(const onnx::NodeProto& n) {
  IrOp op;
  op.kind = fb::OpParams::Softmax;
  auto xs = Shape(n.input(0));
  const int64_t r = int64_t(xs.size());
  int64_t axis = AttrInt(n, "axis", info_.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= std::max<int64_t>(r, 1)) Fail("axis out of range");
  op.m = uint64_t(Product(xs, 0, size_t(axis)));
  if (info_.opset >= 13) {
    op.k = uint64_t(r ? xs[size_t(axis)] : 1);
    op.n = uint64_t(Product(xs, size_t(axis) + 1, xs.size()));
  } else {  // opsets < 13 coerce the input to 2-D at axis
    op.k = uint64_t(Product(xs, size_t(axis), xs.size()));
    op.n = 1;
  }
  op.ins = {In(n.input(0))};
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

void Lowerer::Node(const onnx::NodeProto& n) {
  std::string why = Unsupported(n, info_);
  if (!why.empty()) Fail(why);
  half_node_ = false;
  for (const auto& in : n.input())
    if (const onnx::TensorProto* c = in.empty() ? nullptr : info_.constant(in))
      half_node_ |= c->data_type() == onnx::TensorProto::FLOAT16;
  if (Int8Node(n) || TransformerNode(n)) return;
  const std::string& t = n.op_type();
  if (t == "Conv") return Conv(n);
  if (t == "ConvTranspose") return ConvTranspose(n);
  if (t == "Gemm" || t == "MatMul") return Gemm(n);
  if (kBinaryOps.count(t)) return Binary(n);
  if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool" || t == "GlobalMaxPool")
    return Pool(n);
  if (t == "Softmax") return Softmax(n);
  IrOp op;
  if (kActivationOps.count(t)) {
    op.kind = fb::OpParams::Unary;
    SetAct(op, n);
  } else if (t == "Transpose") {
    op.kind = fb::OpParams::Transpose;
    auto xs = Shape(n.input(0));
    auto perm = AttrInts(n, "perm");
    if (perm.empty())
      for (size_t i = xs.size(); i-- > 0;) perm.push_back(int64_t(i));
    op.perm.assign(perm.begin(), perm.end());
  } else if (t == "Concat") {
    op.kind = fb::OpParams::Concat;
    int64_t axis = AttrInt(n, "axis", 0), r = int64_t(Shape(n.output(0)).size());
    op.axis = uint32_t(axis < 0 ? axis + r : axis);
    for (const auto& i : n.input()) op.ins.push_back(In(i));
    op.out = Out(n.output(0));
    g_.ops.push_back(op);
    return;
  } else if (t == "BatchNormalization") {
    auto xs = Shape(n.input(0));
    std::vector<float> scale, shift;
    ScaleShiftOf(n, size_t(xs[1]), &scale, &shift);
    op.kind = fb::OpParams::ScaleShift;
    op.m = uint64_t(xs[0]), op.k = uint64_t(xs[1]), op.n = uint64_t(Product(xs, 2, xs.size()));
    op.weights = Weight(scale, {xs[1]}, n.output(0) + ":scale");
    op.bias = Weight(shift, {xs[1]}, n.output(0) + ":shift");
  } else if (kCopyOps.count(t) || t == "Cast") {
    int in = In(n.input(0));
    const IrTensor& src = g_.tensors[size_t(in)];
    if (src.loc == fb::Location::ARENA && !DirectOutput(n.output(0))) {
      IrTensor alias{n.output(0), Shape(n.output(0))};
      alias.alias_of = src.alias_of >= 0 ? src.alias_of : in;
      by_name_[alias.name] = Add(alias);
      return;
    }
    op.kind = fb::OpParams::Copy;
  } else {
    Fail("no lowering");
  }
  op.ins = {In(n.input(0))};
  op.out = Out(n.output(0));
  g_.ops.push_back(op);
}

IrGraph Lower(const Partition& partition, const GraphInfo& info, WeightStore& weights) {
  return Lowerer(partition, info, weights).Run();
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
