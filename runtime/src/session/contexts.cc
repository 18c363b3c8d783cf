// SPDX-License-Identifier: Apache-2.0
// Binding EPContext nodes to drivers: choose the driver by `source`, check
// compatibility from names and versions alone, find the context bytes
// (embedded in the mapped model, or a file beneath the model's folder),
// verify an epctx container, hand the views to the driver, and bind every
// EPContext node (primary or main_context=0) to a graph of a loaded context.
// A signed container is hashed except for the payloads of graphs this
// session does not bind (bound_graphs.h): the driver reads a payload only
// in get_graph (hal.h), so those bytes are never used.
//
// Error contract (ORT's): a failure while loading a context is INVALID_GRAPH
// with a message beginning "Failed to load from EpContext model." followed by
// the cause; a node no driver accepts is NOT_IMPLEMENTED; path containment
// failures keep PATH_REJECTED so callers can tell an attack from a bad file.
#include <cstdint>
#include <cstring>

#include <container_header.h>
#include <manifest_format.h>

#include "session/bound_graphs.h"
#include "session/compat.h"
#include "session/context_binder.h"
#include "session/workspace.h"
#include "trust/sealed.h"

namespace epctx {
namespace {

constexpr const char* kLoadFailed = "Failed to load from EpContext model.";

Status load_failure(Status st) {
  int code = st.code();
  if (code != EPCTX_PATH_REJECTED && code != EPCTX_OUT_OF_MEMORY) code = EPCTX_INVALID_GRAPH;
  return st.Prefix("%s %s", kLoadFailed, epctx_code_name(st.code())).WithCode(code);
}

// The graph name an EPContext node binds to.
StrView graph_name_of(const onnx::EpContextNode& ep) {
  return ep.partition_name.empty() ? ep.node->name : ep.partition_name;
}

}  // namespace

ContextBinder::~ContextBinder() {
  for (uint32_t i = 0; i < num_contexts_; ++i) {
    LoadedContext& c = contexts_[i];
    if (c.shared) group_->Unuse(c.shared);
    else ReleaseLoaded(m_.env()->alloc, &c);
  }
  if (group_) group_->Release();
}

Status ContextBinder::Configure(const Options& options) {
  group_ = options.group;
  if (!group_ && options.Flag(kOptShareEpContexts)) {
    group_ = m_.env()->shared_group;
    if (!group_)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "ep.share_ep_contexts: the env has no shared "
                                                "workspace (out of memory when it was created)");
  }
  if (group_) group_->AddRef();
  const char* advise = options.Get(kOptAdvise);
  advise_willneed_ = advise && cstr_eq(advise, "willneed");
  fail_on_suboptimal_ = options.Flag(kOptFailOnSuboptimal);
  return Status::Ok();
}

void ContextBinder::StopSharing() {
  if (group_) group_->StopSharing();
}

GraphNames ContextBinder::NamesFor(const onnx::EpContextNode& ep) const {
  GraphNames names;
  names.primary = graph_name_of(ep);
  names.others = secondary_names_;
  names.num_others = num_secondary_names_;
  return names;
}

Status ContextBinder::VerifyContextHead(const onnx::EpContextNode& ep, Bytes file, bool container,
                                        uint64_t* verified) {
  if (container) return m_.verifier().VerifyContainerHead(ep.ep_cache_context, file, verified);
  *verified = file.size;
  return m_.verifier().VerifyRange(EPCTX_MF_ROLE_CONTEXT, ep.ep_cache_context, file, 0, file.size);
}

Status ContextBinder::VerifyContainerFile(const onnx::EpContextNode& ep, const ContainerView& c,
                                          Bytes file, uint64_t verified) {
  if (!m_.verifier().active()) return Status::Ok();
  const Bytes* skip = nullptr;
  uint32_t num_skip = 0;
  EPCTX_RETURN_IF_ERROR(UnboundPayloads(c, NamesFor(ep), m_.meta(), &skip, &num_skip));
  return m_.verifier().VerifyFileExcept(EPCTX_MF_ROLE_CONTEXT, ep.ep_cache_context, file, skip,
                                        num_skip, verified);
}

