// SPDX-License-Identifier: Apache-2.0
// The per-model pipeline of the compile library, one call per stage file:
// load (model_io), specialise, partition, compile (the backend), pack
// (container_writer), write (ctx_model).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

#include <onnx/checker.h>

#include "epctx_host/container_writer.h"
#include "epctx_host/dead_taps.h"
#include "epctx_host/fuse_conv_act.h"
#include "epctx_host/fuse_swish.h"
#include "epctx_host/inference_noops.h"
#include "epctx_host/lstm_unroll.h"
#include "epctx_host/ctx_model.h"
#include "epctx_host/macs.h"
#include "epctx_host/model_io.h"
#include "epctx_host/fuse_norm_gelu.h"
#include "epctx_host/fuse_qdq.h"
#include "epctx_host/fuse_qdq_matmul.h"
#include "epctx_host/noop_casts.h"
#include "epctx_host/transpose_dq.h"
#include "epctx_host/partition.h"
#include "bodies.h"
#include "external_initializers.h"
#include "pipeline.h"

namespace epctx {
namespace host {
namespace {

std::string Label(const onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

void RejectCompiledInput(const onnx::ModelProto& model, const std::string& file) {
  for (const auto& n : model.graph().node())
    if (n.op_type() == "EPContext")
      throw ToolError(file,
                      "Encountered an invalid node while compiling a model: " + Label(n) +
                          " is an EPContext node. Please ensure the input model is not already "
                          "compiled (compile the source model instead)",
                      EPCTX_INVALID_GRAPH);
}

std::string Shape(const GraphInfo& info, const std::string& name) {
  std::string s = name + "[";
  if (const ValueType* t = info.type(name)) {
    for (size_t i = 0; i < t->dims.size(); ++i)
      s += (i ? "," : "") + (t->dims[i] < 0 ? std::string("?") : std::to_string(t->dims[i]));
  } else {
    s += "?";
  }
  return s + "]";
}

std::string ShapeList(const GraphInfo& info, const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : " ") + Shape(info, n);
  return s;
}

// mkdir -p of the output's folder, so outputs in new subfolders work.
void MakeParentDirs(const std::string& path) {
  const std::string dir = PathDir(path);
  for (size_t i = 1; i < dir.size(); ++i) {
    if (dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      throw ToolError(path, "cannot create folder " + part + ": " + std::strerror(errno));
  }
}

void WriteOut(const std::string& path, const void* data, size_t size, CompileResult* result) {
  WriteFileAtomic(path, data, size);
  result->files_written.push_back(path);
}

// The most partitions one run of `g` executes: its own, plus per If the
// larger branch and per Loop/Scan its body (one iteration).
size_t PartitionsPerRun(const onnx::GraphProto& g,
                        const std::map<const onnx::GraphProto*, size_t>& own) {
  auto it = own.find(&g);
  size_t n = it == own.end() ? 0 : it->second;
  for (const auto& node : g.node()) {
    const bool branches = node.op_type() == "If" && IsDefaultDomain(node.domain());
    size_t most = 0;
    for (const auto& a : node.attribute()) {
      size_t k = a.has_g() ? PartitionsPerRun(a.g(), own) : 0;
      for (const auto& sub : a.graphs()) k += PartitionsPerRun(sub, own);
      if (branches) most = std::max(most, k);
      else n += k;
    }
    n += most;
  }
  return n;
}

// Fills the report's MAC counts, partition contents and CPU node reasons.
void Account(const GraphInfo& info, const std::vector<Partition>& partitions,
             const PartitionPlan& plan, const Backend* backend, ModelReport* rep) {
  const onnx::GraphProto& g = *info.graph;
  for (const auto& n : g.node()) {
    const MacCount m = NodeMacs(n, info);
    rep->macs_total += m.macs;
    if (!m.known) ++rep->macs_unknown_nodes;
  }
  for (const auto& p : partitions) {
    PartitionReport pr;
    pr.name = p.name;
    pr.nodes = p.nodes.size();
    for (const onnx::NodeProto* n : p.nodes) {
      ++pr.op_types[n->op_type()];
      const MacCount m = NodeMacs(*n, info);
      pr.macs += m.macs;
      if (!m.known) ++pr.macs_unknown_nodes;
    }
    rep->macs_npu += pr.macs;
    rep->partition_reports.push_back(std::move(pr));
  }
  for (int i = 0; i < g.node_size(); ++i) {
    if (plan.support[size_t(i)].supported) continue;
    const onnx::NodeProto& n = g.node(i);
    CpuNodeReport c;
    c.name = n.name();
    if (n.output_size() > 0) c.output = n.output(0);
    c.op_type = n.op_type();
    c.reason = backend ? backend->name() + ": " + plan.support[size_t(i)].reason
                       : plan.support[size_t(i)].reason;
    const MacCount m = NodeMacs(n, info);
    c.macs = m.macs;
    c.macs_known = m.known;
    rep->macs_cpu += m.macs;
    rep->cpu_nodes.push_back(std::move(c));
  }
}

// Nothing for the backend: the model as --ep none writes it (CPU fusions,
// LSTMs whole), with the backend's reasons for its CPU nodes and a warning.
void WriteCpuOnly(const ModelInput& input, const CompileSettings& settings, const GenOptions& gen,
                  const OutputPlan& plan, const ModelReport& attempt,
                  std::chrono::steady_clock::time_point t0, CompileResult* result) {
  CompileSettings none = settings;
  none.ep = "none";
  none.progress = Progress();  // the backend's pass already printed the stages
  CompileResult cpu;
  CompileOneModel(input, none, gen, plan, nullptr, &cpu);
  ModelReport rep = std::move(cpu.models.at(0));
  std::map<std::string, const CpuNodeReport*> why;
  for (const CpuNodeReport& c : attempt.cpu_nodes)
    if (!c.output.empty()) why[c.output] = &c;
  for (CpuNodeReport& c : rep.cpu_nodes) {
    auto it = why.find(c.output);
    if (it != why.end()) c.reason = it->second->reason;
  }
  rep.message = "no node can run on " + settings.ep + ": every node runs on the CPU";
  rep.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  settings.progress(
      "write: " + (settings.output_to_memory ? std::string("memory") : plan.output_path) + " (" +
      std::to_string(rep.model_bytes) + " bytes, no EPContext node)");
  for (auto& f : cpu.files_written) result->files_written.push_back(std::move(f));
  result->models.push_back(std::move(rep));
}

}  // namespace

std::unique_ptr<SharedBinary> MakeSharedBinary(const CompileSettings& settings,
                                               const OutputPlan& first) {
  auto bin = std::unique_ptr<SharedBinary>(new SharedBinary);
  bin->ep = settings.ep;
  bin->backend_options = settings.backend_options;
  bin->backend = CreateBackend(settings.ep);
  if (!bin->backend) {
    std::string have;
    for (const std::string& n : BackendNames()) have += n + ", ";
    throw ToolError("backend",
                    "unknown backend '" + settings.ep + "' (this build has: " + have + "none)",
                    EPCTX_INVALID_ARGUMENT);
  }
  for (const auto& kv : settings.backend_options) {
    try {
      bin->backend->SetOption(kv.first, kv.second);
    } catch (const CompileError& e) {
      throw ToolError("backend options", e.what(), EPCTX_INVALID_ARGUMENT);
    }
  }
  bin->bin_name = first.bin_name;
  bin->bin_path = first.bin_path;
  return bin;
}

void CompileOneModel(const ModelInput& input, const CompileSettings& settings,
                     const GenOptions& gen, const OutputPlan& plan, SharedBinary* bin,
                     CompileResult* result) {
  const auto t0 = std::chrono::steady_clock::now();
  const Progress& progress = settings.progress;
  const std::string& in = input.name;
  ModelReport rep;
  rep.input = in;

  // 1. load
  onnx::ModelProto model = input.in_memory()
                               ? LoadModelFromBuffer(input.bytes, in, gen.external_folder)
                               : LoadModel(input.path);
  RejectCompiledInput(model, in);
  progress("load: " + in + ": " + std::to_string(model.graph().node_size()) + " nodes, " +
           std::to_string(model.graph().initializer_size()) + " initializers");

  // 2. specialise
  SpecializeOptions sopt;
  sopt.input_shapes = settings.input_shapes;
  sopt.input_values = settings.input_values;
  Specialize(model, sopt, in, progress);
  if (size_t n = DropNoopCasts(model))
    progress("specialise: " + std::to_string(n) +
             " Cast nodes to their input's own type removed (QuantizeLinear -> Cast -> "
             "DequantizeLinear)");
  if (size_t n = DropInferenceNoops(model))
    progress("specialise: " + std::to_string(n) +
             " inference no-ops removed (Dropout without training or with ratio 0, Pad of zeros)");
  if (size_t n = TransposeDequantizedConstants(model))
    progress("specialise: " + std::to_string(n) +
             " Transposes of dequantised constant weights moved onto the integers "
             "(DequantizeLinear -> Transpose -> MatMul)");
  if (size_t n = TrimDeadTaps(*model.mutable_graph(), BuildGraphInfo(model)))
    progress("specialise: " + std::to_string(n) +
             " Conv nodes lost kernel taps that only read padding");
  if (bin) {
    // A backend takes an unrolled LSTM's MACs; the CPU runs LSTM whole.
    if (size_t n = UnrollLstms(*model.mutable_graph(), BuildGraphInfo(model))) {
      InferShapes(model, in);
      progress("specialise: " + std::to_string(n) +
               " LSTM nodes unrolled into MatMul/Add/Mul/"
               "Sigmoid/Tanh steps");
    }
  }
  // The CPU runs the whole graph: its convolutions clamp their own output.
  if (!bin) {
    if (size_t n = FuseQdqConvs(model))
      progress("specialise: " + std::to_string(n) +
               " QDQ convolutions fused into QLinearConv (DequantizeLinear -> Conv -> "
               "QuantizeLinear)");
    if (size_t n = FuseQdqMatMuls(model))
      progress("specialise: " + std::to_string(n) +
               " QDQ MatMul/Gemm layers fused into com.microsoft QGemm (DequantizeLinear -> "
               "MatMul -> Add bias -> QuantizeLinear)");
    if (size_t n = FuseConvActivations(model))
      progress("specialise: " + std::to_string(n) +
               " Conv nodes fused with their Relu or Clip (com.microsoft FusedConv)");
    if (size_t n = FuseSwish(model))
      progress("specialise: " + std::to_string(n) +
               " x * Sigmoid(x) pairs fused (com.microsoft QuickGelu, alpha 1)");
    if (size_t n = FuseNormGelu(model))
      progress("specialise: " + std::to_string(n) +
               " decomposed LayerNorms and GELUs fused (LayerNormalization, com.microsoft Gelu)");
  }
  const GraphInfo info = BuildGraphInfo(model);

  // 3. partition
  Backend* backend = bin ? bin->backend.get() : nullptr;
  PartitionPlan pplan = PlanPartitions(info, backend);
  std::vector<Partition> partitions;
  std::vector<BodyPlan> bodies;  // If/Loop/Scan bodies, innermost first
  if (backend) {
    for (int i = 0; i < model.graph().node_size(); ++i)
      if (!pplan.support[i].supported)
        progress(Label(model.graph().node(i)) + ": CPU — " + backend->name() + ": " +
                 pplan.support[i].reason);
    const std::string prefix = gen.prefix + plan.model_name + "_" + backend->name();
    partitions = MakePartitions(info, pplan, prefix);
    size_t next_index = partitions.size();
    PlanBodies(*model.mutable_graph(), info, backend, prefix, &next_index, &bodies);
    std::vector<const Partition*> all;
    all.reserve(partitions.size());
    for (const auto& p : partitions) all.push_back(&p);
    for (const auto& bp : bodies) {
      for (const auto& p : bp.partitions) all.push_back(&p);
      for (int i = 0; i < bp.body->node_size(); ++i)
        if (!bp.plan.support[size_t(i)].supported)
          progress(Label(bp.body->node(i)) + " in " + bp.label + ": CPU — " + backend->name() +
                   ": " + bp.plan.support[size_t(i)].reason);
    }
    for (const Partition* pp : all) {
      const Partition& p = *pp;
      auto it = bin->graph_owner.find(p.name);
      if (it != bin->graph_owner.end())
        throw ToolError(in,
                        "graph name '" + p.name + "' is already used by " + it->second +
                            " in the shared context binary: give the models different file "
                            "names or set ep.context_node_name_prefix",
                        EPCTX_INVALID_ARGUMENT);
    }
  }
  rep.nodes_total = model.graph().node_size();
  for (const auto& p : partitions) {
    rep.nodes_npu += p.nodes.size();
    rep.partition_names.push_back(p.name);
  }
  Account(info, partitions, pplan, backend, &rep);
  // Body nodes count once each (not per iteration), like top-level ones.
  for (const auto& bp : bodies) {
    rep.nodes_total += bp.body->node_size();
    for (const auto& p : bp.partitions) {
      rep.nodes_npu += p.nodes.size();
      rep.partition_names.push_back(p.name);
    }
    Account(bp.info, bp.partitions, bp.plan, backend, &rep);
  }
  std::vector<std::pair<const Partition*, const GraphInfo*>> to_compile;
  to_compile.reserve(partitions.size());
  for (const auto& p : partitions) to_compile.emplace_back(&p, &info);
  for (const auto& bp : bodies)
    for (const auto& p : bp.partitions) to_compile.emplace_back(&p, &bp.info);
  for (const auto& pr : rep.partition_reports) {
    std::string ops;
    for (const auto& kv : pr.op_types)
      ops += (ops.empty() ? "" : ", ") + kv.first + " x" + std::to_string(kv.second);
    progress("partition " + pr.name + ": " + std::to_string(pr.nodes) + " nodes (" + ops + "), " +
             std::to_string(pr.macs) + " MACs");
  }
  rep.nodes_cpu = rep.nodes_total - rep.nodes_npu;
  rep.partitions = to_compile.size();
  {
    std::map<const onnx::GraphProto*, size_t> own = {{&model.graph(), partitions.size()}};
    for (const auto& bp : bodies) own[bp.body] = bp.partitions.size();
    rep.partitions_per_run = PartitionsPerRun(model.graph(), own);
  }
  progress("partition: " + std::to_string(rep.partitions) + " partitions, " +
           std::to_string(rep.nodes_npu) + " nodes on " + settings.ep + ", " +
           std::to_string(rep.nodes_cpu) + " on CPU; " + std::to_string(rep.macs_npu) + " of " +
           std::to_string(rep.macs_total) + " MACs on " + settings.ep +
           (rep.macs_unknown_nodes
                ? " (" + std::to_string(rep.macs_unknown_nodes) + " nodes with unknown MACs)"
                : std::string()));

  if (to_compile.empty() && backend) {
    if (settings.if_no_compiled_nodes == IfNoCompiledNodes::kError)
      throw ToolError(in,
                      "Unable to compile any nodes: no node can run on " + backend->name() +
                          " (without --quiet a note per node says why); no model written",
                      EPCTX_FAIL);
    WriteCpuOnly(input, settings, gen, plan, rep, t0, result);
    return;
  }

  // 4. compile, into the (possibly shared) weight store
  std::vector<CompiledGraph> graphs;
  for (size_t k = 0; k < to_compile.size(); ++k) {
    const Partition& p = *to_compile[k].first;
    const GraphInfo& pinfo = *to_compile[k].second;
    progress("compile: partition " + std::to_string(k + 1) + "/" +
             std::to_string(to_compile.size()) + " " + p.name + ": " +
             std::to_string(p.nodes.size()) + " nodes, in " + ShapeList(pinfo, p.inputs) +
             ", out " + ShapeList(pinfo, p.outputs));
    const uint64_t before = bin->weights.bytes_added();
    try {
      CompiledGraph g = backend->Compile(p, pinfo, bin->weights);
      g.name = p.name;
      const uint64_t w = bin->weights.bytes_added() - before;
      rep.weight_bytes += w;
      rep.payload_bytes += g.payload.size();
      progress("compile: " + p.name + ": " + std::to_string(g.payload.size()) + " payload bytes, " +
               std::to_string(w) + " weight bytes (segment now " +
               std::to_string(bin->weights.bytes().size()) + " bytes)");
      graphs.push_back(std::move(g));
    } catch (const CompileError& e) {
      throw ToolError(in, "partition '" + p.name + "': " + e.what(), EPCTX_EP_FAIL);
    }
  }

  // 5. pack (embed mode 1: this model's graphs only; 0: FinishBinary later)
  std::vector<uint8_t> container;
  CtxModelOptions copt;
  copt.embed_mode = gen.embed_mode;
  copt.backend = backend;
  copt.onnx_model_filename = input.in_memory() ? std::string() : PathBaseName(input.path);
  if (!to_compile.empty()) copt.main_partition = to_compile[0].first->name;
  if (!graphs.empty()) {
    copt.bin_file_name = bin->bin_name;
    if (gen.embed_mode == 1) {
      ContainerStats cs;
      container = PackContainer(*backend, bin->weights, graphs, &cs);
      copt.container = &container;
      result->weight_bytes_before_dedup += bin->weights.bytes_added();
      result->weight_bytes_after_dedup += bin->weights.bytes_unique();
      result->weight_segment_bytes += cs.weight_bytes;
      result->payload_bytes += cs.payload_bytes;
      progress("pack: " + std::to_string(container.size()) + " container bytes (embedded)");
    }
  }

  // 6. write
  RewriteBodies(bodies, copt);
  onnx::ModelProto ctx = BuildCtxModel(model, info, partitions, copt);
  try {
    onnx::checker::check_model(ctx);
  } catch (const std::exception& e) {
    throw ToolError(plan.output_path,
                    "generated model fails the ONNX checker: " + OneLine(e.what()), EPCTX_FAIL);
  }
  if (!plan.output_path.empty()) MakeParentDirs(plan.output_path);
  if (!plan.external_initializers_path.empty()) {
    const std::string data = ExternalizeInitializers(ctx, gen.external_initializers_file);
    WriteOut(plan.external_initializers_path, data.data(), data.size(), result);
    progress("write: " + plan.external_initializers_path + " (" + std::to_string(data.size()) +
             " bytes of initializers)");
  }
  size_t payload_offset = 0;
  std::string bytes = SerializeCtxModel(ctx, copt, &payload_offset);
  const std::string where = settings.output_to_memory ? "memory" : plan.output_path;
  if (!settings.output_to_memory) WriteOut(plan.output_path, bytes.data(), bytes.size(), result);
  progress("write: " + where + " (" + std::to_string(bytes.size()) + " bytes" +
           (!container.empty() ? ", payload at offset " + std::to_string(payload_offset)
                               : std::string()) +
           ")");
  for (auto& g : graphs) {
    bin->graph_owner[g.name] = in;
    // Embed mode 1 packed them above; otherwise FinishBinary packs them all.
    if (gen.embed_mode != 1) bin->graphs.push_back(std::move(g));
  }
  rep.written = true;
  rep.model_bytes = bytes.size();
  if (settings.output_to_memory) rep.model_data = std::move(bytes);
  else rep.output_path = plan.output_path;
  rep.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  result->models.push_back(rep);
}

void FinishBinary(SharedBinary& bin, const Progress& progress, CompileResult* result) {
  if (bin.graphs.empty()) return;
  ContainerStats cs;
  std::vector<uint8_t> container = PackContainer(*bin.backend, bin.weights, bin.graphs, &cs);
  MakeParentDirs(bin.bin_path);
  WriteOut(bin.bin_path, container.data(), container.size(), result);
  result->binary_path = bin.bin_path;
  result->binary_bytes = container.size();
  result->weight_bytes_before_dedup = bin.weights.bytes_added();
  result->weight_bytes_after_dedup = bin.weights.bytes_unique();
  result->weight_segment_bytes = cs.weight_bytes;
  result->payload_bytes = cs.payload_bytes;
  progress("pack: " + bin.bin_path + ": " + std::to_string(bin.graphs.size()) + " graphs, " +
           std::to_string(container.size()) + " bytes; weights " +
           std::to_string(bin.weights.bytes_added()) + " bytes before dedup, " +
           std::to_string(bin.weights.bytes_unique()) + " after (segment " +
           std::to_string(cs.weight_bytes) + " bytes)");
}

}  // namespace host
}  // namespace epctx
