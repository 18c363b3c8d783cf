// SPDX-License-Identifier: Apache-2.0
// The vnpu driver's HAL entry points: info and versions, compatibility,
// loading (the container-level checks), graph lookup (verify + validate the
// bound graph's payload, once) and execute.
#include <cstring>
#include <new>

#include <epctx/vnpu.h>

#include "conv/plan.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {

Msg& Msg::s(const char* str) {
  if (!str) str = "(null)";
  while (*str && len_ + 1 < cap_) buf_[len_++] = *str++;
  if (cap_ > 0) buf_[len_] = '\0';
  return *this;
}

Msg& Msg::u(uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = char('0' + v % 10);
    v /= 10;
  } while (v);
  char out[24];
  for (int k = 0; k < n; ++k) out[k] = tmp[n - 1 - k];
  out[n] = '\0';
  return s(out);
}

Msg& Msg::i(int64_t v) {
  if (v < 0) return s("-").u(uint64_t(0) - uint64_t(v));
  return u(uint64_t(v));
}

namespace {

// Versions the driver reports; epctx_vnpu_configure may change them. The
// int8 level is SDK 1.1 on hardware vnpu-1.1: a device configured as
// vnpu-1.0 / SDK 1.0 refuses int8 packages by the version rules alone.
constexpr epctx_hal_version kSdk{1, 1, 0};
constexpr const char* kArch = "vnpu-1.1";
struct Identity {
  epctx_hal_version driver{1, 0, 0};
  epctx_hal_version sdk = kSdk;
  char arch[32] = "vnpu-1.1";
} g_id;

const char* const kSourceKeys[] = {"vnpu", "VnpuExecutionProvider"};

// Own string helpers: the driver calls no libc beyond mem* and libm.
size_t StrLen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}
bool StrEq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
int StrCmp(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return int(static_cast<unsigned char>(*a)) - int(static_cast<unsigned char>(*b));
}

// Sorts ctx->by_name (graph indices) by graph name, index breaking ties so
// the first of equal names is found first. Heapsort: O(n log n) whatever the
// order of the names in the file, no recursion, no allocation.
void SortByName(epctx_hal_context* ctx) {
  uint32_t* a = ctx->by_name;
  const Graph* g = ctx->graphs;
  auto less = [g](uint32_t x, uint32_t y) {
    int c = StrCmp(g[x].name, g[y].name);
    return c < 0 || (c == 0 && x < y);
  };
  auto sift = [&](size_t root, size_t end) {
    for (;;) {
      size_t child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && less(a[child], a[child + 1])) ++child;
      if (!less(a[root], a[child])) return;
      uint32_t t = a[root];
      a[root] = a[child];
      a[child] = t;
      root = child;
    }
  };
  size_t n = ctx->num_graphs;
  for (size_t i = n / 2; i-- > 0;) sift(i, n);
  for (size_t end = n; end-- > 1;) {
    uint32_t t = a[0];
    a[0] = a[end];
    a[end] = t;
    sift(0, end);
  }
}

