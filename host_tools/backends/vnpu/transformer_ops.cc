// SPDX-License-Identifier: Apache-2.0
// The transformer level's support checks and geometry (transformer_ops.h).
#include "transformer_ops.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "lowerer.h"
#include "onnx_util.h"

namespace epctx {
namespace host {
namespace vnpu {
namespace {

constexpr size_t kMaxBatchRank = 6;

// The static shape of a value or constant; false when unknown.
bool ShapeOf(const GraphInfo& info, const std::string& name, std::vector<int64_t>* d) {
  if (const onnx::TensorProto* c = info.constant(name)) {
    *d = Dims(*c);
    return true;
  }
  const ValueType* t = info.type(name);
  if (!t || !t->fully_static()) return false;
  *d = t->dims;
  return true;
}

// The values of an INT64 / INT32 constant; false for anything else.
bool IntConst(const GraphInfo& info, const std::string& name, std::vector<int64_t>* out) {
  const onnx::TensorProto* t = name.empty() ? nullptr : info.constant(name);
  if (!t || t->data_location() == onnx::TensorProto::EXTERNAL) return false;
  size_t n = 1;
  for (int64_t d : t->dims()) n *= size_t(d);
  out->clear();
  if (t->data_type() == onnx::TensorProto::INT64) {
    if (t->has_raw_data()) {
      if (t->raw_data().size() != n * 8) return false;
      out->resize(n);
      if (n) std::memcpy(out->data(), t->raw_data().data(), n * 8);
    } else {
      out->assign(t->int64_data().begin(), t->int64_data().end());
    }
  } else if (t->data_type() == onnx::TensorProto::INT32) {
    if (t->has_raw_data()) {
      if (t->raw_data().size() != n * 4) return false;
      std::vector<int32_t> v(n);
      if (n) std::memcpy(v.data(), t->raw_data().data(), n * 4);
      out->assign(v.begin(), v.end());
    } else {
      out->assign(t->int32_data().begin(), t->int32_data().end());
    }
  } else {
    return false;
  }
  return out->size() == n;
}

std::string SliceView(const onnx::NodeProto& n, const GraphInfo& info,
                      const std::vector<int64_t>& xs, const std::vector<int64_t>& ys, CopyView* v) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (info.opset < 10) {
    starts = AttrInts(n, "starts");
    ends = AttrInts(n, "ends");
    axes = AttrInts(n, "axes");
  } else {
    if (!IntConst(info, n.input(1), &starts) || !IntConst(info, n.input(2), &ends))
      return "Slice starts/ends are not constants";
    if (Has(n, 3) && !IntConst(info, n.input(3), &axes)) return "Slice axes are not a constant";
    if (Has(n, 4) && !IntConst(info, n.input(4), &steps)) return "Slice steps are not a constant";
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return "Slice starts, ends, axes and steps differ in length";
  const int64_t r = int64_t(xs.size());
  const std::vector<int64_t> st = ContiguousStrides(xs);
  v->strides = st;
  v->offset = 0;
  std::vector<int64_t> want = xs;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r) return "Slice axis out of range";
    const int64_t step = steps[i], dim = xs[size_t(a)];
    if (step == 0) return "Slice with a step of 0";
    // ONNX clamps starts/ends to [0, dim] for positive steps and to
    // [0, dim - 1] (starts) and [-1, dim - 1] (ends) for negative ones,
    // after adding dim to negatives.
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count = 0;
    if (step > 0) {
      s = std::min(std::max<int64_t>(s, 0), dim);
      e = std::min(std::max<int64_t>(e, 0), dim);
      count = e > s ? 1 + (e - s - 1) / step : 0;  // no overflow for any step
    } else {
      s = std::min(std::max<int64_t>(s, 0), dim - 1);
      e = std::min(std::max<int64_t>(e, -1), dim - 1);
      const int64_t mag = step == INT64_MIN ? INT64_MAX : -step;
      count = s > e ? 1 + (s - e - 1) / mag : 0;
    }
    want[size_t(a)] = count;
    if (count > 0) v->offset += uint64_t(s * st[size_t(a)]);
    // One element reads no stride (a step may be as large as INT64_MAX).
    v->strides[size_t(a)] = count > 1 ? st[size_t(a)] * step : 0;
  }
  if (want != ys) return "Slice output shape does not follow from its parameters";
  return "";
}

std::string GatherView(const onnx::NodeProto& n, const GraphInfo& info,
                       const std::vector<int64_t>& xs, const std::vector<int64_t>& ys,
                       CopyView* v) {
  std::vector<int64_t> idx;
  const onnx::TensorProto* it = info.constant(n.input(1));
  if (!it || !IntConst(info, n.input(1), &idx)) return "Gather indices are not a constant";
  const int64_t r = int64_t(xs.size());
  int64_t a = AttrInt(n, "axis", 0);
  if (a < 0) a += r;
  if (a < 0 || a >= r) return "Gather axis out of range";
  const int64_t dim = xs[size_t(a)];
  for (int64_t& i : idx) {
    if (i < 0) i += dim;
    if (i < 0 || i >= dim) return "Gather index out of range";
  }
  if (it->dims_size() > 1 || idx.empty()) return "Gather indices of rank > 1 or empty";
  int64_t step = 1;
  if (idx.size() > 1) step = idx[1] - idx[0];
  for (size_t i = 1; i < idx.size(); ++i)
    if (idx[i] - idx[i - 1] != step || step <= 0)
      return "Gather indices are not an increasing arithmetic progression";
  const std::vector<int64_t> st = ContiguousStrides(xs);
  std::vector<int64_t> want;
  v->strides.clear();
  for (int64_t d = 0; d < r; ++d) {
    if (d != a) {
      want.push_back(xs[size_t(d)]);
      v->strides.push_back(st[size_t(d)]);
    } else if (it->dims_size() == 1) {
      want.push_back(int64_t(idx.size()));
      v->strides.push_back(st[size_t(d)] * step);
    }
  }
  v->offset = uint64_t(idx[0] * st[size_t(a)]);
  if (want != ys) return "Gather output shape does not follow from its indices";
  return "";
}

}  // namespace

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& d) {
  std::vector<int64_t> st(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) st[i - 1] = st[i] * d[i];
  return st;
}