Status ContextBinder::CheckVersions(const DriverEntry& drv, const onnx::EpContextNode& ep,
                                    const ContainerView* container, bool log_suboptimal) {
  CompatResult r;
  CheckCompiledFor(
      drv, CompiledFor{ep.node->name, ep.ep_sdk_version, ep.hardware_architecture, container}, &r);
  Status st = CompatStatus(r, fail_on_suboptimal_);
  if (!st.ok()) return load_failure(st.Prefix("%s", m_.label()));
  if (log_suboptimal && r.verdict == kCompatPreferRecompilation)
    m_.env()->Log(1, "%s: PREFER_RECOMPILATION: %s", m_.label(), r.reason);
  return Status::Ok();
}

namespace {

// Visits the EPContext steps of p and of every plan beneath it, parents
// first. The plans are the session's own, still being built, hence mutable.
template <typename F>
void ForEachEpStep(GraphPlan* p, F&& f) {
  for (uint32_t si = 0; si < p->num_steps; ++si) {
    Step& s = p->steps[si];
    if (onnx::IsEpContextNode(*s.node)) f(&s);
    if (!s.subgraphs) continue;
    for (uint32_t a = 0; a < s.node->num_attrs; ++a)
      if (s.subgraphs[a]) ForEachEpStep(const_cast<GraphPlan*>(s.subgraphs[a]), f);
  }
}

}  // namespace