// The first graph of that name (binary search over by_name), or nullptr.
Graph* FindGraph(epctx_hal_context* ctx, const char* name) {
  size_t lo = 0, hi = ctx->num_graphs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (StrCmp(ctx->graphs[ctx->by_name[mid]].name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < ctx->num_graphs && StrEq(ctx->graphs[ctx->by_name[lo]].name, name))
    return &ctx->graphs[ctx->by_name[lo]];
  return nullptr;
}

// "M.m.p" (patch optional for SDK strings written as "M.m").
bool ParseVersion(const char* s, epctx_hal_version* v) {
  uint32_t parts[3] = {0, 0, 0};
  int n = 0;
  while (n < 3) {
    if (*s < '0' || *s > '9') return false;
    uint64_t x = 0;
    while (*s >= '0' && *s <= '9') {
      x = x * 10 + uint64_t(*s++ - '0');
      if (x > 0xffffffffu) return false;
    }
    parts[n++] = uint32_t(x);
    if (*s == '\0') break;
    if (*s++ != '.') return false;
  }
  if (*s != '\0' || n < 2) return false;
  *v = {parts[0], parts[1], parts[2]};
  return true;
}

// "<family>-<major>.<minor>": family written into fam (NUL-terminated).
bool ParseArch(const char* s, char* fam, size_t cap, epctx_hal_version* v) {
  const char* dash = nullptr;
  for (const char* p = s; *p; ++p)
    if (*p == '-') dash = p;
  if (!dash || dash == s || size_t(dash - s) >= cap) return false;
  memcpy(fam, s, size_t(dash - s));
  fam[dash - s] = '\0';
  return ParseVersion(dash + 1, v) && v->patch == 0;
}

int GetInfo(const epctx_hal_driver*, epctx_hal_driver_info* out) {
  if (!out) return EPCTX_INVALID_ARGUMENT;
  out->name = "vnpu";
  out->driver_version = g_id.driver;
  out->sdk_version = g_id.sdk;
  out->hardware_architecture = g_id.arch;
  out->source_keys = kSourceKeys;
  out->num_source_keys = 2;
  out->payload_alignment = kAlignment;
  out->flags = 0;
  return EPCTX_OK;
}

int CheckCompatibility(const epctx_hal_driver*, const epctx_hal_context_desc* d, char* buf,
                       size_t cap) {
  Msg msg(buf, cap);
  const char* node = d && d->node_name ? d->node_name : "";
  if (d && d->ep_sdk_version && d->ep_sdk_version[0]) {
    epctx_hal_version v;
    if (!ParseVersion(d->ep_sdk_version, &v)) {
      msg.s("vnpu: node '")
          .s(node)
          .s("' ep_sdk_version '")
          .s(d->ep_sdk_version)
          .s("' is not major.minor.patch");
      return EPCTX_INCOMPATIBLE_SDK;
    }
    // Same major; a newer minor may use stream features this driver lacks.
    if (v.major != g_id.sdk.major || v.minor > g_id.sdk.minor) {
      msg.s("vnpu: node '")
          .s(node)
          .s("' was compiled with SDK ")
          .s(d->ep_sdk_version)
          .s(", driver SDK is ")
          .u(g_id.sdk.major)
          .s(".")
          .u(g_id.sdk.minor)
          .s(".")
          .u(g_id.sdk.patch)
          .s(" (needs same major, minor <= driver's)");
      return EPCTX_INCOMPATIBLE_SDK;
    }
  }
  if (d && d->hardware_architecture && d->hardware_architecture[0]) {
    char fam[32], our_fam[32];
    epctx_hal_version v, ours;
    bool ok = ParseArch(d->hardware_architecture, fam, sizeof fam, &v) &&
              ParseArch(g_id.arch, our_fam, sizeof our_fam, &ours);
    // Hardware runs programs of its family and major whose minor is not newer.
    if (!ok || !StrEq(fam, our_fam) || v.major != ours.major || v.minor > ours.minor) {
      msg.s("vnpu: node '")
          .s(node)
          .s("' was compiled for hardware '")
          .s(d->hardware_architecture)
          .s("', this device is '")
          .s(g_id.arch)
          .s("' (needs same family and major, minor <= device's)");
      return EPCTX_INCOMPATIBLE_HARDWARE;
    }
  }
  return EPCTX_OK;
}

void Release(const epctx_hal_driver*, epctx_hal_context* ctx) {
  if (!ctx) return;
  epctx_hal_host host = ctx->host;
  for (uint32_t i = 0; i < ctx->num_graphs; ++i) {
    if (ctx->graphs[i].plans) host.free(host.user, ctx->graphs[i].plans);
    if (ctx->graphs[i].copy) host.free(host.user, ctx->graphs[i].copy);
    if (ctx->graphs[i].widened) host.free(host.user, ctx->graphs[i].widened);
    if (ctx->graphs[i].qsums) host.free(host.user, ctx->graphs[i].qsums);
    if (ctx->graphs[i].resize_taps) host.free(host.user, ctx->graphs[i].resize_taps);
  }
  host.free(host.user, ctx);
}

void FillDesc(const fb::Tensor* t, epctx_hal_tensor_desc* d) {
  d->name = t->name() ? t->name()->c_str() : "";
  switch (t->dtype()) {
    case fb::DType::FLOAT16: d->dtype = EPCTX_DTYPE_FLOAT16; break;
    case fb::DType::INT8: d->dtype = EPCTX_DTYPE_INT8; break;
    case fb::DType::UINT8: d->dtype = EPCTX_DTYPE_UINT8; break;
    case fb::DType::INT32: d->dtype = EPCTX_DTYPE_INT32; break;
    default: d->dtype = EPCTX_DTYPE_FLOAT; break;
  }
  d->rank = t->shape() ? t->shape()->size() : 0;
  for (uint32_t k = 0; k < d->rank; ++k) d->dims[k] = I64(t->shape(), k);
}

// Widens g's FLOAT16 WEIGHT tensors (Graph::widened): the span of the
// weight segment they cover, [lo, hi), is widened once, element by element,
// into a float32 mirror, and each tensor points at its place in it. Tensors
// that share or overlap bytes (deduplicated weights) share the mirror, so
// memory stays at most twice the weight segment and time linear in it.
int WidenWeights(const epctx_hal_context* ctx, Graph* g, Msg& msg) {
  const fb::Graph* s = g->stream;
  const uint32_t n = s->tensors() ? s->tensors()->size() : 0;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const fb::Tensor* t = s->tensors()->Get(i);
    if (t->location() != fb::Location::WEIGHT || t->dtype() != fb::DType::FLOAT16) continue;
    if (t->offset() < lo) lo = t->offset();
    if (t->offset() + t->size() > hi) hi = t->offset() + t->size();  // validated: no overflow
  }
  if (lo >= hi) return EPCTX_OK;
  const uint64_t halves = (hi - lo) / 2;  // offsets and sizes are even
  const uint64_t bytes = uint64_t(n) * sizeof(float*) + halves * sizeof(float);
  g->widened = static_cast<float**>(ctx->host.alloc(ctx->host.user, size_t(bytes), 16));
  if (!g->widened) {
    msg.s("vnpu: graph '")
        .s(g->name)
        .s("': out of memory widening ")
        .u(halves)
        .s(" float16 weights");
    return EPCTX_OUT_OF_MEMORY;
  }
  float* mirror = reinterpret_cast<float*>(g->widened + n);
  for (uint64_t k = 0; k < halves; ++k) {
    uint16_t h;
    memcpy(&h, ctx->weights + lo + 2 * k, 2);
    mirror[k] = HalfToFloat(h);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const fb::Tensor* t = s->tensors()->Get(i);
    const bool half = t->location() == fb::Location::WEIGHT && t->dtype() == fb::DType::FLOAT16;
    g->widened[i] = half ? mirror + (t->offset() - lo) / 2 : nullptr;
  }
  return EPCTX_OK;
}

