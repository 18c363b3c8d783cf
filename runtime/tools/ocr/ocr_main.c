/* SPDX-License-Identifier: Apache-2.0 */
/* epctx-ocr: reads the text in a picture with PP-OCR's three models compiled
 * into epctx packages (detection, angle classifier, recognition), on the
 * public C API only. See README.md here. Every failure is one line on
 * stderr, "epctx-ocr: error: ...", and exit status 1 (2 for usage). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <epctx/epctx.h>

#include "cli_args.h"
#include "json_writer.h"
#include "ocr_pipeline.h"

enum {
  OPT_MODELS = 1,
  OPT_OUTPUT,
  OPT_THREADS,
  OPT_DICT,
  OPT_DET_THRESHOLD,
  OPT_BOX_THRESHOLD,
  OPT_UNCLIP_RATIO,
  OPT_DROP_SCORE,
  OPT_REPEAT
};

static const epctx_cli_option kOptions[] = {
    {OPT_MODELS, "models", 'm', "DIR",
     "det_ctx.onnx, cls_ctx.onnx, rec_ctx.onnx (with their context\nbinaries) and keys.txt "
     "(default build/demo/ocr, what tests/demo.sh leaves)"},
    {OPT_OUTPUT, "output", 'o', "FILE.png",
     "write the picture with the boxes drawn beside the detection map"},
    {OPT_THREADS, "threads", 0, "N",
     "threads a run may use, the caller's included: -C session.intra_op_num_threads=N"},
    {OPT_DICT, "dict", 0, "FILE",
     "the recogniser's characters, one per line (default DIR/keys.txt)"},
    {OPT_DET_THRESHOLD, "det-threshold", 0, "P", "text probability of a pixel (default 0.3)"},
    {OPT_BOX_THRESHOLD, "box-threshold", 0, "P", "mean probability inside a box (default 0.6)"},
    {OPT_UNCLIP_RATIO, "unclip-ratio", 0, "R", "how far a box grows around its text (default 1.5)"},
    {OPT_DROP_SCORE, "drop-score", 0, "P", "lowest recognition score kept (default 0.5)"},
    {OPT_REPEAT, "repeat", 'n', "N",
     "read the picture N more times and report each stage's median\n(warm) besides the first (cold) "
     "run (default 0)"},
    {0, NULL, 0, NULL, NULL}};

static const epctx_cli_tool kTool = {
    "epctx-ocr",
    "[options] IMAGE",
    "Reads the text in a picture (PNG, PPM, JPEG, BMP) with PP-OCR's models on epctx.",
    kOptions,
    NULL,
    "print one JSON object: {\"lines\": [{\"text\", \"score\", \"angle\", \"box\": [[x, y] x 4]}],\n"
    "\"timings_ms\": {...}} with lines in reading order"};

static void die(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  for (char* p = msg; *p; ++p)
    if (*p == '\n' || *p == '\r') *p = ' ';
  fprintf(stderr, "epctx-ocr: error: %s\n", msg);
  exit(1);
}

/* Dies on a failed C API call, naming `subject` when the message does not. */
static void check(epctx_status* st, const char* subject) {
  if (!st) return;
  char msg[1536];
  snprintf(msg, sizeof msg, "%s", epctx_status_message(st));
  const char* code = epctx_code_name(epctx_status_code(st));
  epctx_status_release(st);
  if (subject && !strstr(msg, subject)) die("%s: %s: %s", subject, code, msg);
  die("%s: %s", code, msg);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct args {
  const char* image;
  const char* models;
  const char* output;
  const char* dict;
  int json;
  int repeat;
  ocr_params params;
  epctx_cli_entries options; /* -C */
};

static void parse_args(int argc, char** argv, struct args* a) {
  memset(a, 0, sizeof(*a));
  a->models = "build/demo/ocr";
  ocr_params_default(&a->params);
  epctx_cli_parser p;
  epctx_cli_init(&p, &kTool, argc, argv);
  const char* v;
  int id;
  char err[256];
  while ((id = epctx_cli_next(&p, &v)) > 0) {
    switch (id) {
      case EPCTX_CLI_HELP: epctx_cli_help(&kTool, stdout); exit(0);
      case EPCTX_CLI_VERSION: epctx_cli_version(&kTool, stdout); exit(0);
      case EPCTX_CLI_JSON: a->json = 1; break;
      case EPCTX_CLI_CONFIG:
        if (epctx_cli_split_config((char*)v, epctx_cli_add_entry, &a->options, err, sizeof err))
          exit(epctx_cli_usage_error(&kTool, "%s", err));
        break;
      case OPT_MODELS: a->models = v; break;
      case OPT_OUTPUT: a->output = v; break;
      case OPT_DICT: a->dict = v; break;
      case OPT_THREADS:
        epctx_cli_long(&kTool, "--threads", v, 1, 256);
        if (epctx_cli_add_entry(&a->options, "session.intra_op_num_threads", v, err, sizeof err))
          exit(epctx_cli_usage_error(&kTool, "%s", err));
        break;
      case OPT_DET_THRESHOLD:
        a->params.det.threshold = (float)epctx_cli_double(&kTool, "--det-threshold", v, 0, 1);
        break;
      case OPT_BOX_THRESHOLD:
        a->params.det.box_threshold = (float)epctx_cli_double(&kTool, "--box-threshold", v, 0, 1);
        break;
      case OPT_UNCLIP_RATIO:
        a->params.det.unclip_ratio = (float)epctx_cli_double(&kTool, "--unclip-ratio", v, 0, 10);
        break;
      case OPT_DROP_SCORE:
        a->params.drop_score = (float)epctx_cli_double(&kTool, "--drop-score", v, 0, 1);
        break;
      case OPT_REPEAT: a->repeat = (int)epctx_cli_long(&kTool, "--repeat", v, 0, 1000); break;
      default: break;
    }
  }
  if (id < 0) exit(EPCTX_CLI_EXIT_USAGE);
  a->image = epctx_cli_one_operand(&p, "image");
}

/* The engine: one epctx session per package (det, cls, and a recogniser
 * per width bucket), each with input and output tensors made by the session
 * (driver memory where the NPU reads and writes them directly), bound at
 * every run. The packages share one context group, so recognisers compiled
 * as a weight-sharing group map their one context binary once. */
#define MAX_REC 16

struct package {
  epctx_session* session;
  epctx_tensor* in;
  epctx_tensor* out;
  const char* in_name;
  const char* out_name;
  int height, width; /* of its [1, 3, H, W] input */
  double create_ms;
  char path[4096];
};

struct engine {
  epctx_env* env;
  epctx_context_group* group;
  struct package det, cls, rec[MAX_REC];
  int rec_count;
  int rec_widths[MAX_REC];
};

static struct package* package_of(struct engine* e, ocr_model m, int width) {
  if (m == OCR_DET) return &e->det;
  if (m == OCR_CLS) return &e->cls;
  for (int i = 0; i < e->rec_count; ++i)
    if (e->rec[i].width == width) return &e->rec[i];
  return &e->rec[e->rec_count - 1];
}

static float* engine_input(void* user, ocr_model m, int width) {
  return (float*)epctx_tensor_data(package_of(user, m, width)->in);
}

static int engine_run(void* user, ocr_model m, int width, ocr_output* out, char* err, size_t cap) {
  struct package* p = package_of(user, m, width);
  epctx_run_args r;
  memset(&r, 0, sizeof r);
  const epctx_tensor* in = p->in;
  r.input_names = &p->in_name;
  r.inputs = &in;
  r.input_count = 1;
  r.output_names = &p->out_name;
  r.outputs = &p->out;
  r.output_count = 1;
  epctx_status* st = epctx_session_run_with(p->session, &r);
  if (st) {
    snprintf(err, cap, "%s: %s: %s", p->path, epctx_code_name(epctx_status_code(st)),
             epctx_status_message(st));
    epctx_status_release(st);
    return -1;
  }
  out->data = (const float*)epctx_tensor_data(p->out);
  out->rank = epctx_tensor_rank(p->out);
  for (size_t i = 0; i < out->rank && i < 4; ++i) out->dims[i] = epctx_tensor_dims(p->out)[i];
  return 0;
}

/* Creates the session of one package and checks it is the kind asked. */
static void open_package(struct engine* e, struct package* p, ocr_model m,
                         const epctx_session_options* opts, int classes) {
  FILE* f = fopen(p->path, "rb");
  if (!f)
    die("%s: %s (compile the %s model with epctx-compile; tests/demo.sh shows how)", p->path,
        strerror(errno), ocr_model_name(m));
  fclose(f);
  double t0 = now_ms();
  check(epctx_session_create(e->env, p->path, opts, &p->session), p->path);
  p->create_ms = now_ms() - t0;
  epctx_session* s = p->session;
  epctx_io_info in, out;
  if (epctx_session_input_count(s) != 1 || epctx_session_output_count(s) < 1)
    die("%s: not the %s model: expected one image input, found %zu inputs and %zu outputs", p->path,
        ocr_model_name(m), epctx_session_input_count(s), epctx_session_output_count(s));
  check(epctx_session_input_info(s, 0, &in), p->path);
  check(epctx_session_output_info(s, 0, &out), p->path);
  char err[512];
  if (in.dtype != EPCTX_DTYPE_FLOAT || out.dtype != EPCTX_DTYPE_FLOAT)
    die("%s: not the %s model: expected float32 input and output", p->path, ocr_model_name(m));
  if (ocr_check_model(m, in.dims, in.rank, out.dims, out.rank, classes, err, sizeof err))
    die("%s: not the %s model: %s", p->path, ocr_model_name(m), err);
  p->in_name = in.name;
  p->out_name = out.name;
  p->height = (int)in.dims[2];
  p->width = (int)in.dims[3];
  check(epctx_session_create_io_tensor(s, in.name, &p->in), p->path);
  check(epctx_session_create_io_tensor(s, out.name, &p->out), p->path);
}

static int by_width(const void* a, const void* b) {
  return ((const struct package*)a)->width - ((const struct package*)b)->width;
}

/* rec_ctx.onnx and every rec_<anything>_ctx.onnx beside it. */
static void find_recognisers(struct engine* e, const char* dir) {
  snprintf(e->rec[0].path, sizeof e->rec[0].path, "%s/rec_ctx.onnx", dir);
  e->rec_count = 1;
  DIR* d = opendir(dir);
  if (!d) die("%s: %s", dir, strerror(errno));
  struct dirent* ent;
  while ((ent = readdir(d)) != NULL) {
    const char* n = ent->d_name;
    size_t len = strlen(n);
    if (len <= 13 || strncmp(n, "rec_", 4) || strcmp(n + len - 9, "_ctx.onnx")) continue;
    if (e->rec_count == MAX_REC) die("%s: more than %d recognisers (rec_*_ctx.onnx)", dir, MAX_REC);
    struct package* p = &e->rec[e->rec_count++];
    snprintf(p->path, sizeof p->path, "%s/%s", dir, n);
  }
  closedir(d);
}

static void engine_open(struct engine* e, ocr_engine* api, const struct args* a, int classes) {
  memset(e, 0, sizeof(*e));
  check(epctx_env_create(NULL, 0, &e->env), NULL);
  check(epctx_env_register_builtin_drivers(e->env), NULL);
  check(epctx_context_group_create(e->env, &e->group), NULL);
  epctx_session_options* opts;
  check(epctx_session_options_create(&opts), NULL);
  for (size_t i = 0; i < a->options.count; ++i)
    check(epctx_session_options_set(opts, a->options.keys[i], a->options.values[i]), "-C");
  check(epctx_session_options_set_context_group(opts, e->group), NULL);
  snprintf(e->det.path, sizeof e->det.path, "%s/det_ctx.onnx", a->models);
  snprintf(e->cls.path, sizeof e->cls.path, "%s/cls_ctx.onnx", a->models);
  open_package(e, &e->det, OCR_DET, opts, classes);
  open_package(e, &e->cls, OCR_CLS, opts, classes);
  find_recognisers(e, a->models);
  for (int i = 0; i < e->rec_count; ++i) open_package(e, &e->rec[i], OCR_REC, opts, classes);
  epctx_session_options_release(opts);
  qsort(e->rec, (size_t)e->rec_count, sizeof(e->rec[0]), by_width);
  for (int i = 0; i < e->rec_count; ++i) {
    const struct package* p = &e->rec[i];
    if (i && (p->height != e->rec[0].height || p->width == e->rec[i - 1].width))
      die("%s: expected a recogniser of height %d and a width no other has, found [1, 3, %d, %d]",
          p->path, e->rec[0].height, p->height, p->width);
    e->rec_widths[i] = p->width;
  }
  memset(api, 0, sizeof(*api));
  for (int m = 0; m < OCR_MODELS; ++m) {
    const struct package* p = m == OCR_DET ? &e->det : m == OCR_CLS ? &e->cls : &e->rec[0];
    api->input_h[m] = p->height;
    api->input_w[m] = p->width;
  }
  api->rec_widths = e->rec_widths;
  api->rec_width_count = e->rec_count;
  api->user = e;
  api->input = engine_input;
  api->run = engine_run;
}

static double create_ms(const struct engine* e, ocr_model m) {
  if (m == OCR_DET) return e->det.create_ms;
  if (m == OCR_CLS) return e->cls.create_ms;
  double sum = 0;
  for (int i = 0; i < e->rec_count; ++i) sum += e->rec[i].create_ms;
  return sum;
}

static void close_package(struct package* p) {
  epctx_tensor_release(p->in);
  epctx_tensor_release(p->out);
  epctx_session_release(p->session);
}

static void engine_close(struct engine* e) {
  close_package(&e->det);
  close_package(&e->cls);
  for (int i = 0; i < e->rec_count; ++i) close_package(&e->rec[i]);
  epctx_context_group_release(e->group);
  epctx_env_release(e->env);
}

/* Median time of each stage over the --repeat runs. */
struct warm {
  int runs;
  double det, cls, rec, post, total;
};

static void run_warm(const ocr_engine* api, const ocr_image* img, const ocr_dict* dict,
                     const struct args* a, struct warm* w) {
  memset(w, 0, sizeof(*w));
  if (a->repeat <= 0) return;
  double* t = malloc(sizeof(double) * 5 * (size_t)a->repeat);
  if (!t) die("out of memory");
  char err[1024];
  for (int i = 0; i < a->repeat; ++i) {
    ocr_result r;
    double t0 = now_ms();
    if (ocr_run(api, img, dict, &a->params, &r, err, sizeof err)) die("%s: %s", a->image, err);
    t[4 * a->repeat + i] = now_ms() - t0;
    t[i] = r.det_ms;
    t[a->repeat + i] = r.cls_ms;
    t[2 * a->repeat + i] = r.rec_ms;
    t[3 * a->repeat + i] = r.post_ms;
    ocr_result_free(&r);
  }
  w->runs = a->repeat;
  w->det = ocr_median(t, a->repeat);
  w->cls = ocr_median(t + a->repeat, a->repeat);
  w->rec = ocr_median(t + 2 * a->repeat, a->repeat);
  w->post = ocr_median(t + 3 * a->repeat, a->repeat);
  w->total = ocr_median(t + 4 * a->repeat, a->repeat);
  free(t);
}

static double ms2(double ms) { return (double)(long long)(ms * 100.0 + 0.5) / 100.0; }

static void print_json(const struct args* a, const ocr_image* img, const ocr_result* r,
                       const struct engine* e, double total_ms, const struct warm* w,
                       size_t threads) {
  epctx_json j;
  epctx_json_init(&j, stdout, 0);
  epctx_json_begin_object(&j);
  epctx_json_key(&j, "image");
  epctx_json_string(&j, a->image);
  epctx_json_key(&j, "width");
  epctx_json_int(&j, img->width);
  epctx_json_key(&j, "height");
  epctx_json_int(&j, img->height);
  epctx_json_key(&j, "boxes");
  epctx_json_int(&j, r->boxes);
  ocr_json_lines(&j, r);
  epctx_json_key(&j, "timings_ms");
  epctx_json_begin_object(&j);
  epctx_json_key(&j, "session_create");
  epctx_json_begin_object(&j);
  for (int m = 0; m < OCR_MODELS; ++m) {
    epctx_json_key(&j, ocr_model_name(m));
    epctx_json_double(&j, ms2(create_ms(e, m)));
  }
  epctx_json_end_object(&j);
  epctx_json_key(&j, "det");
  epctx_json_double(&j, ms2(r->det_ms));
  epctx_json_key(&j, "cls");
  epctx_json_double(&j, ms2(r->cls_ms));
  epctx_json_key(&j, "rec");
  epctx_json_double(&j, ms2(r->rec_ms));
  epctx_json_key(&j, "pre_post");
  epctx_json_double(&j, ms2(r->post_ms));
  epctx_json_key(&j, "total");
  epctx_json_double(&j, ms2(total_ms));
  if (w->runs) {
    epctx_json_key(&j, "warm");
    epctx_json_begin_object(&j);
    epctx_json_key(&j, "runs");
    epctx_json_int(&j, w->runs);
    const char* names[] = {"det", "cls", "rec", "pre_post", "total"};
    const double values[] = {w->det, w->cls, w->rec, w->post, w->total};
    for (int k = 0; k < 5; ++k) {
      epctx_json_key(&j, names[k]);
      epctx_json_double(&j, ms2(values[k]));
    }
    epctx_json_end_object(&j);
  }
  epctx_json_end_object(&j);
  epctx_json_key(&j, "intra_op_threads");
  epctx_json_int(&j, (int64_t)threads);
  epctx_json_key(&j, "output");
  if (a->output) epctx_json_string(&j, a->output);
  else epctx_json_null(&j);
  epctx_json_end_object(&j);
  epctx_json_finish(&j);
}

static void print_text(const struct args* a, const ocr_image* img, const ocr_result* r,
                       const struct engine* e, double total_ms, const struct warm* w) {
  printf("%s (%d x %d): %d text lines (%d boxes)\n", a->image, img->width, img->height, r->count,
         r->boxes);
  for (int i = 0; i < r->count; ++i) {
    const ocr_line* l = &r->lines[i];
    printf("%3d  %.3f  [%4.0f,%4.0f %4.0f,%4.0f %4.0f,%4.0f %4.0f,%4.0f]%s  %s\n", i + 1, l->score,
           l->box.p[0].x, l->box.p[0].y, l->box.p[1].x, l->box.p[1].y, l->box.p[2].x, l->box.p[2].y,
           l->box.p[3].x, l->box.p[3].y, l->angle ? " (turned 180)" : "", l->text);
  }
  printf("session create: det %.1f ms, cls %.1f ms, rec %.1f ms (%d widths)\n",
         create_ms(e, OCR_DET), create_ms(e, OCR_CLS), create_ms(e, OCR_REC), e->rec_count);
  printf("run: det %.1f ms, cls %.1f ms, rec %.1f ms, pre/post-processing %.1f ms, total %.1f ms\n",
         r->det_ms, r->cls_ms, r->rec_ms, r->post_ms, total_ms);
  if (w->runs)
    printf("warm run (median of %d): det %.1f ms, cls %.1f ms, rec %.1f ms, pre/post-processing "
           "%.1f ms, total %.1f ms\n",
           w->runs, w->det, w->cls, w->rec, w->post, w->total);
}

int main(int argc, char** argv) {
  struct args a;
  parse_args(argc, argv, &a);
  char err[1024], dict_path[4096];
  if (!a.dict) {
    snprintf(dict_path, sizeof dict_path, "%s/keys.txt", a.models);
    a.dict = dict_path;
  }
  ocr_image img;
  if (ocr_image_load(a.image, &img, err, sizeof err)) die("%s", err);
  ocr_dict dict;
  if (ocr_dict_load(a.dict, &dict, err, sizeof err)) die("%s", err);
  struct engine e;
  ocr_engine api;
  engine_open(&e, &api, &a, dict.count + 1);
  ocr_result r;
  double t0 = now_ms();
  if (ocr_run(&api, &img, &dict, &a.params, &r, err, sizeof err)) die("%s: %s", a.image, err);
  double total_ms = now_ms() - t0;
  struct warm warm;
  run_warm(&api, &img, &dict, &a, &warm);
  if (a.output) {
    ocr_image picture;
    if (ocr_render(&img, &r, &picture)) die("%s: out of memory", a.output);
    if (ocr_image_save_png(a.output, &picture, err, sizeof err)) die("%s", err);
    ocr_image_free(&picture);
  }
  if (a.json)
    print_json(&a, &img, &r, &e, total_ms, &warm,
               epctx_session_intra_op_thread_count(e.det.session));
  else {
    print_text(&a, &img, &r, &e, total_ms, &warm);
    if (a.output) printf("wrote %s\n", a.output);
  }
  ocr_result_free(&r);
  engine_close(&e);
  ocr_dict_free(&dict);
  ocr_image_free(&img);
  return 0;
}
