/* SPDX-License-Identifier: Apache-2.0 */
// Small helpers to build ONNX models in tests. Header-only; everything is
// returned by value or owned by the ModelBuilder.
#ifndef EPCTX_TESTS_HOST_MODEL_BUILDER_H
#define EPCTX_TESTS_HOST_MODEL_BUILDER_H

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace testutil {

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17) {
    m_.set_ir_version(8);
    m_.set_producer_name("host-test");
    auto* op = m_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    m_.mutable_graph()->set_name("g");
  }
  // dims < 0 become symbolic dimensions "d<i>".
  ModelBuilder& Input(const std::string& name, const std::vector<int64_t>& dims,
                      int dtype = onnx::TensorProto::FLOAT) {
    Fill(m_.mutable_graph()->add_input(), name, dims, dtype);
    return *this;
  }
  ModelBuilder& Output(const std::string& name, const std::vector<int64_t>& dims,
                       int dtype = onnx::TensorProto::FLOAT) {
    Fill(m_.mutable_graph()->add_output(), name, dims, dtype);
    return *this;
  }
  ModelBuilder& Init(const std::string& name, const std::vector<int64_t>& dims,
                     float value = 0.5f) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(value + 0.01f * static_cast<float>(i));
    return *this;
  }
  // An initializer of any dtype from its little-endian bytes (RawBytes).
  ModelBuilder& InitRaw(const std::string& name, int dtype, const std::vector<int64_t>& dims,
                        const std::string& bytes) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(dtype);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(bytes);
    return *this;
  }
  ModelBuilder& InitI64(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out, const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? out.at(0) + "_node" : name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return *n;
  }
  onnx::ModelProto& model() { return m_; }

 private:
  static void Fill(onnx::ValueInfoProto* v, const std::string& name,
                   const std::vector<int64_t>& dims, int dtype) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] >= 0) d->set_dim_value(dims[i]);
      else d->set_dim_param("d" + std::to_string(i));
    }
  }
  onnx::ModelProto m_;
};

// A vector's bytes, for ModelBuilder::InitRaw.
template <typename T>
std::string RawBytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

inline void SetIntsAttr(onnx::NodeProto& n, const std::string& name,
                        const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

}  // namespace testutil

#endif
