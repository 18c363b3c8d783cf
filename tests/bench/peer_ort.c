/* SPDX-License-Identifier: Apache-2.0 */
/* peer-bench-ort: the ONNX Runtime side of the peer benchmark (peer_worker.h
 * has the protocol; peer_bench.py drives it).
 *
 * usage: peer-bench-ort MODEL.onnx --lib libonnxruntime.so.1
 *                       --input NAME=FILE.npy... --threads N [-C KEY=VALUE]...
 * Loads ONNX Runtime with dlopen (the library comes from the onnxruntime-node
 * npm package at test time; only its C API header is needed to build), asks
 * for API version ORT_API_VERSION of the header (29: ORT 1.30 serves it) and
 * runs the original model with ORT's defaults for an application on the CPU
 * execution provider: graph optimisations ORT_ENABLE_ALL, sequential
 * execution, one inter-op thread, --threads intra-op threads (the session's
 * own pool, spinning as by default). Inputs wrap the .npy data
 * (no copy); outputs are allocated by ORT and released after each run, as
 * the epctx worker does. -C sets session config entries (AddSessionConfigEntry). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "onnxruntime_c_api.h"
#include "peer_worker.h"

#define MAX_OUTPUTS 64

static const OrtApi* g_ort;

typedef struct state {
  OrtSession* session;
  size_t num_inputs, num_outputs;
  const char* input_names[PEER_MAX_INPUTS];
  const OrtValue* inputs[PEER_MAX_INPUTS];
  char* output_names[MAX_OUTPUTS];
} state;

static void check(OrtStatus* st, const char* what) {
  if (!st) return;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", g_ort->GetErrorMessage(st));
  g_ort->ReleaseStatus(st);
  peer_die("%s: %s", what, msg);
}

static int run(void* p, char* err, size_t err_size) {
  state* s = p;
  OrtValue* outs[MAX_OUTPUTS] = {0};
  OrtStatus* st = g_ort->Run(s->session, NULL, s->input_names, s->inputs, s->num_inputs,
                             (const char* const*)s->output_names, s->num_outputs, outs);
  if (st) {
    snprintf(err, err_size, "%s", g_ort->GetErrorMessage(st));
    g_ort->ReleaseStatus(st);
    return 1;
  }
  for (size_t i = 0; i < s->num_outputs; ++i) g_ort->ReleaseValue(outs[i]);
  return 0;
}

static const OrtApi* load_api(const char* library) {
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!h) peer_die("dlopen: %s", dlerror());
  const OrtApiBase* (*get_base)(void) = (const OrtApiBase* (*)(void))dlsym(h, "OrtGetApiBase");
  if (!get_base) peer_die("%s: no OrtGetApiBase: %s", library, dlerror());
  const OrtApiBase* base = get_base();
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (!api)
    peer_die("%s (ONNX Runtime %s) does not serve C API version %d", library,
             base->GetVersionString(), ORT_API_VERSION);
  return api;
}

int main(int argc, char** argv) {
  peer_set_name("peer-bench-ort");
  peer_args a;
  peer_parse_args(argc, argv, &a);
  if (!a.library) peer_die("--lib PATH (libonnxruntime.so.1) is required");
  if (a.threads == 0) peer_die("--threads N is required (ORT's default depends on the machine)");
  g_ort = load_api(a.library);

  OrtEnv* env = NULL;
  check(g_ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "peer-bench", &env), "CreateEnv");
  OrtSessionOptions* o = NULL;
  check(g_ort->CreateSessionOptions(&o), "CreateSessionOptions");
  check(g_ort->SetSessionGraphOptimizationLevel(o, ORT_ENABLE_ALL), "graph optimization level");
  check(g_ort->SetSessionExecutionMode(o, ORT_SEQUENTIAL), "execution mode");
  check(g_ort->SetInterOpNumThreads(o, 1), "inter-op threads");
  check(g_ort->SetIntraOpNumThreads(o, a.threads), "intra-op threads");
  for (size_t i = 0; i < a.num_options; ++i)
    check(g_ort->AddSessionConfigEntry(o, a.option_keys[i], a.option_values[i]), a.option_keys[i]);

  state s;
  memset(&s, 0, sizeof s);
  double t0 = peer_now_ms();
  check(g_ort->CreateSession(env, a.model, o, &s.session), a.model);
  double create_ms = peer_now_ms() - t0;
  g_ort->ReleaseSessionOptions(o);

  OrtAllocator* alloc = NULL;
  check(g_ort->GetAllocatorWithDefaultOptions(&alloc), "default allocator");
  check(g_ort->SessionGetOutputCount(s.session, &s.num_outputs), "output count");
  if (s.num_outputs > MAX_OUTPUTS) peer_die("%s: more than %d outputs", a.model, MAX_OUTPUTS);
  for (size_t i = 0; i < s.num_outputs; ++i)
    check(g_ort->SessionGetOutputName(s.session, i, alloc, &s.output_names[i]), "output name");

  OrtMemoryInfo* mem = NULL;
  check(g_ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "memory info");
  s.num_inputs = a.num_inputs;
  for (size_t i = 0; i < a.num_inputs; ++i) {
    epctx_npy* n = &a.inputs[i];
    OrtValue* v = NULL;
    /* The .npy dtype codes are ONNX's TensorProto codes, as ORT's are. */
    check(g_ort->CreateTensorWithDataAsOrtValue(mem, n->data, n->bytes, n->dims, n->rank,
                                                (ONNXTensorElementDataType)n->dtype, &v),
          a.input_names[i]);
    s.input_names[i] = a.input_names[i];
    s.inputs[i] = v;
  }

  int rc = peer_serve(run, &s, create_ms, a.threads);
  for (size_t i = 0; i < s.num_inputs; ++i) g_ort->ReleaseValue((OrtValue*)s.inputs[i]);
  for (size_t i = 0; i < s.num_outputs; ++i)
    check(g_ort->AllocatorFree(alloc, s.output_names[i]), "free");
  g_ort->ReleaseMemoryInfo(mem);
  g_ort->ReleaseSession(s.session);
  g_ort->ReleaseEnv(env);
  peer_free_args(&a);
  return rc;
}