// EPContext nodes inside If/Loop/Scan bodies bind here too, once, so a run of
// a body calls the driver exactly as the main graph does.
Status ContextBinder::Bind(GraphPlan* main, BindResult* out) {
  *out = BindResult{};
  uint32_t num_ep = 0, num_primary = 0;
  ForEachEpStep(main, [&](Step*) { ++num_ep; });
  if (num_ep == 0) return Status::Ok();
  onnx::EpContextNode* eps = m_.meta().AllocArray<onnx::EpContextNode>(num_ep);
  Step** step_of = m_.meta().AllocArray<Step*>(num_ep);
  int32_t* ctx_of = m_.meta().AllocArray<int32_t>(num_ep);
  if (!eps || !step_of || !ctx_of)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", m_.label());
  uint32_t num_steps = 0;
  ForEachEpStep(main, [&](Step* s) { step_of[num_steps++] = s; });
  for (uint32_t k = 0; k < num_ep; ++k) {
    Status st = onnx::ExtractEpContext(*step_of[k]->node, &eps[k]);
    if (!st.ok()) return st.Prefix("%s", m_.label());
    // Nodes bind to graphs by name: two of one name (as in carelessly merged
    // models) would bind ambiguously.
    for (uint32_t j = 0; j < k; ++j)
      if (!eps[k].node->name.empty() && eps[j].node->name.eq(eps[k].node->name))
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s %s: EPContext node name '%.*s' appears twice; EPContext nodes "
                             "bind to graphs by name, so names must be unique",
                             kLoadFailed, m_.label(), eps[k].node->name.len(),
                             eps[k].node->name.data);
    ctx_of[k] = -1;
    if (eps[k].main_context == 1) ++num_primary;
  }
  contexts_ = m_.meta().AllocArray<LoadedContext>(num_primary + 1);
  secondary_names_ = m_.meta().AllocArray<StrView>(num_ep - num_primary + 1);
  if (!contexts_ || !secondary_names_)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", m_.label());
  for (uint32_t i = 0; i < num_ep; ++i)
    if (eps[i].main_context != 1) secondary_names_[num_secondary_names_++] = graph_name_of(eps[i]);
  for (uint32_t i = 0; i < num_ep; ++i) {
    if (eps[i].main_context != 1) continue;
    Status st = LoadOneContext(eps[i], &contexts_[num_contexts_]);
    if (!st.ok()) {
      // Keep what must be released even when the driver call itself failed.
      ++num_contexts_;
      return st;
    }
    ctx_of[i] = static_cast<int32_t>(num_contexts_++);
  }
  for (uint32_t i = 0; i < num_ep; ++i) {
    Step& step = *step_of[i];
    StrView want = graph_name_of(eps[i]);
    const char* name = m_.meta().CStr(want);
    char msg[Status::kMaxMessage];
    char retry_msg[Status::kMaxMessage];
    msg[0] = '\0';
    int rc = EPCTX_INVALID_GRAPH;
    LoadedContext* bound = nullptr;
    if (ctx_of[i] >= 0) {
      bound = &contexts_[ctx_of[i]];
      rc = GetGraph(*bound, name, &step.graph, &step.graph_info, msg, sizeof msg);
    } else {
      // main_context=0: the graph of that name inside a primary's context.
      // Pass 0: epctx containers that list the name. Pass 1: foreign blobs,
      // whose graphs only their driver can look up. The first driver failure
      // is the one reported: NOT_FOUND says that context lacks the graph (the
      // node dangles), any other code why the graph it has cannot run.
      int first_rc = EPCTX_OK;
      for (int pass = 0; pass < 2 && !bound; ++pass) {
        for (uint32_t c = 0; c < num_contexts_ && !bound; ++c) {
          LoadedContext& lc = contexts_[c];
          if (eps[i].has_source && !lc.driver->Accepts(eps[i].source)) continue;
          const bool listed = lc.container.Find(StrView{name, cstr_len(name)}) >= 0;
          if (pass == 0 ? !listed : lc.is_container) continue;
          char* out_msg = first_rc == EPCTX_OK ? msg : retry_msg;
          out_msg[0] = '\0';
          rc = GetGraph(lc, name, &step.graph, &step.graph_info, out_msg, sizeof msg);
          if (rc == EPCTX_OK) bound = &lc;
          else if (first_rc == EPCTX_OK) first_rc = rc;
        }
      }
      if (!bound && first_rc != EPCTX_OK && first_rc != EPCTX_NOT_FOUND) rc = first_rc;
      if (!bound && (first_rc == EPCTX_OK || first_rc == EPCTX_NOT_FOUND))
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s %s: EPContext node '%.*s' (main_context=0) refers to graph '%s', "
                             "which no primary EPContext node's context holds%s%s%s",
                             kLoadFailed, m_.label(), eps[i].node->name.len(),
                             eps[i].node->name.data, name, msg[0] ? " (" : "", msg,
                             msg[0] ? ")" : "");
    }
    if (rc != EPCTX_OK)
      return load_failure(Status::Error(rc, "%s: EPContext node '%.*s': graph '%s': %s", m_.label(),
                                        eps[i].node->name.len(), eps[i].node->name.data, name,
                                        msg));
    const epctx_hal_graph_info& gi = step.graph_info;
    if (gi.num_inputs != step.num_inputs || gi.num_outputs != step.num_outputs)
      return load_failure(Status::Error(
          EPCTX_INVALID_GRAPH,
          "%s: EPContext node '%.*s' has %u inputs and %u outputs, its graph '%s' expects %u and %u",
          m_.label(), eps[i].node->name.len(), eps[i].node->name.data, step.num_inputs,
          step.num_outputs, name, gi.num_inputs, gi.num_outputs));
    if (!gi.scratch_alignment) step.graph_info.scratch_alignment = 16;
    const uint32_t sa = step.graph_info.scratch_alignment;
    if ((sa & (sa - 1)) || sa > EPCTX_HAL_MAX_ALIGNMENT)
      return load_failure(Status::Error(
          EPCTX_INCOMPATIBLE_DRIVER,
          "%s: EPContext node '%.*s': driver '%s' asks for scratch_alignment %u, expected a "
          "power of two up to %u",
          m_.label(), eps[i].node->name.len(), eps[i].node->name.data, bound->driver->info.name, sa,
          EPCTX_HAL_MAX_ALIGNMENT));
    step.driver = bound->driver;
    if (step.driver->fns.prepare_graph) {
      msg[0] = '\0';
      rc = step.driver->fns.prepare_graph(step.driver->driver, step.graph, msg, sizeof msg);
      if (rc != EPCTX_OK)
        return load_failure(Status::Error(rc, "%s: EPContext node '%.*s': graph '%s': prepare: %s",
                                          m_.label(), eps[i].node->name.len(),
                                          eps[i].node->name.data, name, msg));
      step.prepared = true;
    }
    // cpu_steps() counts the main graph's steps only.
    if (&step >= main->steps && &step < main->steps + main->num_steps) ++out->driver_steps;
    ++out->all_driver_steps;
    if (step.driver->fns.execute_parallel) out->threaded = true;
    m_.env()->Log(EPCTX_LOG_INFO, "%s: EPContext node '%.*s' runs graph '%s' on driver '%s' (%s%s)",
                  m_.label(), eps[i].node->name.len(), eps[i].node->name.data, name,
                  bound->driver->info.name, eps[i].embed_mode == 1 ? "embedded" : "file ",
                  eps[i].embed_mode == 1 ? "" : m_.meta().CStr(eps[i].ep_cache_context));
    if (advise_willneed_ && bound->container.num_graphs) {
      const int64_t j = bound->container.num_graphs == 1
                            ? 0
                            : bound->container.Find(StrView{name, cstr_len(name)});
      if (j >= 0) AdviseWillNeed(*bound, bound->container.graphs[j].payload);
    }
  }
  // Binding is done: runs read the weights, let the OS read ahead for them.
  // Not earlier: a fault in a bound payload would read around it into the
  // payloads of graphs this session never binds.
  for (uint32_t c = 0; c < num_contexts_; ++c) {
    const epctx_pal_region& r = RegionOf(contexts_[c]);
    epctx_pal_advise(&r, 0, r.size, EPCTX_PAL_ADVISE_NORMAL);
  }
  return Status::Ok();
}

