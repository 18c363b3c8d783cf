// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/fuse_qdq.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fusion.h"
#include "qdq_params.h"

namespace epctx {
namespace host {

size_t FuseQdqConvs(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  FusionScan scan(model);
  if (!scan.whole) return 0;
  const auto node_of = [&](const std::string& v) { return scan.ProducerOf(g, v); };
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
    if (conv.input_size() > 2 && !conv.input(2).empty() &&
        !AccumulatorBias(conv.input(2), node_of(conv.input(2)), scan.info, px.scale[0], pw, cout,
                         &bias))
      continue;

    onnx::NodeProto qc;
    qc.set_op_type("QLinearConv");
    qc.set_name(conv.name().empty() ? q.output(0) + "_qlinear" : conv.name() + "_qlinear");
    const ValueType* xt = scan.info.type(dx->input(0));
    const int32_t xdtype = xt && xt->dtype ? xt->dtype : px.dtype;
    const auto zero_point = [&](const QParams& p, int32_t dtype, const std::string& base) {
      return ZeroPointInput(p, dtype, base, &scan.names, g);
    };
    qc.add_input(dx->input(0));
    qc.add_input(dx->input(1));
    qc.add_input(zero_point(px, xdtype, dx->input(0)));
    qc.add_input(dw->input(0));
    qc.add_input(dw->input(1));
    qc.add_input(zero_point(pw, wq->data_type(), dw->input(0)));
    qc.add_input(q.input(1));
    qc.add_input(zero_point(py, py.dtype, q.output(0)));
    if (!bias.empty()) {
      const std::string name = Fresh(&scan.names, conv.output(0) + "_bias_int32");
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
    dq_uses.push_back(scan.producer[conv.input(0)]);
    dq_uses.push_back(scan.producer[conv.input(1)]);
    if (conv.input_size() > 2 && node_of(conv.input(2)))
      dq_uses.push_back(scan.producer[conv.input(2)]);
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
