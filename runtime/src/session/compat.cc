// SPDX-License-Identifier: Apache-2.0
// Version and compatibility rules; see compat.h.
#include "session/compat.h"

#include <cstdarg>

namespace epctx {
namespace {

bool is_set(const ContainerVersion& v) { return v.major || v.minor || v.patch; }
Version3 from(const ContainerVersion& v) { return Version3{v.major, v.minor, v.patch}; }
Version3 from(const epctx_hal_version& v) { return Version3{v.major, v.minor, v.patch}; }

int cmp3(const Version3& a, const Version3& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  return 0;
}

// Records a rule's outcome: UNSUPPORTED replaces anything, PREFER only
// OPTIMAL; reasons of PREFER outcomes accumulate ("; ").
void record(CompatResult* r, CompatVerdict v, int cause, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
void record(CompatResult* r, CompatVerdict v, int cause, const char* fmt, ...) {
  if (r->verdict == kCompatUnsupported || v < r->verdict) return;
  char buf[Status::kMaxMessage];
  va_list ap;
  va_start(ap, fmt);
  vformat(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (v == kCompatUnsupported || r->verdict == kCompatOptimal) {
    r->verdict = v;
    r->cause = cause;
    format(r->reason, sizeof r->reason, "%s", buf);
  } else {
    size_t n = cstr_len(r->reason);
    format(r->reason + n, sizeof r->reason - n, "; %s", buf);
  }
}

#define V3(v) (v).major, (v).minor, (v).patch

// SDK: which version the context was compiled with (node attribute and
// container header must agree), then the major/minor rule.
void check_sdk(const DriverEntry& drv, const CompiledFor& c, CompatResult* r) {
  const int kSdk = EPCTX_INCOMPATIBLE_SDK;
  const char* node = c.node_name.data ? c.node_name.data : "";
  int nlen = c.node_name.len();
  Version3 compiled;
  bool have = false;
  if (!c.node_sdk.empty()) {
    if (!ParseVersion(c.node_sdk, &compiled))
      return record(r, kCompatUnsupported, kSdk,
                    "EPContext node '%.*s': ep_sdk_version '%.*s' is not X.Y.Z", nlen, node,
                    c.node_sdk.len(), c.node_sdk.data);
    have = true;
  }
  if (c.container && is_set(c.container->sdk_version)) {
    Version3 header = from(c.container->sdk_version);
    if (have && (header.major != compiled.major || header.minor != compiled.minor ||
                 header.patch != compiled.patch))
      return record(r, kCompatUnsupported, kSdk,
                    "EPContext node '%.*s': ep_sdk_version %u.%u.%u disagrees with the context "
                    "binary header's sdk_version %u.%u.%u",
                    nlen, node, V3(compiled), V3(header));
    compiled = header;
    have = true;
  }
  if (!have) return;
  Version3 dev = from(drv.info.sdk_version);
  if (dev.major != compiled.major || dev.minor < compiled.minor)
    return record(r, kCompatUnsupported, kSdk,
                  "EPContext node '%.*s' was compiled with SDK %u.%u.%u, driver '%s' has SDK "
                  "%u.%u.%u (needs the same major and a device minor >= the compiled one)",
                  nlen, node, V3(compiled), drv.info.name, V3(dev));
  if (dev.minor > compiled.minor)
    record(r, kCompatPreferRecompilation, kSdk,
           "EPContext node '%.*s' was compiled with SDK %u.%u.%u, driver '%s' has the newer SDK "
           "%u.%u.%u; recompiling may use it better",
           nlen, node, V3(compiled), drv.info.name, V3(dev));
}

void check_hardware(const DriverEntry& drv, const CompiledFor& c, CompatResult* r) {
  const int kHw = EPCTX_INCOMPATIBLE_HARDWARE;
  const char* node = c.node_name.data ? c.node_name.data : "";
  int nlen = c.node_name.len();
  StrView compiled{}, header{};
  if (!c.node_hw.empty()) compiled = c.node_hw;
  if (c.container && c.container->hardware_architecture[0]) {
    header =
        StrView{c.container->hardware_architecture, cstr_len(c.container->hardware_architecture)};
    if (!compiled.empty() && !compiled.eq(header))
      return record(r, kCompatUnsupported, kHw,
                    "EPContext node '%.*s': hardware_architecture '%.*s' disagrees with the "
                    "context binary header's '%.*s'",
                    nlen, node, compiled.len(), compiled.data, header.len(), header.data);
    compiled = header;
  }
  if (compiled.empty()) return;
  const char* dev_s = drv.info.hardware_architecture ? drv.info.hardware_architecture : "";
  StrView dev_view{dev_s, cstr_len(dev_s)};
  StrView fam, dev_fam;
  Version3 v, dev;
  if (!ParseArchitecture(compiled, &fam, &v))
    return record(r, kCompatUnsupported, kHw,
                  "EPContext node '%.*s': hardware_architecture '%.*s' is not "
                  "<family>-<major>.<minor>",
                  nlen, node, compiled.len(), compiled.data);
  if (!ParseArchitecture(dev_view, &dev_fam, &dev) || !fam.eq(dev_fam) || v.major != dev.major ||
      dev.minor < v.minor)
    return record(r, kCompatUnsupported, kHw,
                  "EPContext node '%.*s' was compiled for hardware '%.*s', driver '%s' runs '%s' "
                  "(needs the same family and major and a device minor >= the compiled one)",
                  nlen, node, compiled.len(), compiled.data, drv.info.name, dev_s);
  if (dev.minor > v.minor)
    record(r, kCompatPreferRecompilation, kHw,
           "EPContext node '%.*s' was compiled for hardware '%.*s', driver '%s' runs the newer "
           "'%s'; recompiling may use it better",
           nlen, node, compiled.len(), compiled.data, drv.info.name, dev_s);
}

void check_driver(const DriverEntry& drv, const CompiledFor& c, CompatResult* r) {
  if (!c.container || !is_set(c.container->min_driver_version)) return;
  Version3 min = from(c.container->min_driver_version), dev = from(drv.info.driver_version);
  if (cmp3(dev, min) < 0)
    record(r, kCompatUnsupported, EPCTX_INCOMPATIBLE_DRIVER,
           "EPContext node '%.*s': the context binary needs driver version >= %u.%u.%u, driver "
           "'%s' is %u.%u.%u",
           c.node_name.len(), c.node_name.data ? c.node_name.data : "", V3(min), drv.info.name,
           V3(dev));
}

bool parse_u32(const char*& p, const char* end, uint32_t* out) {
  if (p == end || *p < '0' || *p > '9') return false;
  uint64_t x = 0;
  while (p != end && *p >= '0' && *p <= '9') {
    x = x * 10 + static_cast<uint64_t>(*p++ - '0');
    if (x > 0xffffffffu) return false;
  }
  *out = static_cast<uint32_t>(x);
  return true;
}

}  // namespace

bool ParseVersion(StrView s, Version3* out) {
  const char* p = s.data;
  const char* end = s.data + s.size;
  if (!p) return false;
  uint32_t parts[3] = {0, 0, 0};
  int n = 0;
  for (;;) {
    if (!parse_u32(p, end, &parts[n++])) return false;
    if (p == end) break;
    if (n == 3 || *p != '.') return false;
    ++p;
  }
  if (n < 2) return false;
  *out = Version3{parts[0], parts[1], parts[2]};
  return true;
}

bool ParseArchitecture(StrView s, StrView* family, Version3* out) {
  size_t dash = s.size;
  for (size_t i = 0; i < s.size; ++i)
    if (s.data[i] == '-') dash = i;
  if (dash == s.size || dash == 0) return false;
  Version3 v;
  if (!ParseVersion(StrView{s.data + dash + 1, s.size - dash - 1}, &v) || v.patch != 0)
    return false;
  // "X.Y.0" would pass ParseVersion; an architecture has exactly two parts.
  for (size_t i = dash + 1, dots = 0; i < s.size; ++i)
    if (s.data[i] == '.' && ++dots > 1) return false;
  *family = StrView{s.data, dash};
  *out = v;
  return true;
}

void CheckCompiledFor(const DriverEntry& drv, const CompiledFor& c, CompatResult* out) {
  *out = CompatResult{};
  check_sdk(drv, c, out);
  check_hardware(drv, c, out);
  check_driver(drv, c, out);
}

CompatVerdict EffectiveVerdict(const CompatResult& r, bool fail_on_suboptimal) {
  return r.verdict == kCompatPreferRecompilation && fail_on_suboptimal ? kCompatUnsupported
                                                                       : r.verdict;
}

int DriverVeto(const DriverEntry& drv, const onnx::EpContextNode& ep, Arena& arena, char* msg,
               size_t msg_cap) {
  epctx_hal_context_desc desc;
  desc.struct_size = sizeof desc;
  desc.source = arena.CStr(ep.source);
  desc.ep_sdk_version = arena.CStr(ep.ep_sdk_version);
  desc.hardware_architecture = arena.CStr(ep.hardware_architecture);
  desc.node_name = arena.CStr(ep.node->name);
  msg[0] = '\0';
  return drv.driver->check_compatibility(drv.driver, &desc, msg, msg_cap);
}

Status CompatStatus(const CompatResult& r, bool fail_on_suboptimal) {
  if (r.verdict == kCompatUnsupported) return Status::Error(r.cause, "%s", r.reason);
  if (EffectiveVerdict(r, fail_on_suboptimal) == kCompatUnsupported)
    return Status::Error(r.cause,
                         "compiled model is suboptimal for this device and "
                         "session.fail_on_suboptimal_compiled_model=1: %s",
                         r.reason);
  return Status::Ok();
}

Status ChooseDriver(const Env& env, const onnx::EpContextNode& ep, const char* label,
                    const DriverEntry** out) {
  const onnx::NodeView& node = *ep.node;
  *out = nullptr;
  if (ep.has_source) {
    for (int i = 0; i < env.num_drivers; ++i)
      if (env.drivers[i].Accepts(ep.source)) {
        *out = &env.drivers[i];
        return Status::Ok();
      }
    char names[256];
    size_t len = 0;
    names[0] = '\0';
    for (int i = 0; i < env.num_drivers && len < sizeof names; ++i)
      len +=
          format(names + len, sizeof names - len, "%s%s", i ? ", " : "", env.drivers[i].info.name);
    return Status::Error(EPCTX_NOT_IMPLEMENTED,
                         "%s: EPContext node '%.*s' generated by '%.*s' is not accepted by any "
                         "registered driver (registered: %s)",
                         label, node.name.len(), node.name.data, ep.source.len(), ep.source.data,
                         len ? names : "none");
  }
  if (env.num_drivers == 1 && (env.drivers[0].info.flags & EPCTX_HAL_FLAG_ACCEPTS_UNNAMED_SOURCE)) {
    *out = &env.drivers[0];
    return Status::Ok();
  }
  return Status::Error(EPCTX_INVALID_GRAPH,
                       "%s: EPContext node '%.*s' has no 'source' attribute, so no driver can be "
                       "chosen (%d registered; a lone driver must opt in to unnamed nodes)",
                       label, node.name.len(), node.name.data, env.num_drivers);
}

}  // namespace epctx
