// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/fuse_norm_gelu.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"

namespace epctx {
namespace host {
namespace {

bool Is(const onnx::NodeProto& n, const char* op, int inputs) {
  return n.op_type() == op && IsDefaultDomain(n.domain()) && n.input_size() == inputs &&
         n.output_size() == 1;
}

// The one-element float constant among binary n's inputs whose other input
// is `v` (its index in *at), in *k.
bool ScalarBeside(const onnx::NodeProto& n, const std::string& v, const GraphInfo& info, float* k,
                  int* at = nullptr) {
  for (int i = 0; i < 2; ++i) {
    if (n.input(1 - i) != v || n.input(i) == v) continue;
    std::vector<float> f;
    if (!FloatValues(info.constant(n.input(i)), 1, &f)) return false;
    *k = f[0];
    if (at) *at = i;
    return true;
  }
  return false;
}

// The reduced axes of a ReduceMean, as the last `count` axes of rank r;
// false otherwise (keepdims must be 1 for Sub to broadcast back).
bool LastAxes(const onnx::NodeProto& n, size_t r, size_t* count) {
  std::vector<int64_t> axes;
  for (const auto& a : n.attribute()) {
    if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
    if (a.name() == "keepdims" && a.i() != 1) return false;
  }
  if (axes.empty() || n.input_size() != 1) return false;
  std::vector<bool> seen(r, false);
  for (int64_t a : axes) {
    const int64_t v = a < 0 ? a + int64_t(r) : a;
    if (v < 0 || v >= int64_t(r) || seen[size_t(v)]) return false;
    seen[size_t(v)] = true;
  }
  for (size_t d = r - axes.size(); d < r; ++d)
    if (!seen[d]) return false;
  *count = axes.size();
  return true;
}

class Fuser {
 public:
  Fuser(onnx::ModelProto& m, FusionScan& scan) : g_(*m.mutable_graph()), s_(scan) {
    for (int i = 0; i < g_.node_size(); ++i) index_[&g_.node(i)] = i;
  }

  // The only reader of v as a node (null when none or several).
  onnx::NodeProto* Next(const std::string& v) {
    const int j = s_.OnlyReader(v);
    return j < 0 || s_.drop[size_t(j)] ? nullptr : g_.mutable_node(j);
  }
  void Drop(const onnx::NodeProto* n) { s_.drop[size_t(index_.at(n))] = true; }

  bool LayerNorm(onnx::NodeProto& r1) {
    if (!Is(r1, "ReduceMean", 1) || s_.info.opset < 13) return false;
    const ValueType* xt = s_.info.type(r1.input(0));
    size_t count = 0;
    if (!xt || !xt->fully_static() || !LastAxes(r1, xt->dims.size(), &count)) return false;
    const std::string x = r1.input(0);
    onnx::NodeProto* sub = Next(r1.output(0));
    if (!sub || !Is(*sub, "Sub", 2) || sub->input(0) != x || sub->input(1) != r1.output(0))
      return false;
    const std::string d = sub->output(0);
    auto rd = s_.readers.find(d);
    if (s_.outputs.count(d) || rd == s_.readers.end() || rd->second.size() != 2) return false;
    onnx::NodeProto *pow = nullptr, *div = nullptr;
    for (int j : rd->second) {
      onnx::NodeProto& c = *g_.mutable_node(j);
      if (Is(c, "Pow", 2) && c.input(0) == d) pow = &c;
      if (Is(c, "Div", 2) && c.input(0) == d) div = &c;
    }
    float e = 0.f, eps = 0.f;
    if (!pow || !div || !ScalarBeside(*pow, d, s_.info, &e) || e != 2.f) return false;
    onnx::NodeProto* r2 = Next(pow->output(0));
    size_t count2 = 0;
    if (!r2 || !LastAxes(*r2, xt->dims.size(), &count2) || count2 != count ||
        !Is(*r2, "ReduceMean", 1))
      return false;
    onnx::NodeProto* add = Next(r2->output(0));
    if (!add || !Is(*add, "Add", 2) || !ScalarBeside(*add, r2->output(0), s_.info, &eps) ||
        !(eps >= 0.f))
      return false;
    onnx::NodeProto* sq = Next(add->output(0));
    if (!sq || !Is(*sq, "Sqrt", 1) || Next(sq->output(0)) != div || div->input(1) != sq->output(0))
      return false;
    // The scale (required by the contrib op) and an optional bias: one
    // value per normalised element, on the last axes.
    int64_t norm = 1;
    for (size_t k = xt->dims.size() - count; k < xt->dims.size(); ++k) norm *= xt->dims[k];
    auto per_element = [&](const onnx::NodeProto& n, const std::string& v, std::string* c) {
      for (int i = 0; i < 2; ++i) {
        if (n.input(1 - i) != v || n.input(i) == v) continue;
        const onnx::TensorProto* t = s_.info.constant(n.input(i));
        std::vector<float> f;
        if (!t || t->dims_size() < 1 || size_t(t->dims_size()) > count ||
            !FloatValues(t, size_t(norm), &f))
          return false;
        for (int k = 0; k < t->dims_size(); ++k)
          if (t->dims(k) != xt->dims[xt->dims.size() - size_t(t->dims_size()) + size_t(k)])
            return false;
        *c = n.input(i);
        return true;
      }
      return false;
    };
    onnx::NodeProto* mul = Next(div->output(0));
    std::string scale, bias;
    if (!mul || !Is(*mul, "Mul", 2) || !per_element(*mul, div->output(0), &scale)) return false;
    onnx::NodeProto* last = mul;
    onnx::NodeProto* badd = Next(mul->output(0));
    if (badd && Is(*badd, "Add", 2) && per_element(*badd, mul->output(0), &bias)) last = badd;
    else badd = nullptr;
    // The last node becomes the LayerNormalization; the rest go.
    const std::string y = last->output(0);
    const onnx::NodeProto* absorbed[] = {&r1, sub, pow, r2, add, sq, div, mul};
    for (const onnx::NodeProto* n : absorbed)
      if (n != last) Drop(n);
    onnx::NodeProto ln;
    ln.set_op_type("LayerNormalization");  // ai.onnx, opset 17 (raised below)
    ln.set_name(last->name().empty() ? y + "/LayerNorm" : last->name() + "/LayerNorm");
    ln.add_input(x);
    ln.add_input(scale);
    if (!bias.empty()) ln.add_input(bias);
    ln.add_output(y);
    auto* a = ln.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(-int64_t(count));
    a = ln.add_attribute();
    a->set_name("epsilon");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(eps);
    *last = ln;
    return true;
  }

