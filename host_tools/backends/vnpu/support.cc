// SPDX-License-Identifier: Apache-2.0
// Which ONNX nodes the vnpu runs, and why not for the others. The answer
// must agree with what lower.cc can lower: every check here is a condition
// lowering relies on.
#include <set>

#include "int8_match.h"
#include "onnx_util.h"
#include "vnpu_ir.h"
#include "transformer_ops.h"
#include "vnpu_ops.h"

namespace epctx {
namespace host {
namespace vnpu {
namespace {

// Left to the CPU on purpose: no vnpu op (the README lists what it has).
const std::set<std::string> kCpuOps = {"Shape"};

// The vnpu computes in float32; float16 values are widened (weights at
// compile time, inputs and outputs by CONVERT at the partition's edges).
bool FloatType(int32_t dtype) {
  return dtype == onnx::TensorProto::FLOAT || dtype == onnx::TensorProto::FLOAT16;
}

constexpr size_t kMaxRank = 8;  // the vnpu's tensor rank limit

std::string Static(const GraphInfo& info, const std::string& name) {
  const ValueType* t = info.type(name);
  if (const onnx::TensorProto* c = info.constant(name)) {
    if (!FloatType(c->data_type())) return "'" + name + "' is not float32 or float16";
    if (size_t(c->dims_size()) > kMaxRank) return "'" + name + "' has rank > 8";
    return "";
  }
  if (!t || !t->fully_static()) return "shape of '" + name + "' is not static";
  if (!FloatType(t->dtype)) return "'" + name + "' is not float32 or float16";
  if (t->dims.size() > kMaxRank) return "'" + name + "' has rank > 8";
  return "";
}

bool IsFloat(const GraphInfo& info, const std::string& name) {
  const ValueType* t = info.type(name);
  return t && FloatType(t->dtype);
}

size_t Rank(const GraphInfo& info, const std::string& name) {
  if (const onnx::TensorProto* c = info.constant(name)) return size_t(c->dims_size());
  const ValueType* t = info.type(name);
  return t ? t->dims.size() : 0;
}

std::string NeedConst(const GraphInfo& info, const onnx::NodeProto& n, int i, const char* what) {
  if (!Has(n, i)) return "";
  const onnx::TensorProto* c = info.constant(n.input(i));
  if (!c) return std::string(what) + " '" + n.input(i) + "' is not a constant";
  if (!FloatType(c->data_type())) return std::string(what) + " is not float32 or float16";
  return "";
}

// `spatial`: 2 for NCHW, 1 for NCL (a 1-D convolution runs as H = 1).
std::string Window(const onnx::NodeProto& n, bool conv, size_t spatial = 2) {
  std::string ap = AttrString(n, "auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return "auto_pad " + ap + " unknown";
  auto ks = AttrInts(n, "kernel_shape");
  if (!conv && ks.size() != 2) return "kernel_shape must be 2-D";
  if (!ks.empty() && ks.size() != spatial) return "kernel_shape does not match the input rank";
  for (int64_t k : ks)
    if (k < 1 || k > 65535) return "kernel_shape out of range";
  auto pads = AttrInts(n, "pads");
  if (!pads.empty() && pads.size() != 2 * spatial)
    return "pads must have " + std::to_string(2 * spatial) + " entries";
  for (const char* a : {"strides", "dilations"}) {
    const size_t count = AttrInts(n, a).size();
    if (count != 0 && count != spatial) return std::string(a) + " do not match the input rank";
  }
  for (int64_t p : pads)
    if (p < 0 || p > 65535) return "pads out of range";
  for (int64_t s : AttrInts(n, "strides"))
    if (s < 1 || s > 65535) return "strides out of range";
  auto dil = AttrInts(n, "dilations");
  for (int64_t d : dil) {
    if (d < 1 || d > 65535) return "dilations out of range";
    if (!conv && d != 1) return "pooling dilations are not supported";
  }
  return "";
}

}  // namespace

std::string ConvWindow(const onnx::NodeProto& n, bool conv, size_t spatial) {
  return Window(n, conv, spatial);
}

std::string Unsupported(const onnx::NodeProto& n, const GraphInfo& info) {
  const std::string& op = n.op_type();
  // The int8 level: quantisation-format nodes and QDQ groups.
  bool int8 = false;
  std::string why8 = UnsupportedInt8(n, info, &int8);
  if (int8 && why8.empty() && op == "DequantizeLinear" && info.constant(n.input(0))) {
    // A constant's DequantizeLinear goes where its consumers go: alone it
    // would be a partition computing a weight for the CPU.
    const GraphIndex& ix = IndexOf(info.graph);
    auto it = ix.consumers.find(n.output(0));
    if (ix.graph_outputs.count(n.output(0)) || it == ix.consumers.end())
      return "dequantised constant read by no vnpu node";
    for (const auto* c : it->second)
      if (!Unsupported(*c, info).empty())
        return "dequantised constant read by " + NodeLabel(*c) + ", which stays on the CPU";
  }
  if (int8) return why8;
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return "domain " + n.domain() + " not supported";
  if (kCpuOps.count(op)) return op + " has no vnpu op";
  std::string r;
  for (const auto& o : n.output())
    if (!o.empty() && !(r = Static(info, o)).empty()) return "output " + r;
  // Every input that is not a constant becomes a partition input, and the
  // vnpu takes only static float32/float16 tensors: a shape, axes or mode given at
  // run time (Reshape's int64 `shape` as a graph input) keeps the node on
  // the CPU, which reads the value.
  for (const auto& i : n.input())
    if (!i.empty() && !info.constant(i) && !(r = Static(info, i)).empty())
      return "input " + r + (IsFloat(info, i) ? "" : " (the vnpu needs it as a constant)");
  auto in0 = [&]() { return n.input_size() > 0 ? Static(info, n.input(0)) : "no input"; };
  // The transformer level (stream 1.8): unary kinds, reductions, layer
  // norm, batched MatMul of activations, strided copies.
  bool level18 = false;
  std::string why18 = UnsupportedTransformer(n, info, &level18);
  if (level18) return why18.empty() ? in0() : why18;

  if (op == "Conv") {
    if (!(r = in0()).empty()) return r;
    const size_t rank = Rank(info, n.input(0));
    if (rank != 3 && rank != 4) return "only 1-D and 2-D convolution (NCL / NCHW input)";
    const onnx::TensorProto* w = Has(n, 1) ? info.constant(n.input(1)) : nullptr;
    if (w && size_t(w->dims_size()) != rank) return "weight rank does not match the input";
    if (!(r = NeedConst(info, n, 1, "weight")).empty() || !Has(n, 1))
      return r.empty() ? "no weight" : r;
    if (!(r = NeedConst(info, n, 2, "bias")).empty()) return r;
    return Window(n, true, rank - 2);
  }
  if (op == "Gemm" || op == "MatMul") {
    if (!(r = in0()).empty()) return r;
    size_t ra = Rank(info, n.input(0));
    if (op == "Gemm" && ra != 2) return "A must be 2-D";
    if (ra < 2) return "A must have rank >= 2";
    if (n.input_size() < 2 || !(r = NeedConst(info, n, 1, "B")).empty())
      return r.empty() ? "no B" : r;
    if (info.constant(n.input(1))->dims_size() != 2) return "B must be a 2-D constant";
    if (op == "Gemm") {
      if (AttrInt(n, "transA", 0) != 0) return "transA=1 not supported";
      if (!(r = NeedConst(info, n, 2, "C")).empty()) return r;
      if (Has(n, 2)) {
        const onnx::TensorProto* c = info.constant(n.input(2));
        for (int i = 0; i + 1 < c->dims_size(); ++i)
          if (c->dims(i) != 1) return "C must broadcast along rows";
      }
    }
    return "";
  }
  if (kBinaryOps.count(op)) {
    if (n.input_size() != 2) return op + " with " + std::to_string(n.input_size()) + " inputs";
    for (int i = 0; i < 2; ++i)
      if (!(r = Static(info, n.input(i))).empty()) return r;
    return "";
  }
  if (kActivationOps.count(op)) {
    if (!(r = in0()).empty()) return r;
    if (op == "Clip")
      for (int i = 1; i < 3; ++i)
        if (Has(n, i) && !info.constant(n.input(i))) return "Clip min/max must be constants";
    return "";
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (!(r = in0()).empty()) return r;
    if (Rank(info, n.input(0)) != 4) return "only 2-D pooling";
    if (n.output_size() > 1 && !n.output(1).empty()) return "MaxPool Indices output not supported";
    if (AttrInt(n, "storage_order", 0) != 0) return "storage_order=1 not supported";
    return Window(n, false);
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    if (!(r = in0()).empty()) return r;
    return Rank(info, n.input(0)) == 4 ? "" : "only 2-D pooling";
  }
  if (op == "Softmax" || op == "Transpose") return in0();
  if (op == "Concat") {
    for (const auto& i : n.input())
      if (!(r = Static(info, i)).empty()) return r;
    return n.input_size() > 0 ? "" : "no inputs";
  }
  if (op == "Cast") {
    // Between float32 and float16 a Cast is a copy: values stay float32 on
    // the vnpu; only a float16 partition output is rounded (by CONVERT).
    if (!(r = in0()).empty()) return r;
    if (!FloatType(int32_t(AttrInt(n, "to", 0))))
      return "Cast to a type other than float32/float16";
    return "";
  }
  if (op == "ConvTranspose") {
    if (!(r = in0()).empty()) return r;
    const size_t rank = Rank(info, n.input(0));
    if (rank != 3 && rank != 4) return "only 1-D and 2-D ConvTranspose (NCL / NCHW input)";
    if (!(r = NeedConst(info, n, 1, "weight")).empty() || !Has(n, 1))
      return r.empty() ? "no weight" : r;
    if (!(r = NeedConst(info, n, 2, "bias")).empty()) return r;
    if (size_t(info.constant(n.input(1))->dims_size()) != rank)
      return "weight rank does not match the input";
    auto opad = AttrInts(n, "output_padding");
    if (!opad.empty() && opad.size() != rank - 2)
      return "output_padding does not match the input rank";
    for (int64_t p : opad)
      if (p < 0 || p > 65535) return "output_padding out of range";
    return Window(n, true, rank - 2);
  }
  if (kCopyOps.count(op)) {
    if (n.output_size() > 1 && !n.output(1).empty()) return op + " mask output not supported";
    if (op == "Dropout" && Has(n, 2)) {
      const onnx::TensorProto* t = info.constant(n.input(2));
      if (!t || t->data_type() != onnx::TensorProto::BOOL || t->dims_size() != 0 ||
          !(t->raw_data() == std::string(1, '\0') ||
            (t->int32_data_size() == 1 && t->int32_data(0) == 0)))
        return "Dropout training_mode is not a constant false";
    }
    return in0();
  }
  if (op == "BatchNormalization") {
    if (!(r = in0()).empty()) return r;
    if (Rank(info, n.input(0)) < 2) return "input rank < 2";
    if (AttrInt(n, "training_mode", 0) != 0 || n.output_size() > 1) return "training mode";
    for (int i = 1; i < 5; ++i)
      if (!(r = NeedConst(info, n, i, "parameter")).empty() || !Has(n, i))
        return r.empty() ? "missing parameter" : r;
    return "";
  }
  return op + " has no vnpu op";
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
