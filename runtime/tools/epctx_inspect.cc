// SPDX-License-Identifier: Apache-2.0
// epctx-inspect [--json] [-C key=value ...] MODEL_ctx.onnx
//
// Lists what an EPContext model holds and whether this device can run it:
// every EPContext node with its attributes (payload sizes, never bytes), the
// resolved file of each embed_mode=0 node, the registered driver that would
// take it and the pre-flight verdict (epctx_model_check_compatibility), the
// container metadata of each context (format and producer versions, SDK,
// hardware, minimum driver, graphs with payload sizes, weight bytes), and
// the CPU nodes with their op types. Every failure is one line
// "epctx-inspect: error: ..." and a non-zero exit.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <epctx/epctx.h>
#include <epctx/pal.h>

#include "capi/capi_internal.h"
#include "container/container.h"
#include "session/compat.h"
#include "session/session.h"
#include "kernels/kernel.h"
#include "onnx/epcontext.h"
#include "onnx/model.h"
#include "cli_args.h"
#include "json_writer.h"
#include "vnpu_env.h"

namespace {

[[noreturn]] void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("epctx-inspect: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

void check(epctx_status* st) {
  if (!st) return;
  die("%s: %s", epctx_code_name(epctx_status_code(st)), epctx_status_message(st));
}

// Output: text or JSON through one interface, so both list the same facts.
struct Out {
  bool json = false;
  int depth = 0;
  epctx_json j;

  Out() { epctx_json_init(&j, stdout, 0); }
  void key(const char* k) {
    if (json) epctx_json_key(&j, k);
    else printf("%*s%s: ", 2 * (depth - 1), "", k);
  }
  void open(const char* k, char bracket) {  // k nullptr inside arrays
    if (k) key(k);
    if (json) {
      if (bracket == '{') epctx_json_begin_object(&j);
      else epctx_json_begin_array(&j);
    } else if (k) {
      fputc('\n', stdout);
    }
    ++depth;
  }
  void close(char bracket) {
    --depth;
    if (!json) return;
    if (bracket == '}') epctx_json_end_object(&j);
    else epctx_json_end_array(&j);
  }
  void s(const char* k, epctx::StrView v) {
    key(k);
    if (json) epctx_json_string_n(&j, v.data ? v.data : "", v.size);
    else printf("%.*s\n", v.len(), v.data ? v.data : "");
  }
  void s(const char* k, const char* v) { s(k, epctx::StrView{v, strlen(v)}); }
  void u(const char* k, unsigned long long v) {
    key(k);
    if (json) epctx_json_uint(&j, v);
    else printf("%llu\n", v);
  }
  void null(const char* k) {
    key(k);
    if (json) epctx_json_null(&j);
    else fputs("(none)\n", stdout);
  }
  void item_text(const char* what, unsigned i) {
    if (!json) printf("%*s%s %u\n", 2 * (depth - 1), "", what, i);
  }
};

const epctx_cli_tool kTool = {
    "epctx-inspect",
    "[options] MODEL_ctx.onnx",
    "Lists what an EPContext model holds and whether this device's drivers can run it.",
    nullptr,
    nullptr,
    "print the listing as one JSON object"};

int add_option(void* user, const char* key, const char* value, char*, size_t) {
  check(epctx_session_options_set(static_cast<epctx_session_options*>(user), key, value));
  return 0;
}

void version(Out& o, const char* k, const epctx::ContainerVersion& v) {
  char b[48];
  snprintf(b, sizeof b, "%u.%u.%u", v.major, v.minor, v.patch);
  o.s(k, b);
}

// The container's metadata; for an external file (which pre-flight does not
// open) also the version verdict including its header, for driver `drv`.
void container(Out& o, epctx::Bytes blob, const char* label, const epctx::DriverEntry* drv,
               const epctx::onnx::EpContextNode* ep) {
  if (!epctx::LooksLikeContainer(blob)) {
    o.null("container");
    return;
  }
  epctx::Allocator a = epctx::Allocator::Default();
  epctx::Arena arena(a);
  epctx::ContainerView c;
  epctx::Status st = epctx::ParseContainer(blob, label, arena, &c);
  if (!st.ok()) {
    o.s("container_error", st.message());
    return;
  }
  o.open("container", '{');
  char fmt[32];
  snprintf(fmt, sizeof fmt, "%u.%u", c.format_major, c.format_minor);
  o.s("format_version", fmt);
  o.s("source", c.source);
  o.s("producer", c.producer);
  version(o, "producer_version", c.producer_version);
  version(o, "sdk_version", c.sdk_version);
  o.s("hardware_architecture", c.hardware_architecture);
  version(o, "min_driver_version", c.min_driver_version);
  o.u("weight_bytes", c.weights.size);
  o.open("graphs", '[');
  for (uint32_t i = 0; i < c.num_graphs; ++i) {
    o.item_text("graph", i);
    o.open(nullptr, '{');
    o.s("name", c.graphs[i].name);
    o.u("payload_bytes", c.graphs[i].payload.size);
    o.close('}');
  }
  o.close(']');
  o.close('}');
  if (drv && ep) {
    epctx::CompiledFor cf{ep->node->name, ep->ep_sdk_version, ep->hardware_architecture, &c};
    epctx::CompatResult r;
    epctx::CheckCompiledFor(*drv, cf, &r);
    o.s("file_verdict", epctx_compat_name(static_cast<epctx_compat>(r.verdict)));
    if (r.reason[0]) {
      o.s("file_cause", epctx_code_name(r.cause));
      o.s("file_reason", r.reason);
    }
  }
}

}  // namespace

// Released at exit, whichever path leaves (die() and usage errors exit
// early; LeakSanitizer builds check that nothing is left).
static epctx_session_options* g_options = nullptr;
static epctx_env* g_env = nullptr;
static epctx_compat_report* g_report = nullptr;
static void release_options() {
  epctx_compat_report_release(g_report);
  epctx_env_release(g_env);
  epctx_session_options_release(g_options);
}

int main(int argc, char** argv) {
  const char* model = nullptr;
  Out o;
  check(epctx_session_options_create(&g_options));
  atexit(release_options);
  epctx_session_options* options = g_options;
  epctx_cli_parser p;
  epctx_cli_init(&p, &kTool, argc, argv);
  const char* v = nullptr;
  int id;
  while ((id = epctx_cli_next(&p, &v)) > 0) {
    char err[512];
    switch (id) {
      case EPCTX_CLI_HELP: epctx_cli_help(&kTool, stdout); return 0;
      case EPCTX_CLI_VERSION: epctx_cli_version(&kTool, stdout); return 0;
      case EPCTX_CLI_JSON: o.json = true; break;
      case EPCTX_CLI_CONFIG:
        if (epctx_cli_split_config(const_cast<char*>(v), add_option, options, err, sizeof err))
          return epctx_cli_usage_error(&kTool, "%s", err);
        break;
      default: break;
    }
  }
  if (id < 0) return EPCTX_CLI_EXIT_USAGE;
  if (p.num_operands != 1)
    return epctx_cli_usage_error(&kTool,
                                 p.num_operands ? "more than one model given" : "no model given");
  model = p.operands[0];
  char err[256];
  if (epctx_tool_vnpu_from_env(err, sizeof err)) die("%s", err);

  check(epctx_env_create(nullptr, 0, &g_env));
  epctx_env* env = g_env;
  check(epctx_env_register_builtin_drivers(env));
  check(epctx_model_check_compatibility(env, model, options, &g_report));
  epctx_compat_report* report = g_report;

  char msg[512];
  epctx_pal_region region{};
  int rc = epctx_pal_map_file(model, EPCTX_PAL_LOAD_MMAP, &region, msg, sizeof msg);
  if (rc != EPCTX_OK) die("%s: %s", epctx_code_name(rc), msg);
  epctx::Allocator alloc = epctx::Allocator::Default();
  epctx::Arena arena(alloc);
  epctx::onnx::ModelView m;
  epctx::Status st = epctx::onnx::ParseModel(
      epctx::Bytes{region.data, static_cast<size_t>(region.size)}, model, arena, &m);
  if (!st.ok()) die("%s: %s", epctx_code_name(st.code()), st.message());
  // The folder the session would resolve context files against.
  const char* base = epctx::ContextBaseDir(*epctx::capi::OptionsOf(options), model, arena);
  if (!base) die("out of memory");

  o.open(nullptr, '{');
  o.s("model", model);
  o.s("producer", m.producer_name);
  o.s("producer_version", m.producer_version);
  o.u("ir_version", static_cast<unsigned long long>(m.ir_version));
  o.s("domain", m.domain);
  o.u("model_version", static_cast<unsigned long long>(m.model_version));
  o.s("graph_name", m.graph.name);
  o.open("metadata_props", '[');
  for (uint32_t i = 0; i < m.num_metadata; ++i) {
    o.item_text("metadata_prop", i);
    o.open(nullptr, '{');
    o.s("key", m.metadata[i].key);
    o.s("value", m.metadata[i].value);
    o.close('}');
  }
  o.close(']');
  epctx::Env* e = epctx::capi::EnvOf(env);
  o.open("drivers", '[');
  for (int i = 0; i < e->num_drivers; ++i) {
    const epctx_hal_driver_info& d = e->drivers[i].info;
    char v[96];
    o.item_text("driver", static_cast<unsigned>(i));
    o.open(nullptr, '{');
    o.s("name", d.name);
    snprintf(v, sizeof v, "%u.%u.%u", d.driver_version.major, d.driver_version.minor,
             d.driver_version.patch);
    o.s("driver_version", v);
    snprintf(v, sizeof v, "%u.%u.%u", d.sdk_version.major, d.sdk_version.minor,
             d.sdk_version.patch);
    o.s("sdk_version", v);
    o.s("hardware_architecture", d.hardware_architecture ? d.hardware_architecture : "");
    o.close('}');
  }
  o.close(']');
  o.s("preflight", epctx_compat_name(epctx_compat_report_overall(report)));
  if (epctx_compat_report_reason(report)[0])
    o.s("preflight_reason", epctx_compat_report_reason(report));

  const epctx::onnx::GraphView& g = m.graph;
  o.open("epcontext_nodes", '[');
  uint32_t k = 0;
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const epctx::onnx::NodeView& node = g.nodes[n];
    if (!epctx::onnx::IsEpContextNode(node)) continue;
    o.item_text("EPContext node", k);
    o.open(nullptr, '{');
    o.s("name", node.name);
    epctx::onnx::EpContextNode ep;
    st = epctx::onnx::ExtractEpContext(node, &ep);
    if (!st.ok()) {
      o.s("error", st.message());
    } else {
      o.s("source", ep.source);
      o.u("main_context", static_cast<unsigned long long>(ep.main_context));
      o.u("embed_mode", static_cast<unsigned long long>(ep.embed_mode));
      o.u("inputs", node.num_inputs);
      o.u("outputs", node.num_outputs);
      if (!ep.ep_sdk_version.empty()) o.s("ep_sdk_version", ep.ep_sdk_version);
      if (!ep.hardware_architecture.empty()) o.s("hardware_architecture", ep.hardware_architecture);
      if (!ep.partition_name.empty()) o.s("partition_name", ep.partition_name);
      if (!ep.onnx_model_filename.empty()) o.s("onnx_model_filename", ep.onnx_model_filename);
      if (ep.max_size) o.u("max_size", static_cast<unsigned long long>(ep.max_size));
      if (ep.main_context == 1 && ep.embed_mode == 1) {
        o.u("payload_bytes", ep.ep_cache_context.size);
        container(o,
                  epctx::Bytes{reinterpret_cast<const uint8_t*>(ep.ep_cache_context.data),
                               ep.ep_cache_context.size},
                  "embedded payload", nullptr, nullptr);
      } else if (ep.main_context == 1) {
        o.s("ep_cache_context", ep.ep_cache_context);
        char resolved[8192];
        snprintf(resolved, sizeof resolved, "%s%s%.*s", base, *base ? "/" : "",
                 ep.ep_cache_context.len(), ep.ep_cache_context.data);
        o.s("file", resolved);
        char rel[4096];
        epctx_pal_region f{};
        if (ep.ep_cache_context.size >= sizeof rel ||
            memchr(ep.ep_cache_context.data, 0, ep.ep_cache_context.size)) {
          o.s("file_error", "path is too long or contains a NUL byte");
        } else {
          snprintf(rel, sizeof rel, "%.*s", ep.ep_cache_context.len(), ep.ep_cache_context.data);
          rc = epctx_pal_map_file_beneath(base, rel, EPCTX_PAL_LOAD_MMAP, &f, msg, sizeof msg);
          if (rc != EPCTX_OK) {
            char line[700];
            snprintf(line, sizeof line, "%s: %s", epctx_code_name(rc), msg);
            o.s("file_error", line);
          } else {
            o.u("payload_bytes", f.size);
            const epctx::DriverEntry* drv = nullptr;
            if (!epctx::ChooseDriver(*e, ep, model, &drv).ok()) drv = nullptr;
            container(o, epctx::Bytes{f.data, static_cast<size_t>(f.size)}, resolved, drv, &ep);
            epctx_pal_unmap(&f);
          }
        }
      }
    }
    epctx_compat_node cn;
    if (k < epctx_compat_report_node_count(report) && !epctx_compat_report_node(report, k, &cn)) {
      if (cn.driver) o.s("driver", cn.driver);
      else o.null("driver");
      o.s("verdict", epctx_compat_name(cn.verdict));
      if (cn.reason[0]) {
        o.s("cause", epctx_code_name(cn.cause));
        o.s("reason", cn.reason);
      }
    }
    o.close('}');
    ++k;
  }
  o.close(']');
  o.open("cpu_nodes", '[');
  uint32_t c = 0;
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const epctx::onnx::NodeView& node = g.nodes[n];
    if (epctx::onnx::IsEpContextNode(node)) continue;
    o.item_text("CPU node", c++);
    o.open(nullptr, '{');
    o.s("name", node.name);
    o.s("op_type", node.op_type);
    if (!node.domain.empty()) o.s("domain", node.domain);
    bool kernel = epctx::FindKernel(node.domain, node.op_type, m.opset(node.domain)) != nullptr;
    o.s("cpu_kernel", kernel ? "yes" : "no");
    o.close('}');
  }
  o.close(']');
  o.close('}');
  if (o.json) epctx_json_finish(&o.j);
  epctx_pal_unmap(&region);
  // options, env and report: released at exit (release_options).
  return 0;
}
