/* SPDX-License-Identifier: Apache-2.0 */
// Small readers for ONNX node attributes and constant tensors, shared by the
// vnpu support check and lowering.
#ifndef EPCTX_HOST_VNPU_ONNX_UTIL_H
#define EPCTX_HOST_VNPU_ONNX_UTIL_H

#include <cstring>
#include <string>
#include <vector>

#include <epctx_host/backend.h>

namespace epctx {
namespace host {
namespace vnpu {

inline const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
inline int64_t AttrInt(const onnx::NodeProto& n, const char* name, int64_t def) {
  const auto* a = Attr(n, name);
  return a ? a->i() : def;
}
inline float AttrFloat(const onnx::NodeProto& n, const char* name, float def) {
  const auto* a = Attr(n, name);
  return a ? a->f() : def;
}
inline std::string AttrString(const onnx::NodeProto& n, const char* name, const char* def) {
  const auto* a = Attr(n, name);
  return a ? a->s() : def;
}
inline std::vector<int64_t> AttrInts(const onnx::NodeProto& n, const char* name,
                                     std::vector<int64_t> def = {}) {
  const auto* a = Attr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : def;
}

inline std::string NodeLabel(const onnx::NodeProto& n) {
  return n.op_type() + " node '" + (n.name().empty() ? n.output(0) : n.name()) + "'";
}

inline bool Has(const onnx::NodeProto& n, int i) {
  return n.input_size() > i && !n.input(i).empty();
}

// The float values of a constant; throws CompileError for other types or
// data kept outside the model.
inline std::vector<float> Floats(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_type() != onnx::TensorProto::FLOAT)
    throw CompileError(what + ": constant '" + t.name() + "' is not float32");
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw CompileError(what + ": constant '" + t.name() + "' has external data not loaded");
  size_t n = 1;
  for (int64_t d : t.dims()) n *= size_t(d);
  std::vector<float> v;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != n * 4)
      throw CompileError(what + ": constant '" + t.name() + "' raw_data size mismatch");
    v.resize(n);
    std::memcpy(v.data(), t.raw_data().data(), n * 4);
  } else {
    v.assign(t.float_data().begin(), t.float_data().end());
    if (v.size() != n)
      throw CompileError(what + ": constant '" + t.name() + "' has " + std::to_string(v.size()) +
                         " values, dims say " + std::to_string(n));
  }
  return v;
}

inline std::vector<int64_t> Dims(const onnx::TensorProto& t) {
  return std::vector<int64_t>(t.dims().begin(), t.dims().end());
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx

#endif
