// Pre-flight compatibility answer; see preflight.h.
#include "session/preflight.h"

#include "container/container.h"
#include "kernels/kernel.h"
#include "onnx/epcontext.h"
#include "onnx/model.h"

namespace epctx {
namespace {

const char* dup(Arena& a, StrView s) {
  const char* p = a.Strdup(s.data ? s.data : "", s.size);
  return p ? p : "";
}

const char* dup_msg(Arena& a, const char* s) { return dup(a, StrView{s, cstr_len(s)}); }

// The path rules of the session (contexts.cc, the PAL), decided lexically:
// what can be told without touching the file system.
bool path_plausible(StrView p, char* why, size_t cap) {
  if (p.empty()) return format(why, cap, "ep_cache_context is an empty path"), false;
  if (p.data[0] == '/') return format(why, cap, "path '%.*s' is absolute", p.len(), p.data), false;
  size_t start = 0;
  for (size_t i = 0; i <= p.size; ++i) {
    if (i < p.size && p.data[i] == '\0')
      return format(why, cap, "path '%.*s' contains a NUL byte", p.len(), p.data), false;
    if (i == p.size || p.data[i] == '/') {
      if (i - start == 2 && p.data[start] == '.' && p.data[start + 1] == '.')
        return format(why, cap, "path '%.*s' has a '..' component", p.len(), p.data), false;
      start = i + 1;
    }
  }
  return true;
}

void set(PreflightNode* n, Arena& a, CompatVerdict v, int cause, const char* reason) {
  if (n->verdict == kCompatUnsupported || v < n->verdict) return;
  n->verdict = v;
  n->cause = cause;
  n->reason = dup_msg(a, reason);
}

void check_node(const Env& env, const onnx::EpContextNode& ep, const char* label,
                const char* base_dir, bool fail_on_suboptimal, Arena& arena, PreflightNode* n) {
  const onnx::NodeView& node = *ep.node;
  n->name = dup(arena, node.name);
  n->source = dup(arena, ep.source);
  n->main_context = ep.main_context;
  n->embed_mode = ep.embed_mode;
  const DriverEntry* drv = nullptr;
  Status st = ChooseDriver(env, ep, label, &drv);
  if (!st.ok()) return set(n, arena, kCompatUnsupported, st.code(), st.message());
  n->driver = drv->info.name;
  CompiledFor compiled{node.name, ep.ep_sdk_version, ep.hardware_architecture, nullptr};
  ContainerView container;
  if (ep.main_context == 1 && ep.embed_mode == 1) {
    Bytes blob{reinterpret_cast<const uint8_t*>(ep.ep_cache_context.data), ep.ep_cache_context.size};
    if (LooksLikeContainer(blob)) {
      st = ParseContainer(blob, n->name, arena, &container);
      if (!st.ok()) return set(n, arena, kCompatUnsupported, st.code(), st.message());
      compiled.container = &container;
      n->container_checked = true;
    }
  } else if (ep.main_context == 1) {
    char why[Status::kMaxMessage];
    if (!base_dir)
      return set(n, arena, kCompatUnsupported, EPCTX_INVALID_ARGUMENT,
                 "model given as a buffer with an external context file: set "
                 "ep.context_file_path");
    if (!path_plausible(ep.ep_cache_context, why, sizeof why))
      return set(n, arena, kCompatUnsupported, EPCTX_PATH_REJECTED, why);
  }
  CompatResult r;
  CheckCompiledFor(*drv, compiled, &r);
  if (r.verdict == kCompatPreferRecompilation && fail_on_suboptimal) r.verdict = kCompatUnsupported;
  if (r.verdict != kCompatOptimal) set(n, arena, r.verdict, r.cause, r.reason);
  if (n->verdict == kCompatUnsupported) return;
  epctx_hal_context_desc desc;
  desc.source = n->source;
  desc.ep_sdk_version = dup(arena, ep.ep_sdk_version);
  desc.hardware_architecture = dup(arena, ep.hardware_architecture);
  desc.node_name = n->name;
  char msg[Status::kMaxMessage];
  msg[0] = '\0';
  int rc = drv->driver->check_compatibility(drv->driver, &desc, msg, sizeof msg);
  if (rc != EPCTX_OK) set(n, arena, kCompatUnsupported, rc, msg);
}

}  // namespace

Status Preflight(const Env& env, Bytes model_bytes, const char* label, const char* base_dir,
                 const Options& options, Arena& arena, PreflightReport* out) {
  *out = PreflightReport{};
  onnx::ModelView model;
  EPCTX_RETURN_IF_ERROR(onnx::ParseModel(model_bytes, label, arena, &model));
  const char* sub = options.Get(kOptFailOnSuboptimal);
  bool fail_on_suboptimal = sub && cstr_eq(sub, "1");
  const onnx::GraphView& g = model.graph;
  uint32_t num_ep = 0;
  for (uint32_t i = 0; i < g.num_nodes; ++i) num_ep += onnx::IsEpContextNode(g.nodes[i]) ? 1 : 0;
  out->nodes = arena.AllocArray<PreflightNode>(num_ep + 1);
  if (!out->nodes) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label);
  for (uint32_t i = 0; i < g.num_nodes; ++i) {
    const onnx::NodeView& node = g.nodes[i];
    if (!onnx::IsEpContextNode(node)) {
      ++out->num_cpu_nodes;
      if (out->overall != kCompatUnsupported &&
          !FindKernel(node.domain, node.op_type, model.opset(node.domain))) {
        char msg[Status::kMaxMessage];
        format(msg, sizeof msg,
               "node '%.*s': op %.*s%s%.*s is not an EPContext node and has no CPU kernel; the "
               "model requires compilation",
               node.name.len(), node.name.data, node.domain.len(), node.domain.data,
               node.domain.empty() ? "" : ".", node.op_type.len(), node.op_type.data);
        out->overall = kCompatUnsupported;
        out->cause = EPCTX_MODEL_REQUIRES_COMPILATION;
        out->reason = dup_msg(arena, msg);
      }
      continue;
    }
    PreflightNode* n = new (&out->nodes[out->num_nodes++]) PreflightNode();
    onnx::EpContextNode ep;
    Status st = onnx::ExtractEpContext(node, &ep);
    if (!st.ok()) {
      n->name = dup(arena, node.name);
      set(n, arena, kCompatUnsupported, st.code(), st.message());
    } else {
      check_node(env, ep, label, base_dir, fail_on_suboptimal, arena, n);
    }
    if (n->verdict > out->overall) {
      out->overall = n->verdict;
      out->cause = n->cause;
    }
  }
  return Status::Ok();
}

}  // namespace epctx
