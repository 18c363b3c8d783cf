// Session creation: mapping, parsing, the value table, constants and steps.
// EPContext binding is in contexts.cc, Run in run.cc.
#include "session/session.h"

#include <cstring>

#include <manifest_format.h>
#include "session/workspace.h"

namespace epctx {
namespace {

uint32_t hash_name(StrView s) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < s.size; ++i) h = (h ^ static_cast<uint8_t>(s.data[i])) * 16777619u;
  return h;
}

// Folder part of a path ("" for a bare file name), copied into the arena.
const char* dir_of(Arena& arena, const char* path) {
  const char* slash = cstr_rchr(path, '/');
  if (!slash) return arena.Strdup("", 0);
  size_t n = static_cast<size_t>(slash - path);
  return arena.Strdup(path, n == 0 ? 1 : n);  // "/x" -> "/"
}

}  // namespace

const char* ContextBaseDir(const Options& options, const char* model_path, Arena& arena) {
  const char* ctx_path = options.Get(kOptEpContextFilePath);
  if (ctx_path && !ctx_path[0]) ctx_path = nullptr;  // "" is no path (ORT refuses it too)
  if (ctx_path) return dir_of(arena, ctx_path);
  return model_path ? dir_of(arena, model_path) : nullptr;
}

Session::Session(Env* env) : env_(env), meta_(env->alloc, 8 * 1024) {}

Session::~Session() {
  for (uint32_t i = 0; i < num_contexts_; ++i) {
    LoadedContext& c = contexts_[i];
    if (c.shared)
      group_->Unuse(c.shared);
    else
      ReleaseLoaded(env_->alloc, &c);
  }
  if (group_) group_->Release();
  for (uint32_t i = 0; i < num_data_regions_; ++i) epctx_pal_unmap(&data_regions_[i]);
  epctx_pal_unmap(&model_region_);
}

Status Session::Create(Env* env, const char* path, const void* buffer, size_t size,
                       const Options& options, Session** out) {
  *out = nullptr;
  Session* s = env->alloc.New<Session>(env);
  if (!s) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory creating a session");
  Status st = s->Load(path, buffer, size, options);
  if (!st.ok()) {
    env->alloc.Delete(s);
    return st;
  }
  *out = s;
  return Status::Ok();
}

Status Session::Load(const char* path, const void* buffer, size_t size, const Options& options) {
  const char* mode = options.Get(kOptLoadMode);
  if (mode && cstr_eq(mode, "read")) load_mode_ = EPCTX_PAL_LOAD_READ;
  group_ = options.group;
  if (!group_ && options.Flag(kOptShareEpContexts)) {
    group_ = env_->shared_group;
    if (!group_)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "ep.share_ep_contexts: the env has no shared "
                           "workspace (out of memory when it was created)");
  }
  if (group_) group_->AddRef();
  const char* advise = options.Get(kOptAdvise);
  advise_willneed_ = advise && cstr_eq(advise, "willneed");
  fail_on_suboptimal_ = options.Flag(kOptFailOnSuboptimal);
  base_dir_ = ContextBaseDir(options, path, meta_);
  if (path) {
    label_ = meta_.Strdup(path, cstr_len(path));
    char msg[Status::kMaxMessage];
    int rc = epctx_pal_map_file(path, load_mode_, &model_region_, msg, sizeof msg);
    if (rc != EPCTX_OK) return Status::Error(rc, "%s", msg);
    model_bytes_ = Bytes{model_region_.data, static_cast<size_t>(model_region_.size)};
  } else {
    label_ = "<buffer>";
    if (!buffer && size) return Status::Error(EPCTX_INVALID_ARGUMENT, "model buffer is NULL");
    model_bytes_ = Bytes{static_cast<const uint8_t*>(buffer), size};
  }
  if (!label_) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
  // Signed packages: manifest, key, signature, rollback, then the model's
  // hash, all before the model is parsed.
  EPCTX_RETURN_IF_ERROR(verifier_.Begin(env_->trust, options, path, meta_, label_));
  EPCTX_RETURN_IF_ERROR(verifier_.VerifyModel(model_bytes_));
  if (model_bytes_.size == 0)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "%s: empty file, not an ONNX model", label_);
  EPCTX_RETURN_IF_ERROR(onnx::ParseModel(model_bytes_, label_, meta_, &model_));
  if (model_.graph.num_nodes == 0 && model_.graph.num_outputs == 0)
    return Status::Error(EPCTX_INVALID_GRAPH, "%s: the graph has no nodes and no outputs", label_);
  EPCTX_RETURN_IF_ERROR(BuildValues());
  EPCTX_RETURN_IF_ERROR(LoadConstants(options));
  EPCTX_RETURN_IF_ERROR(BuildSteps());
  EPCTX_RETURN_IF_ERROR(LoadContexts());
  EPCTX_RETURN_IF_ERROR(OrderSteps());
  EPCTX_RETURN_IF_ERROR(verifier_.Commit());
  if (group_ && options.Flag(kOptStopShareEpContexts)) group_->StopSharing();
  // Loading is done: runs read initializers, let the OS read ahead for them.
  epctx_pal_advise(&model_region_, 0, model_region_.size, EPCTX_PAL_ADVISE_NORMAL);
  for (uint32_t i = 0; i < num_data_regions_; ++i)
    epctx_pal_advise(&data_regions_[i], 0, data_regions_[i].size, EPCTX_PAL_ADVISE_NORMAL);
  return Status::Ok();
}

