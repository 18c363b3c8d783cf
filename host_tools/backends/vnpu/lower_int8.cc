// SPDX-License-Identifier: Apache-2.0
// Lowering for the int8 level: the Lowerer members (lowerer.h) that are not
// lower.cc's. QDQ groups (matched by MatchGroup, the same function the
// support check uses) become QCONV2D / QGEMM / QBINARY / QLUT / QMAX_POOL /
// QCONCAT over the int8 tensors the DequantizeLinear nodes read and the
// QuantizeLinear nodes write; QLinearConv / QLinearMatMul / ConvInteger /
// MatMulInteger map directly. A DequantizeLinear is lowered lazily: only a
// consumer that still needs its float value (one outside any group) gets a
// DEQUANTIZE, or for a constant, float32 weights dequantised at compile
// time.
//
// Requantisation multipliers are float(x_scale * w_scale[c] / y_scale),
// computed in double; an int32 bias whose scale is not x_scale * w_scale[c]
// (or a float32 bias) is rounded to that scale (half to even).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "lowerer.h"
#include "onnx_util.h"
#include "vnpu_ops.h"

namespace epctx {
namespace host {
namespace vnpu {
namespace {

fb::DType FbType(int32_t d) {
  switch (d) {
    case onnx::TensorProto::INT8: return fb::DType::INT8;
    case onnx::TensorProto::UINT8: return fb::DType::UINT8;
    case onnx::TensorProto::INT32: return fb::DType::INT32;
    default: return fb::DType::FLOAT32;
  }
}

int32_t QLo(int32_t onnx_dtype) { return onnx_dtype == onnx::TensorProto::INT8 ? -128 : 0; }
int32_t QHi(int32_t onnx_dtype) { return onnx_dtype == onnx::TensorProto::INT8 ? 127 : 255; }
int32_t RoundSat(double v, int32_t lo, int32_t hi) {
  if (!(v >= lo)) return lo;  // NaN too
  if (v > hi) return hi;
  return int32_t(std::nearbyint(v));
}

// Weights of a Gemm/MatMul as [N][K] rows.
std::vector<int32_t> RowsNK(const std::vector<int32_t>& b, int64_t K, int64_t N, bool tb) {
  if (tb) return b;  // already [N][K]
  std::vector<int32_t> r(size_t(N * K));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) r[size_t(j * K + k)] = b[size_t(k * N + j)];
  return r;
}

}  // namespace

fb::DType Lowerer::ValueDType(const std::string& name) const {
  const ValueType* t = info_.type(name);
  return t ? FbType(t->dtype) : fb::DType::FLOAT32;
}

bool Lowerer::InPartition(const onnx::NodeProto* n) {
  if (part_nodes_.empty()) part_nodes_.insert(p_.nodes.begin(), p_.nodes.end());
  return part_nodes_.count(n) > 0;
}

int Lowerer::IntWeight(const std::vector<int32_t>& v, int32_t onnx_dtype,
                       std::vector<int64_t> shape, const std::string& name) {
  IrTensor t{name, std::move(shape), fb::Location::WEIGHT};
  t.dtype = FbType(onnx_dtype);
  if (t.dtype == fb::DType::INT32) {
    t.offset = ws_.Add(v.data(), v.size() * 4);
  } else {
    std::vector<uint8_t> b(v.size());
    for (size_t i = 0; i < v.size(); ++i) b[i] = uint8_t(v[i]);
    t.offset = ws_.Add(b.data(), b.size());
  }
  return Add(t);
}

std::vector<float> Lowerer::Dequantized(const QConst& c) {
  std::vector<float> f(c.q.size());
  int64_t inner = 1;
  for (size_t d = size_t(c.axis) + 1; d < c.dims.size(); ++d) inner *= c.dims[d];
  const int64_t n_axis = c.dims.empty() ? 1 : c.dims[size_t(c.axis)];
  for (size_t i = 0; i < f.size(); ++i) {
    const size_t k = c.scales.size() == 1 ? 0 : size_t((int64_t(i) / inner) % n_axis);
    f[i] = float(c.q[i] - c.zps[k]) * c.scales[k];
  }
  return f;
}

int Lowerer::LazyInt8(const std::string& name) {
  auto it = pending_dq_.find(name);
  if (it != pending_dq_.end()) {
    const onnx::NodeProto* dq = it->second;
    pending_dq_.erase(it);
    QParam p;
    std::string why = PerTensor(*dq, info_, &p);
    if (!why.empty()) throw CompileError("vnpu: " + NodeLabel(*dq) + ": " + why);
    IrOp op;
    op.kind = fb::OpParams::Dequantize;
    op.ins = {In(dq->input(0))};
    op.qs[0] = p.scale;
    op.qz[0] = p.zp;
    op.out = Out(name);
    g_.ops.push_back(op);
    return op.out;
  }
  QConst c;
  if (!IsConstDq(name, ix_, info_) || !ConstDq(name, ix_, info_, &c).empty()) return -1;
  int t = Weight(Dequantized(c), c.dims, name);
  by_name_[name] = t;
  return t;
}

void Lowerer::ActClamp(const QGroup& g, IrOp& op) {
  op.lo = QLo(g.out.dtype);
  op.hi = QHi(g.out.dtype);
  if (!g.act) return;
  float mn = -FLT_MAX, mx = FLT_MAX;
  if (g.act->op_type() == "Relu") {
    mn = 0.f;
  } else {
    IrOp tmp;
    SetAct(tmp, *g.act);
    mn = tmp.alpha;
    mx = tmp.beta;
  }
  op.lo = std::max(op.lo, RoundSat(double(mn) / g.out.scale + g.out.zp, op.lo, op.hi));
  op.hi = std::min(op.hi, RoundSat(double(mx) / g.out.scale + g.out.zp, op.lo, op.hi));
  if (op.lo > op.hi) op.lo = op.hi;
}

struct Lowerer::MacQ {
  int x = -1, zp_tensor = -1;
  int32_t xzp = 0;
  std::vector<int32_t> wq;  // conv [Cout][Cin_g][KH][KW]; gemm [N][K]
  int32_t wdtype = 0, wzp = 0;
  std::vector<int64_t> wdims;
  std::vector<float> mult;    // empty: INT32 output
  std::vector<int32_t> bias;  // empty: none
};

void Lowerer::FinishMac(IrOp& op, MacQ& m, const std::string& value, int64_t channels) {
  op.ins = {m.x};
  op.qz[0] = m.xzp;
  op.qz[1] = m.wzp;
  op.zp_tensor = m.zp_tensor;
  op.weights = IntWeight(m.wq, m.wdtype, m.wdims, value + ":qweights");
  if (!m.bias.empty())
    op.bias = IntWeight(m.bias, onnx::TensorProto::INT32, {channels}, value + ":qbias");
  if (!m.mult.empty()) op.mult = Weight(m.mult, {channels}, value + ":multipliers");
  op.out = Out(value);
  g_.ops.push_back(op);
}

void Lowerer::QConvGeometry(const onnx::NodeProto& n, const std::vector<int64_t>& wd, IrOp& op) {
  op.kind = fb::OpParams::QConv2D;
  auto xs = Shape(n.input(0));
  auto st = AttrInts(n, "strides", {1, 1}), dl = AttrInts(n, "dilations", {1, 1});
  op.kh = uint32_t(wd[2]), op.kw = uint32_t(wd[3]), op.sh = uint32_t(st[0]),
  op.sw = uint32_t(st[1]);
  op.dh = uint32_t(dl[0]), op.dw = uint32_t(dl[1]), op.groups = uint32_t(AttrInt(n, "group", 1));
  Pads(n, xs, wd[2], wd[3], st[0], st[1], dl[0], dl[1], op);
}

void Lowerer::QGemmGeometry(const onnx::NodeProto& n, int64_t N, IrOp& op) {
  op.kind = fb::OpParams::QGemm;
  auto as = Shape(n.input(0));
  op.k = uint64_t(as.back());
  op.m = uint64_t(Product(as, 0, as.size() - 1));
  op.n = uint64_t(N);
}

std::vector<int32_t> Lowerer::GroupBias(const onnx::NodeProto& n, int i, float sx, const QConst& w,
                                        int64_t channels) {
  if (!Has(n, i)) return {};
  std::vector<double> real(static_cast<size_t>(channels));
  std::vector<int32_t> direct;
  if (const auto* c = info_.constant(n.input(i))) {
    auto f = Floats(*c, NodeLabel(n));
    for (int64_t j = 0; j < channels; ++j) real[size_t(j)] = f[f.size() == 1 ? 0 : size_t(j)];
  } else {
    QConst b;
    std::string why = ConstDq(n.input(i), ix_, info_, &b);
    if (!why.empty()) Fail(why);
    for (int64_t j = 0; j < channels; ++j) real[size_t(j)] = double(b.q[size_t(j)]) * b.Scale(j);
    direct = b.q;
    for (int64_t j = 0; j < channels && !direct.empty(); ++j) {
      const double acc_scale = double(sx) * w.Scale(j);
      if (std::fabs(b.Scale(j) - acc_scale) > 1e-6 * acc_scale) direct.clear();
    }
  }
  if (!direct.empty()) return direct;
  std::vector<int32_t> out(static_cast<size_t>(channels));
  for (int64_t j = 0; j < channels; ++j)
    out[size_t(j)] =
        RoundSat(real[size_t(j)] / (double(sx) * w.Scale(j)), INT32_MIN / 2, INT32_MAX / 2);
  return out;
}

void Lowerer::GroupMac(const onnx::NodeProto& n, const QGroup& g) {
  QConst w;
  std::string why = ConstDq(n.input(1), ix_, info_, &w);
  if (!why.empty()) Fail(why);
  IrOp op;
  const bool conv = n.op_type() == "Conv";
  const bool tb = n.op_type() == "Gemm" && AttrInt(n, "transB", 0) != 0;
  MacQ m;
  m.x = QIn(g.dq[0]);
  m.xzp = g.in[0].zp;
  m.wdtype = w.dtype;
  m.wzp = w.zps[0];
  int64_t channels;
  if (conv) {
    QConvGeometry(n, w.dims, op);
    channels = w.dims[0];
    m.wq = w.q;
    m.wdims = w.dims;
  } else {
    const int64_t K = tb ? w.dims[1] : w.dims[0];
    channels = tb ? w.dims[0] : w.dims[1];
    QGemmGeometry(n, channels, op);
    m.wq = RowsNK(w.q, K, channels, tb);
    m.wdims = {channels, K};
  }
  for (int64_t c = 0; c < channels; ++c)
    m.mult.push_back(float(double(g.in[0].scale) * w.Scale(c) / g.out.scale));
  m.bias = g.bias_add ? GroupBias(*g.bias_add, g.bias_input, g.in[0].scale, w, channels)
                      : GroupBias(n, 2, g.in[0].scale, w, channels);
  if (g.bias_add) consumed_.insert(g.bias_add);
  ActClamp(g, op);
  op.qz[2] = g.out.zp;
  if (g.act) consumed_.insert(g.act);
  consumed_.insert(g.q);
  FinishMac(op, m, g.q->output(0), channels);
}

template <typename F>
int Lowerer::LutTable(const QParam& in, const QParam& out, F f, const std::string& name) {
  std::vector<int32_t> t(256);
  for (int b = 0; b < 256; ++b) {
    const int32_t q = in.dtype == onnx::TensorProto::INT8 ? int32_t(int8_t(uint8_t(b))) : b;
    const float v = float(q - in.zp) * in.scale;
    t[size_t(b)] = RoundSat(double(f(v) / out.scale) + out.zp, QLo(out.dtype), QHi(out.dtype));
  }
  // Stored when the partition is lowered (FuseClampLuts), if still read.
  IrTensor table{name, {256}, fb::Location::WEIGHT};
  table.dtype = FbType(out.dtype);
  const int id = Add(table);
  lut_values_[id] = std::move(t);
  return id;
}

// Exact: the op computes clamp(r, lo, hi) and the table maps that q to
// clamp(q, a, c), so the pair is clamp(r, max(lo, a), min(hi, c)).
void Lowerer::FuseClampLuts() {
  std::vector<int> refs(g_.tensors.size(), 0), writer(g_.tensors.size(), -1);
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    IrOp& op = g_.ops[i];
    if (op.out >= 0) writer[size_t(op.out)] = int(i);
    ForEachTensor(op, [&](int& t) { ++refs[size_t(t)]; });
  }
  for (const IrTensor& t : g_.tensors)
    if (t.alias_of >= 0) ++refs[size_t(t.alias_of)];
  std::vector<bool> dead(g_.ops.size(), false);
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    const IrOp& lut = g_.ops[i];
    if (lut.kind != fb::OpParams::QLut) continue;
    const int x = lut.ins[0];
    const int w = writer[size_t(x)];
    // x: written by one op, read by this one only, an arena tensor of the
    // table's dtype.
    if (w < 0 || refs[size_t(x)] != 2 || g_.tensors[size_t(x)].loc != fb::Location::ARENA ||
        g_.tensors[size_t(x)].dtype != g_.tensors[size_t(lut.table)].dtype)
      continue;
    IrOp& mac = g_.ops[size_t(w)];
    if (mac.kind != fb::OpParams::QConv2D && mac.kind != fb::OpParams::QGemm) continue;
    const std::vector<int32_t>& t = lut_values_.at(lut.table);
    const bool is_signed = g_.tensors[size_t(x)].dtype == fb::DType::INT8;
    const int32_t a = *std::min_element(t.begin(), t.end());
    const int32_t c = *std::max_element(t.begin(), t.end());
    bool clamp = true;
    for (int b = 0; b < 256 && clamp; ++b) {
      const int32_t q = is_signed ? int32_t(int8_t(uint8_t(b))) : b;
      clamp = t[size_t(b)] == std::min(std::max(q, a), c);
    }
    if (!clamp) continue;
    mac.lo = std::max(mac.lo, a);
    mac.hi = std::min(mac.hi, c);
    if (mac.lo > mac.hi) mac.lo = mac.hi;
    mac.out = lut.out;
    dead[i] = true;
  }
  size_t kept = 0;
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    if (dead[i]) continue;
    IrOp& op = g_.ops[i];
    if (op.kind == fb::OpParams::QLut) {
      std::vector<uint8_t> b;
      for (int32_t v : lut_values_.at(op.table)) b.push_back(uint8_t(v));
      g_.tensors[size_t(op.table)].offset = ws_.Add(b.data(), b.size());
    }
    if (kept != i) g_.ops[kept] = std::move(op);
    ++kept;
  }
  g_.ops.resize(kept);
}