// The weight-row sums of the int8 panel strategies (plan.h: QSumRows), one
// allocation for the graph. Rows are bounded by validated tensor sizes.
int SumInt8Weights(const epctx_hal_context* ctx, Graph* g, Msg& msg) {
  const fb::Graph* s = g->stream;
  const uint32_t nops = s->ops() ? s->ops()->size() : 0;
  uint64_t total = 0;
  for (uint32_t i = 0; i < nops; ++i) {
    g->plans[i].qsum_at = total;
    total += QSumRows(s, s->ops()->Get(i), g->plans[i]);
  }
  if (total == 0) return EPCTX_OK;
  const uint64_t bytes = total * sizeof(int32_t);
  g->qsums = bytes <= SIZE_MAX
                 ? static_cast<int32_t*>(ctx->host.alloc(ctx->host.user, size_t(bytes), 16))
                 : nullptr;
  if (!g->qsums) {
    msg.s("vnpu: graph '").s(g->name).s("': out of memory for ").u(total).s(" int8 weight sums");
    return EPCTX_OUT_OF_MEMORY;
  }
  for (uint32_t i = 0; i < nops; ++i)
    if (QSumRows(s, s->ops()->Get(i), g->plans[i]))
      FillQSums(s, s->ops()->Get(i), ctx->weights, g->qsums + g->plans[i].qsum_at, &g->plans[i]);
  return EPCTX_OK;
}

