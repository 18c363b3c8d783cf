// SPDX-License-Identifier: Apache-2.0
// Stage 2: input shapes, Constant lifting, shape inference, folding.
#include "epctx_host/specialize.h"

#include <cstring>
#include <deque>
#include <set>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "epctx_host/fold.h"
#include "epctx_host/subgraphs.h"

namespace epctx {
namespace host {
namespace {

std::set<std::string> InitializerNames(const onnx::GraphProto& g) {
  std::set<std::string> s;
  for (const auto& t : g.initializer()) s.insert(t.name());
  return s;
}

std::set<std::string> GraphOutputNames(const onnx::GraphProto& g) {
  std::set<std::string> s;
  for (const auto& o : g.output()) s.insert(o.name());
  return s;
}

// The tensor a Constant node defines, if it is one we can lift.
bool ConstantValue(const onnx::NodeProto& node, onnx::TensorProto* out) {
  if (node.attribute_size() != 1) return false;
  const onnx::AttributeProto& a = node.attribute(0);
  if (a.name() == "value" && a.has_t()) {
    *out = a.t();
  } else if (a.name() == "value_float") {
    out->set_data_type(onnx::TensorProto::FLOAT);
    out->add_float_data(a.f());
  } else if (a.name() == "value_floats") {
    out->set_data_type(onnx::TensorProto::FLOAT);
    out->add_dims(a.floats_size());
    for (float f : a.floats()) out->add_float_data(f);
  } else if (a.name() == "value_int") {
    out->set_data_type(onnx::TensorProto::INT64);
    out->add_int64_data(a.i());
  } else if (a.name() == "value_ints") {
    out->set_data_type(onnx::TensorProto::INT64);
    out->add_dims(a.ints_size());
    for (int64_t v : a.ints()) out->add_int64_data(v);
  } else {
    return false;  // strings, sparse tensors: left to the CPU node
  }
  return true;
}

}  // namespace

InputShape ParseInputShape(const std::string& text) {
  size_t colon = text.find_last_of(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("--input-shape '" + text + "': expected name:d0,d1,...");
  InputShape s;
  s.name = text.substr(0, colon);
  std::string rest = text.substr(colon + 1);
  size_t pos = 0;
  while (pos < rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string item =
        rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 0)
      throw std::invalid_argument("--input-shape '" + text + "': dimension '" + item +
                                  "' is not a non-negative integer");
    s.dims.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
    if (pos == rest.size())
      throw std::invalid_argument("--input-shape '" + text + "': trailing ','");
  }
  return s;
}

void ApplyInputShapes(onnx::GraphProto& graph, const std::vector<InputShape>& shapes,
                      const std::string& file) {
  const std::set<std::string> inits = InitializerNames(graph);
  for (const InputShape& s : shapes) {
    onnx::ValueInfoProto* input = nullptr;
    std::string names;
    for (auto& in : *graph.mutable_input()) {
      if (inits.count(in.name())) continue;
      names += (names.empty() ? "" : ", ") + in.name();
      if (in.name() == s.name) input = &in;
    }
    if (!input)
      throw ToolError(file,
                      "--input-shape: no graph input '" + s.name + "' (inputs: " + names + ")",
                      EPCTX_INVALID_ARGUMENT);
    if (!input->type().has_tensor_type())
      throw ToolError(file, "--input-shape: input '" + s.name + "' is not a tensor",
                      EPCTX_INVALID_ARGUMENT);
    auto* tt = input->mutable_type()->mutable_tensor_type();
    if (tt->has_shape()) {
      const auto& shape = tt->shape();
      if (shape.dim_size() != static_cast<int>(s.dims.size()))
        throw ToolError(file,
                        "--input-shape: input '" + s.name + "' has rank " +
                            std::to_string(shape.dim_size()) + ", the option gives " +
                            std::to_string(s.dims.size()) + " dimensions",
                        EPCTX_INVALID_ARGUMENT);
      for (int i = 0; i < shape.dim_size(); ++i) {
        const auto& d = shape.dim(i);
        if (d.has_dim_value() && d.dim_value() != s.dims[i])
          throw ToolError(file,
                          "--input-shape: input '" + s.name + "' dimension " + std::to_string(i) +
                              " is fixed to " + std::to_string(d.dim_value()) +
                              ", the option gives " + std::to_string(s.dims[i]),
                          EPCTX_INVALID_ARGUMENT);
      }
    }
    tt->clear_shape();
    auto* shape = tt->mutable_shape();
    for (int64_t d : s.dims) shape->add_dim()->set_dim_value(d);
  }
}

size_t LiftConstants(onnx::GraphProto& graph) {
  const std::set<std::string> outputs = GraphOutputNames(graph);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  size_t lifted = 0;
  for (auto& node : *graph.mutable_node()) {
    onnx::TensorProto t;
    if (node.op_type() == "Constant" && IsDefaultDomain(node.domain()) && node.output_size() == 1 &&
        !outputs.count(node.output(0)) && ConstantValue(node, &t)) {
      t.set_name(node.output(0));
      *graph.add_initializer() = std::move(t);
      ++lifted;
      continue;
    }
    *kept.Add() = std::move(node);
  }
  graph.mutable_node()->Swap(&kept);
  return lifted;
}

void InferShapes(onnx::ModelProto& model, const std::string& file) {
  // onnx names the failing node by its name only: an unnamed node gets a
  // temporary one that says which output it produces.
  onnx::GraphProto& g = *model.mutable_graph();
  std::vector<int> unnamed;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    if (!n.name().empty()) continue;
    unnamed.push_back(i);
    n.set_name(n.output_size() > 0 ? "producing '" + n.output(0) + "'" : "#" + std::to_string(i));
  }
  std::string error;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    error = OneLine(e.what());
  }
  for (int i : unnamed) g.mutable_node(i)->clear_name();
  if (!error.empty()) throw ToolError(file, "shape inference failed: " + error);
}

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