int ContextBinder::GetGraph(const LoadedContext& lc, const char* name, epctx_hal_graph** graph,
                            epctx_hal_graph_info* info, char* msg, size_t msg_cap) {
  memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
  if (lc.shared) return group_->GetGraph(lc, name, graph, info, msg, msg_cap);
  return lc.driver->driver->get_graph(lc.driver->driver, lc.ctx, name, graph, info, msg, msg_cap);
}

const epctx_pal_region& ContextBinder::RegionOf(const LoadedContext& lc) {
  return lc.shared ? lc.shared->loaded.region : lc.region;
}

void ContextBinder::AdviseWillNeed(const LoadedContext& lc, Bytes bytes) const {
  const epctx_pal_region* regions[2] = {&RegionOf(lc), &m_.region()};
  for (const epctx_pal_region* r : regions) {
    if (!r->data || !bytes.data || bytes.data < r->data || bytes.data > r->data + r->size) continue;
    epctx_pal_advise(r, static_cast<uint64_t>(bytes.data - r->data), bytes.size,
                     EPCTX_PAL_ADVISE_WILLNEED);
    return;
  }
}

Status ContextBinder::AcquireShared(const onnx::EpContextNode& ep, const DriverEntry* drv,
                                    LoadedContext* out) {
  ContextKey key;
  key.driver = drv;
  key.load_mode = m_.load_mode();
  char msg[Status::kMaxMessage];
  msg[0] = '\0';
  char* rel = m_.meta().Strdup(ep.ep_cache_context.data, ep.ep_cache_context.size);
  if (!rel) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
  // A PAL without file identities (or a path it refuses) loads privately:
  // LoadContextBytes then reports any path error with the usual message.
  if (!m_.base_dir() || memchr(ep.ep_cache_context.data, '\0', ep.ep_cache_context.size) ||
      epctx_pal_file_id_beneath(m_.base_dir(), rel, &key.file, msg, sizeof msg) != EPCTX_OK)
    return LoadContextBytes(ep, drv, m_.meta(), false, out);
  struct Call {
    ContextBinder* self;
    const onnx::EpContextNode* ep;
    const DriverEntry* drv;
    bool loaded;  // this session loaded it (and so checked it already)
    static Status Load(void* user, Arena& arena, LoadedContext* lc) {
      Call* c = static_cast<Call*>(user);
      c->loaded = true;
      lc->driver = c->drv;
      return c->self->LoadContextBytes(*c->ep, c->drv, arena, true, lc);
    }
  } call{this, &ep, drv, false};
  SharedContext* sc = nullptr;
  EPCTX_RETURN_IF_ERROR(group_->Acquire(key, Call::Load, &call, &sc));
  const onnx::NodeView* node = out->node;
  *out = sc->loaded;
  out->node = node;
  out->region = epctx_pal_region{};
  out->aligned_copy = nullptr;
  out->wipe_size = 0;
  out->copy_host = nullptr;
  out->shared = sc;
  if (call.loaded) return Status::Ok();  // LoadContextBytes checked it all
  // Another session loaded it, checking the container against its own node
  // and (perhaps) its own manifest: this node must agree with the header and
  // this session's manifest vouch for the bytes, hashing only the graphs this
  // session binds, which may differ from the loading session's.
  const LoadedContext& lc = sc->loaded;
  if (lc.is_container) EPCTX_RETURN_IF_ERROR(CheckVersions(*drv, ep, &lc.container, false));
  if (!m_.verifier().active()) return Status::Ok();
  Bytes file{lc.region.data, static_cast<size_t>(lc.region.size)};
  uint64_t verified = 0;
  // An encrypted file's manifest entry is its ciphertext: the loading
  // session decrypted (and hashed) it all; here it is hashed whole.
  EPCTX_RETURN_IF_ERROR(VerifyContextHead(ep, file, lc.is_container && !lc.sealed, &verified));
  return lc.is_container && !lc.sealed ? VerifyContainerFile(ep, lc.container, file, verified)
                                       : Status::Ok();
}

