// SPDX-License-Identifier: Apache-2.0
// ORT's compile API through epctx's compile library (compile_path.h).
#include "compile_path.h"

#include <fstream>
#include <map>
#include <set>

#include "epctx_host/compile_api.h"
#include "onnx_from_ort.h"

namespace epctx {
namespace ort_ep {
namespace {

// The host compile of a model in memory: embedded context, model returned
// in memory, nothing written.
OrtStatus* CompileInMemory(const OrtApi& api, const onnx::ModelProto& model,
                           const std::string& prefix, host::ModelReport* report,
                           onnx::ModelProto* ctx) {
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return api.CreateStatus(ORT_FAIL, "epctx: cannot serialize the graph");
  host::CompileSettings settings;
  settings.config = {{"ep.context_embed_mode", "1"}};
  if (!prefix.empty()) settings.config.emplace_back("ep.context_node_name_prefix", prefix);
  settings.output_to_memory = true;
  settings.force = true;
  host::CompileResult r =
      host::CompileModel(host::ModelInput::FromBuffer(bytes, "<ort graph>"), settings);
  if (!r.ok()) return MakeStatus(api, r.status.code, "epctx: " + r.status.message);
  if (r.models.size() != 1 || !ctx->ParseFromString(r.models[0].model_data))
    return api.CreateStatus(ORT_FAIL, "epctx: the compile library returned no model");
  *report = r.models[0];
  return nullptr;
}

bool IsEpContext(const onnx::NodeProto& n) {
  return n.op_type() == "EPContext" && n.domain() == "com.microsoft";
}

}  // namespace

OrtStatus* ClaimCompilable(const OrtApi& api, const OrtEpApi& ep_api, const OrtGraph* graph,
                           OrtEpGraphSupportInfo* support) {
  onnx::ModelProto model;
  OrtStatus* st = GraphToModel(api, graph, &model);
  if (st) {  // not convertible: everything stays with ORT
    api.ReleaseStatus(st);
    return nullptr;
  }
  host::ModelReport report;
  onnx::ModelProto ctx;
  st = CompileInMemory(api, model, "", &report, &ctx);
  if (st) {
    api.ReleaseStatus(st);
    return nullptr;
  }
  size_t num = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumNodes(graph, &num));
  std::vector<const OrtNode*> nodes(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNodes(graph, nodes.data(), num));
  const onnx::GraphProto& g = model.graph();
  // Nodes the backend left on the CPU, by name or first output.
  std::set<std::string> cpu;
  for (const host::CpuNodeReport& c : report.cpu_nodes) {
    if (!c.name.empty()) cpu.insert("n:" + c.name);
    if (!c.output.empty()) cpu.insert("o:" + c.output);
  }
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string& o : g.node(i).output()) producer[o] = i;
  for (const onnx::NodeProto& p : ctx.graph().node()) {
    if (!IsEpContext(p)) continue;
    // The original nodes between the partition's inputs and outputs.
    std::set<std::string> stop(p.input().begin(), p.input().end());
    std::vector<std::string> todo(p.output().begin(), p.output().end());
    std::set<int> members;
    bool ok = true;
    while (!todo.empty() && ok) {
      std::string v = todo.back();
      todo.pop_back();
      auto it = producer.find(v);
      if (stop.count(v) || it == producer.end() || members.count(it->second)) continue;
      const onnx::NodeProto& n = g.node(it->second);
      if ((!n.name().empty() && cpu.count("n:" + n.name())) ||
          (n.output_size() && cpu.count("o:" + n.output(0))))
        ok = false;
      members.insert(it->second);
      for (const std::string& in : n.input())
        if (!in.empty()) todo.push_back(in);
    }
    if (!ok || members.empty()) continue;
    std::vector<const OrtNode*> group;
    group.reserve(members.size());
    for (int i : members) group.push_back(nodes[static_cast<size_t>(i)]);
    OrtNodeFusionOptions fusion{};
    fusion.ort_version_supported = ORT_API_VERSION;
    fusion.drop_constant_initializers = true;  // the weights go into the context
    EPCTX_ORT_RETURN_IF_ERROR(
        ep_api.EpGraphSupportInfo_AddNodesToFuse(support, group.data(), group.size(), &fusion));
  }
  return nullptr;
}

