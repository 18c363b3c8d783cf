// SPDX-License-Identifier: Apache-2.0
// ExternalizeInitializers: typed data -> little-endian raw bytes -> one file.
#include "external_initializers.h"

#include <cstring>

#include "epctx_host/diagnostics.h"

namespace epctx {
namespace host {
namespace {

constexpr size_t kAlignment = 64;

template <typename T, typename Field>
std::string Pack(const Field& values) {
  std::string out(values.size() * sizeof(T), '\0');
  for (int i = 0; i < values.size(); ++i) {
    T v = static_cast<T>(values.Get(i));
    std::memcpy(&out[i * sizeof(T)], &v, sizeof(T));
  }
  return out;
}

// The tensor's bytes as raw_data would hold them (hosts are little-endian).
bool RawBytes(const onnx::TensorProto& t, std::string* out) {
  using TP = onnx::TensorProto;
  if (t.has_raw_data()) {
    *out = t.raw_data();
    return true;
  }
  switch (t.data_type()) {
    case TP::FLOAT: *out = Pack<float>(t.float_data()); return true;
    case TP::DOUBLE: *out = Pack<double>(t.double_data()); return true;
    case TP::INT64: *out = Pack<int64_t>(t.int64_data()); return true;
    case TP::UINT64: *out = Pack<uint64_t>(t.uint64_data()); return true;
    case TP::UINT32: *out = Pack<uint32_t>(t.uint64_data()); return true;
    case TP::INT32: *out = Pack<int32_t>(t.int32_data()); return true;
    case TP::INT16: *out = Pack<int16_t>(t.int32_data()); return true;
    case TP::UINT16:
    case TP::FLOAT16:
    case TP::BFLOAT16: *out = Pack<uint16_t>(t.int32_data()); return true;
    case TP::INT8: *out = Pack<int8_t>(t.int32_data()); return true;
    case TP::UINT8:
    case TP::BOOL: *out = Pack<uint8_t>(t.int32_data()); return true;
    default: return false;  // strings and complex types stay in the model
  }
}

void AddEntry(onnx::TensorProto& t, const char* key, const std::string& value) {
  auto* e = t.add_external_data();
  e->set_key(key);
  e->set_value(value);
}

}  // namespace

std::string ExternalizeInitializers(onnx::ModelProto& model, const std::string& location) {
  std::string file;
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    std::string bytes;
    if (!RawBytes(t, &bytes)) continue;
    const size_t offset = (file.size() + kAlignment - 1) / kAlignment * kAlignment;
    file.resize(offset);
    file += bytes;
    onnx::TensorProto moved;
    moved.set_name(t.name());
    moved.set_data_type(t.data_type());
    *moved.mutable_dims() = t.dims();
    moved.set_doc_string(t.doc_string());
    moved.set_data_location(onnx::TensorProto::EXTERNAL);
    AddEntry(moved, "location", location);
    AddEntry(moved, "offset", std::to_string(offset));
    AddEntry(moved, "length", std::to_string(bytes.size()));
    t = std::move(moved);
  }
  return file;
}

}  // namespace host
}  // namespace epctx
