/* SPDX-License-Identifier: Apache-2.0 */
/* epctx-run: load a precompiled *_ctx.onnx with the public C API, feed it
 * .npy inputs, time session creation and runs, write the outputs as .npy.
 *
 * Written only against <epctx/epctx.h> and libc so it doubles as the
 * reference for application code. Every failure is one line on stderr,
 * "epctx-run: error: <CODE_NAME>: <message>", and exit status 1. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <epctx/epctx.h>

#include "cli_args.h"
#include "json_writer.h"
#include "npy.h"
#include "vnpu_env.h"

#define MAX_BINDINGS 64
#define PREVIEW_VALUES 6

enum {
  OPT_INPUT = 1,
  OPT_OUTPUT_DIR,
  OPT_REPEAT,
  OPT_TRUSTED_KEY,
  OPT_ROLLBACK_STORE,
  OPT_LOG_LEVEL,
  OPT_TIMEOUT_US,
  OPT_THREADS,
  OPT_QUIET,
  OPT_DRIVER_LIBRARY,
  OPT_DECRYPTION_KEY
};

#define MAX_DRIVER_LIBRARIES 8

static const epctx_cli_option kOptions[] = {
    {OPT_INPUT, "input", 'i', "NAME=FILE",
     "bind graph input NAME to a .npy file (every input is required)"},
    {OPT_OUTPUT_DIR, "output-dir", 'o', "DIR",
     "write each output as DIR/<name>.npy (created if missing)"},
    {OPT_REPEAT, "repeat", 'n', "N", "timed runs after the first (default 10)"},
    {OPT_TRUSTED_KEY, "trusted-key", 0, "FILE",
     "trust this P-256 public key (PEM) for signed packages (repeatable, at most 8)"},
    {OPT_DECRYPTION_KEY, "decryption-key", 0, "ID=FILE",
     "data key (32 raw bytes) of key id ID for encrypted packages, or a device\nkey "
     "their model_ctx.onnx.keys wraps it under (repeatable, at most 8)"},
    {OPT_ROLLBACK_STORE, "rollback-store", 0, "DIR",
     "folder of the anti-rollback counters of signed packages"},
    {OPT_LOG_LEVEL, "log-level", 0, "N", "runtime log on stderr: 0 error (default) .. 3 verbose"},
    {OPT_TIMEOUT_US, "timeout-us", 0, "N",
     "stop any run that takes longer (RUN_DEADLINE_EXCEEDED; default: none)"},
    {OPT_THREADS, "threads", 0, "N",
     "threads a run may use, the caller's included: -C session.intra_op_num_threads=N"},
    {OPT_DRIVER_LIBRARY, "driver-library", 0, "FILE",
     "load an NPU driver library (libepctx_<name>.so) before the session is\n"
     "created (repeatable, at most 8)"},
    {OPT_QUIET, "quiet", 'q', NULL, "print only the JSON timing line"},
    {0, NULL, 0, NULL, NULL}};

static const epctx_cli_tool kTool = {
    "epctx-run",
    "[options] MODEL_ctx.onnx --input NAME=FILE.npy ...",
    "Loads a precompiled EPContext model, runs it on .npy inputs, prints outputs and timings.",
    kOptions,
    NULL,
    "print one JSON object (model, timings, outputs) and nothing else on stdout"};

/* Prints the one error line and exits. Newlines in the message are folded so
 * the line stays one line whatever the runtime says. */
