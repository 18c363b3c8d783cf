// SPDX-License-Identifier: Apache-2.0
// Which quantised nodes the vnpu runs in int8, and why not for the others:
// QDQ groups (MatchGroup), QLinearConv / QLinearMatMul, the dynamically
// quantised ops (DynamicQuantizeLinear, ConvInteger, MatMulInteger, the
// Cast of their int32 result), and QuantizeLinear / DequantizeLinear
// themselves at the edges of int8 regions. Lowering (lower_int8.cc) relies
// on every check made here.
#include <cmath>
#include <memory>

#include "int8_match.h"
#include "onnx_util.h"

namespace epctx {
namespace host {
namespace vnpu {

std::string ConvWindow(const onnx::NodeProto& n, bool conv, size_t spatial);  // support.cc

namespace {

using TP = onnx::TensorProto;

bool Q8(int32_t d) { return d == TP::INT8 || d == TP::UINT8; }

// Static shape and one of the allowed dtypes (constants included).
std::string StaticOf(const GraphInfo& info, const std::string& name, bool (*ok)(int32_t),
                     const char* what) {
  if (const TP* c = info.constant(name)) {
    if (!ok(c->data_type())) return "'" + name + "' is not " + what;
    return c->dims_size() > 8 ? "'" + name + "' has rank > 8" : "";
  }
  const ValueType* t = info.type(name);
  if (!t || !t->fully_static()) return "shape of '" + name + "' is not static";
  if (!ok(t->dtype)) return "'" + name + "' is not " + what;
  return t->dims.size() > 8 ? "'" + name + "' has rank > 8" : "";
}
bool IsF32(int32_t d) { return d == TP::FLOAT; }
bool IsQ8(int32_t d) { return Q8(d); }
bool IsI32(int32_t d) { return d == TP::INT32; }

size_t Elems(const TP& t) {
  size_t n = 1;
  for (int64_t d : t.dims()) n *= size_t(d);
  return n;
}

std::vector<int64_t> DimsOf(const GraphInfo& info, const std::string& name) {
  if (const TP* c = info.constant(name)) return Dims(*c);
  const ValueType* t = info.type(name);
  return t ? t->dims : std::vector<int64_t>{};
}

// A constant scalar (or one-element) float scale and int zero point.
std::string ScalarConst(const GraphInfo& info, const onnx::NodeProto& n, int i, bool is_scale,
                        float* f, int32_t* z, int32_t* dtype) {
  if (!Has(n, i)) return is_scale ? "no scale" : "";
  const TP* c = info.constant(n.input(i));
  if (!c) return "'" + n.input(i) + "' is not a constant";
  if (Elems(*c) != 1) return "'" + n.input(i) + "' is not per-tensor";
  if (is_scale) {
    if (c->data_type() != TP::FLOAT) return "scale '" + n.input(i) + "' is not float32";
    *f = Floats(*c, NodeLabel(n))[0];
    if (!(*f > 0.f) || !std::isfinite(*f))
      return "scale '" + n.input(i) + "' is not finite and > 0";
    return "";
  }
  if (!Q8(c->data_type()) && c->data_type() != TP::INT32)
    return "zero point '" + n.input(i) + "' is not int8/uint8";
  *z = Ints(*c, NodeLabel(n))[0];
  *dtype = c->data_type();
  return "";
}

bool AllEqual(const std::vector<int32_t>& v) {
  for (int32_t x : v)
    if (x != v[0]) return false;
  return true;
}

const std::set<std::string> kLutOps = {"Relu", "Clip",      "Sigmoid",
                                       "Tanh", "LeakyRelu", "HardSigmoid"};
const std::set<std::string> kViewOps = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};

// Conv / Gemm / MatMul weights: a constant int8/uint8 DQ, per tensor or per
// output channel (axis), with one zero point value.
std::string WeightOk(const std::string& w, const GraphIndex& ix, const GraphInfo& info, size_t rank,
                     int64_t channel_axis) {
  QConst c;
  std::string r = ConstDq(w, ix, info, &c);
  if (!r.empty()) return r;
  if (!Q8(c.dtype)) return "weight '" + w + "' is not int8/uint8";
  if (c.dims.size() != rank) return "weight '" + w + "' has rank " + std::to_string(c.dims.size());
  if (c.scales.size() != 1 && c.axis != channel_axis)
    return "weight '" + w + "' is quantised along axis " + std::to_string(c.axis) +
           ", not per output channel";
  if (!AllEqual(c.zps)) return "weight '" + w + "' has per-channel zero points that differ";
  return "";
}

// Bias of Conv/Gemm: absent, an int32 DQ with zero point 0, or float32.
std::string BiasOk(const onnx::NodeProto& n, int i, const GraphIndex& ix, const GraphInfo& info,
                   int64_t channels) {
  if (!Has(n, i)) return "";
  const std::string& b = n.input(i);
  if (const TP* c = info.constant(b)) {
    if (c->data_type() != TP::FLOAT) return "bias '" + b + "' is not float32";
    return Elems(*c) == size_t(channels) || Elems(*c) == 1 ? "" : "bias '" + b + "' size";
  }
  QConst c;
  std::string r = ConstDq(b, ix, info, &c);
  if (!r.empty()) return r;
  if (c.dtype != TP::INT32 || c.dims.size() != 1 || c.dims[0] != channels)
    return "bias '" + b + "' is not int32 [" + std::to_string(channels) + "]";
  for (int32_t z : c.zps)
    if (z != 0) return "bias '" + b + "' has a zero point";
  return "";
}

}  // namespace

GraphIndex::GraphIndex(const onnx::GraphProto* g) {
  if (!g) return;
  for (const auto& n : g->node()) {
    for (const auto& o : n.output())
      if (!o.empty()) producer[o] = &n;
    for (const auto& i : n.input())
      if (!i.empty()) consumers[i].push_back(&n);
  }
  for (const auto& o : g->output()) graph_outputs.insert(o.name());
}

const GraphIndex& IndexOf(const onnx::GraphProto* g) {
  struct Cached {
    const onnx::GraphProto* graph = nullptr;
    std::vector<const void*> nodes;
    std::unique_ptr<GraphIndex> index;
  };
  static thread_local Cached cache;
  // Node addresses plus a hash of every value name: a graph edited in
  // place (same nodes, rewired) is indexed again.
  std::vector<const void*> nodes;
  size_t h = 0;
  if (g)
    for (const auto& n : g->node()) {
      nodes.push_back(&n);
      for (const auto& v : n.input()) h = h * 31 + std::hash<std::string>()(v);
      for (const auto& v : n.output()) h = h * 37 + std::hash<std::string>()(v);
    }
  if (g)
    for (const auto& o : g->output()) h = h * 41 + std::hash<std::string>()(o.name());
  nodes.push_back(reinterpret_cast<const void*>(h));
  if (!cache.index || cache.graph != g || cache.nodes != nodes) {
    cache.index.reset(new GraphIndex(g));
    cache.graph = g;
    cache.nodes = std::move(nodes);
  }
  return *cache.index;
}

const onnx::NodeProto* GraphIndex::Producer(const std::string& v) const {
  auto it = producer.find(v);
  return it == producer.end() ? nullptr : it->second;
}

const onnx::NodeProto* GraphIndex::Sole(const std::string& v) const {
  if (graph_outputs.count(v)) return nullptr;
  auto it = consumers.find(v);
  return it == consumers.end() || it->second.size() != 1 ? nullptr : it->second[0];
}

std::vector<int32_t> Ints(const TP& t, const std::string& what) {
  if (t.data_location() == TP::EXTERNAL)
    throw CompileError(what + ": constant '" + t.name() + "' has external data not loaded");
  const size_t n = Elems(t);
  std::vector<int32_t> v;
  const int32_t d = t.data_type();
  if (d != TP::INT8 && d != TP::UINT8 && d != TP::INT32)
    throw CompileError(what + ": constant '" + t.name() + "' is not int8, uint8 or int32");
  if (t.has_raw_data()) {
    const size_t es = d == TP::INT32 ? 4 : 1;
    if (t.raw_data().size() != n * es)
      throw CompileError(what + ": constant '" + t.name() + "' raw_data size mismatch");
    const auto* p = reinterpret_cast<const unsigned char*>(t.raw_data().data());
    for (size_t i = 0; i < n; ++i) {
      if (d == TP::INT8) v.push_back(int8_t(p[i]));
      if (d == TP::UINT8) v.push_back(p[i]);
      if (d == TP::INT32) {
        int32_t x;
        std::memcpy(&x, p + 4 * i, 4);
        v.push_back(x);
      }
    }
    return v;
  }
  if (size_t(t.int32_data_size()) != n)
    throw CompileError(what + ": constant '" + t.name() + "' has " +
                       std::to_string(t.int32_data_size()) + " values, dims say " +
                       std::to_string(n));
  for (int32_t x : t.int32_data())
    v.push_back(d == TP::INT8 ? int8_t(x) : d == TP::UINT8 ? uint8_t(x) : x);
  return v;
}

std::string PerTensor(const onnx::NodeProto& n, const GraphInfo& info, QParam* p) {
  if (AttrInt(n, "block_size", 0) != 0) return "blocked quantisation";
  std::string r = ScalarConst(info, n, 1, true, &p->scale, nullptr, nullptr);
  if (!r.empty()) return r;
  p->zp = 0;
  p->dtype = TP::UINT8;
  if (Has(n, 2) && !(r = ScalarConst(info, n, 2, false, nullptr, &p->zp, &p->dtype)).empty())
    return r;
  if (n.op_type() == "QuantizeLinear") {
    const ValueType* t = info.type(n.output(0));
    if (!t || !Q8(t->dtype)) return "output is not int8/uint8";
    p->dtype = t->dtype;
  } else {
    const ValueType* t = info.type(n.input(0));
    const TP* c = info.constant(n.input(0));
    const int32_t d = c ? c->data_type() : t ? t->dtype : 0;
    if (!Q8(d) && d != TP::INT32) return "input is not int8, uint8 or int32";
    if (d == TP::INT32 && p->zp != 0) return "int32 input with a zero point";
    p->dtype = d;
  }
  return "";
}

std::string ConstDq(const std::string& value, const GraphIndex& ix, const GraphInfo& info,
                    QConst* c) {
  const onnx::NodeProto* dq = ix.Producer(value);
  if (!dq || dq->op_type() != "DequantizeLinear" || !dq->domain().empty())
    return "'" + value + "' is not a constant";
  const TP* x = info.constant(dq->input(0));
  if (!x) return "'" + value + "' is dequantised from a non-constant";
  if (AttrInt(*dq, "block_size", 0) != 0) return "'" + value + "' uses blocked quantisation";
  const int32_t d = x->data_type();
  if (!Q8(d) && d != TP::INT32) return "'" + value + "' is not dequantised from int8/uint8/int32";
  const TP* s = Has(*dq, 1) ? info.constant(dq->input(1)) : nullptr;
  const TP* z = Has(*dq, 2) ? info.constant(dq->input(2)) : nullptr;
  if (!s || s->data_type() != TP::FLOAT || (Has(*dq, 2) && !z))
    return "'" + value + "' has no constant float32 scale and zero point";
  if (z && z->data_type() != d) return "'" + value + "' zero point type differs from its data";
  c->dims = Dims(*x);
  c->dtype = d;
  c->scales = Floats(*s, NodeLabel(*dq));
  c->zps = z ? Ints(*z, NodeLabel(*dq)) : std::vector<int32_t>(c->scales.size(), 0);
  if (c->zps.size() != c->scales.size()) return "'" + value + "' scale and zero point sizes differ";
  for (float f : c->scales)
    if (!(f > 0.f) || !std::isfinite(f))
      return "'" + value + "' has a scale that is not finite and > 0";
  c->axis = 0;
  if (c->scales.size() != 1 || (s->dims_size() == 1 && c->dims.size() > 0)) {
    int64_t axis = AttrInt(*dq, "axis", 1);
    if (axis < 0) axis += int64_t(c->dims.size());
    if (axis < 0 || axis >= int64_t(c->dims.size()) || s->dims_size() != 1 ||
        c->dims[size_t(axis)] != int64_t(c->scales.size())) {
      if (c->scales.size() != 1) return "'" + value + "' per-axis scale does not match its axis";
    } else {
      c->axis = axis;
    }
  }
  c->q = Ints(*x, NodeLabel(*dq));
  return "";
}

bool IsConstDq(const std::string& value, const GraphIndex& ix, const GraphInfo& info) {
  const onnx::NodeProto* dq = ix.Producer(value);
  return dq && dq->op_type() == "DequantizeLinear" && dq->domain().empty() &&
         info.constant(dq->input(0));
}

bool Int8GroupOp(const std::string& op) {
  return op == "Conv" || op == "Gemm" || op == "MatMul" || op == "Add" || op == "Mul" ||
         op == "MaxPool" || op == "Concat" || kLutOps.count(op) || kViewOps.count(op);
}

std::string MatchGroup(const onnx::NodeProto& n, const GraphIndex& ix, const GraphInfo& info,
                       QGroup* g) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() || !Int8GroupOp(op)) return op + " is not an int8 group op";
  const bool mac = op == "Conv" || op == "Gemm" || op == "MatMul";
  // Data inputs: each dequantised per tensor from a non-constant.
  int data = op == "Add" || op == "Mul" ? 2 : op == "Concat" ? n.input_size() : 1;
  if (n.input_size() < data || n.input_size() == 0) return "missing inputs";
  for (int i = 0; i < data; ++i) {
    const onnx::NodeProto* dq = ix.Producer(n.input(i));
    if (!dq || dq->op_type() != "DequantizeLinear" || !dq->domain().empty() ||
        info.constant(dq->input(0)))
      return "input '" + n.input(i) + "' is not dequantised from an int8 tensor";
    QParam p;
    std::string r = PerTensor(*dq, info, &p);
    if (!r.empty()) return NodeLabel(*dq) + ": " + r;
    if (!Q8(p.dtype)) return "input '" + n.input(i) + "' is not dequantised from int8/uint8";
    if ((r = StaticOf(info, dq->input(0), IsQ8, "int8/uint8")).empty() == false) return r;
    if (i < 2) g->dq[i] = dq, g->in[i] = p;
    g->dq_all.push_back(dq);
    g->in_all.push_back(p);
  }
  for (int i = data; i < n.input_size(); ++i)  // shapes, axes, weights: constants
    if (Has(n, i) && !info.constant(n.input(i)) && !IsConstDq(n.input(i), ix, info))
      return "input '" + n.input(i) + "' is not a constant";
  // Output: quantised per tensor, through one Relu/Clip for the MAC ops and
  // Add / Mul (a residual block's Add then Relu).
  std::string v = n.output(0);
  const onnx::NodeProto* c = ix.Sole(v);
  if (op == "MatMul" && c && c->op_type() == "Add" && c->domain().empty() && c->input_size() == 2) {
    const int other = c->input(0) == v ? 1 : 0;
    const std::string& b = c->input(other);
    if (c->input(1 - other) == v && (info.constant(b) || IsConstDq(b, ix, info))) {
      g->bias_add = c;
      g->bias_input = other;
      v = c->output(0);
      c = ix.Sole(v);
    }
  }
  if ((mac || data == 2) && c && (c->op_type() == "Relu" || c->op_type() == "Clip") &&
      c->domain().empty()) {
    for (int i = 1; i < c->input_size(); ++i)
      if (Has(*c, i) && !info.constant(c->input(i))) return "Clip min/max are not constants";
    g->act = c;
    v = c->output(0);
    c = ix.Sole(v);
  }
  if (!c || c->op_type() != "QuantizeLinear" || !c->domain().empty())
    return "output '" + v + "' is not quantised by a sole QuantizeLinear";
  std::string r = PerTensor(*c, info, &g->out);
  if (!r.empty()) return NodeLabel(*c) + ": " + r;
  g->q = c;
  for (const auto& o : {n.output(0), c->output(0)})
    if (!(r = StaticOf(
              info, o, [](int32_t d) { return d == TP::FLOAT || Q8(d); }, "float32/int8"))
             .empty())
      return r;
  // Same dtype in and out except for the MAC ops and lookups.
  if (!mac && !kLutOps.count(op))
    for (const QParam& p : g->in_all)
      if (p.dtype != g->out.dtype) return "input and output quantisation types differ";