std::string PowExponent(const onnx::NodeProto& n, const GraphInfo& info, float* e) {
  const onnx::TensorProto* c = Has(n, 1) ? info.constant(n.input(1)) : nullptr;
  if (!c) return "Pow exponent is not a constant";
  if (c->data_type() != onnx::TensorProto::FLOAT && c->data_type() != onnx::TensorProto::FLOAT16)
    return "Pow exponent is not float32 or float16";
  std::vector<float> v = Floats(*c, NodeLabel(n));
  if (v.size() != 1) return "Pow exponent has more than one value";
  *e = v[0];
  return "";
}

std::string StridedView(const onnx::NodeProto& n, int output, const GraphInfo& info, CopyView* v) {
  std::vector<int64_t> xs, ys;
  if (!ShapeOf(info, n.input(0), &xs)) return "shape of '" + n.input(0) + "' is not static";
  if (!ShapeOf(info, n.output(output), &ys))
    return "shape of '" + n.output(output) + "' is not static";
  const std::string& op = n.op_type();
  if (op == "Slice") return SliceView(n, info, xs, ys, v);
  if (op == "Gather") return GatherView(n, info, xs, ys, v);
  const int64_t r = int64_t(xs.size());
  if (op == "Split") {
    int64_t a = AttrInt(n, "axis", 0);
    if (a < 0) a += r;
    if (a < 0 || a >= r || ys.size() != xs.size()) return "Split axis out of range";
    int64_t begin = 0;
    for (int k = 0; k < output; ++k) {
      std::vector<int64_t> ks;
      if (!ShapeOf(info, n.output(k), &ks) || ks.size() != xs.size())
        return "shape of '" + n.output(k) + "' is not static";
      begin += ks[size_t(a)];
    }
    if (begin + ys[size_t(a)] > xs[size_t(a)]) return "Split outputs exceed the input";
    for (int64_t d = 0; d < r; ++d)
      if (d != a && ys[size_t(d)] != xs[size_t(d)]) return "Split output shape mismatch";
    v->strides = ContiguousStrides(xs);
    v->offset = uint64_t(begin * v->strides[size_t(a)]);
    return "";
  }
  if (op == "Expand") {
    if (xs.size() > ys.size()) return "Expand input rank exceeds the output's";
    const std::vector<int64_t> st = ContiguousStrides(xs);
    v->strides.assign(ys.size(), 0);
    v->offset = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      const size_t od = d + ys.size() - xs.size();
      if (xs[d] != 1 && xs[d] != ys[od]) return "Expand input does not broadcast to the output";
      v->strides[od] = xs[d] == 1 ? 0 : st[d];
    }
    return "";
  }
  return op + " is not a strided copy";
}