int Lowerer::Lut(int x, int table, const std::string& value, bool output) {
  IrOp op;
  op.kind = fb::OpParams::QLut;
  op.ins = {x};
  op.table = table;
  if (output) {
    op.out = Out(value);
  } else {
    IrTensor t{value, g_.tensors[size_t(x)].shape};
    t.dtype = g_.tensors[size_t(table)].dtype;
    op.out = Add(t);
  }
  g_.ops.push_back(op);
  return op.out;
}

int Lowerer::Requant(int x, const QParam& in, const QParam& out, const std::string& name) {
  if (in == out) return x;
  return Lut(x,
             LutTable(
                 in, out, [](float v) { return v; }, name + ":requant"),
             name + ":rq", false);
}

void Lowerer::GroupLut(const onnx::NodeProto& n, const QGroup& g) {
  IrOp act;
  SetAct(act, n);
  auto f = [&](float v) -> float {
    switch (act.act) {
      case fb::Activation::RELU: return v > 0.f ? v : 0.f;
      case fb::Activation::LEAKY_RELU: return v >= 0.f ? v : v * act.alpha;
      case fb::Activation::CLIP: return std::min(std::max(v, act.alpha), act.beta);
      case fb::Activation::SIGMOID: return 1.f / (1.f + std::exp(-v));
      case fb::Activation::HARD_SIGMOID:
        return std::max(0.f, std::min(1.f, act.alpha * v + act.beta));
      case fb::Activation::TANH: return std::tanh(v);
      default: return v;
    }
  };
  consumed_.insert(g.q);
  Lut(QIn(g.dq[0]), LutTable(g.in[0], g.out, f, n.output(0) + ":lut"), g.q->output(0), true);
}

