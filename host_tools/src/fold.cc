// SPDX-License-Identifier: Apache-2.0
// Constant folding through the epctx runtime's public C API.
#include "epctx_host/fold.h"

#include <map>
#include <memory>
#include <set>

#include <epctx/epctx.h>

#include "epctx_host/node_infer.h"
#include "epctx_host/specialize.h"
#include "epctx_host/subgraphs.h"

namespace epctx {
namespace host {
namespace {

// Ops whose result is not a function of their inputs.
const std::set<std::string> kNonDeterministic = {"RandomNormal",  "RandomNormalLike",
                                                 "RandomUniform", "RandomUniformLike",
                                                 "Multinomial",   "Bernoulli"};

struct StatusDeleter {
  void operator()(epctx_status* s) const { epctx_status_release(s); }
};
using StatusPtr = std::unique_ptr<epctx_status, StatusDeleter>;

std::string Message(const StatusPtr& s) {
  return std::string(epctx_code_name(epctx_status_code(s.get()))) + ": " +
         epctx_status_message(s.get());
}

// One env for all folds of this process; created on first use.
class Runtime {
 public:
  ~Runtime() {
    if (env_) epctx_env_release(env_);
  }
  // Runs a serialised model without inputs; returns the outputs, or an error
  // message in *error.
  bool Run(const std::string& model_bytes, size_t output_count, std::vector<epctx_tensor*>* outputs,
           std::string* error) {
    if (!env_) {
      StatusPtr s(epctx_env_create(nullptr, 0, &env_));
      if (s) {
        *error = "env: " + Message(s);
        env_ = nullptr;
        return false;
      }
    }
    epctx_session* session = nullptr;
    StatusPtr s(epctx_session_create_from_buffer(env_, model_bytes.data(), model_bytes.size(),
                                                 nullptr, &session));
    if (s) {
      *error = Message(s);
      return false;
    }
    outputs->assign(output_count, nullptr);
    StatusPtr r(
        epctx_session_run(session, nullptr, nullptr, 0, nullptr, outputs->data(), output_count));
    epctx_session_release(session);
    if (r) {
      *error = Message(r);
      return false;
    }
    return true;
  }