OrtStatus* CompilePartition(const OrtApi& api, const OrtGraph* graph, bool emit,
                            const std::string& bin_path, const std::string& fused_name,
                            CompiledPartition* out, OrtNode** ep_context_node) {
  onnx::ModelProto model;
  EPCTX_ORT_RETURN_IF_ERROR(GraphToModel(api, graph, &model));
  host::ModelReport report;
  onnx::ModelProto ctx;
  EPCTX_ORT_RETURN_IF_ERROR(CompileInMemory(api, model, fused_name + "_", &report, &ctx));
  const onnx::GraphProto& g = ctx.graph();
  if (g.node_size() != 1 || !IsEpContext(g.node(0)))
    return api.CreateStatus(ORT_EP_FAIL,
                            ("epctx: the partition compiled into " + std::to_string(g.node_size()) +
                             " nodes, not one EPContext node")
                                .c_str());
  const onnx::NodeProto& n = g.node(0);
  out->ctx_model = report.model_data;
  out->node_name = n.name();
  out->inputs.assign(n.input().begin(), n.input().end());
  out->outputs.assign(n.output().begin(), n.output().end());
  if (!emit) return nullptr;

  // ORT matches the EPContext node to its fused node by name; epctx binds it
  // to the graph in the container by partition_name.
  bool has_partition_name = false;
  for (const onnx::AttributeProto& a : n.attribute())
    has_partition_name = has_partition_name || a.name() == "partition_name";
  onnx::NodeProto node = n;
  if (!has_partition_name) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name("partition_name");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(n.name());
  }
  const OrtModelEditorApi* ed = api.GetModelEditorApi();
  if (!ed) return api.CreateStatus(ORT_NOT_IMPLEMENTED, "epctx: ORT has no model editor API");
  std::vector<OrtOpAttr*> attrs;
  OrtStatus* st = nullptr;
  for (const onnx::AttributeProto& a : node.attribute()) {
    OrtOpAttr* attr = nullptr;
    if (a.type() == onnx::AttributeProto::INT) {
      int64_t v = a.name() == "embed_mode" && !bin_path.empty() ? 0 : a.i();
      st = api.CreateOpAttr(a.name().c_str(), &v, 1, ORT_OP_ATTR_INT, &attr);
    } else if (a.type() == onnx::AttributeProto::STRING) {
      std::string v = a.s();
      if (a.name() == "ep_cache_context" && !bin_path.empty()) {
        std::ofstream f(bin_path, std::ios::binary | std::ios::trunc);
        f.write(v.data(), static_cast<std::streamsize>(v.size()));
        if (!f) st = api.CreateStatus(ORT_FAIL, ("epctx: cannot write " + bin_path).c_str());
        size_t slash = bin_path.rfind('/');
        v = slash == std::string::npos ? bin_path : bin_path.substr(slash + 1);
      }
      if (!st)
        st = api.CreateOpAttr(a.name().c_str(), v.data(), static_cast<int>(v.size()),
                              ORT_OP_ATTR_STRING, &attr);
    }
    if (st) break;
    if (attr) attrs.push_back(attr);
  }
  if (!st) {
    std::vector<const char*> ins;
    std::vector<const char*> outs;
    for (const std::string& s : out->inputs) ins.push_back(s.c_str());
    for (const std::string& s : out->outputs) outs.push_back(s.c_str());
    st = ed->CreateNode("EPContext", "com.microsoft", fused_name.c_str(), ins.data(), ins.size(),
                        outs.data(), outs.size(), attrs.data(), attrs.size(), ep_context_node);
  }
  for (OrtOpAttr* a : attrs) api.ReleaseOpAttr(a);
  return st;
}

}  // namespace ort_ep
}  // namespace epctx
