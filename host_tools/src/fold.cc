// SPDX-License-Identifier: Apache-2.0
// Constant folding through the epctx runtime's public C API.
#include "epctx_host/fold.h"

#include <map>
#include <memory>
#include <set>

#include <epctx/epctx.h>

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

}  // namespace

FoldResult FoldConstants(onnx::ModelProto& model, size_t max_output_bytes,
                         const Progress& progress) {
  FoldResult result;
  onnx::GraphProto& graph = *model.mutable_graph();
  std::set<std::string> graph_inputs, graph_outputs;
  for (const auto& v : graph.input()) graph_inputs.insert(v.name());
  for (const auto& v : graph.output()) graph_outputs.insert(v.name());
  // name -> index into graph.initializer (only appended to: indices stay).
  std::map<std::string, int> constants;
  for (int i = 0; i < graph.initializer_size(); ++i)
    if (!graph_inputs.count(graph.initializer(i).name()))
      constants[graph.initializer(i).name()] = i;
  std::map<std::string, ValueType> types = std::move(BuildGraphInfo(model).types);

  Runtime runtime;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::vector<onnx::TensorProto> produced;
  for (auto& node : *graph.mutable_node()) {
    produced.clear();
    const std::string label = "node '" + node.name() + "' (" + node.op_type() + ")";
    // A DequantizeLinear of a constant stays: folding it would store int8
    // weights as float32 (4x the bytes) and hide them from an int8 backend.
    bool candidate = IsDefaultDomain(node.domain()) && !HasSubgraph(node) &&
                     !kNonDeterministic.count(node.op_type()) && node.output_size() > 0 &&
                     node.op_type() != "DequantizeLinear";
    for (const auto& o : node.output())
      if (graph_outputs.count(o)) candidate = false;
    bool all_const = node.input_size() > 0;
    for (const auto& in : node.input())
      if (!in.empty() && !constants.count(in)) all_const = false;

    if (candidate && node.op_type() == "Shape" && node.input_size() == 1 &&
        types.count(node.input(0)) && types[node.input(0)].fully_static()) {
      produced.push_back(FoldShape(node, types[node.input(0)]));
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
        if (!in.empty() && added.insert(in).second)
          *g->add_initializer() = graph.initializer(constants[in]);
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
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(it->second.dtype);
        if (it->second.fully_static()) {
          size_t n = element_bytes;
          for (int64_t d : it->second.dims) {
            tt->mutable_shape()->add_dim()->set_dim_value(d);
            n *= d;
          }
          expected_bytes += n;
        }
      }
      if (why.empty() && expected_bytes > max_output_bytes)
        why = "output larger than the fold limit";
      std::vector<epctx_tensor*> outs;
      if (why.empty() && !runtime.Run(m.SerializeAsString(), node.output_size(), &outs, &why))
        why = "runtime: " + why;
      for (size_t i = 0; i < outs.size(); ++i) {
        epctx_tensor* t = outs[i];
        if (!t) {
          if (why.empty()) why = "runtime returned no output";
          continue;
        }
        if (why.empty()) {
          size_t bytes = epctx_tensor_bytes(t);
          if (bytes > max_output_bytes) {
            why = "output larger than the fold limit";
          } else {
            onnx::TensorProto p;
            p.set_data_type(epctx_tensor_dtype(t));
            const int64_t* dims = epctx_tensor_dims(t);
            for (size_t k = 0; k < epctx_tensor_rank(t); ++k) p.add_dims(dims[k]);
            p.set_raw_data(epctx_tensor_data(t), bytes);
            produced.push_back(std::move(p));
          }
        }
        epctx_tensor_release(t);
      }
      if (!why.empty()) {
        ++result.skipped;
        progress("fold: " + label + " kept: " + why);
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
      constants[node.output(i)] = graph.initializer_size();
      *graph.add_initializer() = std::move(produced[i]);
    }
    ++result.folded;
  }
  graph.mutable_node()->Swap(&kept);
  return result;
}

}  // namespace host
}  // namespace epctx