 private:
  epctx_env* env_ = nullptr;
};

// Shape with a fully static input: the dims, sliced by start/end (opset 15).
onnx::TensorProto FoldShape(const onnx::NodeProto& node, const ValueType& in) {
  int64_t rank = static_cast<int64_t>(in.dims.size());
  int64_t start = 0, end = rank;
  for (const auto& a : node.attribute()) {
    if (a.name() == "start") start = a.i();
    if (a.name() == "end") end = a.i();
  }
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return v < 0 ? 0 : (v > rank ? rank : v);
  };
  start = clamp(start);
  end = clamp(end);
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(end > start ? end - start : 0);
  for (int64_t i = start; i < end; ++i) t.add_int64_data(in.dims[i]);
  return t;
}

// Size with a fully static input: the element count, an int64 scalar.
onnx::TensorProto FoldSize(const ValueType& in) {
  int64_t n = 1;
  for (int64_t d : in.dims) n *= d;
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_int64_data(n);
  return t;
}

size_t TensorBytes(const onnx::TensorProto& t) {
  size_t n = epctx_dtype_size(static_cast<epctx_dtype>(t.data_type()));
  for (int64_t d : t.dims()) n *= d < 0 ? 0 : size_t(d);
  return n;
}

// Why a fold of `inputs` bytes into `outputs` bytes would bloat the model,
// or "" when it is fine (fold.h, FoldLimits).
std::string TooBig(size_t outputs, size_t inputs, const FoldLimits& limits) {
  if (outputs > limits.max_output_bytes)
    return "output of " + std::to_string(outputs) + " bytes is above the fold limit of " +
           std::to_string(limits.max_output_bytes);
  if (outputs > limits.free_output_bytes && outputs > limits.max_growth * inputs)
    return "output of " + std::to_string(outputs) + " bytes is more than " +
           std::to_string(limits.max_growth) + "x its " + std::to_string(inputs) + " input bytes";
  return std::string();
}

}  // namespace

FoldResult FoldConstants(onnx::ModelProto& model, const FoldLimits& limits) {
  return FoldGraph(model, *model.mutable_graph(), BuildGraphInfo(model), limits);
}

FoldResult FoldGraph(onnx::ModelProto& model, onnx::GraphProto& graph, const GraphInfo& scope,
                     const FoldLimits& limits) {
  FoldResult result;
  std::set<std::string> graph_outputs;
  for (const auto& v : graph.output()) graph_outputs.insert(v.name());
  // Initializers are only appended to: the pointers stay valid.
  std::map<std::string, const onnx::TensorProto*> constants = scope.constants;
  std::map<std::string, ValueType> types = scope.types;
  NodeInputs lookup;
  lookup.type = [&types](const std::string& name) -> const ValueType* {
    auto it = types.find(name);
    return it == types.end() ? nullptr : &it->second;
  };
  lookup.constant = [&](const std::string& name) -> const onnx::TensorProto* {
    auto it = constants.find(name);
    return it == constants.end() ? nullptr : it->second;
  };

  Runtime runtime;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::vector<onnx::TensorProto> produced;
  for (auto& node : *graph.mutable_node()) {
    produced.clear();
    const std::string label = "node '" + node.name() + "' (" + node.op_type() + ")";
    const bool plain = IsDefaultDomain(node.domain()) && !HasSubgraph(node);
    // Outputs typed by this pass's folds, before whole-graph inference sees them.
    bool all_static = true;
    for (const auto& o : node.output())
      if (!o.empty() && !(types.count(o) && types[o].fully_static())) all_static = false;
    if (plain && !all_static) {
      std::vector<ValueType> inferred = InferNode(node, model, lookup);
      for (size_t i = 0; i < inferred.size(); ++i) {
        const std::string& o = node.output(int(i));
        if (o.empty() || inferred[i].dtype == 0) continue;
        ValueType& t = types[o];
        if (!t.fully_static() || t.dtype == 0) t = inferred[i];
      }
    }
    // A DequantizeLinear of a constant stays: folding it would store int8
    // weights as float32 (4x the bytes) and hide them from an int8 backend.
    bool candidate = plain && !kNonDeterministic.count(node.op_type()) && node.output_size() > 0 &&
                     node.op_type() != "DequantizeLinear";
    for (const auto& o : node.output())
      if (graph_outputs.count(o)) candidate = false;
    bool all_const = node.input_size() > 0;
    size_t input_bytes = 0;
    for (const auto& in : node.input()) {
      if (in.empty()) continue;
      if (!constants.count(in)) all_const = false;
      else input_bytes += TensorBytes(*constants[in]);
    }
    const ValueType* in0 = node.input_size() == 1 ? lookup.type(node.input(0)) : nullptr;

    if (candidate && (node.op_type() == "Shape" || node.op_type() == "Size") && in0 &&
        in0->fully_static()) {
      produced.push_back(node.op_type() == "Shape" ? FoldShape(node, *in0) : FoldSize(*in0));
    } else if (candidate && all_const) {
      // Evaluate with the runtime: a one-node model, inputs as initializers.
      onnx::ModelProto m;
      m.set_ir_version(model.ir_version());
      *m.mutable_opset_import() = model.opset_import();
      onnx::GraphProto* g = m.mutable_graph();
      g->set_name("fold");
      *g->add_node() = node;
      std::set<std::string> added;
      for (const auto& in : node.input())
        if (!in.empty() && added.insert(in).second) *g->add_initializer() = *constants[in];
      std::string why;
      size_t expected_bytes = 0;
      for (const auto& o : node.output()) {
        auto it = types.find(o);
        if (o.empty() || it == types.end() || it->second.dtype == 0) {
          why = "output type unknown";
          break;
        }
        const size_t element_bytes = epctx_dtype_size(static_cast<epctx_dtype>(it->second.dtype));
        if (element_bytes == 0) {
          why = "output type not foldable";
          break;
        }
        onnx::ValueInfoProto* vi = g->add_output();
        vi->set_name(o);
        *vi->mutable_type() = TypeProtoOf(it->second);
        if (it->second.fully_static()) {
          size_t n = element_bytes;
          for (int64_t d : it->second.dims) n *= size_t(d);
          expected_bytes += n;
        }
      }
      if (why.empty()) why = TooBig(expected_bytes, input_bytes, limits);
      std::vector<epctx_tensor*> outs;
      if (why.empty() && !runtime.Run(m.SerializeAsString(), node.output_size(), &outs, &why))
        why = "runtime: " + why;
      size_t got_bytes = 0;
      for (epctx_tensor* t : outs)
        if (t) got_bytes += epctx_tensor_bytes(t);
      if (why.empty()) why = TooBig(got_bytes, input_bytes, limits);
      for (size_t i = 0; i < outs.size(); ++i) {
        epctx_tensor* t = outs[i];
        if (!t) {
          if (why.empty()) why = "runtime returned no output";
          continue;
        }
        if (why.empty()) {
          onnx::TensorProto p;
          p.set_data_type(epctx_tensor_dtype(t));
          const int64_t* dims = epctx_tensor_dims(t);
          for (size_t k = 0; k < epctx_tensor_rank(t); ++k) p.add_dims(dims[k]);
          p.set_raw_data(epctx_tensor_data(t), epctx_tensor_bytes(t));
          produced.push_back(std::move(p));
        }
        epctx_tensor_release(t);
      }
      if (!why.empty()) {
        ++result.skipped;
        result.notes.push_back("fold: " + label + " kept: " + why);
        produced.clear();
      }
    }

    if (produced.empty() || produced.size() != static_cast<size_t>(node.output_size())) {
      *kept.Add() = std::move(node);
      continue;
    }
    for (int i = 0; i < node.output_size(); ++i) {
      produced[i].set_name(node.output(i));
      types[node.output(i)] = TypeOf(produced[i]);
      onnx::TensorProto* t = graph.add_initializer();
      *t = std::move(produced[i]);
      constants[node.output(i)] = t;
    }
    ++result.folded;
  }
  graph.mutable_node()->Swap(&kept);
  return result;
}

size_t DropUnusedInitializers(onnx::GraphProto& graph) {
  std::set<std::string> used;
  for (const auto& n : graph.node())
    for (const auto& in : NodeReads(n)) used.insert(in);
  for (const auto& v : graph.input()) used.insert(v.name());
  for (const auto& v : graph.output()) used.insert(v.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  size_t dropped = 0;
  for (auto& t : *graph.mutable_initializer()) {
    if (used.count(t.name())) *kept.Add() = std::move(t);
    else ++dropped;
  }
  graph.mutable_initializer()->Swap(&kept);
  return dropped;
}

}  // namespace host
}  // namespace epctx