// The RESIZE ops' taps, one allocation for the graph, computed from the
// validated op fields (indices clamped into the input by construction).
int BuildResizeTaps(const epctx_hal_context* ctx, Graph* g, Msg& msg) {
  const fb::Graph* s = g->stream;
  const uint32_t nops = s->ops() ? s->ops()->size() : 0;
  uint64_t total = 0;
  for (uint32_t i = 0; i < nops; ++i) {
    g->plans[i].taps_at = total;
    total += ResizeTapCount(s, s->ops()->Get(i));  // 2 * (OH + OW) < 2^34: no overflow
  }
  if (total == 0) return EPCTX_OK;
  const uint64_t bytes = total * sizeof(ResizeTap);
  g->resize_taps = bytes <= SIZE_MAX
                       ? static_cast<ResizeTap*>(ctx->host.alloc(ctx->host.user, size_t(bytes), 16))
                       : nullptr;
  if (!g->resize_taps) {
    msg.s("vnpu: graph '").s(g->name).s("': out of memory for ").u(total).s(" resize taps");
    return EPCTX_OUT_OF_MEMORY;
  }
  for (uint32_t i = 0; i < nops; ++i)
    if (ResizeTapCount(s, s->ops()->Get(i)))
      FillResizeTaps(s, s->ops()->Get(i), g->resize_taps + g->plans[i].taps_at);
  return EPCTX_OK;
}

// Copies the payload of g into private memory, verifies and validates the
// copy and fills g (allocating its binding tables from the host). Called
// once per graph, by the first get_graph that binds it; no other code reads
// a payload before this, and nothing reads the mapped payload after it.
int ValidatePayload(const epctx_hal_context* ctx, Graph* g, Msg& msg) {
  const char* name = g->name;
  uint64_t size = g->size;
  if (!g->data || size < 8 || memcmp(g->data + 4, fb::GraphIdentifier(), 4) != 0) {
    msg.s("vnpu: graph '")
        .s(name)
        .s("' payload is not a vnpu command stream (identifier ")
        .s("\"VNPU\" missing, ")
        .u(size)
        .s(" bytes)");
    return EPCTX_INVALID_GRAPH;
  }
  if (size > FLATBUFFERS_MAX_BUFFER_SIZE) {
    msg.s("vnpu: graph '").s(name).s("' payload of ").u(size).s(" bytes is too large");
    return EPCTX_INVALID_GRAPH;
  }
  g->copy = static_cast<uint8_t*>(ctx->host.alloc(ctx->host.user, size_t(size), kAlignment));
  if (!g->copy) {
    msg.s("vnpu: graph '").s(name).s("': out of memory for its ").u(size).s("-byte command stream");
    return EPCTX_OUT_OF_MEMORY;
  }
  memcpy(g->copy, g->data, size_t(size));
  const uint8_t* data = g->copy;
  flatbuffers::Verifier verifier(data, size_t(size));
  // Identifier checked above; verifying the root table directly (not
  // VerifyBuffer) keeps flatbuffers' strncmp out of the driver.
  flatbuffers::uoffset_t root =
      size >= 12 ? verifier.VerifyOffset(0) : 0;  // 12: smallest flatbuffer
  if (!root || !reinterpret_cast<const fb::Graph*>(data + root)->Verify(verifier)) {
    msg.s("vnpu: graph '")
        .s(name)
        .s("' command stream failed flatbuffers verification (")
        .u(size)
        .s(" bytes: truncated or corrupt)");
    return EPCTX_INVALID_GRAPH;
  }
  const fb::Graph* s = fb::GetGraph(data);
  int rc =
      ValidateGraph(s, ctx->weights_size, name, ctx->host, &g->num_inputs, &g->num_outputs, msg);
  if (rc != EPCTX_OK) return rc;
  if (s->arena_size() > (uint64_t(1) << 56)) {
    msg.s("vnpu: graph '")
        .s(name)
        .s("': arena_size ")
        .u(s->arena_size())
        .s(" exceeds the largest arena a vnpu graph may declare (2^56 bytes)");
    return EPCTX_INVALID_GRAPH;
  }
  g->stream = s;
  // One allocation: the op plans, then the input/output descriptors and
  // their tensor indices. Counts are bounded by the payload (a few bytes an
  // op or tensor at least), so the sum fits 64 bits.
  const uint32_t nops = s->ops() ? s->ops()->size() : 0;
  const uint32_t nio = g->num_inputs + g->num_outputs;
  const uint64_t bytes = uint64_t(nops) * sizeof(OpPlan) +
                         uint64_t(nio) * (sizeof(epctx_hal_tensor_desc) + sizeof(uint32_t));
  static_assert(sizeof(OpPlan) % alignof(epctx_hal_tensor_desc) == 0, "descriptors follow plans");
  void* mem =
      bytes <= SIZE_MAX ? ctx->host.alloc(ctx->host.user, bytes ? size_t(bytes) : 1, 16) : nullptr;
  if (!mem) {
    msg.s("vnpu: graph '").s(name).s("': out of memory for ").u(bytes).s(" bytes of op plans");
    return EPCTX_OUT_OF_MEMORY;
  }
  g->plans = static_cast<OpPlan*>(mem);
  g->inputs = reinterpret_cast<epctx_hal_tensor_desc*>(g->plans + nops);
  g->outputs = g->inputs + g->num_inputs;
  g->input_tensor = reinterpret_cast<uint32_t*>(g->inputs + nio);
  g->output_tensor = g->input_tensor + g->num_inputs;
  rc = PlanGraph(s, name, g->plans, &g->work_floats, msg);
  if (rc != EPCTX_OK) return rc;
  rc = SumInt8Weights(ctx, g, msg);
  if (rc != EPCTX_OK) return rc;
  rc = BuildResizeTaps(ctx, g, msg);
  if (rc != EPCTX_OK) return rc;
  // Whole cache lines per slot, so every slot starts 64-byte aligned like
  // the scratch: the block tile's packed B rows are read a zmm at a time,
  // and a load that straddles two lines costs two.
  g->work_floats = (g->work_floats + 15) / 16 * 16;
  for (uint32_t i = 0; s->tensors() && i < s->tensors()->size(); ++i) {
    const fb::Tensor* t = s->tensors()->Get(i);
    if (t->location() == fb::Location::INPUT) {
      g->input_tensor[t->index()] = i;
      FillDesc(t, &g->inputs[t->index()]);
    } else if (t->location() == fb::Location::OUTPUT) {
      g->output_tensor[t->index()] = i;
      FillDesc(t, &g->outputs[t->index()]);
    }
  }
  return WidenWeights(ctx, g, msg);
}