bool Lowerer::SwishLut(const onnx::NodeProto& n) {
  if (!n.domain().empty()) return false;
  const std::string& v = n.input(0);
  const onnx::NodeProto* dq = ix_.Producer(v);
  const onnx::NodeProto* mul = ix_.Sole(n.output(0));
  if (!dq || dq->op_type() != "DequantizeLinear" || !dq->domain().empty() ||
      info_.constant(dq->input(0)) || !mul || mul->op_type() != "Mul" || !mul->domain().empty() ||
      mul->input_size() != 2)
    return false;
  const std::string& other = mul->input(0) == n.output(0) ? mul->input(1) : mul->input(0);
  const onnx::NodeProto* q = ix_.Sole(mul->output(0));
  if (other != v || !q || q->op_type() != "QuantizeLinear" || !q->domain().empty()) return false;
  QParam in, out;
  if (!PerTensor(*dq, info_, &in).empty() || !PerTensor(*q, info_, &out).empty()) return false;
  const bool q8 = [](int32_t d) {
    return d == onnx::TensorProto::INT8 || d == onnx::TensorProto::UINT8;
  }(in.dtype);
  if (!q8 || !InPartition(dq) || !InPartition(mul) || !InPartition(q) ||
      outputs_.count(n.output(0)) || outputs_.count(mul->output(0)))
    return false;
  IrOp act;
  SetAct(act, n);
  const auto f = [&act](float x) {
    const float gate = act.act == fb::Activation::SIGMOID
                           ? 1.f / (1.f + std::exp(-x))
                           : std::max(0.f, std::min(1.f, act.alpha * x + act.beta));
    return x * gate;
  };
  consumed_.insert(mul);
  consumed_.insert(q);
  Lut(QIn(dq), LutTable(in, out, f, mul->output(0) + ":lut"), q->output(0), true);
  return true;
}

