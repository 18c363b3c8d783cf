/* SPDX-License-Identifier: Apache-2.0 */
/* ocr-ort: epctx-ocr's pipeline (runtime/tools/ocr) with ONNX Runtime 1.30
 * running the original PP-OCR models, the peer the OCR test compares with.
 *
 * usage: ocr-ort LIB DET.onnx CLS.onnx REC.onnx KEYS.txt DET_H DET_W REC_WIDTHS IMAGE [REPEAT]
 *   LIB         libonnxruntime.so.1 (onnxruntime-node's, dlopen'ed)
 *   DET_H/W     the detection input epctx's det package was compiled for
 *   REC_WIDTHS  "320,640,..." the recogniser buckets epctx's packages have,
 *               or "any": PaddleOCR's own width per line
 *   REPEAT      read the picture that many more times; the timings are then
 *               each stage's median over them (default 0: the first run's)
 * Prints the JSON lines epctx-ocr --json prints ({"lines": [...]}) and the
 * time of each stage ("timings_ms"); one error line and exit 1 on failure.
 * One intra-op thread, ORT's defaults otherwise. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"
#include "ocr_pipeline.h"
#include "onnxruntime_c_api.h"

static const OrtApi* g_ort;

/* Under AddressSanitizer (the host-asan preset) ONNX Runtime's own
 * process-lifetime allocations would be reported as leaks at exit: the leak
 * check is for epctx's code, which epctx-ocr runs with it on. */
const char* __asan_default_options(void);
const char* __asan_default_options(void) { return "detect_leaks=0"; }