Status ContextBinder::LoadOneContext(const onnx::EpContextNode& ep, LoadedContext* out) {
  const onnx::NodeView& node = *ep.node;
  out->node = &node;
  // 1. The driver, by source.
  const DriverEntry* drv = nullptr;
  EPCTX_RETURN_IF_ERROR(ChooseDriver(*m_.env(), ep, m_.label(), &drv));
  out->driver = drv;
  m_.env()->Log(EPCTX_LOG_VERBOSE, "%s: EPContext node '%.*s': source '%.*s' routes to driver '%s'",
                m_.label(), node.name.len(), node.name.data, ep.source.len(), ep.source.data,
                drv->info.name);
  // 2. Compatibility from names and versions only: the runtime's own rules
  // (compat.h), then the driver's veto. The container header, when there is
  // one, is checked once it is parsed (LoadContextBytes).
  EPCTX_RETURN_IF_ERROR(CheckVersions(*drv, ep, nullptr, false));
  char msg[Status::kMaxMessage];
  int rc = DriverVeto(*drv, ep, m_.meta(), msg, sizeof msg);
  if (rc != EPCTX_OK)
    return load_failure(Status::Error(rc, "%s: EPContext node '%.*s': driver '%s': %s", m_.label(),
                                      node.name.len(), node.name.data, drv->info.name, msg));
  // Shared by file identity; a file the app gave from memory or a
  // descriptor has none, so it loads privately.
  if (group_ && ep.embed_mode != 1 &&
      !m_.FindExternal(ep.ep_cache_context.data, ep.ep_cache_context.size))
    return AcquireShared(ep, drv, out);
  return LoadContextBytes(ep, drv, m_.meta(), false, out);
}