ValueType TypeOf(const onnx::TypeProto& type) {
  ValueType v;
  if (!type.has_tensor_type()) return v;
  v.dtype = type.tensor_type().elem_type();
  if (!type.tensor_type().has_shape()) return v;
  v.known = true;
  for (const auto& d : type.tensor_type().shape().dim())
    v.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return v;
}

ValueType TypeOf(const onnx::TensorProto& tensor) {
  ValueType v;
  v.known = true;
  v.dtype = tensor.data_type();
  v.dims.assign(tensor.dims().begin(), tensor.dims().end());
  return v;
}

bool FloatValues(const onnx::TensorProto* t, size_t count, std::vector<float>* out) {
  if (!t || t->data_type() != onnx::TensorProto::FLOAT ||
      t->data_location() == onnx::TensorProto::EXTERNAL)
    return false;
  if (t->has_raw_data()) {
    if (t->raw_data().size() != count * 4) return false;
    out->resize(count);
    std::memcpy(out->data(), t->raw_data().data(), count * 4);
    return true;
  }
  if (size_t(t->float_data_size()) != count) return false;
  out->assign(t->float_data().begin(), t->float_data().end());
  return true;
}

bool IntValues(const onnx::TensorProto* t, size_t count, std::vector<int32_t>* out) {
  if (!t || t->data_location() == onnx::TensorProto::EXTERNAL) return false;
  const int32_t d = t->data_type();
  const size_t eb = d == onnx::TensorProto::INT8 || d == onnx::TensorProto::UINT8 ? 1
                    : d == onnx::TensorProto::INT32                               ? 4
                                                                                  : 0;
  if (!eb) return false;
  out->resize(count);
  if (t->has_raw_data()) {
    if (t->raw_data().size() != count * eb) return false;
    const char* p = t->raw_data().data();
    for (size_t i = 0; i < count; ++i) {
      if (d == onnx::TensorProto::INT8) (*out)[i] = int8_t(p[i]);
      else if (d == onnx::TensorProto::UINT8) (*out)[i] = uint8_t(p[i]);
      else std::memcpy(&(*out)[i], p + 4 * i, 4);
    }
    return true;
  }
  if (size_t(t->int32_data_size()) != count) return false;
  out->assign(t->int32_data().begin(), t->int32_data().end());
  return true;
}