void Lowerer::GroupBinary(const onnx::NodeProto& n, const QGroup& g) {
  IrOp op;
  op.kind = fb::OpParams::QBinary;
  op.binary = kBinaryOps.at(n.op_type());
  auto ys = Shape(n.output(0));
  std::vector<int64_t>* strides[2] = {&op.a_strides, &op.b_strides};
  for (int s = 0; s < 2; ++s) {
    auto xs = Shape(n.input(s));
    strides[s]->assign(ys.size(), 0);
    int64_t run = 1;
    for (size_t d = xs.size(); d-- > 0;) {
      size_t od = d + ys.size() - xs.size();
      (*strides[s])[od] = xs[d] == 1 ? 0 : run;
      run *= xs[d];
    }
    op.qs[s] = g.in[s].scale;
    op.qz[s] = g.in[s].zp;
  }
  op.qs[2] = g.out.scale;
  op.qz[2] = g.out.zp;
  op.ins = {QIn(g.dq[0]), QIn(g.dq[1])};
  consumed_.insert(g.q);
  // Relu / Clip after the sum is the requantised result's clamp (stream
  // 1.10), as for QCONV2D: quantise(act(dequantise(q))) is clamp(q, lo, hi)
  // with the bounds quantised the same way.
  if (g.act) consumed_.insert(g.act);
  ActClamp(g, op);
  op.out = Out(g.q->output(0));
  if (QBinaryClamps(g_, op)) op.kind = fb::OpParams::QBinaryClamped;
  g_.ops.push_back(op);
}

