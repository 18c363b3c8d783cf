/* SPDX-License-Identifier: Apache-2.0 */
/* The tqnn test driver; see tqnn_driver.h. */
#include "tqnn_driver.h"

#include <epctx/epctx.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tqnn_config g_cfg;
static tqnn_record g_rec;
static const char* const kKeys[] = {"QNNExecutionProvider", "QNN"};

typedef struct tgraph {
  char name[64];
  epctx_hal_tensor_desc in[4], out[4];
  epctx_hal_graph_info info;
} tgraph;

struct epctx_hal_context {
  tgraph graphs[8];
  int n;
};

/* One "<name> <in> <out> <dtype> <dim>" line into g; returns bytes used or 0. */
static size_t parse_line(const uint8_t* p, size_t n, tgraph* g) {
  char line[160];
  size_t len = 0;
  while (len < n && p[len] != '\n') ++len;
  if (len == 0 || len >= sizeof line) return 0;
  memcpy(line, p, len);
  line[len] = '\0';
  unsigned nin, nout, dim;
  int dtype;
  if (sscanf(line, "%63s %u %u %d %u", g->name, &nin, &nout, &dtype, &dim) != 5 || nin > 4 ||
      nout > 4)
    return 0;
  for (unsigned i = 0; i < nin + nout; ++i) {
    epctx_hal_tensor_desc* d = i < nin ? &g->in[i] : &g->out[i - nin];
    d->name = "";
    d->dtype = dtype;
    d->rank = 2;
    d->dims[0] = 1;
    d->dims[1] = dim;
  }
  g->info.num_inputs = nin;
  g->info.num_outputs = nout;
  g->info.inputs = g->in;
  g->info.outputs = g->out;
  return len + 1;
}

static int parse_text(const uint8_t* p, uint64_t n, epctx_hal_context* c, const char* rename) {
  if (n < 5 || memcmp(p, "TQNN\n", 5) != 0) return 0;
  size_t off = 5;
  while (off < n && c->n < 8) {
    size_t used = parse_line(p + off, (size_t)(n - off), &c->graphs[c->n]);
    if (!used) return 0;
    if (rename) snprintf(c->graphs[c->n].name, sizeof c->graphs[c->n].name, "%s", rename);
    ++c->n;
    off += used;
  }
  return c->n > 0;
}

static int get_info(const epctx_hal_driver* self, epctx_hal_driver_info* out) {
  (void)self;
  out->name = "tqnn";
  out->driver_version = g_cfg.driver_version;
  out->sdk_version = g_cfg.sdk_version;
  out->hardware_architecture = g_cfg.hardware_architecture;
  out->source_keys = kKeys;
  out->num_source_keys = 2;
  out->payload_alignment = 1;
  out->flags = g_cfg.flags;
  return EPCTX_OK;
}

static int check(const epctx_hal_driver* self, const epctx_hal_context_desc* d, char* msg,
                 size_t cap) {
  (void)self;
  ++g_rec.checks;
  if (g_cfg.veto) {
    snprintf(msg, cap, "tqnn: vetoed node '%s'", d->node_name);
    return g_cfg.veto;
  }
  return EPCTX_OK;
}

static int load(const epctx_hal_driver* self, const epctx_hal_blob* b, const epctx_hal_host* host,
                epctx_hal_context** out, char* msg, size_t cap) {
  (void)self;
  (void)host;
  int k = g_rec.loads++;
  if (k < TQNN_MAX_LOADS) {
    g_rec.blob_data[k] = b->data;
    g_rec.blob_size[k] = b->size;
    memcpy(g_rec.blob_copy[k], b->data, b->size < 256 ? (size_t)b->size : 256);
    g_rec.is_container[k] = (int)b->is_container;
    g_rec.weights_size[k] = b->weights_size;
  }
  epctx_hal_context* c = calloc(1, sizeof *c);
  if (!c) return EPCTX_OUT_OF_MEMORY;
  int ok = 1;
  if (b->is_container) {
    for (uint32_t i = 0; i < b->num_graphs && ok; ++i)
      ok = parse_text(b->graphs[i].data, b->graphs[i].size, c, b->graphs[i].name);
  } else {
    ok = parse_text(b->data, b->size, c, NULL);
  }
  if (!ok) {
    free(c);
    snprintf(msg, cap, "tqnn: blob of %llu bytes is not a TQNN blob", (unsigned long long)b->size);
    return EPCTX_INVALID_GRAPH;
  }
  *out = c;
  return EPCTX_OK;
}