uint32_t Session::Find(StrView name) const {
  for (uint32_t h = hash_name(name) & table_mask_;; h = (h + 1) & table_mask_) {
    uint32_t slot = table_[h];
    if (slot == 0) return UINT32_MAX;
    if (values_[slot - 1].name.eq(name)) return slot - 1;
  }
}

Status Session::AddValue(StrView name, uint32_t* id) {
  uint32_t h = hash_name(name) & table_mask_;
  for (;; h = (h + 1) & table_mask_) {
    uint32_t slot = table_[h];
    if (slot == 0) break;
    if (values_[slot - 1].name.eq(name)) {
      *id = slot - 1;
      return Status::Ok();
    }
  }
  uint32_t v = num_values_++;
  values_[v].name = name;
  table_[h] = v + 1;
  *id = v;
  return Status::Ok();
}

Status Session::BuildValues() {
  const onnx::GraphView& g = model_.graph;
  uint64_t max_values = static_cast<uint64_t>(g.num_inputs) + g.num_initializers;
  for (uint32_t i = 0; i < g.num_nodes; ++i) max_values += g.nodes[i].num_outputs;
  if (max_values > (1u << 24))
    return Status::Error(EPCTX_NOT_IMPLEMENTED, "%s: %llu values exceed the limit of 16M", label_,
                         (unsigned long long)max_values);
  uint32_t cap = 16;
  while (cap < 2 * max_values) cap <<= 1;
  values_ = meta_.AllocArray<Value>(max_values ? max_values : 1);
  table_ = meta_.AllocArray<uint32_t>(cap);
  input_ids_ = meta_.AllocArray<uint32_t>(g.num_inputs + 1);
  output_ids_ = meta_.AllocArray<uint32_t>(g.num_outputs + 1);
  if (!values_ || !table_ || !input_ids_ || !output_ids_)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for the value table", label_);
  for (uint64_t i = 0; i < max_values; ++i) {
    values_[i].constant = -1;
    values_[i].graph_input = -1;
  }
  table_mask_ = cap - 1;
  uint32_t id;
  for (uint32_t i = 0; i < g.num_initializers; ++i) {
    EPCTX_RETURN_IF_ERROR(AddValue(g.initializers[i].name, &id));
    values_[id].constant = static_cast<int32_t>(i);
  }
  for (uint32_t i = 0; i < g.num_inputs; ++i) {
    EPCTX_RETURN_IF_ERROR(AddValue(g.inputs[i].name, &id));
    // An input that is also an initializer keeps the initializer's value.
    input_ids_[i] = values_[id].constant >= 0 ? UINT32_MAX : id;
    if (values_[id].constant < 0) values_[id].graph_input = static_cast<int32_t>(i);
  }
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const onnx::NodeView& node = g.nodes[n];
    for (uint32_t o = 0; o < node.num_outputs; ++o) {
      if (node.outputs[o].empty()) continue;
      uint32_t before = num_values_;
      EPCTX_RETURN_IF_ERROR(AddValue(node.outputs[o], &id));
      if (num_values_ == before)
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s: node '%.*s' (%.*s) output '%.*s' is already produced elsewhere",
                             label_, node.name.len(), node.name.data, node.op_type.len(),
                             node.op_type.data, node.outputs[o].len(), node.outputs[o].data);
    }
  }
  public_inputs_ = meta_.AllocArray<uint32_t>(g.num_inputs + 1);
  input_names_ = meta_.AllocArray<const char*>(g.num_inputs + 1);
  output_names_ = meta_.AllocArray<const char*>(g.num_outputs + 1);
  if (!public_inputs_ || !input_names_ || !output_names_)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for the value table", label_);
  for (uint32_t i = 0; i < g.num_inputs; ++i) {
    input_names_[i] = meta_.Strdup(g.inputs[i].name.data, g.inputs[i].name.size);
    if (!input_names_[i]) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
    if (input_ids_[i] != UINT32_MAX) public_inputs_[num_public_inputs_++] = i;
  }
  for (uint32_t i = 0; i < g.num_outputs; ++i) {
    output_names_[i] = meta_.Strdup(g.outputs[i].name.data, g.outputs[i].name.size);
    if (!output_names_[i]) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
  }
  for (uint32_t i = 0; i < g.num_outputs; ++i) {
    uint32_t v = Find(g.outputs[i].name);
    if (v == UINT32_MAX)
      return Status::Error(EPCTX_INVALID_GRAPH, "%s: graph output '%.*s' is never produced",
                           label_, g.outputs[i].name.len(), g.outputs[i].name.data);
    values_[v].graph_output = true;
    output_ids_[i] = v;
  }
  return Status::Ok();
}

