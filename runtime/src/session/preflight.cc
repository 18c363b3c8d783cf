// SPDX-License-Identifier: Apache-2.0
// Pre-flight compatibility answer; see preflight.h.
#include "session/preflight.h"

#include "container/container.h"
#include "kernels/kernel.h"
#include "onnx/epcontext.h"
#include "onnx/model.h"

namespace epctx {
namespace {

const char* dup_msg(Arena& a, const char* s) { return a.CStr(StrView{s, cstr_len(s)}); }

void set(PreflightNode* n, Arena& a, CompatVerdict v, int cause, const char* reason) {
  if (n->verdict == kCompatUnsupported || v < n->verdict) return;
  n->verdict = v;
  n->cause = cause;
  n->reason = dup_msg(a, reason);
}

void check_node(const Env& env, const onnx::EpContextNode& ep, const char* label,
                const char* base_dir, bool fail_on_suboptimal, Arena& arena, PreflightNode* n) {
  const onnx::NodeView& node = *ep.node;
  n->name = arena.CStr(node.name);
  n->source = arena.CStr(ep.source);
  n->main_context = ep.main_context;
  n->embed_mode = ep.embed_mode;
  const DriverEntry* drv = nullptr;
  Status st = ChooseDriver(env, ep, label, &drv);
  if (!st.ok()) return set(n, arena, kCompatUnsupported, st.code(), st.message());
  n->driver = drv->info.name;
  CompiledFor compiled{node.name, ep.ep_sdk_version, ep.hardware_architecture, nullptr};
  ContainerView container;
  if (ep.main_context == 1 && ep.embed_mode == 1) {
    Bytes blob{reinterpret_cast<const uint8_t*>(ep.ep_cache_context.data),
               ep.ep_cache_context.size};
    if (LooksLikeContainer(blob)) {
      st = ParseContainer(blob, n->name, arena, &container);
      if (!st.ok()) return set(n, arena, kCompatUnsupported, st.code(), st.message());
      compiled.container = &container;
      n->container_checked = true;
    }
  } else if (ep.main_context == 1) {
    if (!base_dir)
      return set(n, arena, kCompatUnsupported, EPCTX_INVALID_ARGUMENT,
                 "model given as a buffer with an external context file: set "
                 "ep.context_file_path");
    // The session's path rule, decided lexically (the file is not opened).
    const StrView p = ep.ep_cache_context;
    if (const char* problem = relative_path_problem(p)) {
      char why[Status::kMaxMessage];
      format(why, sizeof why, "ep_cache_context path '%.*s' %s", p.len(), p.data, problem);
      return set(n, arena, kCompatUnsupported, EPCTX_PATH_REJECTED, why);
    }
  }
  CompatResult r;
  CheckCompiledFor(*drv, compiled, &r);
  CompatVerdict v = EffectiveVerdict(r, fail_on_suboptimal);
  if (v != kCompatOptimal) set(n, arena, v, r.cause, r.reason);
  if (n->verdict == kCompatUnsupported) return;
  char msg[Status::kMaxMessage];
  int rc = DriverVeto(*drv, ep, arena, msg, sizeof msg);
  if (rc != EPCTX_OK) set(n, arena, kCompatUnsupported, rc, msg);
}

// Calls f on every node of g and of its subgraphs (the parser bounded
// their depth), so EPContext nodes inside If/Loop/Scan bodies are checked
// like top-level ones.
template <typename F>
void ForEachNode(const onnx::GraphView& g, F&& f) {
  for (uint32_t i = 0; i < g.num_nodes; ++i) {
    f(g.nodes[i]);
    for (uint32_t a = 0; a < g.nodes[i].num_attrs; ++a)
      if (g.nodes[i].attrs[a].g) ForEachNode(*g.nodes[i].attrs[a].g, f);
  }
}

}  // namespace

Status Preflight(const Env& env, Bytes model_bytes, const char* label, const char* base_dir,
                 const Options& options, Arena& arena, PreflightReport* out) {
  *out = PreflightReport{};
  onnx::ModelView model;
  EPCTX_RETURN_IF_ERROR(onnx::ParseModel(model_bytes, label, arena, &model));
  const bool fail_on_suboptimal = options.Flag(kOptFailOnSuboptimal);
  const onnx::GraphView& g = model.graph;
  uint32_t num_ep = 0;
  ForEachNode(g, [&](const onnx::NodeView& n) { num_ep += onnx::IsEpContextNode(n) ? 1 : 0; });
  out->nodes = arena.AllocArray<PreflightNode>(num_ep + 1);
  if (!out->nodes) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label);
  ForEachNode(g, [&](const onnx::NodeView& node) {
    if (!onnx::IsEpContextNode(node)) {
      if (out->overall != kCompatUnsupported &&
          !FindKernel(node.domain, node.op_type, model.opset(node.domain))) {
        char msg[Status::kMaxMessage];
        format(msg, sizeof msg,
               "node '%.*s': op %.*s%s%.*s is not an EPContext node and has no CPU kernel%s; "
               "the model requires compilation",
               node.name.len(), node.name.data, node.domain.len(), node.domain.data,
               node.domain.empty() ? "" : ".", node.op_type.len(), node.op_type.data,
               KernelLeftOutOfBuild(node.domain, node.op_type, model.opset(node.domain))
                   ? " in this build (left out by EPCTX_CPU_OPS)"
                   : "");
        out->overall = kCompatUnsupported;
        out->cause = EPCTX_MODEL_REQUIRES_COMPILATION;
        out->reason = dup_msg(arena, msg);
      }
      return;
    }
    PreflightNode* n = new (&out->nodes[out->num_nodes++]) PreflightNode();
    onnx::EpContextNode ep;
    Status st = onnx::ExtractEpContext(node, &ep);
    if (!st.ok()) {
      n->name = arena.CStr(node.name);
      set(n, arena, kCompatUnsupported, st.code(), st.message());
    } else {
      check_node(env, ep, label, base_dir, fail_on_suboptimal, arena, n);
    }
    if (n->verdict > out->overall) {
      out->overall = n->verdict;
      out->cause = n->cause;
    }
  });
  return Status::Ok();
}

}  // namespace epctx