static void die(int code, const char* fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void die(int code, const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  for (char* p = msg; *p; ++p)
    if (*p == '\n' || *p == '\r') *p = ' ';
  fprintf(stderr, "epctx-run: error: %s: %s\n", epctx_code_name(code), msg);
  exit(1);
}

/* Dies on a failed C API call. `subject` (the model path) is added when the
 * runtime's message does not already name it. */
static void check(epctx_status* st, const char* subject) {
  if (!st) return;
  int code = epctx_status_code(st);
  const char* msg = epctx_status_message(st);
  char buf[2048];
  if (subject && !strstr(msg, subject)) snprintf(buf, sizeof(buf), "%s: %s", subject, msg);
  else snprintf(buf, sizeof(buf), "%s", msg);
  epctx_status_release(st);
  die(code, "%s", buf);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

struct binding {
  const char* name;
  const char* path;
  epctx_npy array;
  epctx_tensor* tensor;
};

struct args {
  const char* model;
  const char* output_dir;
  long repeat;
  int quiet;
  struct binding inputs[MAX_BINDINGS];
  size_t num_inputs;
  epctx_cli_entries options; /* -C */
  const char* trusted_keys[8];
  size_t num_trusted_keys;
  const char* decryption_keys[8]; /* ID=FILE */
  size_t num_decryption_keys;
  const char* rollback_store;
  const char* driver_libraries[MAX_DRIVER_LIBRARIES];
  size_t num_driver_libraries;
  long log_level;
  long timeout_us;
  int json;
};

/* Splits "a=b" in place; NULL when there is no '=' or the key is empty. */
static char* split_eq(char* s) {
  char* eq = strchr(s, '=');
  if (!eq || eq == s) return NULL;
  *eq = '\0';
  return eq + 1;
}

/* Exits 0 for --help/--version and 2 for a usage error. */
static void parse_args(int argc, char** argv, struct args* a) {
  memset(a, 0, sizeof(*a));
  a->repeat = 10;
  a->timeout_us = 0;
  epctx_cli_parser p;
  epctx_cli_init(&p, &kTool, argc, argv);
  const char* v;
  int id;
  while ((id = epctx_cli_next(&p, &v)) > 0) {
    char err[512];
    switch (id) {
      case EPCTX_CLI_HELP: epctx_cli_help(&kTool, stdout); exit(0);
      case EPCTX_CLI_VERSION: epctx_cli_version(&kTool, stdout); exit(0);
      case EPCTX_CLI_JSON: a->json = 1; break;
      case EPCTX_CLI_CONFIG:
        if (epctx_cli_split_config((char*)v, epctx_cli_add_entry, &a->options, err, sizeof err))
          exit(epctx_cli_usage_error(&kTool, "%s", err));
        break;
      case OPT_INPUT: {
        char* spec = (char*)v;
        char* path = split_eq(spec);
        if (!path || !*path)
          exit(epctx_cli_usage_error(&kTool, "--input '%s': expected NAME=FILE.npy", spec));
        if (a->num_inputs == MAX_BINDINGS)
          exit(epctx_cli_usage_error(&kTool, "more than %d --input options", MAX_BINDINGS));
        for (size_t k = 0; k < a->num_inputs; ++k)
          if (!strcmp(a->inputs[k].name, spec))
            exit(epctx_cli_usage_error(&kTool, "--input '%s' given twice", spec));
        a->inputs[a->num_inputs].name = spec;
        a->inputs[a->num_inputs].path = path;
        a->num_inputs++;
        break;
      }
      case OPT_OUTPUT_DIR: a->output_dir = v; break;
      case OPT_REPEAT: a->repeat = epctx_cli_long(&kTool, "--repeat", v, 0, 1000000); break;
      case OPT_TRUSTED_KEY:
        if (a->num_trusted_keys == 8)
          exit(epctx_cli_usage_error(&kTool, "more than 8 --trusted-key"));
        a->trusted_keys[a->num_trusted_keys++] = v;
        break;
      case OPT_DECRYPTION_KEY:
        if (!strchr(v, '='))
          exit(epctx_cli_usage_error(&kTool, "--decryption-key expects ID=FILE, got '%s'", v));
        if (a->num_decryption_keys == 8)
          exit(epctx_cli_usage_error(&kTool, "more than 8 --decryption-key"));
        a->decryption_keys[a->num_decryption_keys++] = v;
        break;
      case OPT_ROLLBACK_STORE: a->rollback_store = v; break;
      case OPT_DRIVER_LIBRARY:
        if (a->num_driver_libraries == MAX_DRIVER_LIBRARIES)
          exit(
              epctx_cli_usage_error(&kTool, "more than %d --driver-library", MAX_DRIVER_LIBRARIES));
        a->driver_libraries[a->num_driver_libraries++] = v;
        break;
      case OPT_LOG_LEVEL: a->log_level = epctx_cli_long(&kTool, "--log-level", v, 0, 3); break;
      case OPT_TIMEOUT_US:
        a->timeout_us = epctx_cli_long(&kTool, "--timeout-us", v, 1, 2000000000L);
        break;
      case OPT_THREADS: {
        char err[256];
        if (epctx_cli_add_entry(&a->options, "session.intra_op_num_threads", v, err, sizeof err))
          exit(epctx_cli_usage_error(&kTool, "%s", err));
        break;
      }
      case OPT_QUIET: a->quiet = 1; break;
      default: break;
    }
  }
  if (id < 0) exit(EPCTX_CLI_EXIT_USAGE);
  a->model = epctx_cli_one_operand(&p, "model");
}

/* "a, b, c": the session's input names, for error messages. */
static void input_list(const epctx_session* s, char* out, size_t size) {
  size_t n = epctx_session_input_count(s), used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n && used < size; ++i) {
    epctx_io_info info;
    epctx_status* st = epctx_session_input_info(s, i, &info);
    if (st) {
      epctx_status_release(st);
      continue;
    }
    used += (size_t)snprintf(out + used, size - used, "%s'%s'", i ? ", " : "", info.name);
  }
}

static void format_dims(const int64_t* dims, size_t rank, char* out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "[");
  for (size_t i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(out + used, size - used, "%s%lld", i ? "," : "", (long long)dims[i]);
  if (used < size) snprintf(out + used, size - used, "]");
}

/* Loads each --input file and checks it against the session's inputs. */
static void bind_inputs(epctx_env* env, const epctx_session* s, struct args* a) {
  char names[1024];
  input_list(s, names, sizeof(names));
  for (size_t k = 0; k < a->num_inputs; ++k) {
    int found = 0;
    for (size_t i = 0; i < epctx_session_input_count(s); ++i) {
      epctx_io_info info;
      check(epctx_session_input_info(s, i, &info), NULL);
      if (!strcmp(info.name, a->inputs[k].name)) found = 1;
    }
    if (!found)
      die(EPCTX_INVALID_ARGUMENT, "%s has no input named '%s'; its inputs are: %s", a->model,
          a->inputs[k].name, names);
  }
  for (size_t i = 0; i < epctx_session_input_count(s); ++i) {
    epctx_io_info info;
    check(epctx_session_input_info(s, i, &info), NULL);
    struct binding* b = NULL;
    for (size_t k = 0; k < a->num_inputs; ++k)
      if (!strcmp(info.name, a->inputs[k].name)) b = &a->inputs[k];
    if (!b)
      die(EPCTX_INVALID_ARGUMENT,
          "input '%s' of %s not given (use --input %s=FILE.npy); the model's "
          "inputs are: %s",
          info.name, a->model, info.name, names);
    char err[512];
    int rc = epctx_npy_read(b->path, &b->array, err, sizeof(err));
    if (rc) die(rc, "input '%s': %s", b->name, err);
    if (b->array.dtype != info.dtype)
      die(EPCTX_INVALID_ARGUMENT, "input '%s' (%s): expected %s, found %s", b->name, b->path,
          epctx_npy_dtype_name(info.dtype), epctx_npy_dtype_name(b->array.dtype));
    /* A scalar may come as a 1-element rank-1 array, as ONNX Runtime accepts. */
    int shape_ok = b->array.rank == info.rank ||
                   (info.rank == 0 && b->array.rank == 1 && b->array.dims[0] == 1);
    for (size_t d = 0; shape_ok && d < info.rank; ++d)
      if (info.dims[d] >= 0 && info.dims[d] != b->array.dims[d]) shape_ok = 0;
    if (!shape_ok) {
      char want[160], have[160];
      format_dims(info.dims, info.rank, want, sizeof(want));
      format_dims(b->array.dims, b->array.rank, have, sizeof(have));
      die(EPCTX_INVALID_ARGUMENT, "input '%s' (%s): expected shape %s (-1: any), found %s", b->name,
          b->path, want, have);
    }
    check(epctx_tensor_wrap(env, b->array.dtype, b->array.dims, b->array.rank, b->array.data,
                            b->array.bytes, &b->tensor),
          b->path);
  }
}

static double half_to_float(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0    ? mant / 1024.0 * (1.0 / 16384.0)
             : exp == 31 ? (mant ? 0.0 / 0.0 : 1.0 / 0.0)
                         : (1.0 + mant / 1024.0) * ((double)(1 << exp) / 32768.0);
  return (h & 0x8000) ? -v : v;
}

/* bfloat16 is the upper half of a float32. */
static float bfloat16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static void print_value(epctx_dtype t, const void* data, size_t i) {
  switch (t) {
    case EPCTX_DTYPE_FLOAT: printf("%.6g", ((const float*)data)[i]); break;
    case EPCTX_DTYPE_DOUBLE: printf("%.6g", ((const double*)data)[i]); break;
    case EPCTX_DTYPE_FLOAT16: printf("%.4g", half_to_float(((const uint16_t*)data)[i])); break;
    case EPCTX_DTYPE_BFLOAT16: printf("%.3g", bfloat16_to_float(((const uint16_t*)data)[i])); break;
    case EPCTX_DTYPE_INT8: printf("%d", ((const int8_t*)data)[i]); break;
    case EPCTX_DTYPE_UINT8: printf("%u", ((const uint8_t*)data)[i]); break;
    case EPCTX_DTYPE_BOOL: printf("%s", ((const uint8_t*)data)[i] ? "true" : "false"); break;
    case EPCTX_DTYPE_INT16: printf("%d", ((const int16_t*)data)[i]); break;
    case EPCTX_DTYPE_UINT16: printf("%u", ((const uint16_t*)data)[i]); break;
    case EPCTX_DTYPE_INT32: printf("%d", ((const int32_t*)data)[i]); break;
    case EPCTX_DTYPE_UINT32: printf("%u", ((const uint32_t*)data)[i]); break;
    case EPCTX_DTYPE_INT64: printf("%lld", (long long)((const int64_t*)data)[i]); break;
    case EPCTX_DTYPE_UINT64: printf("%llu", (unsigned long long)((const uint64_t*)data)[i]); break;
    default: printf("?"); break;
  }
}

static void print_output(const char* name, epctx_tensor* t) {
  char dims[256];
  epctx_dtype type = epctx_tensor_dtype(t);
  format_dims(epctx_tensor_dims(t), epctx_tensor_rank(t), dims, sizeof(dims));
  size_t item = epctx_dtype_size(type);
  size_t count = item ? epctx_tensor_bytes(t) / item : 0;
  printf("output '%s': %s %s = [", name, epctx_npy_dtype_name(type), dims);
  for (size_t i = 0; i < count && i < PREVIEW_VALUES; ++i) {
    if (i) printf(", ");
    print_value(type, epctx_tensor_data(t), i);
  }
  printf("%s]\n", count > PREVIEW_VALUES ? ", ..." : "");
}

/* Output names become file names: anything but [A-Za-z0-9._-] turns into
 * '_', leading dots too (no hidden files, no "..").*/
static void sanitise(const char* name, size_t index, char* out, size_t size) {
  size_t n = 0;
  for (const char* p = name; *p && n + 1 < size; ++p) {
    char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '-' || (c == '.' && n > 0);
    out[n++] = ok ? c : '_';
  }
  out[n] = '\0';
  if (n == 0) snprintf(out, size, "output_%zu", index);
}

static void write_outputs(const struct args* a, const char** names, epctx_tensor** outs,
                          size_t count) {
  if (mkdir(a->output_dir, 0777) != 0 && errno != EEXIST)
    die(EPCTX_FAIL, "cannot create output directory '%s': %s", a->output_dir, strerror(errno));
  char(*files)[200] = calloc(count ? count : 1, sizeof(*files));
  if (!files) die(EPCTX_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < count; ++i) {
    sanitise(names[i], i, files[i], sizeof(files[i]) - 16);
    for (size_t j = 0; j < i; ++j)
      if (!strcmp(files[i], files[j])) {
        size_t len = strlen(files[i]);
        snprintf(files[i] + len, sizeof(files[i]) - len, "_%zu", i);
        break;
      }
    char path[4096], err[512];
    snprintf(path, sizeof(path), "%s/%s.npy", a->output_dir, files[i]);
    int rc = epctx_npy_write(path, epctx_tensor_dtype(outs[i]), epctx_tensor_dims(outs[i]),
                             epctx_tensor_rank(outs[i]), epctx_tensor_data(outs[i]),
                             epctx_tensor_bytes(outs[i]), err, sizeof(err));
    if (rc) die(rc, "output '%s': %s", names[i], err);
    if (!a->quiet) printf("wrote %s\n", path);
  }
  free(files);
}

static epctx_status* run_once(epctx_session* s, const char** names, const epctx_tensor** in,
                              size_t n_in, epctx_tensor** outs, size_t n_out,
                              const epctx_run_options* ro) {
  epctx_run_args r;
  memset(&r, 0, sizeof r);
  r.input_names = names;
  r.inputs = in;
  r.input_count = n_in;
  r.outputs = outs;
  r.output_count = n_out;
  r.run_options = ro;
  for (size_t i = 0; i < n_out; ++i) outs[i] = NULL;
  return epctx_session_run_with(s, &r);
}

/* Milliseconds to the microsecond, as the text line shows them. */
static double ms3(double ms) { return (double)(long long)(ms * 1000.0 + 0.5) / 1000.0; }

/* The JSON line (or, with --json, the whole document). */
static void print_json(const struct args* a, double create_ms, double first_ms, double median_ms,
                       size_t intra_op_threads, const char** names, epctx_tensor** outs,
                       size_t num_out) {
  epctx_json j;
  epctx_json_init(&j, stdout, 0);
  epctx_json_begin_object(&j);
  epctx_json_key(&j, "model");
  epctx_json_string(&j, a->model);
  epctx_json_key(&j, "session_create_ms");
  epctx_json_double(&j, ms3(create_ms));
  epctx_json_key(&j, "first_run_ms");
  epctx_json_double(&j, ms3(first_ms));
  epctx_json_key(&j, "intra_op_threads");
  epctx_json_int(&j, (int64_t)intra_op_threads);
  epctx_json_key(&j, "repeat");
  epctx_json_int(&j, a->repeat);
  epctx_json_key(&j, "median_run_ms");
  if (a->repeat > 0) epctx_json_double(&j, ms3(median_ms));
  else epctx_json_null(&j);
  if (a->json) {
    epctx_json_key(&j, "outputs");
    epctx_json_begin_array(&j);
    for (size_t i = 0; i < num_out; ++i) {
      epctx_json_begin_object(&j);
      epctx_json_key(&j, "name");
      epctx_json_string(&j, names[i]);
      epctx_json_key(&j, "dtype");
      epctx_json_string(&j, epctx_npy_dtype_name(epctx_tensor_dtype(outs[i])));
      epctx_json_key(&j, "dims");
      epctx_json_begin_array(&j);
      for (size_t d = 0; d < epctx_tensor_rank(outs[i]); ++d)
        epctx_json_int(&j, epctx_tensor_dims(outs[i])[d]);
      epctx_json_end_array(&j);
      epctx_json_end_object(&j);
    }
    epctx_json_end_array(&j);
  }
  epctx_json_end_object(&j);
  epctx_json_finish(&j);
}

int main(int argc, char** argv) {
  struct args a;
  parse_args(argc, argv, &a);
  if (a.json) a.quiet = 1;

  char env_err[256];
  if (epctx_tool_vnpu_from_env(env_err, sizeof env_err) != 0) {
    fprintf(stderr, "epctx-run: error: %s\n", env_err);
    return 1;
  }
  epctx_env* env = NULL;
  check(epctx_env_create(NULL, (int)a.log_level, &env), NULL);
  check(epctx_env_register_builtin_drivers(env), NULL);
  for (size_t i = 0; i < a.num_driver_libraries; ++i)
    check(epctx_env_load_driver_library(env, a.driver_libraries[i]), a.driver_libraries[i]);
  for (size_t i = 0; i < a.num_trusted_keys; ++i) {
    char key[4096];
    FILE* f = fopen(a.trusted_keys[i], "rb");
    if (!f) die(EPCTX_NO_SUCHFILE, "%s: %s", a.trusted_keys[i], strerror(errno));
    size_t n = fread(key, 1, sizeof key, f);
    fclose(f);
    check(epctx_env_add_trusted_key(env, key, n), a.trusted_keys[i]);
  }
  for (size_t i = 0; i < a.num_decryption_keys; ++i) {
    const char* eq = strchr(a.decryption_keys[i], '=');
    char id[64];
    const size_t id_len = (size_t)(eq - a.decryption_keys[i]);
    if (id_len >= sizeof id) die(EPCTX_INVALID_ARGUMENT, "--decryption-key: key id too long");
    memcpy(id, a.decryption_keys[i], id_len);
    id[id_len] = '\0';
    const char* path = eq + 1;
    unsigned char key[33];
    FILE* f = fopen(path, "rb");
    if (!f) die(EPCTX_NO_SUCHFILE, "%s: %s", path, strerror(errno));
    size_t n = fread(key, 1, sizeof key, f);
    fclose(f);
    if (n != 32)
      die(EPCTX_INVALID_ARGUMENT, "%s: data key of %s bytes, expected 32 raw bytes", path,
          n > 32 ? "more than 32" : (n == 0 ? "0" : "fewer than 32"));
    epctx_status* st = epctx_env_add_decryption_key(env, id, key, n);
    memset(key, 0, sizeof key);
    check(st, path);
  }
  if (a.rollback_store) check(epctx_env_set_rollback_store(env, a.rollback_store), NULL);
  epctx_session_options* options = NULL;
  check(epctx_session_options_create(&options), NULL);
  for (size_t i = 0; i < a.options.count; ++i)
    check(epctx_session_options_set(options, a.options.keys[i], a.options.values[i]), NULL);

  double t0 = now_ms();
  epctx_session* session = NULL;
  check(epctx_session_create(env, a.model, options, &session), a.model);
  double create_ms = now_ms() - t0;

  bind_inputs(env, session, &a);
  const char* in_names[MAX_BINDINGS];
  const epctx_tensor* in_tensors[MAX_BINDINGS];
  for (size_t i = 0; i < a.num_inputs; ++i) {
    in_names[i] = a.inputs[i].name;
    in_tensors[i] = a.inputs[i].tensor;
  }

  size_t num_out = epctx_session_output_count(session);
  const char** out_names = calloc(num_out ? num_out : 1, sizeof(char*));
  epctx_tensor** outs = calloc(num_out ? num_out : 1, sizeof(epctx_tensor*));
  epctx_tensor** scratch = calloc(num_out ? num_out : 1, sizeof(epctx_tensor*));
  double* times = calloc(a.repeat ? (size_t)a.repeat : 1, sizeof(double));
  if (!out_names || !outs || !scratch || !times) die(EPCTX_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < num_out; ++i) {
    epctx_io_info info;
    check(epctx_session_output_info(session, i, &info), NULL);
    out_names[i] = info.name;
  }

  epctx_run_options* ro = NULL;
  if (a.timeout_us) {
    check(epctx_run_options_create(&ro), NULL);
    check(epctx_run_options_set_timeout_us(ro, (uint64_t)a.timeout_us), NULL);
  }
  t0 = now_ms();
  check(run_once(session, in_names, in_tensors, a.num_inputs, outs, num_out, ro), a.model);
  double first_ms = now_ms() - t0;
  for (long r = 0; r < a.repeat; ++r) {
    t0 = now_ms();
    check(run_once(session, in_names, in_tensors, a.num_inputs, scratch, num_out, ro), a.model);
    times[r] = now_ms() - t0;
    for (size_t i = 0; i < num_out; ++i) epctx_tensor_release(scratch[i]);
  }
  qsort(times, (size_t)a.repeat, sizeof(double), cmp_double);
  double median_ms = 0;
  if (a.repeat > 0)
    median_ms =
        a.repeat % 2 ? times[a.repeat / 2] : (times[a.repeat / 2 - 1] + times[a.repeat / 2]) / 2;

  if (!a.quiet)
    for (size_t i = 0; i < num_out; ++i) print_output(out_names[i], outs[i]);
  if (a.output_dir) write_outputs(&a, out_names, outs, num_out);

  if (!a.quiet) {
    printf("session create: %.3f ms, first run: %.3f ms, ", create_ms, first_ms);
    if (a.repeat > 0) printf("median run (%ld): %.3f ms\n", a.repeat, median_ms);
    else printf("median run (0): n/a\n");
  }
  print_json(&a, create_ms, first_ms, median_ms, epctx_session_intra_op_thread_count(session),
             out_names, outs, num_out);

  for (size_t i = 0; i < num_out; ++i) epctx_tensor_release(outs[i]);
  for (size_t i = 0; i < a.num_inputs; ++i) {
    epctx_tensor_release(a.inputs[i].tensor);
    epctx_npy_free(&a.inputs[i].array);
  }
  free(times);
  free(scratch);
  free(outs);
  free(out_names);
  epctx_session_release(session);
  epctx_session_options_release(options);
  epctx_run_options_release(ro);
  epctx_env_release(env);
  return 0;
}
