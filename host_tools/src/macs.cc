// SPDX-License-Identifier: Apache-2.0
// Multiply-accumulate counts (see macs.h).
#include "epctx_host/macs.h"

#include <vector>

namespace epctx {
namespace host {
namespace {

bool StaticDims(const GraphInfo& info, const onnx::NodeProto& n, int i, std::vector<int64_t>* d) {
  if (n.input_size() <= i || n.input(i).empty()) return false;
  if (const onnx::TensorProto* c = info.constant(n.input(i))) {
    d->assign(c->dims().begin(), c->dims().end());
    return true;
  }
  const ValueType* t = info.type(n.input(i));
  if (!t || !t->fully_static()) return false;
  *d = t->dims;
  return true;
}

bool OutDims(const GraphInfo& info, const onnx::NodeProto& n, std::vector<int64_t>* d) {
  if (n.output_size() < 1) return false;
  const ValueType* t = info.type(n.output(0));
  if (!t || !t->fully_static()) return false;
  *d = t->dims;
  return true;
}

// Product of d[from..]; saturates instead of wrapping on absurd shapes.
uint64_t Product(const std::vector<int64_t>& d, size_t from = 0) {
  uint64_t p = 1;
  for (size_t i = from; i < d.size(); ++i) {
    const uint64_t v = d[i] < 0 ? 0 : uint64_t(d[i]);
    if (v != 0 && p > UINT64_MAX / v) return UINT64_MAX;
    p *= v;
  }
  return p;
}

uint64_t Mul(uint64_t a, uint64_t b) { return (b != 0 && a > UINT64_MAX / b) ? UINT64_MAX : a * b; }

int64_t AttrInt(const onnx::NodeProto& n, const char* name, int64_t def) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return def;
}

}  // namespace

uint64_t NodeMacs(const onnx::NodeProto& n, const GraphInfo& info) {
  const std::string& op = n.op_type();
  // com.microsoft FusedConv (fuse_conv_act.h) is a Conv and its clamp.
  const bool fused_conv = n.domain() == "com.microsoft" && op == "FusedConv";
  if (!n.domain().empty() && n.domain() != "ai.onnx" && !fused_conv) return 0;
  std::vector<int64_t> a, w, y;
  if (op == "Conv" || fused_conv || op == "ConvInteger" || op == "QLinearConv") {
    // Each output element: (C_in / groups) x kernel multiply-adds.
    if (!StaticDims(info, n, op == "QLinearConv" ? 3 : 1, &w) || !OutDims(info, n, &y) ||
        w.size() < 2)
      return 0;
    return Mul(Product(y), Product(w, 1));
  }
  if (op == "ConvTranspose") {
    // Each input element is spread over (C_out / groups) x kernel outputs.
    if (!StaticDims(info, n, 0, &a) || !StaticDims(info, n, 1, &w) || w.size() < 2) return 0;
    return Mul(Product(a), Product(w, 1));
  }
  if (op == "Gemm" || op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    if (!StaticDims(info, n, 0, &a) || !OutDims(info, n, &y) || a.empty()) return 0;
    int64_t k = a.back();
    if (op == "Gemm" && AttrInt(n, "transA", 0) != 0 && a.size() == 2) k = a[0];
    return Mul(Product(y), uint64_t(k < 0 ? 0 : k));
  }
  if (op == "LSTM" || op == "GRU" || op == "RNN") {
    // Per step, batch row and direction: gates x hidden x (input + hidden).
    std::vector<int64_t> r;
    if (!StaticDims(info, n, 0, &a) || !StaticDims(info, n, 1, &w) || !StaticDims(info, n, 2, &r) ||
        a.size() != 3 || w.size() != 3 || r.size() != 3)
      return 0;
    return Mul(Mul(uint64_t(a[0]), uint64_t(a[1])),
               Mul(Mul(uint64_t(w[0]), uint64_t(w[1])), uint64_t(w[2] + r[2])));
  }
  return 0;
}

}  // namespace host
}  // namespace epctx
