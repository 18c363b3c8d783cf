// SPDX-License-Identifier: Apache-2.0
#include "epctx_host/transpose_dq.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"

namespace epctx {
namespace host {
namespace {

size_t ElementBytes(int32_t dtype) {
  if (dtype == onnx::TensorProto::INT8 || dtype == onnx::TensorProto::UINT8) return 1;
  if (dtype == onnx::TensorProto::INT32) return 4;
  return 0;
}

// The tensor's elements as raw little-endian bytes; empty when its data is
// not inline (raw_data or int32_data) or not `count` elements.
std::string RawBytes(const onnx::TensorProto& t, size_t count) {
  const size_t eb = ElementBytes(t.data_type());
  if (t.has_raw_data()) return t.raw_data().size() == count * eb ? t.raw_data() : std::string();
  if (size_t(t.int32_data_size()) != count) return std::string();
  std::string out(count * eb, '\0');
  for (size_t i = 0; i < count; ++i) {
    const int32_t v = t.int32_data(int(i));
    if (eb == 1) out[i] = char(uint8_t(v));
    else memcpy(&out[i * 4], &v, 4);
  }
  return out;
}

std::vector<int64_t> Perm(const onnx::NodeProto& n, size_t rank) {
  std::vector<int64_t> p;
  for (const auto& a : n.attribute())
    if (a.name() == "perm")
      for (int64_t v : a.ints()) p.push_back(v);
  if (p.empty())
    for (size_t i = rank; i-- > 0;) p.push_back(int64_t(i));  // default: reversed
  return p;
}

bool ValidPerm(const std::vector<int64_t>& p, size_t rank) {
  if (p.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t v : p) {
    if (v < 0 || size_t(v) >= rank || seen[size_t(v)]) return false;
    seen[size_t(v)] = true;
  }
  return true;
}

int64_t AxisAttr(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.name() == "axis" && a.type() == onnx::AttributeProto::INT) return a.i();
  return 1;
}

}  // namespace

size_t TransposeDequantizedConstants(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  FusionScan scan(model);
  if (!scan.whole) return 0;
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
  std::map<std::string, int> init_index;
  for (int i = 0; i < g.initializer_size(); ++i) init_index[g.initializer(i).name()] = i;
  std::set<std::string> names;
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.insert(o);

  size_t done = 0;
  std::set<std::string> unused;  // initializers only a rewritten DequantizeLinear read
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& t = g.node(i);
    if (t.op_type() != "Transpose" || !IsDefaultDomain(t.domain()) || t.input_size() != 1 ||
        t.output_size() != 1)
      continue;
    auto pi = producer.find(t.input(0));
    if (pi == producer.end() || scan.OnlyReader(t.input(0)) != i) continue;
    const onnx::NodeProto& dq = g.node(pi->second);
    if (dq.op_type() != "DequantizeLinear" || !IsDefaultDomain(dq.domain()) ||
        dq.input_size() < 2 || scan.drop[size_t(pi->second)])
      continue;
    auto ii = init_index.find(dq.input(0));
    if (ii == init_index.end()) continue;
    bool consts = true;
    for (int k = 1; k < dq.input_size(); ++k)
      consts = consts && (dq.input(k).empty() || scan.info.constant(dq.input(k)));
    if (!consts) continue;
    const onnx::TensorProto& w = g.initializer(ii->second);
    const size_t eb = ElementBytes(w.data_type());
    const size_t rank = size_t(w.dims_size());
    if (!eb || rank < 2) continue;
    const std::vector<int64_t> perm = Perm(t, rank);
    if (!ValidPerm(perm, rank)) continue;
    size_t count = 1;
    for (int64_t d : w.dims()) count *= size_t(d);
    const std::string src = RawBytes(w, count);
    if (src.empty() && count) continue;

    // Transposed bytes: output index o walks in row-major order of the new
    // dims; its source offset moves by the old stride of dimension perm[k].
    std::vector<int64_t> old_stride(rank, 1), dims(rank);
    for (size_t k = rank - 1; k > 0; --k) old_stride[k - 1] = old_stride[k] * w.dims(int(k));
    for (size_t k = 0; k < rank; ++k) dims[k] = w.dims(int(perm[k]));
    std::string dst(src.size(), '\0');
    std::vector<int64_t> idx(rank, 0);
    int64_t from = 0;
    for (size_t o = 0; o < count; ++o) {
      memcpy(&dst[o * eb], &src[size_t(from) * eb], eb);
      for (size_t k = rank; k-- > 0;) {
        from += old_stride[size_t(perm[k])];
        if (++idx[k] < dims[k]) break;
        from -= old_stride[size_t(perm[k])] * dims[k];
        idx[k] = 0;
      }
    }

    std::string name = w.name() + "_transposed";
    for (int s = 1; names.count(name); ++s) name = w.name() + "_transposed" + std::to_string(s);
    names.insert(name);
    onnx::TensorProto* nt = g.add_initializer();
    nt->set_name(name);
    nt->set_data_type(w.data_type());
    for (int64_t d : dims) nt->add_dims(d);
    nt->set_raw_data(dst);

    // The DequantizeLinear now reads the transposed integers and writes the
    // Transpose's output; its per-channel axis follows its dimension.
    onnx::NodeProto& d = *g.mutable_node(pi->second);
    d.set_input(0, name);
    int64_t axis = AxisAttr(d);
    if (axis < 0) axis += int64_t(rank);
    int64_t moved = axis;
    for (size_t k = 0; k < rank; ++k)
      if (perm[k] == axis) moved = int64_t(k);
    for (int k = d.attribute_size(); k-- > 0;)
      if (d.attribute(k).name() == "axis") d.mutable_attribute()->DeleteSubrange(k, 1);
    auto* a = d.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(moved);
    auto r = scan.readers.find(w.name());
    if (r != scan.readers.end() && r->second.size() == 1) unused.insert(w.name());
    d.set_output(0, t.output(0));
    scan.drop[size_t(i)] = true;
    ++done;
  }
  if (!done) return 0;
  DropNodes(g, scan.drop);
  for (int i = g.initializer_size(); i-- > 0;)
    if (unused.count(g.initializer(i).name())) g.mutable_initializer()->DeleteSubrange(i, 1);
  return done;
}

}  // namespace host
}  // namespace epctx
