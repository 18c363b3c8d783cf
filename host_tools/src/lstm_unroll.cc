// SPDX-License-Identifier: Apache-2.0
// LSTM unrolling (epctx_host/lstm_unroll.h).
#include "epctx_host/lstm_unroll.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "epctx_host/subgraphs.h"
#include "fusion.h"  // IntAttr

namespace epctx {
namespace host {
namespace {

using onnx::TensorProto;

bool Eligible(const onnx::NodeProto& n, const GraphInfo& info) {
  if (n.op_type() != "LSTM" || !IsDefaultDomain(n.domain())) return false;
  for (const auto& a : n.attribute()) {
    const std::string& k = a.name();
    if (k == "hidden_size") continue;
    if (k == "direction" && a.s() == "forward") continue;
    if (k == "layout" && a.i() == 0) continue;
    if (k == "input_forget" && a.i() == 0) continue;
    return false;  // activations, clip, other directions or layouts
  }
  auto given = [&](int i) { return n.input_size() > i && !n.input(i).empty(); };
  if (!given(1) || !given(2) || given(4) || given(7)) return false;
  for (int i : {1, 2, 3})
    if (given(i) && !info.constant(n.input(i))) return false;
  const ValueType* x = info.type(n.input(0));
  if (!x || !x->fully_static() || x->dims.size() != 3 || x->dtype != TensorProto::FLOAT)
    return false;
  if (x->dims[0] < 1 || x->dims[0] > kMaxUnrollSteps) return false;
  for (int i : {5, 6}) {
    const ValueType* s = given(i) ? info.type(n.input(i)) : nullptr;
    if (given(i) && (!s || !s->fully_static())) return false;
  }
  const int64_t H = IntAttr(n, "hidden_size", 0), I = x->dims[2];
  if (H < 1 || H > 4096 || I < 1) return false;
  std::vector<float> v;
  return FloatValues(info.constant(n.input(1)), size_t(4 * H * I), &v) &&
         FloatValues(info.constant(n.input(2)), size_t(4 * H * H), &v) &&
         (!given(3) || FloatValues(info.constant(n.input(3)), size_t(8 * H), &v));
}

class Unroller {
 public:
  // `read`: the values some node or graph output reads; an output of the
  // LSTM nobody reads is not computed.
  Unroller(const onnx::NodeProto& n, const GraphInfo& info, onnx::GraphProto& g,
           std::set<std::string>* taken, const std::set<std::string>& read)
      : n_(n), info_(info), g_(g), taken_(taken), read_(read) {
    base_ = (n.name().empty() ? n.output(0) : n.name()) + "/";
  }

  // Appends the unrolled nodes to `out`.
  void Run(google::protobuf::RepeatedPtrField<onnx::NodeProto>* out) {
    out_ = out;
    const std::vector<int64_t>& xd = info_.type(n_.input(0))->dims;
    const int64_t T = xd[0], B = xd[1], I = xd[2], H = IntAttr(n_, "hidden_size", 0);
    std::vector<float> w, r, b;
    // Eligible() checked the counts.
    FloatValues(info_.constant(n_.input(1)), size_t(4 * H * I), &w);
    FloatValues(info_.constant(n_.input(2)), size_t(4 * H * H), &r);
    const bool has_b = n_.input_size() > 3 && !n_.input(3).empty();
    if (has_b) FloatValues(info_.constant(n_.input(3)), size_t(8 * H), &b);
    std::string wt[4], rt[4], bias[4];
    for (int gate = 0; gate < 4; ++gate) {
      // W[0][gate*H + j][k] -> W_g^T[k][j]
      std::vector<float> a(size_t(I * H)), c(size_t(H * H)), bb(size_t(H), 0.f);
      for (int64_t j = 0; j < H; ++j) {
        for (int64_t k = 0; k < I; ++k) a[size_t(k * H + j)] = w[size_t((gate * H + j) * I + k)];
        for (int64_t k = 0; k < H; ++k) c[size_t(k * H + j)] = r[size_t((gate * H + j) * H + k)];
        if (has_b) bb[size_t(j)] = b[size_t(gate * H + j)] + b[size_t((4 + gate) * H + j)];
      }
      wt[gate] = Const(a, {I, H}, "W" + std::to_string(gate));
      rt[gate] = Const(c, {H, H}, "R" + std::to_string(gate));
      bias[gate] = Const(bb, {H}, "B" + std::to_string(gate));
    }
    std::vector<float> zeros(size_t(B * H), 0.f);
    auto given = [&](int i) { return n_.input_size() > i && !n_.input(i).empty(); };
    std::string h = given(5) ? n_.input(5) : Const(zeros, {1, B, H}, "h0");
    std::string c = given(6) ? n_.input(6) : Const(zeros, {1, B, H}, "c0");
    // X split into T steps of [1, B, I] (opset 13+: sizes as an input).
    std::vector<std::string> xs;
    onnx::NodeProto* split = Node("Split", {n_.input(0)}, {});
    for (int64_t t = 0; t < T; ++t) {
      xs.push_back(Name("x" + std::to_string(t)));
      split->add_output(xs.back());
    }
    if (info_.opset >= 13) {
      std::vector<int64_t> ones(size_t(T), 1);
      split->add_input(ConstI64(ones, {T}, "split"));
    } else {
      auto* a = split->add_attribute();
      a->set_name("split");
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t t = 0; t < T; ++t) a->add_ints(1);
    }
    std::vector<std::string> ys;
    const std::string y_shape = ConstI64({1, 1, B, H}, {4}, "y_shape");
    for (int64_t t = 0; t < T; ++t) {
      const std::string s = "t" + std::to_string(t) + "_";
      std::string act[4];
      for (int gate = 0; gate < 4; ++gate) {
        const std::string gs = s + "g" + std::to_string(gate) + "_";
        std::string xw = Op("MatMul", {xs[size_t(t)], wt[gate]}, gs + "xw");
        std::string hr = Op("MatMul", {h, rt[gate]}, gs + "hr");
        std::string sum = Op("Add", {Op("Add", {xw, hr}, gs + "sum"), bias[gate]}, gs + "pre");
        act[gate] = Op(gate == 3 ? "Tanh" : "Sigmoid", {sum}, gs + "act");
      }
      // act: i, o, f, c~
      std::string fc = Op("Mul", {act[2], c}, s + "fc");
      std::string ic = Op("Mul", {act[0], act[3]}, s + "ic");
      const bool last = t + 1 == T;
      c = Op("Add", {fc, ic}, s + "c", last ? Output(2) : "");
      h = Op("Mul", {act[1], Op("Tanh", {c}, s + "tc")}, s + "h", last ? Output(1) : "");
      if (!Output(0).empty()) ys.push_back(Op("Reshape", {h, y_shape}, s + "y"));
    }
    if (!Output(0).empty()) {
      onnx::NodeProto* cat = Node("Concat", ys, {Output(0)});
      auto* a = cat->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(0);
    }
  }