Status ContextBinder::AllocPlaintext(const DriverEntry& drv, uint64_t size, const char* what,
                                     LoadedContext* out, uint8_t** plain) {
  const uint64_t bytes = size ? size : 1;
  const uint32_t align = drv.info.payload_alignment < 64 ? 64 : drv.info.payload_alignment;
  if (bytes > SIZE_MAX)
    return Status::Error(EPCTX_OUT_OF_MEMORY,
                         "%s: plaintext of %llu bytes, expected at most %zu on this target", what,
                         static_cast<unsigned long long>(bytes), size_t(SIZE_MAX));
  const epctx_hal_driver& fns = drv.fns;
  if (!fns.alloc_context_memory) {
    *plain = static_cast<uint8_t*>(m_.env()->alloc.Alloc(size_t(bytes), align));
    if (!*plain)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory (%llu bytes)", what,
                           static_cast<unsigned long long>(bytes));
  } else {
    const epctx_hal_host* host = &m_.env()->hal_host;
    *plain = static_cast<uint8_t*>(fns.alloc_context_memory(drv.driver, host, bytes, align));
    if (!*plain)
      return Status::Error(EPCTX_OUT_OF_MEMORY,
                           "%s: driver '%s' is out of context memory (alloc_context_memory "
                           "returned NULL for %llu bytes, alignment %u)",
                           what, drv.info.name, static_cast<unsigned long long>(bytes), align);
    const uintptr_t at = reinterpret_cast<uintptr_t>(*plain);
    if (at & (align - 1)) {
      fns.free_context_memory(drv.driver, host, *plain, bytes);
      *plain = nullptr;
      return load_failure(Status::Error(
          EPCTX_INCOMPATIBLE_DRIVER,
          "%s: driver '%s' alloc_context_memory returned memory aligned to %u bytes, expected %u",
          what, drv.info.name, static_cast<unsigned>(at & (0u - at)), align));
    }
    out->copy_host = host;
  }
  out->aligned_copy = *plain;
  out->wipe_size = size_t(bytes);
  return Status::Ok();
}

Status ContextBinder::OpenSealed(const onnx::EpContextNode& ep, bool shared, Arena& arena,
                                 LoadedContext* out, Bytes* blob) {
  const onnx::NodeView& node = *ep.node;
  char what[200];
  format(what, sizeof what, "%s: EPContext node '%.*s' context file '%.*s'", m_.label(),
         node.name.len(), node.name.data, ep.ep_cache_context.len(), ep.ep_cache_context.data);
  // Encrypt, then sign: the manifest lists the ciphertext. Only the
  // segments decrypted below are hashed, each on the private copy it is
  // decrypted from (sealed.h), so graphs this session does not bind are
  // neither decrypted nor hashed.
  const trust::ManifestFile* listed = nullptr;
  EPCTX_RETURN_IF_ERROR(
      m_.verifier().Listed(EPCTX_MF_ROLE_CONTEXT, ep.ep_cache_context, *blob, &listed));
  // The data key: the application's, else unwrapped from <model>.keys.
  const trust::KeyWrapFile* wraps = nullptr;
  EPCTX_RETURN_IF_ERROR(m_.KeyWraps(&wraps));
  trust::SealedAsset sa(m_.env()->alloc);
  EPCTX_RETURN_IF_ERROR(sa.Open(*blob, ep.ep_cache_context, m_.env()->trust, what, listed, wraps));
  const uint64_t size = sa.header().plaintext_size;
  uint8_t* plain = nullptr;
  EPCTX_RETURN_IF_ERROR(AllocPlaintext(*out->driver, size, what, out, &plain));
  out->sealed = true;
  memset(plain, 0, size_t(size));  // what stays encrypted reads as zeros
  Bytes view{plain, size_t(size)};
  if (shared) {
    EPCTX_RETURN_IF_ERROR(sa.Decrypt(0, size, plain));
    *blob = view;
    return Status::Ok();
  }
  // The container header, then the metadata it points to (the parser checks
  // both; here the range only has to be clamped).
  EPCTX_RETURN_IF_ERROR(sa.Decrypt(0, EPCTX_CONTAINER_HEADER_SIZE, plain));
  if (!LooksLikeContainer(view)) {  // a foreign blob: the driver reads it all
    EPCTX_RETURN_IF_ERROR(sa.Decrypt(0, size, plain));
    *blob = view;
    return Status::Ok();
  }
  if (size >= EPCTX_CONTAINER_HEADER_SIZE) {
    const uint64_t off = load_le64(plain + EPCTX_CONTAINER_OFF_METADATA_OFFSET);
    const uint64_t len = load_le64(plain + EPCTX_CONTAINER_OFF_METADATA_SIZE);
    const uint64_t end = off > size || len > size - off ? size : off + len;
    EPCTX_RETURN_IF_ERROR(sa.Decrypt(off < size ? off : size, end, plain));
  }
  // Parsed once, here: LoadContextBytes takes out->container as it is.
  ContainerView& c = out->container;
  char label[200];
  format(label, sizeof label, "%s: EPContext node '%.*s' context", m_.label(), node.name.len(),
         node.name.data);
  Status st = ParseContainer(view, label, arena, &c);
  if (!st.ok()) return load_failure(st);
  out->is_container = true;
  auto decrypt = [&](Bytes b) {
    const uint64_t at = static_cast<uint64_t>(b.data - plain);
    return sa.Decrypt(at, at + b.size, plain);
  };
  EPCTX_RETURN_IF_ERROR(decrypt(c.weights));
  const Bytes* unbound = nullptr;
  uint32_t num_unbound = 0;
  EPCTX_RETURN_IF_ERROR(UnboundPayloads(c, NamesFor(ep), arena, &unbound, &num_unbound));
  for (uint32_t i = 0; i < c.num_graphs; ++i) {
    const Bytes& p = c.graphs[i].payload;
    bool skip = false;
    for (uint32_t k = 0; k < num_unbound && !skip; ++k)
      skip = unbound[k].data == p.data && unbound[k].size == p.size;
    if (!skip) EPCTX_RETURN_IF_ERROR(decrypt(p));
  }
  *blob = view;
  return Status::Ok();
}