static int get_graph(const epctx_hal_driver* self, epctx_hal_context* c, const char* name,
                     epctx_hal_graph** out, epctx_hal_graph_info* info, char* msg, size_t cap) {
  (void)self;
  int k = g_rec.asks++;
  tgraph* found = NULL;
  for (int i = 0; i < c->n && !found; ++i)
    if (strcmp(c->graphs[i].name, name) == 0) found = &c->graphs[i];
  if (!found && c->n == 1) found = &c->graphs[0]; /* one graph: whatever its name */
  if (k < TQNN_MAX_ASKS) {
    snprintf(g_rec.asked[k], sizeof g_rec.asked[k], "%s", name);
    snprintf(g_rec.bound[k], sizeof g_rec.bound[k], "%s", found ? found->name : "");
  }
  if (found && g_cfg.refuse_graph[0] && strcmp(name, g_cfg.refuse_graph) == 0) {
    snprintf(msg, cap, "tqnn: graph '%s' refused by its driver", name);
    return EPCTX_INVALID_GRAPH;
  }
  if (!found) {
    snprintf(msg, cap, "tqnn: no graph '%s'", name);
    return EPCTX_NOT_FOUND;
  }
  *out = (epctx_hal_graph*)found;
  *info = found->info;
  return EPCTX_OK;
}

static int execute(const epctx_hal_driver* self, epctx_hal_graph* graph, const epctx_hal_tensor* in,
                   uint32_t nin, epctx_hal_tensor* out, uint32_t nout, void* scratch,
                   uint64_t scratch_bytes, char* msg, size_t cap) {
  (void)self;
  (void)graph;
  (void)scratch;
  (void)scratch_bytes;
  (void)msg;
  (void)cap;
  for (uint32_t o = 0; o < nout; ++o) {
    if (nin == 0) {
      memset(out[o].data, 7, (size_t)out[o].bytes);
    } else if (out[o].dtype == EPCTX_DTYPE_FLOAT) {
      float* y = out[o].data;
      size_t n = (size_t)(out[o].bytes / 4);
      for (size_t i = 0; i < n; ++i) {
        y[i] = 0;
        for (uint32_t k = 0; k < nin; ++k) y[i] += ((const float*)in[k].data)[i];
      }
    } else {
      memcpy(out[o].data, in[0].data, (size_t)out[o].bytes);
    }
  }
  return EPCTX_OK;
}

static void release(const epctx_hal_driver* self, epctx_hal_context* c) {
  (void)self;
  ++g_rec.releases;
  free(c);
}

/* clang-format off */
static const epctx_hal_driver kDriver = {EPCTX_HAL_ABI_VERSION, sizeof(epctx_hal_driver), NULL,
                                         get_info, check, load, get_graph, execute, release,
                                         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                         NULL, NULL};
/* clang-format on */

const epctx_hal_driver* tqnn_driver(void) { return &kDriver; }
tqnn_config* tqnn_config_get(void) { return &g_cfg; }
tqnn_record* tqnn_record_get(void) { return &g_rec; }

void tqnn_reset(void) {
  memset(&g_rec, 0, sizeof g_rec);
  memset(&g_cfg, 0, sizeof g_cfg);
  g_cfg.driver_version = (epctx_hal_version){1, 5, 0};
  g_cfg.sdk_version = (epctx_hal_version){2, 3, 1};
  snprintf(g_cfg.hardware_architecture, sizeof g_cfg.hardware_architecture, "tq-1.2");
}