int LoadContext(const epctx_hal_driver*, const epctx_hal_blob* blob, const epctx_hal_host* host,
                epctx_hal_context** out, char* buf, size_t cap) {
  Msg msg(buf, cap);
  if (!blob || !host || !host->alloc || !host->free || !out) {
    msg.s("vnpu: load_context needs a blob, a host with alloc/free and an output pointer");
    return EPCTX_INVALID_ARGUMENT;
  }
  *out = nullptr;
  if (!blob->is_container) {
    msg.s("vnpu: payload is not an epctx container");
    return EPCTX_INVALID_GRAPH;
  }
  if (blob->num_graphs == 0 || !blob->graphs) {
    msg.s("vnpu: container holds no graphs");
    return EPCTX_INVALID_GRAPH;
  }
  if (blob->weights_size > 0 && (!blob->weights || uintptr_t(blob->weights) % 4 != 0)) {
    msg.s("vnpu: weight segment is missing or not 4-byte aligned");
    return EPCTX_INVALID_GRAPH;
  }
  // One allocation: context, graph table, name index, then the graph names.
  size_t names = 0;
  for (uint32_t i = 0; i < blob->num_graphs; ++i)
    names += (blob->graphs[i].name ? StrLen(blob->graphs[i].name) : 0) + 1;
  static_assert(sizeof(Graph) % alignof(uint32_t) == 0, "index follows the graph table");
  size_t head = sizeof(epctx_hal_context) + blob->num_graphs * (sizeof(Graph) + sizeof(uint32_t));
  auto* ctx = static_cast<epctx_hal_context*>(host->alloc(host->user, head + names, 16));
  if (!ctx) {
    msg.s("vnpu: out of memory for ").u(head + names).s(" bytes of context state");
    return EPCTX_OUT_OF_MEMORY;
  }
  memset(ctx, 0, sizeof(epctx_hal_context));
  ctx->host = *host;
  ctx->weights = blob->weights;
  ctx->weights_size = blob->weights ? blob->weights_size : 0;
  ctx->num_graphs = blob->num_graphs;
  ctx->graphs = reinterpret_cast<Graph*>(ctx + 1);
  ctx->by_name = reinterpret_cast<uint32_t*>(ctx->graphs + blob->num_graphs);
  char* name = reinterpret_cast<char*>(ctx) + head;
  for (uint32_t i = 0; i < blob->num_graphs; ++i) {
    const char* src = blob->graphs[i].name ? blob->graphs[i].name : "";
    size_t n = StrLen(src);
    memcpy(name, src, n + 1);
    // Only the graph table is read here: payloads wait for get_graph.
    Graph* g = new (&ctx->graphs[i]) Graph();
    g->ctx = ctx;
    g->name = name;
    g->data = blob->graphs[i].data;
    g->size = blob->graphs[i].size;
    ctx->by_name[i] = i;
    name += n + 1;
  }
  SortByName(ctx);
  *out = ctx;
  return EPCTX_OK;
}