  const auto xs = DimsOf(info, n.input(0));
  if (op == "Conv") {
    if (xs.size() != 4) return "only 2-D int8 convolution";
    if ((r = WeightOk(n.input(1), ix, info, 4, 0)).empty() == false) return r;
    if ((r = ConvWindow(n, true, 2)).empty() == false) return r;
    const std::string ap = AttrString(n, "auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID") return "auto_pad " + ap + " in int8";
    return BiasOk(n, 2, ix, info, DimsOf(info, n.input(1))[0]);
  }
  if (op == "Gemm" || op == "MatMul") {
    if (xs.size() < 2 || (op == "Gemm" && xs.size() != 2))
      return "A must be 2-D (Gemm) or rank >= 2";
    const bool tb = op == "Gemm" && AttrInt(n, "transB", 0) != 0;
    if (op == "Gemm" && (AttrInt(n, "transA", 0) != 0 || AttrFloat(n, "alpha", 1.f) != 1.f ||
                         AttrFloat(n, "beta", 1.f) != 1.f))
      return "int8 Gemm needs transA=0, alpha=beta=1";
    if ((r = WeightOk(n.input(1), ix, info, 2, tb ? 0 : 1)).empty() == false) return r;
    const auto bd = DimsOf(info, n.input(1));
    if ((tb ? bd[1] : bd[0]) != xs.back()) return "B does not match K";
    if (g->bias_add) return BiasOk(*g->bias_add, g->bias_input, ix, info, bd[1]);
    return op == "Gemm" ? BiasOk(n, 2, ix, info, tb ? bd[0] : bd[1]) : "";
  }
  if (op == "Add" || op == "Mul") {
    const auto ys = DimsOf(info, n.output(0));
    for (int i = 0; i < 2; ++i) {
      const auto s = DimsOf(info, n.input(i));
      if (s.size() > ys.size()) return "operand rank exceeds output rank";
      for (size_t d = 0; d < s.size(); ++d)
        if (s[d] != 1 && s[d] != ys[d + ys.size() - s.size()]) return "operands do not broadcast";
    }
    return "";
  }
  if (op == "MaxPool") {
    if (xs.size() != 4) return "only 2-D pooling";
    if (n.output_size() > 1 && !n.output(1).empty()) return "MaxPool Indices output not supported";
    if (AttrInt(n, "storage_order", 0) != 0 || AttrInt(n, "ceil_mode", 0) != 0)
      return "int8 MaxPool needs storage_order=0 and ceil_mode=0";
    if ((r = ConvWindow(n, false, 2)).empty() == false) return r;
    const std::string ap = AttrString(n, "auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID") return "auto_pad " + ap + " in int8";
    auto ks = AttrInts(n, "kernel_shape"), pads = AttrInts(n, "pads", {0, 0, 0, 0});
    if (ap == "VALID") pads = {0, 0, 0, 0};
    for (size_t i = 0; i < 4; ++i)
      if (pads[i] >= ks[i % 2]) return "pads not smaller than the kernel";
    return "";
  }
  if (op == "Concat") return "";
  if (kViewOps.count(op)) {
    if (n.output_size() > 1) return "extra outputs";
    return g->in[0] == g->out ? "" : "quantisation differs on both sides of " + op;
  }
  return "";  // lookup-table activations
}

