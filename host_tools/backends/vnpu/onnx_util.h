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
                                     const std::vector<int64_t>& def = {}) {
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
// IEEE binary16 bits -> float (exact).
inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    exp = 113;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The values of a float32 or float16 constant as float32 (the vnpu computes
// and stores weights in float32); throws CompileError for other types or
// data kept outside the model.
inline std::vector<float> Floats(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_type() != onnx::TensorProto::FLOAT && t.data_type() != onnx::TensorProto::FLOAT16)
    throw CompileError(what + ": constant '" + t.name() + "' is not float32 or float16");
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw CompileError(what + ": constant '" + t.name() + "' has external data not loaded");
  size_t n = 1;
  for (int64_t d : t.dims()) n *= size_t(d);
  std::vector<float> v;
  if (t.data_type() == onnx::TensorProto::FLOAT16) {
    // raw_data: 2 little-endian bytes each; int32_data: one value's bits each.
    if (t.has_raw_data()) {
      if (t.raw_data().size() != n * 2)
        throw CompileError(what + ": constant '" + t.name() + "' raw_data size mismatch");
      const auto* p = reinterpret_cast<const unsigned char*>(t.raw_data().data());
      for (size_t i = 0; i < n; ++i)
        v.push_back(HalfToFloat(uint16_t(p[2 * i] | (p[2 * i + 1] << 8))));
    } else {
      if (size_t(t.int32_data_size()) != n)
        throw CompileError(what + ": constant '" + t.name() + "' has " +
                           std::to_string(t.int32_data_size()) + " values, dims say " +
                           std::to_string(n));
      for (int32_t bits : t.int32_data()) v.push_back(HalfToFloat(uint16_t(bits)));
    }
    return v;
  }
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