void Lowerer::GroupMaxPool(const onnx::NodeProto& n, const QGroup& g) {
  IrOp op;
  op.kind = fb::OpParams::QMaxPool;
  auto xs = Shape(n.input(0));
  auto ks = AttrInts(n, "kernel_shape");
  auto st = AttrInts(n, "strides", {1, 1});
  op.kh = uint32_t(ks[0]), op.kw = uint32_t(ks[1]), op.sh = uint32_t(st[0]),
  op.sw = uint32_t(st[1]);
  Pads(n, xs, ks[0], ks[1], st[0], st[1], 1, 1, op);
  op.ins = {QIn(g.dq[0])};
  consumed_.insert(g.q);
  op.out = Out(g.q->output(0));  // same quantisation in and out (MatchGroup)
  g_.ops.push_back(op);
}

void Lowerer::GroupConcat(const onnx::NodeProto& n, const QGroup& g) {
  IrOp op;
  op.kind = fb::OpParams::QConcat;
  int64_t axis = AttrInt(n, "axis", 0), r = int64_t(Shape(n.output(0)).size());
  op.axis = uint32_t(axis < 0 ? axis + r : axis);
  for (size_t i = 0; i < g.dq_all.size(); ++i)
    op.ins.push_back(Requant(QIn(g.dq_all[i]), g.in_all[i], g.out, n.input(int(i))));
  consumed_.insert(g.q);
  op.out = Out(g.q->output(0));
  g_.ops.push_back(op);
}