Status Session::LoadConstants(const Options& options) {
  const onnx::GraphView& g = model_.graph;
  num_constants_ = g.num_initializers;
  constants_ = meta_.AllocArray<TensorRef>(num_constants_ + 1);
  data_regions_ = meta_.AllocArray<epctx_pal_region>(num_constants_ + 1);
  if (!constants_ || !data_regions_)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for initializers", label_);
  const char* ext_folder = options.Get(kOptExternalInitializersFolder);
  for (uint32_t i = 0; i < num_constants_; ++i) {
    const onnx::TensorView& t = g.initializers[i];
    TensorRef& r = constants_[i];
    r.dtype = t.dtype;
    r.rank = t.rank;
    for (uint32_t d = 0; d < t.rank; ++d) r.dims[d] = t.dims[d];
    uint64_t elems = 0;
    size_t esize = dtype_size(t.dtype);
    if (!shape_elements(t.dims, t.rank, &elems) || esize == 0 || elems > UINT64_MAX / esize)
      return Status::Error(EPCTX_NOT_IMPLEMENTED,
                           "%s: initializer '%.*s': type %s or shape not supported", label_,
                           t.name.len(), t.name.data, dtype_name(t.dtype));
    uint64_t want = elems * esize;
    if (t.storage != onnx::Storage::kExternal) {
      if (t.bytes != want)
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s: initializer '%.*s': expected %llu data bytes, found %llu", label_,
                             t.name.len(), t.name.data, (unsigned long long)want,
                             (unsigned long long)t.bytes);
      r.data = const_cast<void*>(t.data);
      r.bytes = want;
      EPCTX_RETURN_IF_ERROR(CheckBool(r, t.name));
      continue;
    }
    // External data: resolved beneath the model folder (or the configured
    // external-initializers folder), mapped, and viewed in place.
    char what[160];
    format(what, sizeof what, "initializer '%.*s' external data", t.name.len(), t.name.data);
    epctx_pal_region* region = &data_regions_[num_data_regions_];
    EPCTX_RETURN_IF_ERROR(MapBeneath(ext_folder ? ext_folder : base_dir_,
                                     t.external_location.data, t.external_location.size, what,
                                     region));
    ++num_data_regions_;
    Bytes file{region->data, static_cast<size_t>(region->size)};
    // Signed packages: listed and of the signed size before any range check.
    EPCTX_RETURN_IF_ERROR(
        verifier_.VerifyRange(EPCTX_MF_ROLE_DATA, t.external_location, file, 0, 0));
    uint64_t off = static_cast<uint64_t>(t.external_offset < 0 ? 0 : t.external_offset);
    uint64_t len = t.external_length >= 0 ? static_cast<uint64_t>(t.external_length) : want;
    if (len != want || off > region->size || len > region->size - off)
      return Status::Error(EPCTX_INVALID_GRAPH,
                           "%s: %s: range [%llu, +%llu) does not hold the expected %llu bytes of a "
                           "%llu-byte file",
                           label_, what, (unsigned long long)off, (unsigned long long)len,
                           (unsigned long long)want, (unsigned long long)region->size);
    if (((reinterpret_cast<uintptr_t>(region->data) + off) & (esize - 1)) != 0)
      return Status::Error(EPCTX_INVALID_GRAPH, "%s: %s: offset %llu is not aligned to %zu",
                           label_, what, (unsigned long long)off, esize);
    EPCTX_RETURN_IF_ERROR(verifier_.VerifyRange(EPCTX_MF_ROLE_DATA, t.external_location, file,
                                                off, len));
    r.data = const_cast<uint8_t*>(region->data + off);
    r.bytes = want;
    EPCTX_RETURN_IF_ERROR(CheckBool(r, t.name));
  }
  return Status::Ok();
}