std::string UnsupportedInt8(const onnx::NodeProto& n, const GraphInfo& info, bool* handled) {
  const std::string& op = n.op_type();
  *handled = false;
  if (!n.domain().empty() && n.domain() != "ai.onnx") return "";
  static const std::set<std::string> kQuantOps = {
      "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
      "QLinearMatMul",  "ConvInteger",      "MatMulInteger"};
  const bool cast_int = op == "Cast" && n.input_size() == 1 && info.type(n.input(0)) &&
                        info.type(n.input(0))->dtype == TP::INT32;
  const GraphIndex& ix = IndexOf(info.graph);
  const bool mac_qweight = (op == "Conv" || op == "Gemm" || op == "MatMul") && Has(n, 1) &&
                           IsConstDq(n.input(1), ix, info);
  if (!kQuantOps.count(op) && !cast_int && !mac_qweight) {
    if (!Int8GroupOp(op)) return "";
    QGroup g;
    if (!MatchGroup(n, ix, info, &g).empty()) return "";  // the float path decides
    *handled = true;
    return "";
  }
  *handled = true;
  QGroup g;
  if (mac_qweight) return MatchGroup(n, ix, info, &g);
  std::string r;
  for (const auto& o : n.output())
    if (!o.empty() &&
        !(r = StaticOf(
              info, o, [](int32_t d) { return d == TP::FLOAT || Q8(d) || d == TP::INT32; },
              "float32/int8/uint8/int32"))
             .empty())
      return "output " + r;
  if (cast_int) {
    if (AttrInt(n, "to", 0) != TP::FLOAT) return "Cast from int32 to a type other than float32";
    return StaticOf(info, n.input(0), IsI32, "int32");
  }
  QParam p;
  if (op == "QuantizeLinear") {
    if (!(r = StaticOf(info, n.input(0), IsF32, "float32")).empty()) return r;
    if (info.constant(n.input(0))) return "constant input";
    return PerTensor(n, info, &p);
  }
  if (op == "DequantizeLinear") {
    const ValueType* t = info.type(n.output(0));
    if (!t || t->dtype != TP::FLOAT) return "output is not float32";
    if (info.constant(n.input(0))) {  // weights: dequantised at compile time when not fused
      QConst c;
      return ConstDq(n.output(0), ix, info, &c);
    }
    if (!(r = StaticOf(
              info, n.input(0), [](int32_t d) { return Q8(d) || d == TP::INT32; },
              "int8/uint8/int32"))
             .empty())
      return r;
    return PerTensor(n, info, &p);
  }
  if (op == "DynamicQuantizeLinear") return StaticOf(info, n.input(0), IsF32, "float32");
  // QLinearConv / QLinearMatMul / ConvInteger / MatMulInteger.
  const bool qlinear = op == "QLinearConv" || op == "QLinearMatMul";
  const bool conv = op == "QLinearConv" || op == "ConvInteger";
  const int wi = qlinear ? 3 : 1;
  if (!(r = StaticOf(info, n.input(0), IsQ8, "int8/uint8")).empty()) return r;
  if (info.constant(n.input(0))) return "constant input";
  if (!Has(n, wi) || !info.constant(n.input(wi))) return "weight is not a constant";
  const TP* w = info.constant(n.input(wi));
  if (!Q8(w->data_type())) return "weight is not int8/uint8";
  const auto xs = DimsOf(info, n.input(0));
  if (conv && (xs.size() != 4 || w->dims_size() != 4)) return "only 2-D int8 convolution";
  if (!conv && (xs.size() < 2 || w->dims_size() != 2)) return "A must have rank >= 2 and B be 2-D";
  if (conv && (r = ConvWindow(n, true, 2)).empty() == false) return r;
  const std::string ap = AttrString(n, "auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID") return "auto_pad " + ap + " in int8";
  const int64_t channels = conv ? w->dims(0) : w->dims(1);
  // Scales (QLinear*) are per tensor except the weight's (per channel).
  float f;
  int32_t z, zd;
  if (qlinear) {
    for (int i : {1, 6})
      if (!(r = ScalarConst(info, n, i, true, &f, &z, &zd)).empty()) return r;
    const TP* ws = info.constant(n.input(4));
    if (!ws || ws->data_type() != TP::FLOAT || (Elems(*ws) != 1 && Elems(*ws) != size_t(channels)))
      return "weight scale is not a constant per tensor or per output channel";
    for (float s : Floats(*ws, NodeLabel(n)))
      if (!(s > 0.f) || !std::isfinite(s)) return "weight scale is not finite and > 0";
  }
  // Input zero point: a constant, or (ConvInteger / MatMulInteger) a value;
  // input 2 in both forms.
  const int xz = 2, wz = qlinear ? 5 : 3, yz = 7;
  if (Has(n, xz) && !info.constant(n.input(xz))) {
    if (qlinear) return "input zero point is not a constant";
    if (!(r = StaticOf(info, n.input(xz), IsQ8, "int8/uint8")).empty()) return r;
    if (DimsOf(info, n.input(xz)).size() > 1) return "input zero point is not per tensor";
  } else if (Has(n, xz) && !(r = ScalarConst(info, n, xz, false, &f, &z, &zd)).empty()) {
    return r;
  }
  if (Has(n, wz)) {
    const TP* c = info.constant(n.input(wz));
    if (!c || c->data_type() != w->data_type() || (Elems(*c) != 1 && Elems(*c) != size_t(channels)))
      return "weight zero point is not a constant per tensor or per output channel";
    if (!AllEqual(Ints(*c, NodeLabel(n)))) return "per-channel weight zero points that differ";
  }
  if (qlinear && Has(n, yz) && !(r = ScalarConst(info, n, yz, false, &f, &z, &zd)).empty())
    return r;
  if (op == "QLinearConv" && Has(n, 8)) {
    const TP* b = info.constant(n.input(8));
    if (!b || b->data_type() != TP::INT32 || Elems(*b) != size_t(channels))
      return "bias is not int32 [Cout]";
  }
  return "";
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