std::string ReduceOf(const onnx::NodeProto& n, const GraphInfo& info, ReduceView* v) {
  const std::string& op = n.op_type();
  if (op == "ReduceSum") v->kind = fb::ReduceKind::SUM;
  else if (op == "ReduceMean") v->kind = fb::ReduceKind::MEAN;
  else if (op == "ReduceMax") v->kind = fb::ReduceKind::MAXIMUM;
  else if (op == "ReduceMin") v->kind = fb::ReduceKind::MINIMUM;
  else return op + " has no vnpu op";
  std::vector<int64_t> xs, ys, axes = AttrInts(n, "axes");
  if (!ShapeOf(info, n.input(0), &xs)) return "shape of '" + n.input(0) + "' is not static";
  if (!ShapeOf(info, n.output(0), &ys)) return "shape of '" + n.output(0) + "' is not static";
  if (Has(n, 1) && !IntConst(info, n.input(1), &axes)) return op + " axes are not a constant";
  const int64_t r = int64_t(xs.size());
  if (axes.empty()) {
    if (AttrInt(n, "noop_with_empty_axes", 0) != 0) return op + " with noop_with_empty_axes";
    for (int64_t d = 0; d < r; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) {
    if (a < 0) a += r;
    if (a < 0 || a >= r) return op + " axis out of range";
  }
  std::sort(axes.begin(), axes.end());
  const size_t first = size_t(axes.front()), last = size_t(axes.back());
  for (size_t d = first; d <= last; ++d)
    if (!std::binary_search(axes.begin(), axes.end(), int64_t(d)) && xs[d] != 1)
      return op + " over axes that are not contiguous";
  v->outer = uint64_t(Product(xs, 0, first));
  v->axis = uint64_t(Product(xs, first, last + 1));
  v->inner = uint64_t(Product(xs, last + 1, xs.size()));
  if (v->axis == 0) return op + " over an empty axis";
  if (uint64_t(Product(ys, 0, ys.size())) != v->outer * v->inner)
    return op + " output size does not follow from its axes";
  return "";
}

std::string LayerNormOf(const onnx::NodeProto& n, const GraphInfo& info, NormView* v) {
  std::vector<int64_t> xs;
  if (!ShapeOf(info, n.input(0), &xs)) return "shape of '" + n.input(0) + "' is not static";
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty()) return "LayerNormalization Mean / InvStdDev outputs";
  const int64_t r = int64_t(xs.size());
  int64_t a = AttrInt(n, "axis", -1);
  if (a < 0) a += r;
  if (a < 0 || a >= r) return "LayerNormalization axis out of range";
  v->outer = uint64_t(Product(xs, 0, size_t(a)));
  v->axis = uint64_t(Product(xs, size_t(a), xs.size()));
  v->eps = AttrFloat(n, "epsilon", 1e-5f);
  if (v->axis == 0) return "LayerNormalization over an empty axis";
  for (int i = 1; i < 3; ++i) {
    if (!Has(n, i)) {
      if (i == 1) return "LayerNormalization without a scale";
      continue;
    }
    const onnx::TensorProto* c = info.constant(n.input(i));
    if (!c) return std::string(i == 1 ? "scale" : "bias") + " is not a constant";
    if (c->data_type() != onnx::TensorProto::FLOAT && c->data_type() != onnx::TensorProto::FLOAT16)
      return std::string(i == 1 ? "scale" : "bias") + " is not float32 or float16";
    if (uint64_t(Product(Dims(*c), 0, size_t(c->dims_size()))) != v->axis)
      return std::string(i == 1 ? "scale" : "bias") + " does not have one value per element";
  }
  return "";
}