Status Session::CheckBool(const TensorRef& r, StrView name) const {
  int64_t bad = r.dtype == EPCTX_DTYPE_BOOL ? first_non_bool(r.data, r.bytes) : -1;
  if (bad < 0) return Status::Ok();
  return Status::Error(EPCTX_INVALID_GRAPH,
                       "%s: initializer '%.*s': bool element %lld is byte %u, expected 0 or 1",
                       label_, name.len(), name.data, static_cast<long long>(bad),
                       static_cast<const uint8_t*>(r.data)[bad]);
}

Status Session::MapBeneath(const char* base, const char* rel, size_t rel_len, const char* what,
                           epctx_pal_region* out) {
  if (!base)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "%s: %s '%.*s' is relative to the model's folder, which is unknown for a "
                         "model loaded from a buffer. Please specify a valid %s",
                         label_, what, rel_len > 0x7fffffff ? 0 : (int)rel_len, rel,
                         kOptEpContextFilePath);
  if (const void* nul = memchr(rel, '\0', rel_len))
    return Status::Error(EPCTX_PATH_REJECTED, "%s: %s: path '%.*s' contains a NUL byte", label_,
                         what, static_cast<int>(static_cast<const char*>(nul) - rel), rel);
  char* path = meta_.Strdup(rel, rel_len);
  if (!path) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
  char msg[Status::kMaxMessage];
  int rc = epctx_pal_map_file_beneath(base, path, load_mode_, out, msg, sizeof msg);
  if (rc != EPCTX_OK) return Status::Error(rc, "%s: %s: %s", label_, what, msg);
  return Status::Ok();
}