void Lowerer::GroupView(const QGroup& g) {
  int src = QIn(g.dq[0]);
  consumed_.insert(g.q);
  const std::string& name = g.q->output(0);
  const IrTensor& s = g_.tensors[size_t(src)];
  if (s.loc == fb::Location::ARENA && !outputs_.count(name)) {
    IrTensor alias{name, Shape(name)};
    alias.dtype = s.dtype;
    alias.alias_of = s.alias_of >= 0 ? s.alias_of : src;
    by_name_[name] = Add(alias);
    return;
  }
  IrOp copy;
  copy.kind = fb::OpParams::Copy;
  copy.ins = {src};
  copy.out = Out(name);
  g_.ops.push_back(copy);
}

void Lowerer::DirectMac(const onnx::NodeProto& n) {
  const std::string& t = n.op_type();
  const bool qlinear = t == "QLinearConv" || t == "QLinearMatMul";
  const bool conv = t == "QLinearConv" || t == "ConvInteger";
  const int wi = qlinear ? 3 : 1, xz = 2, wz = qlinear ? 5 : 3;
  const auto* wc = info_.constant(n.input(wi));
  MacQ m;
  m.x = In(n.input(0));
  if (Has(n, xz)) {
    if (const auto* c = info_.constant(n.input(xz))) m.xzp = Ints(*c, NodeLabel(n))[0];
    else m.zp_tensor = In(n.input(xz));
  }
  m.wdtype = wc->data_type();
  if (Has(n, wz)) m.wzp = Ints(*info_.constant(n.input(wz)), NodeLabel(n))[0];
  auto wd = Dims(*wc);
  auto wq = Ints(*wc, NodeLabel(n));
  IrOp op;
  int64_t channels;
  if (conv) {
    QConvGeometry(n, wd, op);
    channels = wd[0];
    m.wq = wq;
    m.wdims = wd;
  } else {
    channels = wd[1];
    QGemmGeometry(n, channels, op);
    m.wq = RowsNK(wq, wd[0], channels, false);
    m.wdims = {channels, wd[0]};
  }
  if (qlinear) {
    const float sx = Floats(*info_.constant(n.input(1)), NodeLabel(n))[0];
    const auto sw = Floats(*info_.constant(n.input(4)), NodeLabel(n));
    const float sy = Floats(*info_.constant(n.input(6)), NodeLabel(n))[0];
    for (int64_t c = 0; c < channels; ++c)
      m.mult.push_back(float(double(sx) * sw[sw.size() == 1 ? 0 : size_t(c)] / sy));
    const int32_t yd = info_.type(n.output(0))->dtype;
    op.qz[2] = Has(n, 7) ? Ints(*info_.constant(n.input(7)), NodeLabel(n))[0] : 0;
    op.lo = QLo(yd);
    op.hi = QHi(yd);
    if (t == "QLinearConv" && Has(n, 8)) m.bias = Ints(*info_.constant(n.input(8)), NodeLabel(n));
  }
  FinishMac(op, m, n.output(0), channels);
}

