// SPDX-License-Identifier: Apache-2.0
// Dead end taps of convolutions removed (dead_taps.h).
#include "epctx_host/dead_taps.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"

namespace epctx {
namespace host {
namespace {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;

const AttributeProto* Attr(const NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// An INTS attribute of `count` values, or `def` for each when absent.
bool Ints(const NodeProto& n, const char* name, size_t count, int64_t def,
          std::vector<int64_t>* out) {
  const AttributeProto* a = Attr(n, name);
  if (!a) {
    out->assign(count, def);
    return true;
  }
  if (size_t(a->ints_size()) != count) return false;
  out->assign(a->ints().begin(), a->ints().end());
  return true;
}

void SetInts(NodeProto& n, const char* name, const std::vector<int64_t>& v) {
  AttributeProto* a = nullptr;
  for (auto& x : *n.mutable_attribute())
    if (x.name() == name) a = &x;
  if (!a) {
    a = n.add_attribute();
    a->set_name(name);
  }
  a->set_type(AttributeProto::INTS);
  a->clear_ints();
  for (int64_t x : v) a->add_ints(x);
}

// How many node inputs and graph outputs name each value, subgraphs too.
void CountUses(const onnx::GraphProto& g, std::map<std::string, int>* uses) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) ++(*uses)[in];
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CountUses(a.g(), uses);
      for (const auto& sg : a.graphs()) CountUses(sg, uses);
    }
  }
  for (const auto& o : g.output()) ++(*uses)[o.name()];
}

// One convolution's cut: the new kernel, pads and dilations, and where the
// kept taps start on each axis.
struct Cut {
  int node;
  std::vector<int64_t> kernel, pads, dilations, first;
};

bool PlanCut(const NodeProto& n, int index, const GraphInfo& info, Cut* cut) {
  if (n.op_type() != "Conv" || !IsDefaultDomain(n.domain()) || n.input_size() < 2) return false;
  const AttributeProto* ap = Attr(n, "auto_pad");
  if (ap && ap->s() != "NOTSET") return false;
  const ValueType* x = info.type(n.input(0));
  const TensorProto* w = info.constant(n.input(1));
  if (!x || !x->fully_static() || x->dims.size() < 3 || !w || w->dims_size() != int(x->dims.size()))
    return false;
  const size_t r = x->dims.size() - 2;
  std::vector<int64_t> kernel(r), strides, dil, pads;
  for (size_t a = 0; a < r; ++a) kernel[a] = w->dims(int(2 + a));
  std::vector<int64_t> ks;
  if (!Ints(n, "kernel_shape", r, 0, &ks) || (Attr(n, "kernel_shape") && ks != kernel))
    return false;
  if (!Ints(n, "strides", r, 1, &strides) || !Ints(n, "dilations", r, 1, &dil) ||
      !Ints(n, "pads", 2 * r, 0, &pads))
    return false;
  bool changed = false;
  Cut c{index, kernel, pads, dil, std::vector<int64_t>(r, 0)};
  for (size_t a = 0; a < r; ++a) {
    const int64_t in = x->dims[2 + a], k = kernel[a], s = strides[a], d = dil[a];
    const int64_t pb = pads[a], pe = pads[r + a];
    if (k < 2 || s < 1 || d < 1 || pb < 0 || pe < 0) continue;
    const int64_t span = in + pb + pe - d * (k - 1) - 1;
    if (span < 0) continue;
    const LiveTaps live = LiveTapsOf(in, span / s + 1, k, s, d, pb);
    if (live.first > live.last) continue;  // no live tap: left alone
    const int64_t nb = pb - live.first * d, ne = pe - (k - 1 - live.last) * d;
    if ((live.first == 0 && live.last == k - 1) || nb < 0 || ne < 0) continue;
    c.kernel[a] = live.last - live.first + 1;
    c.pads[a] = nb;
    c.pads[r + a] = ne;
    c.first[a] = live.first;
    if (c.kernel[a] == 1) c.dilations[a] = 1;
    changed = true;
  }
  if (!changed) return false;
  *cut = c;
  return true;
}