  bool Gelu(onnx::NodeProto& scale) {
    const bool by_div = Is(scale, "Div", 2);
    if (!by_div && !Is(scale, "Mul", 2)) return false;
    const std::string x = scale.input(0);
    float k = 0.f, one = 0.f, half = 0.f;
    int at = -1;
    if (!ScalarBeside(scale, x, s_.info, &k, &at) || at != 1) return false;
    const double want = by_div ? std::sqrt(2.0) : 1.0 / std::sqrt(2.0);
    if (std::fabs(double(k) - want) > 1e-6) return false;
    onnx::NodeProto* erf = Next(scale.output(0));
    if (!erf || !Is(*erf, "Erf", 1)) return false;
    onnx::NodeProto* add = Next(erf->output(0));
    if (!add || !Is(*add, "Add", 2) || !ScalarBeside(*add, erf->output(0), s_.info, &one) ||
        one != 1.f)
      return false;
    onnx::NodeProto* mul = Next(add->output(0));
    if (!mul || !Is(*mul, "Mul", 2) ||
        !((mul->input(0) == x && mul->input(1) == add->output(0)) ||
          (mul->input(1) == x && mul->input(0) == add->output(0))))
      return false;
    onnx::NodeProto* h = Next(mul->output(0));
    if (!h || !Is(*h, "Mul", 2) || !ScalarBeside(*h, mul->output(0), s_.info, &half) ||
        half != 0.5f)
      return false;
    const onnx::NodeProto* absorbed[] = {&scale, erf, add, mul};
    for (const onnx::NodeProto* n : absorbed) Drop(n);
    const std::string y = h->output(0), name = h->name();
    h->Clear();
    h->set_op_type("Gelu");
    h->set_domain("com.microsoft");
    h->set_name(name.empty() ? y + "/Gelu" : name + "/Gelu");
    h->add_input(x);
    h->add_output(y);
    return true;
  }

 private:
  onnx::GraphProto& g_;
  FusionScan& s_;
  std::map<const onnx::NodeProto*, int> index_;  // a node's place in g_ (the drop flags')
};

}  // namespace

size_t FuseNormGelu(onnx::ModelProto& model) {
  FusionScan scan(model);
  if (!scan.whole) return 0;
  Fuser f(model, scan);
  onnx::GraphProto& g = *model.mutable_graph();
  size_t fused = 0;
  bool norms = false, gelus = false;
  for (int i = 0; i < g.node_size(); ++i) {
    if (scan.drop[size_t(i)]) continue;
    onnx::NodeProto& n = *g.mutable_node(i);
    if (f.LayerNorm(n)) {
      ++fused;
      norms = true;
    } else if (f.Gelu(n)) {
      ++fused;
      gelus = true;
    }
  }
  if (!fused) return 0;
  DropNodes(g, scan.drop);
  // LayerNormalization is opset 17. From 13 to 17 every other op only
  // gained types, inputs or attributes whose defaults keep opset 13's
  // meaning (as fuse_swish.cc raises 13 to 14), so the model is raised.
  if (norms)
    for (auto& o : *model.mutable_opset_import())
      if (IsDefaultDomain(o.domain()) && o.version() < 17) o.set_version(17);
  if (gelus) ImportMsOpset(model);
  return fused;
}

}  // namespace host
}  // namespace epctx
