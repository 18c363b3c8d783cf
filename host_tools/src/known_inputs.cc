// SPDX-License-Identifier: Apache-2.0
// --input-value and the inlining of Ifs whose condition is known
// (epctx_host/known_inputs.h).
#include "epctx_host/known_inputs.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "epctx_host/diagnostics.h"
#include "epctx_host/half.h"
#include "epctx_host/specialize.h"
#include "epctx_host/subgraphs.h"

namespace epctx {
namespace host {
namespace {

using onnx::TensorProto;

// One value of `text` as element type `dtype` into t; false when it does not
// parse or does not fit.
bool AddValue(const std::string& text, int32_t dtype, TensorProto* t) {
  if (dtype == TensorProto::BOOL) {
    if (text == "true" || text == "1") {
      t->add_int32_data(1);
      return true;
    }
    if (text == "false" || text == "0") {
      t->add_int32_data(0);
      return true;
    }
    return false;
  }
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (used != text.size()) return false;
  auto integral = [&](double lo, double hi) {
    return std::isfinite(v) && v == std::floor(v) && v >= lo && v <= hi;
  };
  switch (dtype) {
    case TensorProto::FLOAT: t->add_float_data(float(v)); return true;
    case TensorProto::DOUBLE: t->add_double_data(v); return true;
    case TensorProto::FLOAT16: t->add_int32_data(FloatToHalf(float(v))); return true;
    case TensorProto::INT8:
      if (!integral(-128, 127)) return false;
      break;
    case TensorProto::UINT8:
      if (!integral(0, 255)) return false;
      break;
    case TensorProto::INT16:
      if (!integral(-32768, 32767)) return false;
      break;
    case TensorProto::UINT16:
      if (!integral(0, 65535)) return false;
      break;
    case TensorProto::INT32:
      if (!integral(-2147483648.0, 2147483647.0)) return false;
      break;
    case TensorProto::INT64:
      // Through stoll, so 64-bit values keep every digit.
      try {
        t->add_int64_data(std::stoll(text, &used));
      } catch (const std::exception&) {
        return false;
      }
      return used == text.size();
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      try {
        unsigned long long u = std::stoull(text, &used);
        if (used != text.size() || text[0] == '-') return false;
        if (dtype == TensorProto::UINT32 && u > 0xffffffffull) return false;
        t->add_uint64_data(u);
      } catch (const std::exception&) {
        return false;
      }
      return true;
    default: return false;
  }
  t->add_int32_data(int32_t(v));
  return true;
}

bool ReadCondition(const TensorProto& t, bool* out) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n != 1) return false;
  if (t.has_raw_data()) {
    if (t.raw_data().empty()) return false;
    // Any element type: the condition is "not all zero bytes".
    bool any = false;
    for (char c : t.raw_data()) any |= c != 0;
    *out = any;
    return true;
  }
  if (t.int32_data_size() == 1) {
    *out = t.int32_data(0) != 0;
    return true;
  }
  if (t.int64_data_size() == 1) {
    *out = t.int64_data(0) != 0;
    return true;
  }
  if (t.float_data_size() == 1) {
    *out = t.float_data(0) != 0;
    return true;
  }
  return false;
}

void CollectNames(const onnx::GraphProto& g, std::set<std::string>* names);

void CollectNodeNames(const onnx::NodeProto& n, std::set<std::string>* names) {
  for (const auto& s : n.input()) names->insert(s);
  for (const auto& s : n.output()) names->insert(s);
  for (const auto& a : n.attribute()) {
    if (a.has_g()) CollectNames(a.g(), names);
    for (const auto& sub : a.graphs()) CollectNames(sub, names);
  }
}

void CollectNames(const onnx::GraphProto& g, std::set<std::string>* names) {
  for (const auto& v : g.input()) names->insert(v.name());
  for (const auto& t : g.initializer()) names->insert(t.name());
  for (const auto& n : g.node()) CollectNodeNames(n, names);
}

std::string Renamed(const std::map<std::string, std::string>& map, const std::string& s) {
  auto it = map.find(s);
  return it == map.end() ? s : it->second;
}

// Renames uses of the branch's values in g, nested bodies included (a
// nested body reads them as outer-scope names).
void RenameUses(onnx::GraphProto* g, const std::map<std::string, std::string>& map) {
  for (auto& n : *g->mutable_node()) {
    for (auto& s : *n.mutable_input()) s = Renamed(map, s);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RenameUses(a.mutable_g(), map);
      for (auto& sub : *a.mutable_graphs()) RenameUses(&sub, map);
    }
  }
  for (auto& v : *g->mutable_output()) v.set_name(Renamed(map, v.name()));
}

}  // namespace

