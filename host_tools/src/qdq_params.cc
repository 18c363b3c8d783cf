// SPDX-License-Identifier: Apache-2.0
#include "qdq_params.h"

#include <cmath>

#include "epctx_host/specialize.h"

namespace epctx {
namespace host {

bool IsOp(const onnx::NodeProto* n, const char* op) {
  return n && n->op_type() == op && IsDefaultDomain(n->domain());
}

size_t Elements(const onnx::TensorProto& t) {
  size_t n = 1;
  for (int64_t d : t.dims()) n *= size_t(d);
  return n;
}

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

bool AccumulatorBias(const std::string& value, const onnx::NodeProto* producer,
                     const GraphInfo& info, float x_scale, const QParams& w, size_t count,
                     std::vector<int32_t>* out) {
  std::vector<double> real(count);
  if (const onnx::TensorProto* c = info.constant(value)) {
    std::vector<float> f;
    if (Elements(*c) != count || !FloatValues(c, count, &f)) return false;
    for (size_t i = 0; i < count; ++i) real[i] = f[i];
  } else {
    const onnx::TensorProto* bq =
        IsOp(producer, "DequantizeLinear") ? info.constant(producer->input(0)) : nullptr;
    std::vector<int32_t> direct;
    QParams pb;
    if (!bq || bq->data_type() != onnx::TensorProto::INT32 || Elements(*bq) != count ||
        !IntValues(bq, count, &direct) || !ParamsOf(*producer, info, count, &pb))
      return false;
    bool exact = true;
    for (size_t c = 0; c < count; ++c) {
      const double s = pb.scale_at(c);
      const double acc = double(x_scale) * w.scale_at(c);
      const int32_t zp = pb.zp[pb.zp.size() == 1 ? 0 : c];
      real[c] = (double(direct[c]) - zp) * s;
      exact = exact && zp == 0 && std::fabs(s - acc) <= 1e-6 * acc;
    }
    if (exact) {
      *out = direct;
      return true;
    }
  }
  out->resize(count);
  for (size_t c = 0; c < count; ++c) {
    const double v = std::nearbyint(real[c] / (double(x_scale) * w.scale_at(c)));
    (*out)[c] = int32_t(std::fmax(-1073741824.0, std::fmin(1073741823.0, v)));
  }
  return true;
}

std::string ZeroPointInput(const QParams& p, int32_t dtype, const std::string& base,
                           std::set<std::string>* names, onnx::GraphProto& g) {
  if (!p.zp_name.empty()) return p.zp_name;
  std::string name = Fresh(names, base + "_zero_point");
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  t->set_raw_data(std::string(1, '\0'));
  return name;
}

}  // namespace host
}  // namespace epctx