// Validates g once. The runtime never calls get_graph concurrently on one
// context (hal.h), but a driver must not rely on it for memory safety: a
// second caller waits for the first one's verdict instead of writing the
// same fields.
int Validate(const epctx_hal_context* ctx, Graph* g, Msg& msg) {
  for (;;) {
    uint32_t st = g->state.load(std::memory_order_acquire);
    if (st == kValid) return EPCTX_OK;
    if (st == kChecking) continue;  // another get_graph is validating it
    if (g->state.compare_exchange_weak(st, kChecking, std::memory_order_acquire)) break;
  }
  int rc = ValidatePayload(ctx, g, msg);
  if (rc != EPCTX_OK && g->plans) {
    ctx->host.free(ctx->host.user, g->plans);
    g->plans = nullptr;
    g->inputs = g->outputs = nullptr;
  }
  if (rc != EPCTX_OK && g->copy) {
    ctx->host.free(ctx->host.user, g->copy);
    g->copy = nullptr;
  }
  if (rc != EPCTX_OK && g->qsums) {
    ctx->host.free(ctx->host.user, g->qsums);
    g->qsums = nullptr;
  }
  if (rc != EPCTX_OK && g->resize_taps) {
    ctx->host.free(ctx->host.user, g->resize_taps);
    g->resize_taps = nullptr;
  }
  if (rc != EPCTX_OK && g->widened) {
    ctx->host.free(ctx->host.user, g->widened);
    g->widened = nullptr;
  }
  g->state.store(rc == EPCTX_OK ? kValid : kUnchecked, std::memory_order_release);
  return rc;
}

// The workspace starts at the arena's end rounded up to kAlignment (the
// arena is at most 2^56 bytes: no overflow).
uint64_t WorkOffset(const Graph* g) {
  return (g->stream->arena_size() + kAlignment - 1) / kAlignment * kAlignment;
}
uint64_t ScratchBytes(const Graph* g) {
  return g->work_floats ? WorkOffset(g) + uint64_t(kWorkSlots) * g->work_floats * 4
                        : g->stream->arena_size();
}

int GetGraph(const epctx_hal_driver*, epctx_hal_context* ctx, const char* name,
             epctx_hal_graph** out, epctx_hal_graph_info* info, char* buf, size_t cap) {
  Msg msg(buf, cap);
  if (!ctx || !out || !info) {
    msg.s("vnpu: get_graph needs a context and output pointers");
    return EPCTX_INVALID_ARGUMENT;
  }
  Graph* g = nullptr;
  if (ctx->num_graphs == 1) {
    g = &ctx->graphs[0];
  } else if (name) {
    g = FindGraph(ctx, name);
  }
  if (!g) {
    msg.s("vnpu: no graph '").s(name ? name : "").s("' in context; available:");
    for (uint32_t i = 0; i < ctx->num_graphs; ++i)
      msg.s(i ? ", '" : " '").s(ctx->graphs[i].name).s("'");
    return EPCTX_INVALID_GRAPH;
  }
  int rc = Validate(ctx, g, msg);
  if (rc != EPCTX_OK) return rc;
  info->num_inputs = g->num_inputs;
  info->num_outputs = g->num_outputs;
  info->inputs = g->inputs;
  info->outputs = g->outputs;
  info->scratch_bytes = ScratchBytes(g);
  info->scratch_alignment = kAlignment;
  *out = reinterpret_cast<epctx_hal_graph*>(g);
  return EPCTX_OK;
}

