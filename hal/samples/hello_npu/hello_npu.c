/* SPDX-License-Identifier: Apache-2.0 */
/* hello_npu: a complete HAL driver in one file (hal/PORTING.md walks
 * through it). The "compiled program" a context carries is 20 bytes:
 *   0  "HELLONPU"   magic
 *   8  uint32 LE    format version, 1
 *  12  uint32 LE    n, elements of the input and output (1 .. 2^24)
 *  16  float32 LE   scale
 * and the graph computes y[n] = x[n] * scale through a scratch arena, the
 * way an NPU stages data in its own memory. Plain C99, no libc beyond mem*. */
#include "hello_npu.h"

#include <string.h>

#define HELLO_BLOB_SIZE 20u
#define HELLO_MAX_N (1u << 24)
/* Above the runtime's 64-byte default on purpose: the runtime must honour
 * whatever alignment up to a page a driver asks for. */
#define HELLO_SCRATCH_ALIGN 256u

typedef struct hello_graph {
  const epctx_hal_host* host; /* the context's copy: outlives the graph */
  epctx_hal_tensor_desc in, out;
  uint32_t n;
  float scale;
} hello_graph;

/* Private copy of everything execute computes addresses from: validated
 * once in load_context, never re-read from the (possibly shared) payload. */
struct epctx_hal_context {
  epctx_hal_host host;
  hello_graph graph;
};

static hello_npu_counters g_counters;

/* ---- messages without libc ---- */
typedef struct msgbuf {
  char* p;
  size_t cap, len;
} msgbuf;
static msgbuf msg_start(char* p, size_t cap) {
  msgbuf m = {p, cap, 0};
  if (cap) p[0] = '\0';
  return m;
}
static void put_s(msgbuf* m, const char* s) {
  while (*s && m->len + 1 < m->cap) m->p[m->len++] = *s++;
  if (m->cap) m->p[m->len] = '\0';
}
static void put_u(msgbuf* m, uint64_t v) {
  char t[24];
  int n = 0;
  do t[n++] = (char)('0' + v % 10);
  while (v /= 10);
  char s[24];
  for (int i = 0; i < n; ++i) s[i] = t[n - 1 - i];
  s[n] = '\0';
  put_s(m, s);
}
static int fail(char* buf, size_t cap, int code, const char* a, uint64_t v, const char* b) {
  msgbuf m = msg_start(buf, cap);
  put_s(&m, "hello_npu: ");
  put_s(&m, a);
  if (b) {
    put_u(&m, v);
    put_s(&m, b);
  }
  return code;
}

static uint32_t rd32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static int ieq(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b) {
    char x = (char)(*a >= 'A' && *a <= 'Z' ? *a + 32 : *a);
    char y = (char)(*b >= 'A' && *b <= 'Z' ? *b + 32 : *b);
    if (x != y) return 0;
  }
  return *a == *b;
}

static const char* const kSourceKeys[] = {"hello_npu"};

static int get_info(const epctx_hal_driver* self, epctx_hal_driver_info* out) {
  (void)self;
  /* Every field here exists since ABI 2.0, so they all fit in any
   * struct_size a 2.x runtime passes. */
  out->name = "hello_npu";
  out->driver_version = (epctx_hal_version){1, 0, 0};
  out->sdk_version = (epctx_hal_version){1, 0, 0};
  out->hardware_architecture = "hello-1.0";
  out->source_keys = kSourceKeys;
  out->num_source_keys = 1;
  out->payload_alignment = 4;
  out->flags = EPCTX_HAL_FLAG_ACCEPTS_UNNAMED_SOURCE;
  return EPCTX_OK;
}

/* Names and versions only: the SDK major must be 1, the hardware hello-1.x. */
static int check_compatibility(const epctx_hal_driver* self, const epctx_hal_context_desc* d,
                               char* msg, size_t cap) {
  (void)self;
  if (d->source[0] && !ieq(d->source, "hello_npu"))
    return fail(msg, cap, EPCTX_INCOMPATIBLE_DRIVER, "source is not hello_npu", 0, 0);
  if (d->ep_sdk_version[0] && (d->ep_sdk_version[0] != '1' || d->ep_sdk_version[1] != '.'))
    return fail(msg, cap, EPCTX_INCOMPATIBLE_SDK,
                "ep_sdk_version: expected 1.x, the SDK this driver implements", 0, 0);
  const char* a = d->hardware_architecture;
  if (a[0] && memcmp(a, "hello-1.", 8) != 0)
    return fail(msg, cap, EPCTX_INCOMPATIBLE_HARDWARE, "hardware_architecture: expected hello-1.x",
                0, 0);
  return EPCTX_OK;
}