void ImportMsOpset(onnx::ModelProto& model) {
  for (const auto& op : model.opset_import())
    if (op.domain() == "com.microsoft") return;
  auto* op = model.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
}

GraphInfo BuildGraphInfo(const onnx::ModelProto& model) {
  GraphInfo info;
  const onnx::GraphProto& g = model.graph();
  info.graph = &g;
  for (const auto& op : model.opset_import())
    if (IsDefaultDomain(op.domain())) info.opset = op.version();
  std::set<std::string> inputs;
  for (const auto& in : g.input()) inputs.insert(in.name());
  auto add = [&](const std::string& name, const ValueType& t) {
    auto it = info.types.find(name);
    if (it == info.types.end() || (!it->second.known && t.known)) info.types[name] = t;
  };
  for (const auto& t : g.initializer()) {
    add(t.name(), TypeOf(t));
    // An initializer that is also a graph input is only a default value.
    if (!inputs.count(t.name())) info.constants[t.name()] = &t;
  }
  for (const auto& v : g.input()) add(v.name(), TypeOf(v.type()));
  for (const auto& v : g.value_info()) add(v.name(), TypeOf(v.type()));
  for (const auto& v : g.output()) add(v.name(), TypeOf(v.type()));
  return info;
}

// The body's own names shadow the enclosing scopes'; outer values it reads
// keep their types, outer initializers stay constants (packed as weights).
GraphInfo BuildBodyInfo(const onnx::GraphProto& body, const GraphInfo& outer) {
  GraphInfo info;
  info.graph = &body;
  info.opset = outer.opset;
  info.types = outer.types;
  info.constants = outer.constants;
  for (const auto& v : body.input()) {
    info.constants.erase(v.name());
    info.types[v.name()] = TypeOf(v.type());
  }
  for (const auto& n : body.node())
    for (const auto& o : n.output()) {
      info.constants.erase(o);
      info.types.erase(o);
    }
  for (const auto& t : body.initializer()) {
    info.types[t.name()] = TypeOf(t);
    info.constants[t.name()] = &t;
  }
  for (const auto* list : {&body.value_info(), &body.output()})
    for (const auto& v : *list) {
      ValueType t = TypeOf(v.type());
      auto it = info.types.find(v.name());
      if (it == info.types.end() || (!it->second.known && t.known)) info.types[v.name()] = t;
    }
  return info;
}

namespace {

// A body being specialised, with what its rounds need.
struct Body {
  onnx::GraphProto* graph;
  const GraphInfo* scope;  // the enclosing graph's, as of its last round
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_info;  // the source's
  bool settled = false;
};

// Appends the bodies of every control-flow node of `graph`.
void CollectBodies(onnx::GraphProto& graph, const GraphInfo* scope, std::vector<Body>* out) {
  for (auto& node : *graph.mutable_node()) {
    if (!HasSubgraph(node)) continue;
    for (auto& a : *node.mutable_attribute())
      for (onnx::GraphProto* body : AttributeGraphs(a)) out->push_back(Body{body, scope, {}});
  }
}

}  // namespace

