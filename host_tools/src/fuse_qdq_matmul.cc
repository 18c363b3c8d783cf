// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/fuse_qdq_matmul.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"
#include "qdq_params.h"

namespace epctx {
namespace host {
namespace {

// A bias value laid along the last axis: [N], [1, N], [1, 1, N], ...
bool AlongLastAxis(const GraphInfo& info, const std::string& v, const onnx::NodeProto* producer,
                   int64_t N) {
  const onnx::TensorProto* t = info.constant(v);
  if (!t && IsOp(producer, "DequantizeLinear")) t = info.constant(producer->input(0));
  if (!t || t->dims_size() == 0) return false;
  for (int i = 0; i + 1 < t->dims_size(); ++i)
    if (t->dims(i) != 1) return false;
  return t->dims(t->dims_size() - 1) == N;
}

void AddValueInfo(onnx::GraphProto& g, const std::string& name, int32_t dtype,
                  const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* vi = g.add_value_info();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

std::string AddShape(onnx::GraphProto& g, std::set<std::string>* names, const std::string& base,
                     const std::vector<int64_t>& dims) {
  std::string name = Fresh(names, base);
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(int64_t(dims.size()));
  t->set_raw_data(std::string(reinterpret_cast<const char*>(dims.data()), dims.size() * 8));
  return name;
}

}  // namespace

size_t FuseQdqMatMuls(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  FusionScan scan(model);
  if (!scan.whole) return 0;
  const auto node_of = [&](const std::string& v) { return scan.ProducerOf(g, v); };
  // The nodes each fusion adds, at the place of the last node it absorbs.
  std::map<int, std::vector<onnx::NodeProto>> added;
  std::vector<int> dq_uses;  // DequantizeLinear nodes that lost a reader
  size_t fused = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& mm = g.node(i);
    const bool gemm = IsOp(&mm, "Gemm");
    if ((!gemm && !IsOp(&mm, "MatMul")) || mm.input_size() < 2 || mm.output_size() != 1) continue;
    const onnx::NodeProto* dx = node_of(mm.input(0));
    const onnx::NodeProto* dw = node_of(mm.input(1));
    if (!IsOp(dx, "DequantizeLinear") || !IsOp(dw, "DequantizeLinear") ||
        scan.info.constant(dx->input(0)))
      continue;
    const onnx::TensorProto* wq = scan.info.constant(dw->input(0));
    if (!wq || wq->dims_size() != 2 ||
        (wq->data_type() != onnx::TensorProto::INT8 && wq->data_type() != onnx::TensorProto::UINT8))
      continue;
    const int64_t trans_b = gemm ? IntAttr(mm, "transB", 0) : 0;
    if (gemm && (IntAttr(mm, "transA", 0) != 0 ||
                 (mm.input_size() > 2 && FloatAttr(mm, "beta", 1.0f) != 1.0f)))
      continue;
    const int64_t K = wq->dims(trans_b ? 1 : 0), N = wq->dims(trans_b ? 0 : 1);
    QParams px, pw, py;
    if (!ParamsOf(*dx, scan.info, 1, &px) || px.scale.size() != 1 ||
        !ParamsOf(*dw, scan.info, size_t(N), &pw))
      continue;
    const int64_t axis = AxisOf(*dw) < 0 ? AxisOf(*dw) + 2 : AxisOf(*dw);
    if (pw.scale.size() > 1 && axis != (trans_b ? 0 : 1)) continue;
    const ValueType* at = scan.info.type(mm.input(0));
    const ValueType* xt = scan.info.type(dx->input(0));
    if (!at || !at->fully_static() || at->dims.size() < 2 || at->dims.back() != K ||
        (gemm && at->dims.size() != 2) || !xt ||
        (xt->dtype != onnx::TensorProto::UINT8 && xt->dtype != onnx::TensorProto::INT8))
      continue;
    // The bias: Gemm's C, or a MatMul's only reader Add.
    std::string result = mm.output(0), bias_value;
    int add = -1;
    if (gemm && mm.input_size() > 2 && !mm.input(2).empty()) {
      bias_value = mm.input(2);
    } else if (!gemm) {
      const int j = scan.OnlyReader(result);
      const onnx::NodeProto* a = j >= 0 ? &g.node(j) : nullptr;
      if (IsOp(a, "Add") && a->input_size() == 2 && a->output_size() == 1 &&
          (a->input(0) == result) != (a->input(1) == result)) {
        const std::string& other = a->input(a->input(0) == result ? 1 : 0);
        if (AlongLastAxis(scan.info, other, node_of(other), N)) {
          bias_value = other;
          add = j;
          result = a->output(0);
        }
      }
    }
    std::vector<int32_t> bias;
    if (!bias_value.empty() && (!AlongLastAxis(scan.info, bias_value, node_of(bias_value), N) ||
                                !AccumulatorBias(bias_value, node_of(bias_value), scan.info,
                                                 px.scale[0], pw, size_t(N), &bias)))
      continue;
    // The output: a QuantizeLinear's integers, or the float result.
    const int rq = scan.OnlyReader(result);
    const onnx::NodeProto* q =
        rq >= 0 && IsOp(&g.node(rq), "QuantizeLinear") ? &g.node(rq) : nullptr;
    if (q && (!ParamsOf(*q, scan.info, 1, &py) || py.scale.size() != 1)) q = nullptr;
    const std::string y = q ? q->output(0) : result;
    const int32_t ydtype = q ? py.dtype : int32_t(onnx::TensorProto::FLOAT);

    std::vector<onnx::NodeProto>& out = added[q ? rq : add >= 0 ? add : i];
    const std::string base = mm.name().empty() ? y : mm.name();
    std::vector<int64_t> ydims(at->dims.begin(), at->dims.end() - 1);
    int64_t rows = 1;
    for (int64_t d : ydims) rows *= d;
    ydims.push_back(N);
    const bool reshape = at->dims.size() > 2;
    std::string x2 = dx->input(0), y2 = y;
    if (reshape) {
      x2 = Fresh(&scan.names, dx->input(0) + "_rows");
      y2 = Fresh(&scan.names, y + "_rows");
      onnx::NodeProto r;
      r.set_op_type("Reshape");
      r.set_name(base + "_rows_in");
      r.add_input(dx->input(0));
      r.add_input(AddShape(g, &scan.names, x2 + "_shape", {rows, K}));
      r.add_output(x2);
      out.push_back(r);
      AddValueInfo(g, x2, xt->dtype, {rows, K});
      AddValueInfo(g, y2, ydtype, {rows, N});
    }
    onnx::NodeProto qg;
    qg.set_op_type("QGemm");
    qg.set_domain("com.microsoft");
    qg.set_name(base + "_qgemm");
    qg.add_input(x2);
    qg.add_input(dx->input(1));
    qg.add_input(ZeroPointInput(px, xt->dtype, dx->input(0), &scan.names, g));
    qg.add_input(dw->input(0));
    qg.add_input(dw->input(1));
    qg.add_input(ZeroPointInput(pw, wq->data_type(), dw->input(0), &scan.names, g));
    if (!bias.empty()) {
      const std::string name = Fresh(&scan.names, base + "_bias_int32");
      onnx::TensorProto* t = g.add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::INT32);
      t->add_dims(N);
      t->set_raw_data(std::string(reinterpret_cast<const char*>(bias.data()), bias.size() * 4));
      qg.add_input(name);
    } else if (q) {
      qg.add_input("");
    }
    if (q) {
      qg.add_input(q->input(1));
      qg.add_input(ZeroPointInput(py, py.dtype, y, &scan.names, g));
    }
    qg.add_output(y2);
    auto* tb = qg.add_attribute();
    tb->set_name("transB");
    tb->set_type(onnx::AttributeProto::INT);
    tb->set_i(trans_b);
    const float alpha = gemm ? FloatAttr(mm, "alpha", 1.0f) : 1.0f;
    if (alpha != 1.0f) {
      auto* al = qg.add_attribute();
      al->set_name("alpha");
      al->set_type(onnx::AttributeProto::FLOAT);
      al->set_f(alpha);
    }
    out.push_back(qg);
    if (reshape) {
      onnx::NodeProto r;
      r.set_op_type("Reshape");
      r.set_name(base + "_rows_out");
      r.add_input(y2);
      r.add_input(AddShape(g, &scan.names, y2 + "_shape", ydims));
      r.add_output(y);
      out.push_back(r);
    }
    scan.drop[size_t(i)] = true;
    if (add >= 0) scan.drop[size_t(add)] = true;
    if (q) scan.drop[size_t(rq)] = true;
    dq_uses.push_back(scan.producer[mm.input(0)]);
    dq_uses.push_back(scan.producer[mm.input(1)]);
    if (!bias_value.empty() && node_of(bias_value)) dq_uses.push_back(scan.producer[bias_value]);
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
  // The new nodes take the place of the last node each fusion absorbed:
  // their inputs come before it, the readers of their output after.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<bool> drop;
  for (int i = 0; i < g.node_size(); ++i) {
    auto it = added.find(i);
    if (it != added.end())
      for (auto& n : it->second) {
        *nodes.Add() = n;
        drop.push_back(false);
      }
    *nodes.Add() = g.node(i);
    drop.push_back(scan.drop[size_t(i)]);
  }
  g.mutable_node()->Swap(&nodes);
  DropNodes(g, drop);
  ImportMsOpset(model);
  return fused;
}

}  // namespace host
}  // namespace epctx
