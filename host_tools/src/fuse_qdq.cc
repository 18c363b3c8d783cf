// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/fuse_qdq.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"

namespace epctx {
namespace host {
namespace {

bool IsOp(const onnx::NodeProto* n, const char* op) {
  return n && n->op_type() == op && IsDefaultDomain(n->domain());
}

size_t Elements(const onnx::TensorProto& t) {
  size_t n = 1;
  for (int64_t d : t.dims()) n *= size_t(d);
  return n;
}

// A QuantizeLinear / DequantizeLinear's constant parameters: scales (1 or
// `channels`), zero points (as many) and the zero point's dtype (UINT8
// without one). False when not constant or of another count.
struct QParams {
  std::vector<float> scale;
  std::vector<int32_t> zp;
  int32_t dtype = onnx::TensorProto::UINT8;
  std::string zp_name;  // "" when absent
};
bool ParamsOf(const onnx::NodeProto& n, const GraphInfo& info, size_t channels, QParams* q) {
  if (n.input_size() < 2) return false;
  const onnx::TensorProto* s = info.constant(n.input(1));
  if (!s) return false;
  const size_t count = Elements(*s);
  if (count != 1 && count != channels) return false;
  if (!FloatValues(s, count, &q->scale)) return false;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const onnx::TensorProto* z = info.constant(n.input(2));
    if (!z || Elements(*z) != count || !IntValues(z, count, &q->zp)) return false;
    q->dtype = z->data_type();
    q->zp_name = n.input(2);
  } else {
    q->zp.assign(count, 0);
  }
  for (float v : q->scale)
    if (!(v > 0.0f) || !std::isfinite(v)) return false;
  return true;
}

int64_t AxisOf(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.name() == "axis") return a.i();
  return 1;
}

std::string Fresh(std::set<std::string>* names, const std::string& base) {
  std::string name = base;
  for (int i = 1; names->count(name); ++i) name = base + "_" + std::to_string(i);
  names->insert(name);
  return name;
}

}  // namespace