const char* HalDTypeName(int32_t d) {
  switch (d) {
    case EPCTX_DTYPE_FLOAT16: return "float16";
    case EPCTX_DTYPE_INT8: return "int8";
    case EPCTX_DTYPE_UINT8: return "uint8";
    case EPCTX_DTYPE_INT32: return "int32";
    default: return "float32";
  }
}

int CheckTensors(const Graph* g, const epctx_hal_tensor* ts, uint32_t n,
                 const epctx_hal_tensor_desc* want, const char* what, Msg& msg) {
  for (uint32_t i = 0; i < n; ++i) {
    const epctx_hal_tensor& t = ts[i];
    const epctx_hal_tensor_desc& d = want[i];
    const uint64_t esize = d.dtype == EPCTX_DTYPE_FLOAT16                                  ? 2
                           : (d.dtype == EPCTX_DTYPE_INT8 || d.dtype == EPCTX_DTYPE_UINT8) ? 1
                                                                                           : 4;
    bool same = t.dtype == d.dtype && t.rank == d.rank && (t.dims || t.rank == 0);
    uint64_t elems = 1;
    for (uint32_t k = 0; same && k < d.rank; ++k) {
      same = t.dims[k] == d.dims[k];
      elems *= uint64_t(d.dims[k]);  // validated at load: cannot overflow
    }
    if (!same || t.bytes < elems * esize || (!t.data && elems > 0)) {
      msg.s("vnpu: graph '")
          .s(g->name)
          .s("' ")
          .s(what)
          .s(" ")
          .u(i)
          .s(" '")
          .s(d.name)
          .s("': expected ")
          .s(HalDTypeName(d.dtype))
          .s(" [");
      for (uint32_t k = 0; k < d.rank; ++k) msg.s(k ? "," : "").i(d.dims[k]);
      msg.s("] of ")
          .u(elems * esize)
          .s(" bytes, found dtype ")
          .i(t.dtype)
          .s(" rank ")
          .u(t.rank)
          .s(" [");
      for (uint32_t k = 0; t.dims && k < t.rank && k < 8; ++k) msg.s(k ? "," : "").i(t.dims[k]);
      msg.s("] ").u(t.bytes).s(" bytes");
      return EPCTX_INVALID_ARGUMENT;
    }
  }
  return EPCTX_OK;
}

int ExecuteParallel(const epctx_hal_driver*, epctx_hal_graph* graph, const epctx_hal_tensor* inputs,
                    uint32_t num_inputs, epctx_hal_tensor* outputs, uint32_t num_outputs,
                    void* scratch, uint64_t scratch_bytes, const epctx_hal_parallel* par, char* buf,
                    size_t cap) {
  Msg msg(buf, cap);
  const Graph* g = reinterpret_cast<const Graph*>(graph);
  if (!g) {
    msg.s("vnpu: execute without a graph");
    return EPCTX_INVALID_ARGUMENT;
  }
  if (num_inputs != g->num_inputs || num_outputs != g->num_outputs || (num_inputs && !inputs) ||
      (num_outputs && !outputs)) {
    msg.s("vnpu: graph '")
        .s(g->name)
        .s("' takes ")
        .u(g->num_inputs)
        .s(" inputs and ")
        .u(g->num_outputs)
        .s(" outputs, got ")
        .u(num_inputs)
        .s(" and ")
        .u(num_outputs);
    return EPCTX_INVALID_ARGUMENT;
  }
  const uint64_t need = ScratchBytes(g);
  if (scratch_bytes < need || (need && !scratch)) {
    msg.s("vnpu: graph '")
        .s(g->name)
        .s("' needs ")
        .u(need)
        .s(" scratch bytes (arena ")
        .u(g->stream->arena_size())
        .s(", workspace ")
        .u(need - WorkOffset(g))
        .s("), got ")
        .u(scratch ? scratch_bytes : 0);
    return EPCTX_INVALID_ARGUMENT;
  }
  int rc = CheckTensors(g, inputs, num_inputs, g->inputs, "input", msg);
  if (rc == EPCTX_OK) rc = CheckTensors(g, outputs, num_outputs, g->outputs, "output", msg);
  if (rc != EPCTX_OK) return rc;
  // A runtime of another minor may hand a shorter struct: threads only
  // when every field is there.
  if (par && (par->struct_size < sizeof *par || !par->parallel_for || par->threads < 2))
    par = nullptr;
  Bindings b{g,
             inputs,
             outputs,
             static_cast<uint8_t*>(scratch),
             par,
             g->work_floats
                 ? reinterpret_cast<float*>(static_cast<uint8_t*>(scratch) + WorkOffset(g))
                 : nullptr};
  return RunGraph(b, msg);
}