Status ContextBinder::LoadContextBytes(const onnx::EpContextNode& ep, const DriverEntry* drv,
                                       Arena& arena, bool shared, LoadedContext* out) {
  const onnx::NodeView& node = *ep.node;
  char msg[Status::kMaxMessage];
  // 3. The bytes: in place inside the model, or a file beneath its folder.
  Bytes blob;
  if (ep.embed_mode == 1) {
    blob =
        Bytes{reinterpret_cast<const uint8_t*>(ep.ep_cache_context.data), ep.ep_cache_context.size};
  } else {
    char what[160];
    format(what, sizeof what, "EPContext node '%.*s' context file", node.name.len(),
           node.name.data);
    Status st = m_.MapBeneath(m_.base_dir(), ep.ep_cache_context.data, ep.ep_cache_context.size,
                              what, &out->region);
    if (!st.ok()) return load_failure(st);
    blob = Bytes{out->region.data, static_cast<size_t>(out->region.size)};
  }
  // Encrypted: from here on blob is the private plaintext, already checked.
  if (ep.embed_mode != 1 && trust::LooksSealed(blob)) {
    out->driver = drv;
    EPCTX_RETURN_IF_ERROR(OpenSealed(ep, shared, arena, out, &blob));
  }
  uint32_t align = drv->info.payload_alignment;
  if (blob.size && (reinterpret_cast<uintptr_t>(blob.data) & (align - 1)) != 0) {
    // Only files written by other tools get here: epctx-compile aligns
    // embedded payloads. Keep working, but say that this costs a copy.
    out->aligned_copy = m_.env()->alloc.Alloc(blob.size, align < 16 ? 16 : align);
    if (!out->aligned_copy)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory copying a context", m_.label());
    memcpy(out->aligned_copy, blob.data, blob.size);
    m_.env()->Log(1, "%s: EPContext node '%.*s': payload not aligned to %u bytes; copied %zu bytes",
                  m_.label(), node.name.len(), node.name.data, align, blob.size);
    blob.data = static_cast<const uint8_t*>(out->aligned_copy);
  }
  epctx_hal_blob hb;
  memset(&hb, 0, sizeof hb);
  hb.struct_size = sizeof hb;
  hb.data = blob.data;
  hb.size = blob.size;
  epctx_hal_graph_blob* graphs = nullptr;
  // Signed packages: a context file's header and metadata are verified
  // before the parser reads them, its payloads before the driver does. An
  // embedded blob is part of the already verified model.
  bool container = LooksLikeContainer(blob);
  uint64_t verified = 0;
  const bool verify = ep.embed_mode != 1 && !out->sealed;
  if (verify) EPCTX_RETURN_IF_ERROR(VerifyContextHead(ep, blob, container, &verified));
  if (container) {
    char label[200];
    format(label, sizeof label, "%s: EPContext node '%.*s' context", m_.label(), node.name.len(),
           node.name.data);
    // An encrypted container was parsed when its metadata was decrypted.
    if (!out->is_container) {
      Status st = ParseContainer(blob, label, arena, &out->container);
      if (!st.ok()) return load_failure(st);
    }
    StrView csrc{out->container.source, cstr_len(out->container.source)};
    if (!drv->Accepts(csrc))
      return load_failure(Status::Error(
          EPCTX_INVALID_GRAPH, "%s: container was built for '%s', driver '%s' does not accept it",
          label, out->container.source, drv->info.name));
    out->is_container = true;
    hb.is_container = 1;
    hb.weights = out->container.weights.data;
    hb.weights_size = out->container.weights.size;
    hb.num_graphs = out->container.num_graphs;
    graphs = arena.AllocArray<epctx_hal_graph_blob>(hb.num_graphs + 1);
    if (!graphs) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", m_.label());
    for (uint32_t i = 0; i < hb.num_graphs; ++i) {
      graphs[i].name = out->container.graphs[i].name;
      graphs[i].data = out->container.graphs[i].payload.data;
      graphs[i].size = out->container.graphs[i].payload.size;
    }
    hb.graphs = graphs;
    // The blob's base is aligned (above); its segments are as aligned as the
    // compiler laid them out, which may be less than this driver wants.
    const uint32_t align = drv->info.payload_alignment;
    const uint8_t* misaligned = nullptr;
    const char* what = "weight segment";
    if (hb.weights && (reinterpret_cast<uintptr_t>(hb.weights) & (align - 1)))
      misaligned = hb.weights;
    for (uint32_t i = 0; !misaligned && i < hb.num_graphs; ++i)
      if (graphs[i].size && (reinterpret_cast<uintptr_t>(graphs[i].data) & (align - 1))) {
        misaligned = graphs[i].data;
        what = graphs[i].name;
      }
    if (misaligned)
      return load_failure(Status::Error(
          EPCTX_INCOMPATIBLE_DRIVER,
          "%s: '%s' at offset %llu is not aligned to the %u bytes driver '%s' requires "
          "(payload_alignment); recompile the context for this driver",
          label, what, static_cast<unsigned long long>(misaligned - blob.data), align,
          drv->info.name));
    // Every graph goes to the driver (a group's later sessions may bind the
    // others), but the driver reads a payload only when get_graph binds it:
    // the payloads of graphs this session does not bind are not hashed.
    if (verify) EPCTX_RETURN_IF_ERROR(VerifyContainerFile(ep, out->container, blob, verified));
  }
  EPCTX_RETURN_IF_ERROR(CheckVersions(*drv, ep, container ? &out->container : nullptr, true));
  // 4. The driver.
  msg[0] = '\0';
  int rc =
      drv->driver->load_context(drv->driver, &hb, &m_.env()->hal_host, &out->ctx, msg, sizeof msg);
  if (rc != EPCTX_OK) {
    out->ctx = nullptr;
    return load_failure(Status::Error(rc, "%s: EPContext node '%.*s': driver '%s': %s", m_.label(),
                                      node.name.len(), node.name.data, drv->info.name, msg));
  }
  // Read-ahead stays off until the session's graphs are bound (get_graph
  // reads their payloads): see Bind.
  if (advise_willneed_) AdviseWillNeed(*out, out->container.weights);
  return Status::Ok();
}

}  // namespace epctx