size_t FuseQdqConvs(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  FusionScan scan(model);
  if (!scan.whole) return 0;
  std::map<std::string, int> producer;
  std::set<std::string> names;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i, names.insert(o);
  for (const auto& t : g.initializer()) names.insert(t.name());
  const auto node_of = [&](const std::string& v) -> const onnx::NodeProto* {
    auto it = producer.find(v);
    return it == producer.end() ? nullptr : &g.node(it->second);
  };
  std::vector<onnx::NodeProto> added;
  std::vector<int> dq_uses;  // DequantizeLinear nodes that lost a reader
  size_t fused = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& conv = g.node(i);
    if (!IsOp(&conv, "Conv") || conv.input_size() < 2 || conv.output_size() != 1) continue;
    const onnx::NodeProto* dx = node_of(conv.input(0));
    const onnx::NodeProto* dw = node_of(conv.input(1));
    if (!IsOp(dx, "DequantizeLinear") || !IsOp(dw, "DequantizeLinear") ||
        scan.info.constant(dx->input(0)))
      continue;
    const onnx::TensorProto* wq = scan.info.constant(dw->input(0));
    if (!wq || wq->dims_size() != 4 ||
        (wq->data_type() != onnx::TensorProto::INT8 && wq->data_type() != onnx::TensorProto::UINT8))
      continue;
    const size_t cout = size_t(wq->dims(0));
    QParams px, pw, py;
    if (!ParamsOf(*dx, scan.info, 1, &px) || px.scale.size() != 1 ||
        !ParamsOf(*dw, scan.info, cout, &pw) || (pw.scale.size() > 1 && AxisOf(*dw) != 0))
      continue;
    // The output: a QuantizeLinear, or a Relu that the clamp makes redundant.
    int rd = scan.OnlyReader(conv.output(0));
    const onnx::NodeProto* relu = nullptr;
    if (rd >= 0 && IsOp(&g.node(rd), "Relu")) {
      relu = &g.node(rd);
      rd = scan.OnlyReader(relu->output(0));
    }
    if (rd < 0 || !IsOp(&g.node(rd), "QuantizeLinear")) continue;
    const onnx::NodeProto& q = g.node(rd);
    if (!ParamsOf(q, scan.info, 1, &py) || py.scale.size() != 1) continue;
    if (relu && py.zp[0] != (py.dtype == onnx::TensorProto::INT8 ? -128 : 0)) continue;
    // The bias, in the accumulator's scale x_scale * w_scale[c].
    std::vector<int32_t> bias;
    if (conv.input_size() > 2 && !conv.input(2).empty()) {
      std::vector<double> real(cout);
      std::vector<int32_t> direct;
      std::vector<float> f;
      if (scan.info.constant(conv.input(2))) {
        if (!FloatValues(scan.info.constant(conv.input(2)), cout, &f)) continue;
        for (size_t c = 0; c < cout; ++c) real[c] = f[c];
      } else {
        const onnx::NodeProto* db = node_of(conv.input(2));
        QParams pb;
        const onnx::TensorProto* bq =
            IsOp(db, "DequantizeLinear") ? scan.info.constant(db->input(0)) : nullptr;
        if (!bq || bq->data_type() != onnx::TensorProto::INT32 || !IntValues(bq, cout, &direct) ||
            !ParamsOf(*db, scan.info, cout, &pb))
          continue;
        bool exact = true;
        for (size_t c = 0; c < cout; ++c) {
          const double s = pb.scale[pb.scale.size() == 1 ? 0 : c];
          const double acc = double(px.scale[0]) * pw.scale[pw.scale.size() == 1 ? 0 : c];
          real[c] = (double(direct[c]) - pb.zp[pb.zp.size() == 1 ? 0 : c]) * s;
          exact =
              exact && pb.zp[pb.zp.size() == 1 ? 0 : c] == 0 && std::fabs(s - acc) <= 1e-6 * acc;
        }
        if (exact) bias = direct;
      }
      if (bias.empty()) {
        bias.resize(cout);
        for (size_t c = 0; c < cout; ++c) {
          const double acc = double(px.scale[0]) * pw.scale[pw.scale.size() == 1 ? 0 : c];
          const double v = std::nearbyint(real[c] / acc);
          bias[c] = int32_t(std::fmax(-1073741824.0, std::fmin(1073741823.0, v)));
        }
      }
    }

    onnx::NodeProto qc;
    qc.set_op_type("QLinearConv");
    qc.set_name(conv.name().empty() ? q.output(0) + "_qlinear" : conv.name() + "_qlinear");
    const auto zero_point = [&](const QParams& p, const std::string& base) {
      if (!p.zp_name.empty()) return p.zp_name;
      std::string name = Fresh(&names, base + "_zero_point");
      onnx::TensorProto* t = g.add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::UINT8);
      t->set_raw_data(std::string(1, '\0'));
      return name;
    };
    qc.add_input(dx->input(0));
    qc.add_input(dx->input(1));
    qc.add_input(zero_point(px, dx->input(0)));
    qc.add_input(dw->input(0));
    qc.add_input(dw->input(1));
    qc.add_input(zero_point(pw, dw->input(0)));
    qc.add_input(q.input(1));
    qc.add_input(zero_point(py, q.output(0)));
    if (!bias.empty()) {
      const std::string name = Fresh(&names, conv.output(0) + "_bias_int32");
      onnx::TensorProto* t = g.add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::INT32);
      t->add_dims(int64_t(cout));
      t->set_raw_data(std::string(reinterpret_cast<const char*>(bias.data()), bias.size() * 4));
      qc.add_input(name);
    }
    qc.add_output(q.output(0));
    for (const auto& a : conv.attribute()) *qc.add_attribute() = a;
    added.push_back(qc);
    scan.drop[size_t(i)] = true;
    scan.drop[size_t(rd)] = true;
    if (relu) scan.drop[size_t(scan.OnlyReader(conv.output(0)))] = true;
    dq_uses.push_back(producer[conv.input(0)]);
    dq_uses.push_back(producer[conv.input(1)]);
    if (conv.input_size() > 2 && node_of(conv.input(2))) dq_uses.push_back(producer[conv.input(2)]);
    ++fused;
  }
  if (!fused) return 0;
  // A DequantizeLinear goes when every reader of its output went.
  for (int d : dq_uses) {
    const auto it = scan.readers.find(g.node(d).output(0));
    bool all = !scan.outputs.count(g.node(d).output(0));
    if (it != scan.readers.end())
      for (int r : it->second) all = all && scan.drop[size_t(r)];
    if (all) scan.drop[size_t(d)] = true;
  }
  // Each QLinearConv takes its QuantizeLinear's place in the order (its
  // inputs come before the Conv, its readers after the QuantizeLinear).
  std::map<std::string, const onnx::NodeProto*> by_output;
  for (const auto& n : added) by_output[n.output(0)] = &n;
  std::vector<bool> keep_drop = scan.drop;
  for (int i = 0; i < g.node_size(); ++i) {
    auto it = g.node(i).output_size() ? by_output.find(g.node(i).output(0)) : by_output.end();
    if (it != by_output.end()) {
      *g.mutable_node(i) = *it->second;
      keep_drop[size_t(i)] = false;
    }
  }
  DropNodes(g, keep_drop);
  return fused;
}

}  // namespace host
}  // namespace epctx