static void die(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ocr-ort: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static void check(OrtStatus* st, const char* what) {
  if (!st) return;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", g_ort->GetErrorMessage(st));
  g_ort->ReleaseStatus(st);
  die("%s: %s", what, msg);
}

struct model {
  OrtSession* session;
  char* in_name;
  char* out_name;
  const char* path;
  OrtValue* last; /* the previous run's output, kept until the next */
};

struct engine {
  OrtMemoryInfo* mem;
  struct model m[OCR_MODELS];
  float* buf;
  size_t buf_floats;
  int height[OCR_MODELS];
};

static float* engine_input(void* user, ocr_model m, int width) {
  struct engine* e = user;
  size_t need = (size_t)3 * e->height[m] * width;
  if (need > e->buf_floats) {
    free(e->buf);
    e->buf = malloc(need * sizeof(float));
    if (!e->buf) die("out of memory");
    e->buf_floats = need;
  }
  return e->buf;
}

static int engine_run(void* user, ocr_model m, int width, ocr_output* out, char* err, size_t cap) {
  struct engine* e = user;
  struct model* md = &e->m[m];
  int64_t dims[4] = {1, 3, e->height[m], width};
  OrtValue* in = NULL;
  check(g_ort->CreateTensorWithDataAsOrtValue(e->mem, e->buf,
                                              (size_t)3 * e->height[m] * width * sizeof(float),
                                              dims, 4, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in),
        md->path);
  if (md->last) g_ort->ReleaseValue(md->last);
  md->last = NULL;
  const char* in_names[1] = {md->in_name};
  const char* out_names[1] = {md->out_name};
  const OrtValue* ins[1] = {in};
  OrtStatus* st = g_ort->Run(md->session, NULL, in_names, ins, 1, out_names, 1, &md->last);
  g_ort->ReleaseValue(in);
  if (st) {
    snprintf(err, cap, "%s: %s", md->path, g_ort->GetErrorMessage(st));
    g_ort->ReleaseStatus(st);
    return -1;
  }
  OrtTensorTypeAndShapeInfo* info = NULL;
  check(g_ort->GetTensorTypeAndShape(md->last, &info), md->path);
  check(g_ort->GetDimensionsCount(info, &out->rank), md->path);
  if (out->rank > 4) die("%s: output of rank %zu", md->path, out->rank);
  check(g_ort->GetDimensions(info, out->dims, out->rank), md->path);
  g_ort->ReleaseTensorTypeAndShapeInfo(info);
  void* data = NULL;
  check(g_ort->GetTensorMutableData(md->last, &data), md->path);
  out->data = data;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 10 && argc != 11)
    die("usage: ocr-ort LIB DET.onnx CLS.onnx REC.onnx KEYS.txt DET_H DET_W REC_WIDTHS IMAGE "
        "[REPEAT]");
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) die("dlopen: %s", dlerror());
  const OrtApiBase* (*get_base)(void) = (const OrtApiBase* (*)(void))dlsym(h, "OrtGetApiBase");
  if (!get_base) die("%s: no OrtGetApiBase", argv[1]);
  g_ort = get_base()->GetApi(ORT_API_VERSION);
  if (!g_ort) die("%s does not serve C API version %d", argv[1], ORT_API_VERSION);

  char err[1024];
  ocr_dict dict;
  if (ocr_dict_load(argv[5], &dict, err, sizeof err)) die("%s", err);
  ocr_image img;
  if (ocr_image_load(argv[9], &img, err, sizeof err)) die("%s", err);

  OrtEnv* env = NULL;
  check(g_ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ocr-ort", &env), "CreateEnv");
  OrtSessionOptions* o = NULL;
  check(g_ort->CreateSessionOptions(&o), "CreateSessionOptions");
  check(g_ort->SetIntraOpNumThreads(o, 1), "intra-op threads");
  OrtAllocator* alloc = NULL;
  check(g_ort->GetAllocatorWithDefaultOptions(&alloc), "default allocator");
  struct engine e;
  memset(&e, 0, sizeof e);
  check(g_ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &e.mem), "memory info");
  for (int m = 0; m < OCR_MODELS; ++m) {
    struct model* md = &e.m[m];
    md->path = argv[2 + m];
    check(g_ort->CreateSession(env, md->path, o, &md->session), md->path);
    check(g_ort->SessionGetInputName(md->session, 0, alloc, &md->in_name), md->path);
    check(g_ort->SessionGetOutputName(md->session, 0, alloc, &md->out_name), md->path);
  }
  g_ort->ReleaseSessionOptions(o);

  ocr_engine api;
  memset(&api, 0, sizeof api);
  int widths[16], count = 0;
  api.input_h[OCR_DET] = e.height[OCR_DET] = atoi(argv[6]);
  api.input_w[OCR_DET] = atoi(argv[7]);
  api.input_h[OCR_CLS] = e.height[OCR_CLS] = 48;
  api.input_w[OCR_CLS] = 192;
  api.input_h[OCR_REC] = e.height[OCR_REC] = 48;
  if (strcmp(argv[8], "any") != 0)
    for (char* p = strtok(argv[8], ","); p && count < 16; p = strtok(NULL, ","))
      widths[count++] = atoi(p);
  api.input_w[OCR_REC] = count ? widths[0] : 320;
  api.rec_widths = widths;
  api.rec_width_count = count;
  api.user = &e;
  api.input = engine_input;
  api.run = engine_run;

  ocr_params params;
  ocr_params_default(&params);
  ocr_result r;
  if (ocr_run(&api, &img, &dict, &params, &r, err, sizeof err)) die("%s: %s", argv[9], err);
  const int repeat = argc == 11 ? atoi(argv[10]) : 0;
  if (repeat > 0) {
    double* t = calloc((size_t)repeat * 4, sizeof(double));
    if (!t) die("out of memory");
    for (int i = 0; i < repeat; ++i) {
      ocr_result again;
      if (ocr_run(&api, &img, &dict, &params, &again, err, sizeof err)) die("%s: %s", argv[9], err);
      t[i] = again.det_ms;
      t[repeat + i] = again.cls_ms;
      t[2 * repeat + i] = again.rec_ms;
      t[3 * repeat + i] = again.post_ms;
      ocr_result_free(&again);
    }
    r.det_ms = ocr_median(t, repeat);
    r.cls_ms = ocr_median(t + repeat, repeat);
    r.rec_ms = ocr_median(t + 2 * repeat, repeat);
    r.post_ms = ocr_median(t + 3 * repeat, repeat);
    free(t);
  }
  epctx_json j;
  epctx_json_init(&j, stdout, 0);
  epctx_json_begin_object(&j);
  epctx_json_key(&j, "boxes");
  epctx_json_int(&j, r.boxes);
  ocr_json_lines(&j, &r);
  epctx_json_key(&j, "timings_ms");
  epctx_json_begin_object(&j);
  epctx_json_key(&j, "det");
  epctx_json_double(&j, r.det_ms);
  epctx_json_key(&j, "cls");
  epctx_json_double(&j, r.cls_ms);
  epctx_json_key(&j, "rec");
  epctx_json_double(&j, r.rec_ms);
  epctx_json_key(&j, "pre_post");
  epctx_json_double(&j, r.post_ms);
  epctx_json_end_object(&j);
  epctx_json_end_object(&j);
  epctx_json_finish(&j);

  ocr_result_free(&r);
  for (int m = 0; m < OCR_MODELS; ++m) {
    if (e.m[m].last) g_ort->ReleaseValue(e.m[m].last);
    check(g_ort->AllocatorFree(alloc, e.m[m].in_name), "free");
    check(g_ort->AllocatorFree(alloc, e.m[m].out_name), "free");
    g_ort->ReleaseSession(e.m[m].session);
  }
  g_ort->ReleaseMemoryInfo(e.mem);
  g_ort->ReleaseEnv(env);
  free(e.buf);
  ocr_image_free(&img);
  ocr_dict_free(&dict);
  return 0;
}