static int load_context(const epctx_hal_driver* self, const epctx_hal_blob* blob,
                        const epctx_hal_host* host, epctx_hal_context** out, char* msg,
                        size_t cap) {
  (void)self;
  *out = NULL;
  if (blob->is_container)
    return fail(msg, cap, EPCTX_NOT_IMPLEMENTED,
                "context is an epctx container; this driver reads its own 20-byte blob", 0, 0);
  if (blob->size != HELLO_BLOB_SIZE)
    return fail(msg, cap, EPCTX_INVALID_GRAPH, "context of ", blob->size, " bytes, expected 20");
  const uint8_t* p = blob->data;
  if (memcmp(p, "HELLONPU", 8) != 0)
    return fail(msg, cap, EPCTX_INVALID_GRAPH, "context magic: expected HELLONPU", 0, 0);
  if (rd32(p + 8) != 1)
    return fail(msg, cap, EPCTX_INVALID_GRAPH, "format version ", rd32(p + 8), ", expected 1");
  uint32_t n = rd32(p + 12);
  if (n == 0 || n > HELLO_MAX_N)
    return fail(msg, cap, EPCTX_INVALID_GRAPH, "element count ", n, ", expected 1 to 16777216");
  uint32_t bits = rd32(p + 16);
  if ((bits & 0x7f800000u) == 0x7f800000u)
    return fail(msg, cap, EPCTX_INVALID_GRAPH, "scale is not finite", 0, 0);
  struct epctx_hal_context* c = host->alloc(host->user, sizeof *c, 16);
  if (!c) return fail(msg, cap, EPCTX_OUT_OF_MEMORY, "out of memory loading a context", 0, 0);
  memset(c, 0, sizeof *c);
  c->host = *host;
  c->graph.host = &c->host;
  c->graph.n = n;
  memcpy(&c->graph.scale, &bits, 4);
  c->graph.in = (epctx_hal_tensor_desc){"x", EPCTX_DTYPE_FLOAT, 1, {n}};
  c->graph.out = (epctx_hal_tensor_desc){"y", EPCTX_DTYPE_FLOAT, 1, {n}};
  *out = c;
  return EPCTX_OK;
}

/* One graph per context, whatever the node calls it. */
static int get_graph(const epctx_hal_driver* self, epctx_hal_context* c, const char* name,
                     epctx_hal_graph** out, epctx_hal_graph_info* info, char* msg, size_t cap) {
  (void)self, (void)name, (void)msg, (void)cap;
  info->num_inputs = 1;
  info->num_outputs = 1;
  info->inputs = &c->graph.in;
  info->outputs = &c->graph.out;
  info->scratch_bytes = (uint64_t)c->graph.n * 4;
  info->scratch_alignment = HELLO_SCRATCH_ALIGN;
  *out = (epctx_hal_graph*)&c->graph;
  return EPCTX_OK;
}

/* A real driver pages the command stream and weights into NPU memory here. */
static int prepare_graph(const epctx_hal_driver* self, epctx_hal_graph* g, char* msg, size_t cap) {
  (void)self, (void)g, (void)msg, (void)cap;
  __atomic_add_fetch(&g_counters.prepared, 1, __ATOMIC_RELAXED);
  return EPCTX_OK;
}
static void unprepare_graph(const epctx_hal_driver* self, epctx_hal_graph* g) {
  (void)self, (void)g;
  __atomic_sub_fetch(&g_counters.prepared, 1, __ATOMIC_RELAXED);
}

/* A non-coherent SoC cleans (device) or invalidates (cpu) the data cache
 * over each tensor's bytes here. */
static void sync_for_device(const epctx_hal_driver* self, epctx_hal_graph* g,
                            const epctx_hal_tensor* t, uint32_t count) {
  (void)self, (void)g, (void)t, (void)count;
  __atomic_add_fetch(&g_counters.device_syncs, 1, __ATOMIC_RELAXED);
}
static void sync_for_cpu(const epctx_hal_driver* self, epctx_hal_graph* g,
                         const epctx_hal_tensor* t, uint32_t count) {
  (void)self, (void)g, (void)t, (void)count;
  __atomic_add_fetch(&g_counters.cpu_syncs, 1, __ATOMIC_RELAXED);
}

/* This "NPU" reaches only memory from its own carve-out: the runtime stages
 * inputs and outputs in ordinary memory through these buffers, and an
 * application that asks for them (epctx_session_create_io_tensor) binds
 * them directly. A real driver allocates from its DMA heap or maps through
 * its IOMMU here; hello_npu remembers the ranges it handed out (up to
 * HELLO_MAX_IO live at once) and answers is_device_visible from them. */
#define HELLO_MAX_IO 64
static struct {
  const void* p;
  uint64_t bytes;
} g_io[HELLO_MAX_IO];
static int g_io_lock;
static void io_lock(void) {
  while (__atomic_exchange_n(&g_io_lock, 1, __ATOMIC_ACQUIRE)) {
  }
}
static void io_unlock(void) { __atomic_store_n(&g_io_lock, 0, __ATOMIC_RELEASE); }