std::string BatchMatMulFits(const onnx::NodeProto& n, const GraphInfo& info) {
  std::vector<int64_t> as, bs, ys;
  if (!ShapeOf(info, n.input(0), &as) || !ShapeOf(info, n.input(1), &bs) ||
      !ShapeOf(info, n.output(0), &ys))
    return "MatMul shapes are not static";
  if (as.size() < 2 || bs.size() < 2) return "MatMul of a 1-D operand";
  if (ys.size() - 2 > kMaxBatchRank) return "MatMul with more than 6 batch dimensions";
  if (as.back() != bs[bs.size() - 2]) return "MatMul operands do not share K";
  const size_t r = ys.size() - 2;
  for (const auto* s : {&as, &bs}) {
    if (s->size() - 2 > r) return "MatMul operand rank exceeds the output's";
    for (size_t d = 0; d + 2 < s->size(); ++d) {
      const int64_t x = (*s)[d], y = ys[d + r - (s->size() - 2)];
      if (x != 1 && x != y) return "MatMul batch dimensions do not broadcast";
    }
  }
  return "";
}

std::string ResizeOf(const onnx::NodeProto& n, const GraphInfo& info, ResizeView* v) {
  if (info.opset < 11) return "Resize before opset 11";
  std::vector<int64_t> xs, ys;
  if (!ShapeOf(info, n.input(0), &xs)) return "shape of '" + n.input(0) + "' is not static";
  if (!ShapeOf(info, n.output(0), &ys)) return "shape of '" + n.output(0) + "' is not static";
  const size_t r = xs.size();
  if (r < 2 || ys.size() != r) return "Resize of rank < 2";
  for (size_t d = 0; d + 2 < r; ++d)
    if (xs[d] != ys[d]) return "Resize of an axis other than the last two";
  const std::string mode = AttrString(n, "mode", "nearest");
  if (mode == "nearest") v->mode = fb::ResizeMode::NEAREST;
  else if (mode == "linear") v->mode = fb::ResizeMode::LINEAR;
  else return "Resize mode " + mode;
  const std::string c = AttrString(n, "coordinate_transformation_mode", "half_pixel");
  if (c == "half_pixel") v->coord = fb::ResizeCoord::HALF_PIXEL;
  else if (c == "asymmetric") v->coord = fb::ResizeCoord::ASYMMETRIC;
  else if (c == "pytorch_half_pixel") v->coord = fb::ResizeCoord::PYTORCH_HALF_PIXEL;
  else if (c == "align_corners") v->coord = fb::ResizeCoord::ALIGN_CORNERS;
  else if (c == "tf_half_pixel_for_nn") v->coord = fb::ResizeCoord::TF_HALF_PIXEL_FOR_NN;
  else if (c == "half_pixel_symmetric" && info.opset >= 19)
    v->coord = fb::ResizeCoord::HALF_PIXEL_SYMMETRIC;
  else return "Resize coordinate_transformation_mode " + c;
  const std::string nm = AttrString(n, "nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor") v->round = fb::ResizeRound::PREFER_FLOOR;
  else if (nm == "round_prefer_ceil") v->round = fb::ResizeRound::PREFER_CEIL;
  else if (nm == "floor") v->round = fb::ResizeRound::FLOOR;
  else if (nm == "ceil") v->round = fb::ResizeRound::CEIL;
  else return "Resize nearest_mode " + nm;
  if (AttrInt(n, "antialias", 0) != 0) return "Resize with antialias";
  if (Attr(n, "axes")) return "Resize with axes";
  if (AttrString(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return "Resize keep_aspect_ratio_policy";
  // scales (input 2) or sizes (input 3), as constants; the CPU kernel's
  // arithmetic for the scale and length_resized of each axis.
  const onnx::TensorProto* sc = Has(n, 2) ? info.constant(n.input(2)) : nullptr;
  const onnx::TensorProto* sz = Has(n, 3) ? info.constant(n.input(3)) : nullptr;
  if (sc && sc->dims_size() == 1 && sc->dims(0) == 0) sc = nullptr;
  if (sz && sz->dims_size() == 1 && sz->dims(0) == 0) sz = nullptr;
  if ((Has(n, 2) && !info.constant(n.input(2))) || (Has(n, 3) && !info.constant(n.input(3))))
    return "Resize scales/sizes are not constants";
  if (!sc == !sz) return "Resize needs exactly one of scales and sizes";
  float scale[2], len[2];
  if (sc) {
    if (sc->data_type() != onnx::TensorProto::FLOAT) return "Resize scales are not float32";
    std::vector<float> s = Floats(*sc, NodeLabel(n));
    if (s.size() != r) return "Resize scales do not match the rank";
    for (size_t d = 0; d + 2 < r; ++d)
      if (s[d] != 1.0f) return "Resize of an axis other than the last two";
    for (int k = 0; k < 2; ++k) {
      const float f = s[r - 2 + size_t(k)], in = float(xs[r - 2 + size_t(k)]);
      if (!(f > 0.0f) || f > 1e9f) return "Resize scale out of range";
      if (int64_t(f * in) != ys[r - 2 + size_t(k)])
        return "Resize output shape does not follow from its scales";
      scale[k] = f;
      len[k] = f * in;
    }
  } else {
    std::vector<int64_t> s;
    if (!IntConst(info, n.input(3), &s) || s.size() != r) return "Resize sizes do not match";
    if (s != ys) return "Resize output shape does not follow from its sizes";
    for (int k = 0; k < 2; ++k) {
      const int64_t in = xs[r - 2 + size_t(k)], out = ys[r - 2 + size_t(k)];
      if (in == 0) return "Resize of an empty axis";
      scale[k] = float(out) / float(in);
      len[k] = float(out);
    }
  }
  v->scale_h = scale[0], v->scale_w = scale[1], v->len_h = len[0], v->len_w = len[1];
  return "";
}

std::string PadOf(const onnx::NodeProto& n, const GraphInfo& info, PadView* v) {
  std::vector<int64_t> xs, ys, pads;
  if (!ShapeOf(info, n.input(0), &xs)) return "shape of '" + n.input(0) + "' is not static";
  if (!ShapeOf(info, n.output(0), &ys)) return "shape of '" + n.output(0) + "' is not static";
  const std::string mode = AttrString(n, "mode", "constant");
  if (mode == "reflect") v->mode = fb::PadMode::REFLECT;
  else if (mode == "edge") v->mode = fb::PadMode::EDGE;
  else if (mode != "constant") return "Pad mode " + mode;
  v->value = 0.f;
  if (info.opset < 11) {
    pads = AttrInts(n, "pads");
    v->value = AttrFloat(n, "value", 0.f);
  } else {
    if (!IntConst(info, n.input(1), &pads)) return "Pad pads are not a constant";
    if (Has(n, 2)) {
      const onnx::TensorProto* c = info.constant(n.input(2));
      if (!c || c->data_type() != onnx::TensorProto::FLOAT)
        return "Pad value is not a float constant";
      std::vector<float> f = Floats(*c, NodeLabel(n));
      if (f.size() != 1) return "Pad value has more than one element";
      v->value = f[0];
    }
    if (Has(n, 3)) return "Pad with axes";
  }
  const size_t r = xs.size();
  if (pads.size() != 2 * r || ys.size() != r) return "Pad pads do not match the rank";
  v->begins.assign(pads.begin(), pads.begin() + long(r));
  for (size_t d = 0; d < r; ++d) {
    if (pads[d] < 0 || pads[r + d] < 0) return "Pad with negative pads";
    if (xs[d] + pads[d] + pads[r + d] != ys[d]) return "Pad output shape does not follow";
    const bool padded = pads[d] > 0 || pads[r + d] > 0;
    if (padded && v->mode == fb::PadMode::REFLECT &&
        (pads[d] > xs[d] - 1 || pads[r + d] > xs[d] - 1))
      return "Pad reflect by more than the axis length - 1";
    if (padded && v->mode == fb::PadMode::EDGE && xs[d] == 0) return "Pad edge of an empty axis";
  }
  return "";
}

std::string RecurrentFits(const onnx::NodeProto& n, const GraphInfo& info) {
  const bool lstm = n.op_type() == "LSTM";
  const std::string dir = AttrString(n, "direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return n.op_type() + " direction " + dir;
  if (AttrInt(n, "layout", 0) != 0) return n.op_type() + " with layout 1";
  if (Attr(n, "clip")) return n.op_type() + " with clip";
  if (lstm && AttrInt(n, "input_forget", 0) != 0) return "LSTM with input_forget";
  if (const onnx::AttributeProto* a = Attr(n, "activations")) {
    const size_t per = lstm ? 3 : 2, dirs = dir == "bidirectional" ? 2 : 1;
    if (size_t(a->strings_size()) != per * dirs) return n.op_type() + " activations count";
    for (size_t i = 0; i < size_t(a->strings_size()); ++i)
      if (a->strings(int(i)) != (i % per == 0 ? "Sigmoid" : "Tanh"))
        return n.op_type() + " with activation " + a->strings(int(i));
  }
  if (Attr(n, "activation_alpha") || Attr(n, "activation_beta"))
    return n.op_type() + " with activation parameters";
  if (Has(n, 4)) return n.op_type() + " with sequence_lens";
  if (lstm && Has(n, 7)) return "LSTM with peepholes";
  for (int i = 1; i < 4; ++i) {
    if (i == 3 && !Has(n, 3)) continue;
    const onnx::TensorProto* c = Has(n, i) ? info.constant(n.input(i)) : nullptr;
    if (!c || (c->data_type() != onnx::TensorProto::FLOAT &&
               c->data_type() != onnx::TensorProto::FLOAT16))
      return n.op_type() + " W, R and B must be float constants";
  }
  std::vector<int64_t> xs;
  if (!ShapeOf(info, n.input(0), &xs) || xs.size() != 3)
    return n.op_type() + " X is not static [seq, batch, input]";
  const int64_t H = AttrInt(n, "hidden_size", 0);
  const int64_t D = dir == "bidirectional" ? 2 : 1, G = lstm ? 4 : 3;
  if (H < 1) return n.op_type() + " without hidden_size";
  const std::vector<int64_t> w = Dims(*info.constant(n.input(1))),
                             r = Dims(*info.constant(n.input(2)));
  if (w != std::vector<int64_t>{D, G * H, xs[2]} || r != std::vector<int64_t>{D, G * H, H})
    return n.op_type() + " W or R shape mismatch";
  if (Has(n, 3) && Dims(*info.constant(n.input(3))) != std::vector<int64_t>{D, 2 * G * H})
    return n.op_type() + " B shape mismatch";
  return "";
}

std::string UnsupportedTransformer(const onnx::NodeProto& n, const GraphInfo& info, bool* mine) {
  const std::string& op = n.op_type();
  *mine = true;
  if (op == "Pow") {
    float e;
    return PowExponent(n, info, &e);
  }
  if (kUnaryOps.count(op)) return "";
  if (op.rfind("Reduce", 0) == 0) {
    ReduceView v;
    return ReduceOf(n, info, &v);
  }
  if (op == "LayerNormalization") {
    NormView v;
    return LayerNormOf(n, info, &v);
  }
  if (op == "Resize") {
    ResizeView v;
    return ResizeOf(n, info, &v);
  }
  if (op == "LSTM" || op == "GRU") return RecurrentFits(n, info);
  if (op == "Pad") {
    PadView v;
    return PadOf(n, info, &v);
  }
  if (op == "Slice" || op == "Gather" || op == "Expand") {
    CopyView v;
    return StridedView(n, 0, info, &v);
  }
  if (op == "Split") {
    for (int k = 0; k < n.output_size(); ++k) {
      CopyView v;
      std::string r = StridedView(n, k, info, &v);
      if (!r.empty()) return r;
    }
    return "";
  }
  if (op == "MatMul") {
    const onnx::TensorProto* b = info.constant(n.input(1));
    if (b && b->dims_size() == 2) {
      *mine = false;  // a GEMM on packed weights
      return "";
    }
    return BatchMatMulFits(n, info);
  }
  *mine = false;
  return "";
}

}  // namespace vnpu
}  // namespace host
}  // namespace epctx