InputValue ParseInputValue(const std::string& text) {
  size_t colon = text.find_last_of(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw std::invalid_argument("--input-value '" + text + "': expected name:v1,v2,...");
  InputValue v;
  v.name = text.substr(0, colon);
  std::string rest = text.substr(colon + 1);
  size_t pos = 0;
  for (;;) {
    size_t comma = rest.find(',', pos);
    std::string item =
        rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty()) throw std::invalid_argument("--input-value '" + text + "': empty value");
    v.values.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return v;
}

void ApplyInputValues(onnx::GraphProto& graph, const std::vector<InputValue>& values,
                      const std::string& file) {
  for (const InputValue& iv : values) {
    std::set<std::string> inits;
    for (const auto& t : graph.initializer()) inits.insert(t.name());
    int index = -1;
    std::string names;
    for (int i = 0; i < graph.input_size(); ++i) {
      if (inits.count(graph.input(i).name())) continue;
      names += (names.empty() ? "" : ", ") + graph.input(i).name();
      if (graph.input(i).name() == iv.name) index = i;
    }
    const std::string what = "--input-value: input '" + iv.name + "'";
    if (index < 0)
      throw ToolError(file,
                      "--input-value: no graph input '" + iv.name + "' (inputs: " + names + ")",
                      EPCTX_INVALID_ARGUMENT);
    const onnx::ValueInfoProto& in = graph.input(index);
    if (!in.type().has_tensor_type())
      throw ToolError(file, what + " is not a tensor", EPCTX_INVALID_ARGUMENT);
    const ValueType vt = TypeOf(in.type());
    TensorProto t;
    t.set_name(iv.name);
    t.set_data_type(vt.dtype);
    for (const auto& s : iv.values)
      if (!AddValue(s, vt.dtype, &t))
        throw ToolError(file,
                        what + ": '" + s + "' is not a value of its element type (" +
                            TensorProto::DataType_Name(TensorProto::DataType(vt.dtype)) + ")",
                        EPCTX_INVALID_ARGUMENT);
    const int64_t count = int64_t(iv.values.size());
    if (vt.fully_static()) {
      int64_t n = 1;
      for (int64_t d : vt.dims) n *= d;
      if (n != count)
        throw ToolError(file,
                        what + " has " + std::to_string(n) + (n == 1 ? " element" : " elements") +
                            ", the option gives " + std::to_string(count),
                        EPCTX_INVALID_ARGUMENT);
      for (int64_t d : vt.dims) t.add_dims(d);
    } else if (vt.known && vt.dims.size() > 1) {
      throw ToolError(file,
                      what + " has rank " + std::to_string(vt.dims.size()) +
                          " and unknown dimensions: fix them with --input-shape first",
                      EPCTX_INVALID_ARGUMENT);
    } else if (vt.known || count != 1) {  // rank 1 of unknown length, or no shape at all
      t.add_dims(count);
    }
    *graph.add_initializer() = std::move(t);
    graph.mutable_input()->DeleteSubrange(index, 1);
  }
}

size_t InlineKnownIfs(onnx::GraphProto& graph) {
  std::map<std::string, const TensorProto*> consts;
  for (const auto& t : graph.initializer()) consts[t.name()] = &t;
  for (const auto& v : graph.input()) consts.erase(v.name());  // only defaults

  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  size_t inlined = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    bool cond = false;
    auto c = node.input_size() > 0 ? consts.find(node.input(0)) : consts.end();
    if (node.op_type() != "If" || !IsDefaultDomain(node.domain()) || c == consts.end() ||
        !ReadCondition(*c->second, &cond)) {
      *out.Add() = node;
      continue;
    }
    onnx::GraphProto branch;
    for (const auto& a : node.attribute())
      if (a.name() == (cond ? "then_branch" : "else_branch") && a.has_g()) branch = a.g();
    if (branch.output_size() != node.output_size()) {  // malformed: leave it to the checker
      *out.Add() = node;
      continue;
    }
    // Names of everything else in the graph, so branch values can be
    // renamed apart from them.
    std::set<std::string> taken;
    for (const auto& v : graph.input()) taken.insert(v.name());
    for (const auto& t : graph.initializer()) taken.insert(t.name());
    for (int j = 0; j < graph.node_size(); ++j)
      if (j != i) CollectNodeNames(graph.node(j), &taken);
    for (const auto& s : node.output()) taken.insert(s);
    std::set<std::string> defined, produced;
    for (const auto& n : branch.node())
      for (const auto& o : n.output())
        if (!o.empty()) {
          defined.insert(o);
          produced.insert(o);
        }
    for (const auto& t : branch.initializer()) defined.insert(t.name());

    std::map<std::string, std::string> rename;
    std::vector<onnx::NodeProto> identities;
    for (int j = 0; j < node.output_size(); ++j) {
      const std::string& bo = branch.output(j).name();
      const std::string& io = node.output(j);
      if (io.empty()) continue;
      if (produced.count(bo) && !rename.count(bo)) {
        rename[bo] = io;
        continue;
      }
      onnx::NodeProto id;
      id.set_op_type("Identity");
      id.set_name(node.name() + "/output_" + std::to_string(j));
      id.add_input(bo);  // renamed below with the branch's other uses
      id.add_output(io);
      identities.push_back(std::move(id));
    }
    for (const auto& name : defined) {
      if (rename.count(name) || !taken.count(name)) continue;
      std::string fresh;
      for (int k = 0; fresh.empty() || taken.count(fresh) || defined.count(fresh); ++k)
        fresh = node.name() + "/" + name + (k ? "_" + std::to_string(k) : std::string());
      rename[name] = fresh;
    }
    RenameUses(&branch, rename);
    for (auto& n : *branch.mutable_node()) {
      for (auto& o : *n.mutable_output()) o = Renamed(rename, o);
      if (!n.name().empty()) n.set_name(node.name() + "/" + n.name());
      *out.Add() = std::move(n);
    }
    for (auto& id : identities) {
      id.set_input(0, Renamed(rename, id.input(0)));
      *out.Add() = std::move(id);
    }
    for (auto& t : *branch.mutable_initializer()) {
      t.set_name(Renamed(rename, t.name()));
      *graph.add_initializer() = std::move(t);
    }
    ++inlined;
  }
  if (inlined) graph.mutable_node()->Swap(&out);
  return inlined;
}

}  // namespace host
}  // namespace epctx