static void* alloc_io(const epctx_hal_driver* self, epctx_hal_graph* graph, uint64_t bytes,
                      uint32_t alignment) {
  (void)self;
  const hello_graph* g = (const hello_graph*)graph;
  if (bytes > (uint64_t)HELLO_MAX_N * 4) return NULL;
  void* p = g->host->alloc(g->host->user, (size_t)bytes, alignment);
  if (!p) return NULL;
  io_lock();
  int slot = -1;
  for (int i = 0; i < HELLO_MAX_IO && slot < 0; ++i)
    if (!g_io[i].p) slot = i;
  if (slot >= 0) g_io[slot].p = p, g_io[slot].bytes = bytes;
  io_unlock();
  if (slot < 0) { /* the carve-out is full */
    g->host->free(g->host->user, p);
    return NULL;
  }
  __atomic_add_fetch(&g_counters.io_allocs, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&g_counters.io_live, 1, __ATOMIC_RELAXED);
  return p;
}
static void free_io(const epctx_hal_driver* self, epctx_hal_graph* graph, void* p) {
  (void)self;
  const hello_graph* g = (const hello_graph*)graph;
  io_lock();
  for (int i = 0; i < HELLO_MAX_IO; ++i)
    if (g_io[i].p == p) g_io[i].p = NULL;
  io_unlock();
  __atomic_sub_fetch(&g_counters.io_live, 1, __ATOMIC_RELAXED);
  g->host->free(g->host->user, p);
}
static int is_device_visible(const epctx_hal_driver* self, epctx_hal_graph* graph, const void* p,
                             uint64_t bytes) {
  (void)self, (void)graph;
  const char* c = (const char*)p;
  int yes = 0;
  io_lock();
  for (int i = 0; i < HELLO_MAX_IO && !yes; ++i) {
    const char* b = (const char*)g_io[i].p;
    yes = b && c >= b && bytes <= g_io[i].bytes && (uint64_t)(c - b) <= g_io[i].bytes - bytes;
  }
  io_unlock();
  return yes;
}

/* Thread-safe: reads only the graph, writes only its scratch and outputs. */
static int execute(const epctx_hal_driver* self, epctx_hal_graph* graph, const epctx_hal_tensor* in,
                   uint32_t nin, epctx_hal_tensor* out, uint32_t nout, void* scratch,
                   uint64_t scratch_bytes, char* msg, size_t cap) {
  (void)self;
  const hello_graph* g = (const hello_graph*)graph;
  const uint64_t bytes = (uint64_t)g->n * 4;
  if (nin != 1 || nout != 1)
    return fail(msg, cap, EPCTX_INVALID_ARGUMENT, "expected 1 input and 1 output, found ",
                (uint64_t)nin + nout, " tensors");
  if (in[0].dtype != EPCTX_DTYPE_FLOAT || in[0].bytes != bytes || !in[0].data)
    return fail(msg, cap, EPCTX_INVALID_ARGUMENT, "input 'x': expected float[n], ", in[0].bytes,
                " bytes given");
  if (out[0].dtype != EPCTX_DTYPE_FLOAT || out[0].bytes != bytes || !out[0].data)
    return fail(msg, cap, EPCTX_INVALID_ARGUMENT, "output 'y': expected float[n], ", out[0].bytes,
                " bytes given");
  if (scratch_bytes < bytes || ((uintptr_t)scratch & (HELLO_SCRATCH_ALIGN - 1)))
    return fail(msg, cap, EPCTX_EP_FAIL,
                "scratch arena not 256-byte aligned or short: ", scratch_bytes, " bytes");
  float* s = (float*)scratch;
  memcpy(s, in[0].data, (size_t)bytes); /* "DMA in" */
  for (uint32_t i = 0; i < g->n; ++i) s[i] *= g->scale;
  memcpy(out[0].data, s, (size_t)bytes); /* "DMA out" */
  return EPCTX_OK;
}

static void release_context(const epctx_hal_driver* self, epctx_hal_context* c) {
  (void)self;
  if (c) c->host.free(c->host.user, c);
}

/* clang-format off */
static const epctx_hal_driver kDriver = {
    EPCTX_HAL_ABI_VERSION, sizeof(epctx_hal_driver), NULL, get_info, check_compatibility,
    load_context, get_graph, execute, release_context, prepare_graph, unprepare_graph,
    sync_for_device, sync_for_cpu, alloc_io, free_io, is_device_visible,
    NULL /* execute_parallel: the device threads itself */,
    /* alloc/free_context_memory: load_context copies the 20-byte program,
     * so a decrypted one may sit in ordinary memory (vnpu has the pair) */
    NULL, NULL};
/* clang-format on */

const epctx_hal_driver* epctx_hello_npu_driver(void) { return &kDriver; }

void hello_npu_get_counters(hello_npu_counters* out) {
  out->prepared = __atomic_load_n(&g_counters.prepared, __ATOMIC_RELAXED);
  out->device_syncs = __atomic_load_n(&g_counters.device_syncs, __ATOMIC_RELAXED);
  out->cpu_syncs = __atomic_load_n(&g_counters.cpu_syncs, __ATOMIC_RELAXED);
  out->io_allocs = __atomic_load_n(&g_counters.io_allocs, __ATOMIC_RELAXED);
  out->io_live = __atomic_load_n(&g_counters.io_live, __ATOMIC_RELAXED);
}

/* The library's one export (libepctx_hello_npu.so). */
EPCTX_HAL_DEFINE_ENTRY(&kDriver)
