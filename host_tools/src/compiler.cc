// The epctx-compile pipeline, one call per stage file.
#include "epctx_host/compiler.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include <onnx/checker.h>

#include "epctx_host/backend.h"
#include "epctx_host/container_writer.h"
#include "epctx_host/ctx_model.h"
#include "epctx_host/model_io.h"
#include "epctx_host/partition.h"

namespace epctx {
namespace host {
namespace {

std::string Label(const onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

void RejectCompiledInput(const onnx::ModelProto& model, const std::string& file) {
  for (const auto& n : model.graph().node())
    if (n.op_type() == "EPContext")
      throw ToolError(file, "already compiled: " + Label(n) +
                                " is an EPContext node; compile the source model instead");
}

}  // namespace

CompileSummary CompileFile(const CompileOptions& options, const Progress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string& in = options.input_path;
  if (in.empty()) throw std::invalid_argument("no input model given");
  if (options.embed_mode != 0 && options.embed_mode != 1)
    throw std::invalid_argument("--embed-mode must be 0 or 1");
  CompileSummary s;
  s.ep = options.ep;
  s.output_path = options.output_path.empty() ? DefaultOutputPath(in) : options.output_path;
  if (PathBaseName(s.output_path).empty())
    throw ToolError(s.output_path, "output path names a folder, not a file");
  if (s.output_path == in) throw ToolError(s.output_path, "output would overwrite the input model");
  // Fail before compiling, so an existing model (and its .bin) stays as is.
  if (!options.force && FileExists(s.output_path))
    throw ToolError(s.output_path, "exists already (remove it or pass --force)");

  std::unique_ptr<Backend> backend;
  if (options.ep != "none") {
    backend = CreateBackend(options.ep);
    if (!backend)
      throw std::invalid_argument("--ep: unknown backend '" + options.ep +
                                  "' (this build has: " +
                                  (CreateBackend("vnpu") ? "vnpu, " : "") + "none)");
  }

  // 1. load
  onnx::ModelProto model = LoadModel(in);
  RejectCompiledInput(model, in);
  progress("load: " + in + ": " + std::to_string(model.graph().node_size()) + " nodes, " +
           std::to_string(model.graph().initializer_size()) + " initializers");

  // 2. specialise
  SpecializeOptions sopt;
  sopt.input_shapes = options.input_shapes;
  Specialize(model, sopt, in, progress);
  const GraphInfo info = BuildGraphInfo(model);

  // 3. partition
  PartitionPlan plan = PlanPartitions(info, backend.get());
  const std::string stem = PathStem(in);
  std::vector<Partition> partitions;
  if (backend) {
    for (int i = 0; i < model.graph().node_size(); ++i)
      if (!plan.support[i].supported)
        progress(Label(model.graph().node(i)) + ": CPU — " + backend->name() + ": " +
                 plan.support[i].reason);
    partitions = MakePartitions(info, plan, stem + "_" + backend->name());
  }
  s.nodes_total = model.graph().node_size();
  for (const auto& p : partitions) s.nodes_npu += p.nodes.size();
  s.nodes_cpu = s.nodes_total - s.nodes_npu;
  s.partitions = partitions.size();
  progress("partition: " + std::to_string(s.partitions) + " partitions, " +
           std::to_string(s.nodes_npu) + " nodes on " + options.ep + ", " +
           std::to_string(s.nodes_cpu) + " on CPU");

  // 4. compile
  WeightStore weights;
  std::vector<CompiledGraph> graphs;
  for (const auto& p : partitions) {
    try {
      CompiledGraph g = backend->Compile(p, info, weights);
      g.name = p.name;
      progress("compile: " + p.name + ": " + std::to_string(p.nodes.size()) + " nodes, " +
               std::to_string(g.payload.size()) + " payload bytes");
      graphs.push_back(std::move(g));
    } catch (const CompileError& e) {
      throw ToolError(in, "partition '" + p.name + "': " + e.what());
    }
  }

  // 5. pack
  std::vector<uint8_t> container;
  CtxModelOptions copt;
  copt.embed_mode = options.embed_mode;
  copt.backend = backend.get();
  copt.onnx_model_filename = PathBaseName(in);
  if (!partitions.empty()) {
    ContainerStats cs;
    container = PackContainer(*backend, weights, graphs, &cs);
    s.payload_bytes = cs.payload_bytes;
    s.weight_bytes = cs.weight_bytes;
    copt.container = &container;
    copt.bin_file_name = stem + "_" + backend->name() + ".bin";
    progress("pack: " + std::to_string(container.size()) + " container bytes");
    if (options.embed_mode == 0) {
      s.binary_path = PathDir(s.output_path) + copt.bin_file_name;
      WriteFileAtomic(s.binary_path, container.data(), container.size());
    }
  } else if (backend) {
    progress("no node runs on " + backend->name() + ": the output has no EPContext node");
  }

  // 6. write
  onnx::ModelProto ctx = BuildCtxModel(model, info, partitions, copt);
  try {
    onnx::checker::check_model(ctx);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw ToolError(s.output_path,
                    "generated model fails the ONNX checker: " + what.substr(0, what.find('\n')));
  }
  size_t payload_offset = 0;
  const std::string bytes = SerializeCtxModel(ctx, copt, &payload_offset);
  WriteFileAtomic(s.output_path, bytes.data(), bytes.size());
  progress("write: " + s.output_path + " (" + std::to_string(bytes.size()) + " bytes" +
           (options.embed_mode == 1 && !container.empty()
                ? ", payload at offset " + std::to_string(payload_offset)
                : std::string()) +
           ")" + (s.binary_path.empty() ? std::string() : ", " + s.binary_path));

  s.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count();
  return s;
}

std::string FormatSummary(const CompileSummary& s) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", s.compile_ms);
  std::ostringstream o;
  o << s.output_path << ": nodes " << s.nodes_total << " total, " << s.nodes_npu << " on "
    << s.ep << ", " << s.nodes_cpu << " on CPU; " << s.partitions << " partitions; payload "
    << s.payload_bytes << " bytes; weights " << s.weight_bytes << " bytes; " << ms << " ms";
  return o.str();
}

}  // namespace host
}  // namespace epctx