 private:
  // Intermediate Y_h / Y_c values still need names: the steps chain them.
  std::string Output(int i) const {
    if (n_.output_size() <= i || !read_.count(n_.output(i))) return std::string();
    return n_.output(i);
  }

  std::string Name(const std::string& s) {
    std::string name = base_ + s;
    for (int k = 1; !taken_->insert(name).second; ++k) name = base_ + s + "_" + std::to_string(k);
    return name;
  }

  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out) {
    onnx::NodeProto* node = out_->Add();
    node->set_op_type(op);
    node->set_name(Name(op + std::to_string(out_->size())));
    for (const auto& s : in) node->add_input(s);
    for (const auto& s : out) node->add_output(s);
    return node;
  }

  // The node's output: `fixed` when given (an LSTM output), else a new name.
  std::string Op(const std::string& op, const std::vector<std::string>& in, const std::string& s,
                 const std::string& fixed = "") {
    std::string out = fixed.empty() ? Name(s) : fixed;  // not const: moved out
    Node(op, in, {out});
    return out;
  }

  std::string Const(const std::vector<float>& v, const std::vector<int64_t>& dims,
                    const std::string& s) {
    TensorProto* t = g_.add_initializer();
    t->set_name(Name(s));
    t->set_data_type(TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    return t->name();
  }

  std::string ConstI64(const std::vector<int64_t>& v, const std::vector<int64_t>& dims,
                       const std::string& s) {
    TensorProto* t = g_.add_initializer();
    t->set_name(Name(s));
    t->set_data_type(TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t x : v) t->add_int64_data(x);
    return t->name();
  }

  const onnx::NodeProto& n_;
  const GraphInfo& info_;
  onnx::GraphProto& g_;
  std::set<std::string>* taken_;
  const std::set<std::string>& read_;
  std::string base_;
  google::protobuf::RepeatedPtrField<onnx::NodeProto>* out_ = nullptr;
};

}  // namespace

size_t UnrollLstms(onnx::GraphProto& graph, const GraphInfo& info) {
  std::vector<int> eligible;
  for (int i = 0; i < graph.node_size(); ++i)
    if (Eligible(graph.node(i), info)) eligible.push_back(i);
  if (eligible.empty()) return 0;
  std::set<std::string> taken, read;
  for (const auto& n : graph.node())
    for (const auto& s : NodeReads(n)) read.insert(s);
  for (const auto& v : graph.output()) read.insert(v.name());
  for (const auto& v : graph.input()) taken.insert(v.name());
  for (const auto& t : graph.initializer()) taken.insert(t.name());
  for (const auto& n : graph.node()) {
    taken.insert(n.name());
    for (const auto& s : n.input()) taken.insert(s);
    for (const auto& s : n.output()) taken.insert(s);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  size_t next = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (next < eligible.size() && eligible[next] == i) {
      ++next;
      Unroller(graph.node(i), info, graph, &taken, read).Run(&out);
    } else {
      *out.Add() = graph.node(i);
    }
  }
  graph.mutable_node()->Swap(&out);
  return eligible.size();
}

}  // namespace host
}  // namespace epctx
