// SPDX-License-Identifier: Apache-2.0
// C API of the pre-flight compatibility check (session/preflight.h).
//
// A report owns an arena holding every string it returns; the model is
// mapped (or the caller's buffer borrowed) only for the duration of the call.
#include <epctx/epctx.h>
#include <epctx/pal.h>

#include "capi/capi_internal.h"
#include "session/preflight.h"
#include "session/session.h"

struct epctx_compat_report {
  epctx::Allocator alloc;
  epctx::Arena arena;
  epctx::PreflightReport report;
  explicit epctx_compat_report(const epctx::Allocator& a) : alloc(a), arena(a, 8 * 1024) {}
};

namespace {

using epctx::capi::MakeStatus;

epctx_status* check(epctx_env* env, const char* path, const void* data, size_t size,
                    const epctx_session_options* options, epctx_compat_report** out) {
  if (!env || !out)
    return MakeStatus(
        epctx::Status::Error(EPCTX_INVALID_ARGUMENT, "check compatibility: env or out is NULL"));
  *out = nullptr;
  epctx::Env* e = epctx::capi::EnvOf(env);
  const epctx::Options* opts = epctx::capi::OptionsOf(options);
  epctx::Options* defaults = opts ? nullptr : epctx::capi::NewEmptyOptions(e->alloc);
  if (!opts) opts = defaults;
  epctx_compat_report* r = opts ? e->alloc.New<epctx_compat_report>(e->alloc) : nullptr;
  if (!r) {
    e->alloc.Delete(defaults);
    return MakeStatus(
        epctx::Status::Error(EPCTX_OUT_OF_MEMORY, "check compatibility: out of memory"));
  }
  epctx_pal_region region{};
  epctx::Bytes bytes{static_cast<const uint8_t*>(data), size};
  const char* label = "<buffer>";
  const char* base = epctx::ContextBaseDir(*opts, path, r->arena);
  if (path) {
    char msg[epctx::Status::kMaxMessage];
    int rc = epctx_pal_map_file(path, EPCTX_PAL_LOAD_MMAP, &region, msg, sizeof msg);
    if (rc != EPCTX_OK) {
      e->alloc.Delete(r);
      e->alloc.Delete(defaults);
      return MakeStatus(epctx::Status::Error(rc, "%s", msg));
    }
    bytes = epctx::Bytes{region.data, static_cast<size_t>(region.size)};
    label = path;
  }
  epctx::Status st = epctx::Preflight(*e, bytes, label, base, *opts, r->arena, &r->report);
  epctx_pal_unmap(&region);
  e->alloc.Delete(defaults);
  if (!st.ok()) {
    e->alloc.Delete(r);
    return MakeStatus(st);
  }
  *out = r;
  return nullptr;
}

}  // namespace

extern "C" {

epctx_status* epctx_model_check_compatibility(epctx_env* env, const char* model_path,
                                              const epctx_session_options* options,
                                              epctx_compat_report** out) {
  if (!model_path)
    return MakeStatus(
        epctx::Status::Error(EPCTX_INVALID_ARGUMENT, "check compatibility: model_path is NULL"));
  return check(env, model_path, nullptr, 0, options, out);
}

epctx_status* epctx_model_check_compatibility_from_buffer(epctx_env* env, const void* data,
                                                          size_t size,
                                                          const epctx_session_options* options,
                                                          epctx_compat_report** out) {
  if (!data || !size)
    return MakeStatus(epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                                           "check compatibility: buffer is NULL or empty"));
  return check(env, nullptr, data, size, options, out);
}

epctx_compat epctx_compat_report_overall(const epctx_compat_report* r) {
  return r ? static_cast<epctx_compat>(r->report.overall) : EPCTX_COMPAT_UNSUPPORTED;
}
int epctx_compat_report_cause(const epctx_compat_report* r) {
  return r ? r->report.cause : EPCTX_INVALID_ARGUMENT;
}
const char* epctx_compat_report_reason(const epctx_compat_report* r) {
  return r ? r->report.reason : "";
}
size_t epctx_compat_report_node_count(const epctx_compat_report* r) {
  return r ? r->report.num_nodes : 0;
}

epctx_status* epctx_compat_report_node(const epctx_compat_report* r, size_t index,
                                       epctx_compat_node* out) {
  if (!r || !out || index >= r->report.num_nodes)
    return MakeStatus(
        epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                             "compat report node: NULL argument or index %zu out of range", index));
  const epctx::PreflightNode& n = r->report.nodes[index];
  out->node_name = n.name;
  out->source = n.source;
  out->driver = n.driver;
  out->main_context = static_cast<int>(n.main_context);
  out->embed_mode = static_cast<int>(n.embed_mode);
  out->verdict = static_cast<epctx_compat>(n.verdict);
  out->cause = n.cause;
  out->reason = n.reason;
  out->container_checked = n.container_checked ? 1 : 0;
  return nullptr;
}

void epctx_compat_report_release(epctx_compat_report* r) {
  if (!r) return;
  epctx::Allocator a = r->alloc;
  a.Delete(r);
}

const char* epctx_compat_name(epctx_compat verdict) {
  switch (verdict) {
    case EPCTX_COMPAT_OPTIMAL: return "OPTIMAL";
    case EPCTX_COMPAT_PREFER_RECOMPILATION: return "PREFER_RECOMPILATION";
    case EPCTX_COMPAT_UNSUPPORTED: return "UNSUPPORTED";
  }
  return "UNKNOWN";
}

}  // extern "C"