int Execute(const epctx_hal_driver* self, epctx_hal_graph* graph, const epctx_hal_tensor* inputs,
            uint32_t num_inputs, epctx_hal_tensor* outputs, uint32_t num_outputs, void* scratch,
            uint64_t scratch_bytes, char* buf, size_t cap) {
  return ExecuteParallel(self, graph, inputs, num_inputs, outputs, num_outputs, scratch,
                         scratch_bytes, nullptr, buf, cap);
}

// ABI 2.3: vnpu's device memory is host memory, so a decrypted context
// binary comes from the host allocator like everything else the driver
// holds; it is wiped before it goes back, so the weights it decrypted to do
// not outlive the context in freed memory.
void* AllocContextMemory(const epctx_hal_driver*, const epctx_hal_host* host, uint64_t bytes,
                         uint32_t alignment) {
  if (!host || !host->alloc || bytes == 0 || bytes > SIZE_MAX) return nullptr;
  return host->alloc(host->user, size_t(bytes), alignment);
}

void FreeContextMemory(const epctx_hal_driver*, const epctx_hal_host* host, void* ptr,
                       uint64_t bytes) {
  if (!ptr || !host || !host->free) return;
  memset(ptr, 0, size_t(bytes));
  // The memset must happen although nothing reads the bytes again.
  __asm__ __volatile__("" : : "r"(ptr) : "memory");
  host->free(host->user, ptr);
}

const epctx_hal_driver kDriver = {
    EPCTX_HAL_ABI_VERSION, sizeof(epctx_hal_driver), nullptr, GetInfo, CheckCompatibility,
    LoadContext, GetGraph, Execute, Release,
    // vnpu runs on the CPU: nothing to page in, its memory is coherent.
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    // Its units are the CPU's cores: conv, GEMM and large elementwise ops
    // split by output blocks.
    ExecuteParallel, AllocContextMemory, FreeContextMemory};

bool SetVersion(const char* value, epctx_hal_version* out, epctx_hal_version def) {
  if (!value) {
    *out = def;
    return true;
  }
  return ParseVersion(value, out);
}

}  // namespace
}  // namespace vnpu
}  // namespace epctx

extern "C" const epctx_hal_driver* epctx_vnpu_driver(void) { return &epctx::vnpu::kDriver; }

extern "C" int epctx_vnpu_configure(const char* key, const char* value) {
  using namespace epctx::vnpu;
  if (!key) return EPCTX_INVALID_ARGUMENT;
  if (StrEq(key, "driver_version"))
    return SetVersion(value, &g_id.driver, {1, 0, 0}) ? EPCTX_OK : EPCTX_INVALID_ARGUMENT;
  if (StrEq(key, "sdk_version"))
    return SetVersion(value, &g_id.sdk, kSdk) ? EPCTX_OK : EPCTX_INVALID_ARGUMENT;
  if (StrEq(key, "hardware_architecture")) {
    const char* v = value ? value : kArch;
    char fam[32];
    epctx_hal_version ver;
    if (!ParseArch(v, fam, sizeof fam, &ver) || StrLen(v) >= sizeof g_id.arch)
      return EPCTX_INVALID_ARGUMENT;
    memcpy(g_id.arch, v, StrLen(v) + 1);
    return EPCTX_OK;
  }
  return EPCTX_INVALID_ARGUMENT;
}