bool Lowerer::Int8Node(const onnx::NodeProto& n) {
  const std::string& t = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  if (t == "DequantizeLinear") {
    const std::string& y = n.output(0);
    if (!info_.constant(n.input(0))) {
      pending_dq_[y] = &n;
      if (outputs_.count(y)) LazyInt8(y);
      return true;
    }
    if (outputs_.count(y)) {  // a weight another partition reads: copy it out
      IrOp copy;
      copy.kind = fb::OpParams::Copy;
      copy.ins = {LazyInt8(y)};
      by_name_.erase(y);
      copy.out = Out(y);
      g_.ops.push_back(copy);
    }
    return true;
  }
  if (t == "QuantizeLinear") {
    QParam p;
    std::string why = PerTensor(n, info_, &p);
    if (!why.empty()) Fail(why);
    IrOp op;
    op.kind = fb::OpParams::Quantize;
    op.ins = {In(n.input(0))};
    op.qs[2] = p.scale;
    op.qz[2] = p.zp;
    op.out = Out(n.output(0));
    g_.ops.push_back(op);
    return true;
  }
  if (t == "DynamicQuantizeLinear") {
    IrOp op;
    op.kind = fb::OpParams::DynamicQuantize;
    op.ins = {In(n.input(0))};
    const std::string names[3] = {n.output(0), n.output_size() > 1 ? n.output(1) : "",
                                  n.output_size() > 2 ? n.output(2) : ""};
    int ids[3];
    const fb::DType types[3] = {fb::DType::UINT8, fb::DType::FLOAT32, fb::DType::UINT8};
    for (int i = 0; i < 3; ++i) {
      if (!names[i].empty()) {
        ids[i] = Out(names[i]);
        continue;
      }
      IrTensor tmp{n.output(0) + (i == 1 ? ":scale" : ":zero_point"),
                   i == 0 ? Shape(n.input(0)) : std::vector<int64_t>{}};
      tmp.dtype = types[i];
      ids[i] = Add(tmp);
    }
    op.out = ids[0];
    op.weights = ids[1];
    op.bias = ids[2];
    g_.ops.push_back(op);
    return true;
  }
  if (t == "Cast" && ValueDType(n.input(0)) == fb::DType::INT32) {
    IrOp op;
    op.kind = fb::OpParams::Dequantize;  // scale 1, zero point 0: int32 -> float32
    op.ins = {In(n.input(0))};
    op.out = Out(n.output(0));
    g_.ops.push_back(op);
    return true;
  }
  if (t == "QLinearConv" || t == "QLinearMatMul" || t == "ConvInteger" || t == "MatMulInteger") {
    DirectMac(n);
    return true;
  }
  if ((t == "Sigmoid" || t == "HardSigmoid") && SwishLut(n)) return true;
  if (!Int8GroupOp(t)) return false;
  QGroup g;
  const std::string why = MatchGroup(n, ix_, info_, &g);
  bool inside =
      why.empty() && InPartition(g.q) && (!g.act || InPartition(g.act)) &&
      !outputs_.count(n.output(0)) && (!g.act || !outputs_.count(g.act->output(0))) &&
      (!g.bias_add || (InPartition(g.bias_add) && !outputs_.count(g.bias_add->output(0))));
  for (const auto* dq : g.dq_all) inside = inside && InPartition(dq);
  if (!inside) {
    if ((t == "Conv" || t == "Gemm" || t == "MatMul") && Has(n, 1) &&
        IsConstDq(n.input(1), ix_, info_))
      Fail(why.empty() ? "QDQ group split across partitions" : why);
    return false;  // the float path, with DEQUANTIZE made on demand
  }
  if (t == "Conv" || t == "Gemm" || t == "MatMul") GroupMac(n, g);
  else if (t == "Add" || t == "Mul") GroupBinary(n, g);
  else if (t == "MaxPool") GroupMaxPool(n, g);
  else if (t == "Concat") GroupConcat(n, g);
  else if (kActivationOps.count(t)) GroupLut(n, g);
  else GroupView(g);
  return true;
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