// The weights of `cut` sliced from w (dims [M, C/g, k...]).
bool SliceWeights(const TensorProto& w, const Cut& cut, TensorProto* out) {
  const size_t r = cut.kernel.size();
  size_t count = 1;
  for (int i = 0; i < w.dims_size(); ++i) count *= size_t(w.dims(i));
  std::vector<float> v;
  if (!FloatValues(&w, count, &v)) return false;
  const int64_t outer = w.dims(0) * w.dims(1);
  size_t cnt_new = size_t(outer);
  for (size_t a = 0; a < r; ++a) cnt_new *= size_t(cut.kernel[a]);
  std::vector<float> o(cnt_new);
  std::vector<int64_t> idx(r, 0);
  size_t at = 0;
  for (int64_t p = 0; p < outer; ++p) {
    std::fill(idx.begin(), idx.end(), 0);
    for (size_t e = 0; e < cnt_new / size_t(outer); ++e) {
      // Offset of (first + idx) in the old kernel, row-major.
      int64_t off = 0;
      for (size_t a = 0; a < r; ++a) off = off * w.dims(int(2 + a)) + cut.first[a] + idx[a];
      o[at++] = v[size_t(p) * (count / size_t(outer)) + size_t(off)];
      for (size_t a = r; a-- > 0;) {
        if (++idx[a] < cut.kernel[a]) break;
        idx[a] = 0;
      }
    }
  }
  out->Clear();
  out->set_data_type(TensorProto::FLOAT);
  out->add_dims(w.dims(0));
  out->add_dims(w.dims(1));
  for (size_t a = 0; a < r; ++a) out->add_dims(cut.kernel[a]);
  out->set_raw_data(std::string(reinterpret_cast<const char*>(o.data()), o.size() * 4));
  return true;
}

}  // namespace

LiveTaps LiveTapsOf(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                    int64_t pad_begin) {
  LiveTaps t{kernel, -1};
  for (int64_t j = 0; j < kernel; ++j) {
    // The first output whose tap j is at or past input 0; live if it is an
    // output and its tap is still inside the input.
    const int64_t need = pad_begin - j * dilation;
    const int64_t o = need <= 0 ? 0 : (need + stride - 1) / stride;
    if (o >= out || o * stride - need > in - 1) continue;
    t.first = j < t.first ? j : t.first;
    t.last = j;
  }
  return t;
}

size_t TrimDeadTaps(onnx::GraphProto& graph, const GraphInfo& info) {
  std::vector<Cut> cuts;
  for (int i = 0; i < graph.node_size(); ++i) {
    Cut c;
    if (PlanCut(graph.node(i), i, info, &c)) cuts.push_back(c);
  }
  if (cuts.empty()) return 0;
  std::map<std::string, int> uses;
  CountUses(graph, &uses);
  std::map<std::string, TensorProto*> inits;
  for (auto& t : *graph.mutable_initializer()) inits[t.name()] = &t;
  size_t done = 0;
  for (const Cut& c : cuts) {
    NodeProto& n = *graph.mutable_node(c.node);
    auto it = inits.find(n.input(1));
    if (it == inits.end()) continue;
    TensorProto sliced;
    if (!SliceWeights(*it->second, c, &sliced)) continue;
    if (uses[n.input(1)] == 1) {
      sliced.set_name(it->second->name());
      *it->second = sliced;
      // A recorded type of the old weights would contradict the new ones.
      auto* vi = graph.mutable_value_info();
      for (int k = vi->size(); k-- > 0;)
        if (vi->Get(k).name() == n.input(1)) vi->DeleteSubrange(k, 1);
    } else {
      std::string name = n.input(1) + "_live_taps";
      for (int k = 2; inits.count(name) || info.type(name); ++k)
        name = n.input(1) + "_live_taps" + std::to_string(k);
      sliced.set_name(name);
      TensorProto* t = graph.add_initializer();
      *t = sliced;
      inits[name] = t;
      --uses[n.input(1)];
      n.set_input(1, name);
    }
    SetInts(n, "kernel_shape", c.kernel);
    SetInts(n, "pads", c.pads);
    SetInts(n, "dilations", c.dilations);
    ++done;
  }
  return done;
}

}  // namespace host
}  // namespace epctx