// One nesting level at a time: each round runs one whole-model inference,
// which types every body of the level from the fixed outer shapes, then
// folds each body that is not settled. Bodies of one level never read each
// other's values, so they share the rounds; the work is linear in the bodies.
void SpecializeBodies(onnx::ModelProto& model, onnx::GraphProto& graph, const GraphInfo& scope,
                      const SpecializeOptions& options, const std::string& file,
                      SpecializeStats* stats) {
  std::deque<GraphInfo> scopes;  // stable addresses for the levels' Body::scope
  std::vector<Body> level;
  CollectBodies(graph, &scope, &level);
  while (!level.empty()) {
    for (Body& b : level) {
      ++stats->bodies;
      stats->constants_lifted += LiftConstants(*b.graph);
      b.value_info = b.graph->value_info();
    }
    bool changed = true;
    for (int round = 0; round < kMaxFoldRounds && changed; ++round) {
      // As in Specialize: each round re-infers from the source's value_info,
      // the folded values dropped.
      InferShapes(model, file);
      changed = false;
      for (Body& b : level) {
        if (b.settled) continue;
        FoldResult r =
            FoldGraph(model, *b.graph, BuildBodyInfo(*b.graph, *b.scope), options.fold_limits);
        ++stats->fold_rounds;
        stats->folded += r.folded;
        const size_t inlined = InlineKnownIfs(*b.graph);
        stats->ifs_inlined += inlined;
        if (inlined) stats->constants_lifted += LiftConstants(*b.graph);
        if (!r.folded && !inlined) {
          b.settled = true;
          continue;
        }
        changed = true;
        DropUnusedInitializers(*b.graph);
        const std::set<std::string> inits = InitializerNames(*b.graph);
        b.graph->clear_value_info();
        for (const auto& v : b.value_info)
          if (!inits.count(v.name())) *b.graph->add_value_info() = v;
      }
    }
    if (changed) InferShapes(model, file);  // the round limit cut the last change short
    std::vector<Body> next;
    for (const Body& b : level) {
      scopes.push_back(BuildBodyInfo(*b.graph, *b.scope));
      CollectBodies(*b.graph, &scopes.back(), &next);
    }
    level = std::move(next);
  }
}

SpecializeStats Specialize(onnx::ModelProto& model, const SpecializeOptions& options,
                           const std::string& file, const Progress& progress) {
  SpecializeStats stats;
  onnx::GraphProto& graph = *model.mutable_graph();
  ApplyInputShapes(graph, options.input_shapes, file);
  ApplyInputValues(graph, options.input_values, file);
  stats.constants_lifted = LiftConstants(graph);
  const auto original_value_info = graph.value_info();
  InferShapes(model, file);
  // Folding and whole-graph inference to a fixed point (bounded).
  auto fold = [&]() {
    if (!options.fold) return;
    std::vector<std::string> notes;
    for (int round = 0; round < kMaxFoldRounds; ++round) {
      FoldResult r = FoldConstants(model, options.fold_limits);
      ++stats.fold_rounds;
      stats.folded += r.folded;
      stats.fold_skipped = r.skipped;
      notes = std::move(r.notes);
      if (!r.folded) break;
      // Start again from the source's value_info so values whose shape
      // depended on a folded input are inferred afresh, not merged with the
      // earlier symbolic result.
      DropUnusedInitializers(graph);
      const std::set<std::string> inits = InitializerNames(graph);
      graph.clear_value_info();
      for (const auto& v : original_value_info)
        if (!inits.count(v.name())) *graph.add_value_info() = v;
      InferShapes(model, file);
    }
    for (const auto& n : notes) progress(n);
  };
  fold();
  // Each round inlines the Ifs the previous fold decided; a branch holding
  // another If needs one more round, so nesting bounds the loop.
  while (size_t n = InlineKnownIfs(graph)) {
    stats.ifs_inlined += n;
    stats.constants_lifted += LiftConstants(graph);
    InferShapes(model, file);
    fold();
  }
  if (options.fold) SpecializeBodies(model, graph, BuildGraphInfo(model), options, file, &stats);
  progress("specialise: " + std::to_string(stats.constants_lifted) + " Constant nodes lifted, " +
           std::to_string(stats.folded) + " nodes folded in " + std::to_string(stats.fold_rounds) +
           " rounds" +
           (stats.ifs_inlined ? ", " + std::to_string(stats.ifs_inlined) +
                                    " If nodes replaced by "
                                    "their taken branch"
                              : std::string()) +
           (stats.bodies ? ", " + std::to_string(stats.bodies) + " subgraphs specialised"
                         : std::string()) +
           (stats.fold_skipped ? ", " + std::to_string(stats.fold_skipped) + " not foldable"
                               : std::string()));
  return stats;
}

}  // namespace host
}  // namespace epctx
