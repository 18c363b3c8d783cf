// SPDX-License-Identifier: Apache-2.0
// Multiply-accumulate counts (see macs.h).
#include "epctx_host/macs.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fusion.h"  // IntAttr

namespace epctx {
namespace host {
namespace {

using Dims = std::vector<int64_t>;

bool StaticDims(const GraphInfo& info, const std::string& name, Dims* d) {
  if (name.empty()) return false;
  if (const onnx::TensorProto* c = info.constant(name)) {
    d->assign(c->dims().begin(), c->dims().end());
    return true;
  }
  const ValueType* t = info.type(name);
  if (!t || !t->fully_static()) return false;
  *d = t->dims;
  return true;
}

bool InDims(const GraphInfo& info, const onnx::NodeProto& n, int i, Dims* d) {
  return n.input_size() > i && StaticDims(info, n.input(i), d);
}

bool OutDims(const GraphInfo& info, const onnx::NodeProto& n, Dims* d) {
  return n.output_size() > 0 && StaticDims(info, n.output(0), d);
}

uint64_t Mul(uint64_t a, uint64_t b) { return (b != 0 && a > UINT64_MAX / b) ? UINT64_MAX : a * b; }

uint64_t Product(const Dims& d, size_t from = 0) {
  uint64_t p = 1;
  for (size_t i = from; i < d.size(); ++i) p = Mul(p, d[i] < 0 ? 0 : uint64_t(d[i]));
  return p;
}

std::string AttrString(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.s();
  return std::string();
}

MacCount Unknown() {
  MacCount m;
  m.known = false;
  return m;
}

MacCount Known(uint64_t macs) {
  MacCount m;
  m.macs = macs;
  return m;
}

// Numpy broadcasting of two shapes, right-aligned; false if incompatible.
bool Broadcast(const Dims& a, const Dims& b, Dims* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    (*out)[i] = x == 1 ? y : x;
  }
  return true;
}

// MatMul family: A at input 0, B at input b_index (numpy matmul rules).
MacCount MatMulMacs(const onnx::NodeProto& n, const GraphInfo& info, int b_index) {
  Dims a, b, y;
  const bool have_a = InDims(info, n, 0, &a) && !a.empty();
  const bool have_b = InDims(info, n, b_index, &b) && !b.empty();
  int64_t k = -1;
  if (have_a) k = a.back();
  else if (have_b) k = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (k < 0) return Unknown();
  if (have_a && have_b) {
    // rows x cols of every broadcast batch.
    const int64_t m = a.size() == 1 ? 1 : a[a.size() - 2];
    const int64_t cols = b.size() == 1 ? 1 : b.back();
    Dims batch;
    if (!Broadcast(Dims(a.begin(), a.end() - (a.size() == 1 ? 1 : 2)),
                   Dims(b.begin(), b.end() - (b.size() == 1 ? 1 : 2)), &batch))
      return Unknown();
    return Known(Mul(Mul(Product(batch), Mul(uint64_t(m), uint64_t(cols))), uint64_t(k)));
  }
  if (!OutDims(info, n, &y)) return Unknown();
  return Known(Mul(Product(y), uint64_t(k)));
}

// Gemm, or com.microsoft QGemm (fuse_qdq_matmul.h) with B input `bi`.
MacCount GemmMacs(const onnx::NodeProto& n, const GraphInfo& info, int bi) {
  Dims a, b;
  if (!InDims(info, n, 0, &a) || !InDims(info, n, bi, &b) || a.size() != 2 || b.size() != 2)
    return Unknown();
  const bool ta = IntAttr(n, "transA", 0) != 0, tb = IntAttr(n, "transB", 0) != 0;
  const int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1], cols = tb ? b[0] : b[1];
  return Known(Mul(Mul(uint64_t(m), uint64_t(cols)), uint64_t(k)));
}

// Einsum with two or more operands: every combination of label values is
// one product of all operands.
MacCount EinsumMacs(const onnx::NodeProto& n, const GraphInfo& info) {
  std::string eq = AttrString(n, "equation");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const std::string lhs = eq.substr(0, eq.find("->"));
  std::vector<std::string> terms;
  size_t pos = 0;
  for (;;) {
    const size_t comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != size_t(n.input_size())) return Unknown();
  if (terms.size() < 2) return Known(0);
  std::map<char, int64_t> size;
  Dims ellipsis;
  for (size_t t = 0; t < terms.size(); ++t) {
    Dims d;
    if (!InDims(info, n, int(t), &d)) return Unknown();
    const std::string& term = terms[t];
    const size_t dots = term.find("...");
    const size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    if (d.size() < letters || (dots == std::string::npos && d.size() != letters)) return Unknown();
    const size_t spread = d.size() - letters;  // dims the ellipsis stands for
    size_t dim = 0;
    for (size_t c = 0; c < term.size(); ++c) {
      if (c == dots) {
        Dims e(d.begin() + long(dim), d.begin() + long(dim + spread)), merged;
        if (!Broadcast(ellipsis, e, &merged)) return Unknown();
        ellipsis = merged;
        dim += spread;
        c += 2;
        continue;
      }
      int64_t& s = size[term[c]];
      s = std::max(s, d[dim++]);
    }
  }
  uint64_t p = Product(ellipsis);
  for (const auto& kv : size) p = Mul(p, uint64_t(kv.second));
  return Known(Mul(p, terms.size() - 1));
}

}  // namespace

MacCount NodeMacs(const onnx::NodeProto& n, const GraphInfo& info) {
  const std::string& op = n.op_type();
  // com.microsoft FusedConv (fuse_conv_act.h) is a Conv and its clamp.
  const bool fused_conv = n.domain() == "com.microsoft" && op == "FusedConv";
  if (n.domain() == "com.microsoft" && op == "QGemm") return GemmMacs(n, info, 3);
  if (!n.domain().empty() && n.domain() != "ai.onnx" && !fused_conv) return Known(0);
  Dims a, w, y;
  if (op == "Conv" || fused_conv || op == "ConvInteger" || op == "QLinearConv") {
    // Each output element: (C_in / groups) x kernel multiply-adds.
    if (!InDims(info, n, op == "QLinearConv" ? 3 : 1, &w) || !OutDims(info, n, &y) || w.size() < 2)
      return Unknown();
    return Known(Mul(Product(y), Product(w, 1)));
  }
  if (op == "ConvTranspose") {
    // Each input element is spread over (C_out / groups) x kernel outputs.
    if (!InDims(info, n, 0, &a) || !InDims(info, n, 1, &w) || w.size() < 2) return Unknown();
    return Known(Mul(Product(a), Product(w, 1)));
  }
  if (op == "MatMul" || op == "MatMulInteger") return MatMulMacs(n, info, 1);
  if (op == "QLinearMatMul") return MatMulMacs(n, info, 3);
  if (op == "Gemm") return GemmMacs(n, info, 1);
  if (op == "Einsum") return EinsumMacs(n, info);
  if (op == "LSTM" || op == "GRU" || op == "RNN") {
    // Per step, batch row and direction: gates x hidden x (input + hidden).
    Dims r;
    if (!InDims(info, n, 0, &a) || !InDims(info, n, 1, &w) || !InDims(info, n, 2, &r) ||
        a.size() != 3 || w.size() != 3 || r.size() != 3)
      return Unknown();
    return Known(Mul(Mul(uint64_t(a[0]), uint64_t(a[1])),
                     Mul(Mul(uint64_t(w[0]), uint64_t(w[1])), uint64_t(w[2] + r[2]))));
  }
  return Known(0);
}

}  // namespace host
}  // namespace epctx
