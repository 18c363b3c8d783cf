// SPDX-License-Identifier: Apache-2.0
// Writing the _ctx.onnx model: EPContext nodes replace the partitions.
#include "epctx_host/ctx_model.h"
#include "epctx_host/node_infer.h"
#include "epctx_host/raw_align.h"
#include "epctx_host/specialize.h"
#include "epctx_host/subgraphs.h"

#include <cstddef>
#include <map>
#include <queue>
#include <set>
#include <stdexcept>

namespace epctx {
namespace host {
namespace {

constexpr const char* kMsDomain = "com.microsoft";

void AddInt(onnx::NodeProto& n, const char* name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void AddString(onnx::NodeProto& n, const char* name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

onnx::NodeProto MakeEpContextNode(const Partition& p, bool main, const CtxModelOptions& o) {
  onnx::NodeProto n;
  n.set_name(p.name);
  n.set_op_type("EPContext");
  n.set_domain(kMsDomain);
  for (const auto& in : p.inputs) n.add_input(in);
  for (const auto& out : p.outputs) n.add_output(out);
  AddInt(n, "main_context", main ? 1 : 0);
  if (main) {
    if (o.embed_mode == 1) {
      AddString(n, kPadAttribute, std::string());
      AddString(n, "ep_cache_context", std::string(o.container->begin(), o.container->end()));
    } else {
      AddString(n, "ep_cache_context", o.bin_file_name);
    }
  }
  AddInt(n, "embed_mode", o.embed_mode);
  AddString(n, "source", o.backend->source_key());
  AddString(n, "ep_sdk_version", o.backend->sdk_version().str());
  AddString(n, "hardware_architecture", o.backend->hardware_architecture());
  AddString(n, "partition_name", p.name);
  AddString(n, "onnx_model_filename", o.onnx_model_filename);
  return n;
}

// Stable topological sort: among ready nodes, the one with the smallest key
// (the source position it replaces) goes first, so CPU nodes keep their
// order and an EPContext node moves only as far as its inputs require.
std::vector<onnx::NodeProto> TopoSort(std::vector<std::pair<int, onnx::NodeProto>> nodes,
                                      const std::set<std::string>& available_at_start) {
  std::set<std::string> available = available_at_start;
  std::map<std::string, std::vector<size_t>> waiting;
  std::vector<size_t> missing(nodes.size(), 0);
  using Item = std::pair<int, size_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<std::string> need;
    for (const auto& in : NodeReads(nodes[i].second))
      if (!available.count(in)) need.insert(in);
    missing[i] = need.size();
    for (const auto& in : need) waiting[in].push_back(i);
    if (need.empty()) ready.push({nodes[i].first, i});
  }
  std::vector<onnx::NodeProto> out;
  while (!ready.empty()) {
    size_t i = ready.top().second;
    ready.pop();
    for (const auto& o : nodes[i].second.output()) {
      if (o.empty() || !available.insert(o).second) continue;
      for (size_t j : waiting[o])
        if (--missing[j] == 0) ready.push({nodes[j].first, j});
    }
    out.push_back(std::move(nodes[i].second));
  }
  if (out.size() != nodes.size())
    throw std::logic_error("ctx model: nodes cannot be ordered topologically");
  return out;
}

onnx::AttributeProto* FindPad(onnx::GraphProto* g) {
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (n.op_type() == "EPContext" && a.name() == kPadAttribute) return &a;
      onnx::AttributeProto* pad = a.has_g() ? FindPad(a.mutable_g()) : nullptr;
      for (auto& sub : *a.mutable_graphs())
        if (!pad) pad = FindPad(&sub);
      if (pad) return pad;
    }
  return nullptr;
}

}  // namespace

void RewriteGraph(const onnx::GraphProto& sg, const GraphInfo& info,
                  const std::vector<Partition>& partitions, const CtxModelOptions& options,
                  onnx::GraphProto* out) {
  onnx::GraphProto& g = *out;
  g.Clear();
  g.set_name(sg.name());
  g.set_doc_string(sg.doc_string());
  *g.mutable_input() = sg.input();
  *g.mutable_output() = sg.output();

  // Which partition each source node belongs to.
  std::map<const onnx::NodeProto*, size_t> part_of;
  for (size_t k = 0; k < partitions.size(); ++k)
    for (const auto* n : partitions[k].nodes) part_of[n] = k;
  std::vector<std::pair<int, onnx::NodeProto>> nodes;
  std::vector<char> emitted(partitions.size(), 0);
  for (int i = 0; i < sg.node_size(); ++i) {
    auto it = part_of.find(&sg.node(i));
    if (it == part_of.end()) {
      nodes.emplace_back(i, sg.node(i));
    } else if (!emitted[it->second]) {
      emitted[it->second] = 1;
      const Partition& p = partitions[it->second];
      const bool main =
          options.main_partition.empty() ? it->second == 0 : p.name == options.main_partition;
      nodes.emplace_back(i, MakeEpContextNode(p, main, options));
    }
  }

  // Everything no node of this graph produces: its inputs and initializers,
  // and for a body the outer-scope values it reads.
  std::set<std::string> produced, available;
  for (const auto& n : nodes)
    for (const auto& o : n.second.output()) produced.insert(o);
  for (const auto& n : nodes)
    for (const auto& in : NodeReads(n.second))
      if (!produced.count(in)) available.insert(in);
  std::vector<onnx::NodeProto> sorted = TopoSort(std::move(nodes), available);

  std::set<std::string> referenced, node_values;
  for (const auto& n : sorted) {
    // Initializers only a subgraph reads are referenced too.
    for (const auto& in : NodeReads(n)) {
      referenced.insert(in);
      node_values.insert(in);
    }
    for (const auto& o : n.output()) node_values.insert(o);
  }
  for (const auto& v : sg.input()) referenced.insert(v.name());
  for (const auto& v : sg.output()) referenced.insert(v.name());
  for (auto& n : sorted) *g.add_node() = std::move(n);
  std::set<std::string> skip_vi;  // graph inputs/outputs/initializers carry their own types
  for (const auto& t : sg.initializer())
    if (referenced.count(t.name())) {
      *g.add_initializer() = t;
      skip_vi.insert(t.name());
    }
  for (const auto& v : sg.input()) skip_vi.insert(v.name());
  for (const auto& v : sg.output()) skip_vi.insert(v.name());

  // EPContext boundaries get the static types the backend compiled for;
  // other surviving intermediate values keep the inferred ones.
  for (const auto& p : partitions) {
    for (const auto* list : {&p.inputs, &p.outputs})
      for (const auto& name : *list) {
        const ValueType* t = info.type(name);
        if (!t || !skip_vi.insert(name).second) continue;
        auto* vi = g.add_value_info();
        vi->set_name(name);
        *vi->mutable_type() = TypeProtoOf(*t);
      }
  }
  for (const auto& v : sg.value_info())
    if (node_values.count(v.name()) && skip_vi.insert(v.name()).second) *g.add_value_info() = v;
}

onnx::ModelProto BuildCtxModel(const onnx::ModelProto& source, const GraphInfo& info,
                               const std::vector<Partition>& partitions,
                               const CtxModelOptions& options) {
  const onnx::GraphProto& sg = source.graph();
  onnx::ModelProto m;
  m.set_ir_version(source.ir_version());
  *m.mutable_opset_import() = source.opset_import();
  // main_partition is set when there is any partition, in a body or not.
  if (!partitions.empty() || !options.main_partition.empty()) ImportMsOpset(m);
  m.set_producer_name(source.producer_name());
  m.set_producer_version(source.producer_version());
  m.set_domain(source.domain());
  m.set_model_version(source.model_version());
  m.set_doc_string(source.doc_string());
  *m.mutable_metadata_props() = source.metadata_props();
  *m.mutable_functions() = source.functions();

  RewriteGraph(sg, info, partitions, options, m.mutable_graph());
  return m;
}

std::string SerializeCtxModel(onnx::ModelProto& model, const CtxModelOptions& options,
                              size_t* payload_offset) {
  // Every initializer's raw_data at an aligned offset, so the runtime uses
  // CPU-fallback weights in place (see raw_align.h).
  auto serialize = [&model] { return AlignRawInitializers(model.SerializeAsString()); };
  std::string bytes = serialize();
  if (options.embed_mode != 1 || !options.container || options.container->empty()) return bytes;
  // The main EPContext node sits inside a body when the top level has none.
  onnx::AttributeProto* pad = FindPad(model.mutable_graph());
  if (!pad) throw std::logic_error("ctx model: no pad attribute on the main EPContext node");
  const size_t head = std::min<size_t>(options.container->size(), 64);
  const std::string needle(options.container->begin(),
                           options.container->begin() + static_cast<std::ptrdiff_t>(head));
  // Protobuf writes fields in field-number order, so the payload offset is a
  // function of the pad length; growing the pad can also grow enclosing
  // length varints by a byte, hence the loop.
  for (int iter = 0; iter < 256; ++iter) {
    size_t off = bytes.find(needle);
    if (off == std::string::npos) throw std::logic_error("ctx model: embedded payload not found");
    size_t rem = off % kEmbedAlignment;
    if (rem == 0) {
      if (payload_offset) *payload_offset = off;
      return bytes;
    }
    pad->set_s(std::string(pad->s().size() + (kEmbedAlignment - rem), '\0'));
    bytes = serialize();
  }
  throw std::logic_error("ctx model: could not align the embedded payload");
}

}  // namespace host
}  // namespace epctx