Status Session::BuildSteps() {
  const onnx::GraphView& g = model_.graph;
  num_steps_ = g.num_nodes;
  steps_ = meta_.AllocArray<Step>(num_steps_ + 1);
  if (!steps_) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for steps", label_);
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const onnx::NodeView& node = g.nodes[n];
    Step& s = steps_[n];
    s.node = &node;
    s.num_inputs = node.num_inputs;
    s.num_outputs = node.num_outputs;
    s.inputs = meta_.AllocArray<uint32_t>(node.num_inputs + 1);
    s.outputs = meta_.AllocArray<uint32_t>(node.num_outputs + 1);
    if (!s.inputs || !s.outputs)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for steps", label_);
    for (uint32_t i = 0; i < node.num_inputs; ++i) {
      if (node.inputs[i].empty()) {
        s.inputs[i] = UINT32_MAX;
        continue;
      }
      uint32_t v = Find(node.inputs[i]);
      if (v == UINT32_MAX)
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s: node '%.*s' (%.*s) input '%.*s' is not a graph input, an "
                             "initializer or any node's output",
                             label_, node.name.len(), node.name.data, node.op_type.len(),
                             node.op_type.data, node.inputs[i].len(), node.inputs[i].data);
      s.inputs[i] = v;
      values_[v].consumers++;
    }
    for (uint32_t o = 0; o < node.num_outputs; ++o)
      s.outputs[o] = node.outputs[o].empty() ? UINT32_MAX : Find(node.outputs[o]);
    if (onnx::IsEpContextNode(node)) continue;  // bound in LoadContexts
    s.opset = model_.opset(node.domain);
    s.kernel = FindKernel(node.domain, node.op_type, s.opset);
    if (!s.kernel)
      return Status::Error(EPCTX_MODEL_REQUIRES_COMPILATION,
                           "%s: node '%.*s': op %.*s%s%.*s (opset %lld) is not an EPContext node and "
                           "has no CPU kernel; compile the model with epctx-compile",
                           label_, node.name.len(), node.name.data, node.domain.len(),
                           node.domain.data, node.domain.empty() ? "" : ".", node.op_type.len(),
                           node.op_type.data, (long long)s.opset);
  }
  return Status::Ok();
}

// Kahn's algorithm over value producers, keeping the file's order among
// ready nodes (ONNX requires files to be sorted; we do not trust that).
Status Session::OrderSteps() {
  uint32_t n = num_steps_;
  if (n == 0) return Status::Ok();
  uint32_t* producer = meta_.AllocArray<uint32_t>(num_values_ + 1);
  uint32_t* pending = meta_.AllocArray<uint32_t>(n);
  uint8_t* done_value = meta_.AllocArray<uint8_t>(num_values_ + 1);
  Step* sorted = meta_.AllocArray<Step>(n);
  uint8_t* placed = meta_.AllocArray<uint8_t>(n);
  if (!producer || !pending || !done_value || !sorted || !placed)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory ordering nodes", label_);
  for (uint32_t v = 0; v < num_values_; ++v) {
    producer[v] = UINT32_MAX;
    done_value[v] = values_[v].constant >= 0 || values_[v].graph_input >= 0;
  }
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t o = 0; o < steps_[s].num_outputs; ++o)
      if (steps_[s].outputs[o] != UINT32_MAX) producer[steps_[s].outputs[o]] = s;
  uint32_t count = 0;
  bool progress = true;
  // Repeated sweeps: linear for sorted files, quadratic only for bad ones.
  while (count < n && progress) {
    progress = false;
    for (uint32_t s = 0; s < n; ++s) {
      if (placed[s]) continue;
      bool ready = true;
      for (uint32_t i = 0; i < steps_[s].num_inputs && ready; ++i) {
        uint32_t v = steps_[s].inputs[i];
        ready = v == UINT32_MAX || done_value[v];
      }
      if (!ready) continue;
      placed[s] = 1;
      sorted[count++] = steps_[s];
      for (uint32_t o = 0; o < steps_[s].num_outputs; ++o)
        if (steps_[s].outputs[o] != UINT32_MAX) done_value[steps_[s].outputs[o]] = 1;
      progress = true;
    }
  }
  if (count < n) {
    for (uint32_t s = 0; s < n; ++s)
      if (!placed[s])
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s: node '%.*s' (%.*s) is part of a cycle or depends on one", label_,
                             steps_[s].node->name.len(), steps_[s].node->name.data,
                             steps_[s].node->op_type.len(), steps_[s].node->op_type.data);
  }
  steps_ = sorted;
  return Status::Ok();
}

}  // namespace epctx
