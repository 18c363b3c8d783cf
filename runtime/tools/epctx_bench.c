/* SPDX-License-Identifier: Apache-2.0 */
/* epctx-bench: what loading and running a package costs in time and memory.
 *
 * usage: epctx-bench [options] PACKAGE (--help lists them)
 * PACKAGE is a _ctx.onnx model (its context binaries beside it).
 *
 * Measures, in this order, in one process:
 *   create_cold   session create after dropping the page cache of every file
 *                 in the model's folder (posix_fadvise DONTNEED; pages other
 *                 processes map stay resident, so "cold" is best effort)
 *   create_warm   median of 5 creates with the files cached
 *   first_run     the first Run of a fresh session
 *   run median/p99 over --repeat runs, spread over --threads threads
 *   threads       the callers (--threads) and the threads each Run may use
 *                 (--intra-op-threads sets session.intra_op_num_threads;
 *                 default: the cores the process may use), as the session
 *                 reports them
 *   allocations   through a counting allocator (the env's): calls and bytes
 *                 during create and the first run, and during one later run
 *                 alone: calls, bytes, peak live bytes (the arena that run
 *                 needed) and minor page faults (getrusage)
 *   memory        from /proc/self/smaps_rollup (after malloc_trim, so freed
 *                 heap is not counted), as deltas from just before the
 *                 measured session was created: Private_Dirty after create
 *                 and after the first run, Rss, and peak RSS (VmHWM)
 *   page faults per run (getrusage) and the planned run arena
 * --sessions N: N sessions sharing one context group (ep.share_ep_contexts,
 * or separate loads with --no-share), each run once; reports their create
 * times and the memory (Pss) of N against the memory of one, each measured
 * after the sessions' first runs.
 * Inputs are the given .npy files, otherwise deterministic values with
 * symbolic dimensions set to --dim (default 1). Exit 0, 1 with one line
 * "epctx-bench: error: ..." on any failure, 2 on a usage error. Linux only
 * (/proc). */
#define _GNU_SOURCE
#include <epctx/epctx.h>

#include <fcntl.h>
#include <malloc.h>
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "counting_allocator.h"
#include "json_writer.h"
#include "npy.h"

#define MAX_IO 64
#define MAX_SESSIONS 64

static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "epctx-bench: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static void check(epctx_status* st, const char* what) {
  if (!st) return;
  fprintf(stderr, "epctx-bench: error: %s: %s (%s)\n", what, epctx_status_message(st),
          epctx_code_name(epctx_status_code(st)));
  epctx_status_release(st);
  exit(1);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- memory from /proc ---- */
typedef struct mem {
  long long rss, pss, shared_clean, private_clean, private_dirty; /* bytes */
} mem;

/* Memory the process holds: freed heap pages go back to the OS first, so a
 * run's released buffers do not count as the session's. */
static mem read_mem(void) {
  mem m = {0, 0, 0, 0, 0};
  malloc_trim(0);
  FILE* f = fopen("/proc/self/smaps_rollup", "r");
  if (!f) die("/proc/self/smaps_rollup: cannot open (Linux >= 4.14 needed)");
  char line[256];
  long long kb;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "Rss: %lld kB", &kb) == 1) m.rss = kb * 1024;
    else if (sscanf(line, "Pss: %lld kB", &kb) == 1) m.pss = kb * 1024;
    else if (sscanf(line, "Shared_Clean: %lld kB", &kb) == 1) m.shared_clean = kb * 1024;
    else if (sscanf(line, "Private_Clean: %lld kB", &kb) == 1) m.private_clean = kb * 1024;
    else if (sscanf(line, "Private_Dirty: %lld kB", &kb) == 1) m.private_dirty = kb * 1024;
  }
  fclose(f);
  return m;
}

static long long peak_rss(void) {
  FILE* f = fopen("/proc/self/status", "r");
  long long kb = 0;
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %lld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb * 1024;
}

/* Drops the cached pages of every regular file in `dir`. */
static void drop_cache(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) die("%s: cannot list the package folder", dir);
  struct dirent* e;
  while ((e = readdir(d))) {
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    int fd = open(p, O_RDONLY);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
  closedir(d);
}

/* Bytes of the files in `dir` that are in the page cache (mincore). */
static long long cached_bytes(const char* dir) {
  DIR* d = opendir(dir);
  long long total = 0;
  struct dirent* e;
  long page = sysconf(_SC_PAGESIZE);
  while (d && (e = readdir(d))) {
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) continue;
    int fd = open(p, O_RDONLY);
    if (fd < 0) continue;
    void* m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) continue;
    size_t pages = ((size_t)st.st_size + page - 1) / page;
    unsigned char* v = malloc(pages);
    if (v && mincore(m, (size_t)st.st_size, v) == 0)
      for (size_t i = 0; i < pages; ++i) total += (v[i] & 1) ? page : 0;
    free(v);
    munmap(m, (size_t)st.st_size);
  }
  if (d) closedir(d);
  return total;
}

/* ---- options and inputs ---- */
typedef struct config {
  const char* package;
  int threads, intra_op_threads, sessions, repeat, dim, share, json;
  const char* load_mode;
  const char* input_names[MAX_IO];
  const char* input_files[MAX_IO];
  int num_inputs;
  epctx_cli_entries options; /* -C */
} config;

typedef struct inputs {
  size_t n;
  const char* names[MAX_IO];
  epctx_tensor* tensors[MAX_IO];
  epctx_npy arrays[MAX_IO];
  size_t outputs;
} inputs;

static epctx_session* create(epctx_env* env, const config* c, epctx_context_group* group) {
  epctx_session_options* o = NULL;
  check(epctx_session_options_create(&o), "options");
  check(epctx_session_options_set(o, "epctx.load_mode", c->load_mode), "epctx.load_mode");
  if (c->intra_op_threads > 0) {
    char v[16];
    snprintf(v, sizeof v, "%d", c->intra_op_threads);
    check(epctx_session_options_set(o, "session.intra_op_num_threads", v), "--intra-op-threads");
  }
  for (size_t i = 0; i < c->options.count; ++i)
    check(epctx_session_options_set(o, c->options.keys[i], c->options.values[i]), "-C");
  if (group) check(epctx_session_options_set_context_group(o, group), "context group");
  epctx_session* s = NULL;
  check(epctx_session_create(env, c->package, o, &s), c->package);
  epctx_session_options_release(o);
  return s;
}

static void make_inputs(epctx_env* env, epctx_session* s, const config* c, inputs* in) {
  memset(in, 0, sizeof *in);
  in->n = epctx_session_input_count(s);
  in->outputs = epctx_session_output_count(s);
  if (in->n > MAX_IO || in->outputs > MAX_IO) die("more than %d inputs or outputs", MAX_IO);
  for (size_t i = 0; i < in->n; ++i) {
    epctx_io_info info;
    check(epctx_session_input_info(s, i, &info), "input info");
    in->names[i] = strdup(info.name); /* outlives the session it came from */
    if (!in->names[i]) die("out of memory");
    const char* file = NULL;
    for (int k = 0; k < c->num_inputs; ++k)
      if (strcmp(c->input_names[k], info.name) == 0) file = c->input_files[k];
    if (file) {
      char err[512];
      if (epctx_npy_read(file, &in->arrays[i], err, sizeof err) != 0) die("%s", err);
      epctx_npy* a = &in->arrays[i];
      check(epctx_tensor_wrap(env, a->dtype, a->dims, a->rank, a->data, a->bytes, &in->tensors[i]),
            file);
      continue;
    }
    int64_t dims[EPCTX_MAX_RANK];
    for (size_t d = 0; d < info.rank; ++d) dims[d] = info.dims[d] < 0 ? c->dim : info.dims[d];
    check(epctx_tensor_create(env, info.dtype, dims, info.rank, &in->tensors[i]), info.name);
    size_t bytes = epctx_tensor_bytes(in->tensors[i]);
    uint8_t* p = epctx_tensor_data(in->tensors[i]);
    if (info.dtype == EPCTX_DTYPE_FLOAT) {
      float* f = (float*)p;
      for (size_t k = 0; k < bytes / 4; ++k) f[k] = (float)((k * 7919u) % 255) / 255.0f - 0.5f;
    }
  }
}

static void free_inputs(inputs* in) {
  for (size_t i = 0; i < in->n; ++i) {
    epctx_tensor_release(in->tensors[i]);
    epctx_npy_free(&in->arrays[i]);
    free((void*)in->names[i]);
  }
}

static void run_once(epctx_session* s, const inputs* in) {
  epctx_tensor* outs[MAX_IO];
  check(epctx_session_run(s, in->names, (const epctx_tensor* const*)in->tensors, in->n, NULL, outs,
                          in->outputs),
        "run");
  for (size_t i = 0; i < in->outputs; ++i) epctx_tensor_release(outs[i]);
}

typedef struct worker {
  epctx_session* s;
  const inputs* in;
  int runs;
  double* times;
} worker;

static void* work(void* arg) {
  worker* w = arg;
  for (int i = 0; i < w->runs; ++i) {
    double t0 = now_ms();
    run_once(w->s, w->in);
    w->times[i] = now_ms() - t0;
  }
  return NULL;
}

/* Whether this runtime knows session.intra_op_num_threads. */
static int runtime_has_intra_op_threads(void) {
  epctx_session_options* o = NULL;
  check(epctx_session_options_create(&o), "options");
  epctx_status* st = epctx_session_options_set(o, "session.intra_op_num_threads", "1");
  int known = !st || !strstr(epctx_status_message(st), "unknown key");
  epctx_status_release(st);
  epctx_session_options_release(o);
  return known;
}

/* Minor and major page faults of the process so far. */
static long long page_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (long long)u.ru_minflt + u.ru_majflt;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double percentile(double* v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int k = (int)(p * (n - 1) + 0.5);
  return v[k];
}

enum {
  OPT_THREADS = 1,
  OPT_INTRA_OP_THREADS,
  OPT_SESSIONS,
  OPT_REPEAT,
  OPT_INPUT,
  OPT_DIM,
  OPT_LOAD_MODE,
  OPT_NO_SHARE
};

static const epctx_cli_option kOptions[] = {
    {OPT_THREADS, "threads", 0, "N", "threads calling Run on one session (default 1)"},
    {OPT_INTRA_OP_THREADS, "intra-op-threads", 0, "N",
     "session.intra_op_num_threads (default: the runtime's)"},
    {OPT_SESSIONS, "sessions", 0, "N",
     "also create N sessions sharing one context group and compare memory"},
    {OPT_REPEAT, "repeat", 'n', "N", "timed runs (default 100)"},
    {OPT_INPUT, "input", 'i', "NAME=FILE", "a .npy input (default: deterministic values)"},
    {OPT_DIM, "dim", 0, "N", "value of symbolic dimensions of generated inputs (default 1)"},
    {OPT_LOAD_MODE, "load-mode", 0, "MODE", "epctx.load_mode: mmap (default) or read"},
    {OPT_NO_SHARE, "no-share", 0, NULL, "--sessions: load each session separately"},
    {0, NULL, 0, NULL, NULL}};

static const epctx_cli_tool kTool = {
    "epctx-bench",
    "[options] PACKAGE_ctx.onnx",
    "Measures what loading and running a package costs in time and memory (Linux).",
    kOptions,
    NULL,
    "print the report as one JSON object"};

int main(int argc, char** argv) {
  config c;
  memset(&c, 0, sizeof c);
  c.threads = 1;
  c.sessions = 1;
  c.repeat = 100;
  c.dim = 1;
  c.share = 1;
  c.load_mode = "mmap";
  epctx_cli_parser p;
  epctx_cli_init(&p, &kTool, argc, argv);
  const char* v;
  int id;
  while ((id = epctx_cli_next(&p, &v)) > 0) {
    char err[512];
    switch (id) {
      case EPCTX_CLI_HELP: epctx_cli_help(&kTool, stdout); return 0;
      case EPCTX_CLI_VERSION: epctx_cli_version(&kTool, stdout); return 0;
      case EPCTX_CLI_JSON: c.json = 1; break;
      case EPCTX_CLI_CONFIG:
        if (epctx_cli_split_config((char*)v, epctx_cli_add_entry, &c.options, err, sizeof err))
          return epctx_cli_usage_error(&kTool, "%s", err);
        break;
      case OPT_NO_SHARE: c.share = 0; break;
      case OPT_THREADS: c.threads = (int)epctx_cli_long(&kTool, "--threads", v, 1, 1000000); break;
      case OPT_INTRA_OP_THREADS:
        c.intra_op_threads = (int)epctx_cli_long(&kTool, "--intra-op-threads", v, 1, 1000000);
        break;
      case OPT_SESSIONS:
        c.sessions = (int)epctx_cli_long(&kTool, "--sessions", v, 1, 1000000);
        break;
      case OPT_REPEAT: c.repeat = (int)epctx_cli_long(&kTool, "--repeat", v, 1, 1000000); break;
      case OPT_DIM: c.dim = (int)epctx_cli_long(&kTool, "--dim", v, 1, 1000000); break;
      case OPT_LOAD_MODE:
        if (strcmp(v, "mmap") && strcmp(v, "read"))
          return epctx_cli_usage_error(&kTool, "--load-mode: expected mmap or read, found '%s'", v);
        c.load_mode = v;
        break;
      case OPT_INPUT: {
        const char* eq = strchr(v, '=');
        if (!eq || eq == v || c.num_inputs == MAX_IO)
          return epctx_cli_usage_error(&kTool, "--input '%s': expected name=file.npy", v);
        c.input_names[c.num_inputs] = strndup(v, (size_t)(eq - v));
        c.input_files[c.num_inputs++] = eq + 1;
        break;
      }
      default: break;
    }
  }
  if (id < 0) return EPCTX_CLI_EXIT_USAGE;
  c.package = epctx_cli_one_operand(&p, "package");
  if (c.sessions > MAX_SESSIONS) die("--sessions: at most %d", MAX_SESSIONS);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", c.package);
  char* slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else snprintf(dir, sizeof dir, ".");

  static epctx_counting_allocator counter;
  epctx_counting_allocator_init(&counter);
  epctx_env* env = NULL;
  check(epctx_env_create(&counter.allocator, 0, &env), "env");
  int has_intra_op = runtime_has_intra_op_threads();
  check(epctx_env_register_builtin_drivers(env), "drivers");

  /* Create: cold, then warm. */
  drop_cache(dir);
  double t0 = now_ms();
  epctx_session* s = create(env, &c, NULL);
  double create_cold = now_ms() - t0;
  long long cold_read = cached_bytes(dir);
  epctx_session_release(s);
  double warm[5];
  for (int i = 0; i < 5; ++i) {
    t0 = now_ms();
    s = create(env, &c, NULL);
    warm[i] = now_ms() - t0;
    epctx_session_release(s);
  }
  double create_warm = percentile(warm, 5, 0.5);

  /* The measured session: memory before/after create and the first run.
   * Inputs are made first so their memory is not counted. */
  s = create(env, &c, NULL);
  inputs in;
  make_inputs(env, s, &c, &in);
  epctx_session_release(s);
  mem base = read_mem();
  epctx_alloc_counts a0 = epctx_counting_allocator_mark(&counter);
  s = create(env, &c, NULL);
  epctx_alloc_counts a1 = epctx_counting_allocator_read(&counter);
  mem after_create = read_mem();
  epctx_alloc_counts a2 = epctx_counting_allocator_mark(&counter);
  t0 = now_ms();
  run_once(s, &in);
  double first_run = now_ms() - t0;
  epctx_alloc_counts a3 = epctx_counting_allocator_read(&counter);
  mem after_run = read_mem();
  long long create_allocs = a1.allocs - a0.allocs, create_held = a1.live - a0.live;
  long long first_run_allocs = a3.allocs - a2.allocs;
  /* One run alone, after the first: what every later run costs the
   * allocator (outputs included; they are the caller's until released). */
  epctx_alloc_counts r0 = epctx_counting_allocator_mark(&counter);
  long long faults0 = page_faults();
  run_once(s, &in);
  long long run_faults = page_faults() - faults0;
  epctx_alloc_counts r1 = epctx_counting_allocator_read(&counter);
  long long run_allocs = r1.allocs - r0.allocs, run_bytes = r1.bytes - r0.bytes;
  long long run_peak = r1.peak - r0.live;

  /* Runs over threads. */
  int per = (c.repeat + c.threads - 1) / c.threads;
  double* times = calloc((size_t)per * c.threads, sizeof *times);
  worker* ws = calloc((size_t)c.threads, sizeof *ws);
  pthread_t* tids = calloc((size_t)c.threads, sizeof *tids);
  if (!times || !ws || !tids) die("out of memory");
  double wall0 = now_ms();
  for (int t = 0; t < c.threads; ++t) {
    ws[t] = (worker){s, &in, per, times + (size_t)t * per};
    if (pthread_create(&tids[t], NULL, work, &ws[t]) != 0) die("pthread_create failed");
  }
  for (int t = 0; t < c.threads; ++t) pthread_join(tids[t], NULL);
  double wall = now_ms() - wall0;
  int total = per * c.threads;
  size_t arena = epctx_session_arena_size(s);
  size_t intra_op = epctx_session_intra_op_thread_count(s);
  double median = percentile(times, total, 0.5), p99 = percentile(times, total, 0.99);
  mem after_runs = read_mem();

  /* N sessions sharing (or not) the context binaries. */
  double share_create_ms[MAX_SESSIONS];
  mem one = after_run, many = after_run;
  if (c.sessions > 1) {
    epctx_session_release(s);
    s = NULL;
    epctx_context_group* group = NULL;
    if (c.share) check(epctx_context_group_create(env, &group), "context group");
    epctx_session* ss[MAX_SESSIONS];
    mem b = read_mem();
    for (int i = 0; i < c.sessions; ++i) {
      t0 = now_ms();
      ss[i] = create(env, &c, group);
      share_create_ms[i] = now_ms() - t0;
      run_once(ss[i], &in);
      if (i == 0) one = read_mem();
    }
    many = read_mem();
    one.rss -= b.rss, one.pss -= b.pss, one.private_dirty -= b.private_dirty;
    many.rss -= b.rss, many.pss -= b.pss, many.private_dirty -= b.private_dirty;
    for (int i = 0; i < c.sessions; ++i) epctx_session_release(ss[i]);
    epctx_context_group_release(group);
  } else {
    one.rss -= base.rss, one.pss -= base.pss, one.private_dirty -= base.private_dirty;
    many = one;
  }
  long long peak = peak_rss();
  long long pd_create = after_create.private_dirty - base.private_dirty;
  long long pd_run = after_run.private_dirty - base.private_dirty;
  long long rss_create = after_create.rss - base.rss, rss_run = after_run.rss - base.rss;
  long long pd_runs = after_runs.private_dirty - base.private_dirty;
  /* Pss: a page mapped twice (two sessions mapping one model file) counts
   * once, as it does in physical memory; Rss would count it twice. */
  double ratio = one.pss > 0 ? (double)many.pss / (double)one.pss : 0;

  if (c.json) {
    epctx_json j;
    epctx_json_init(&j, stdout, 1);
    epctx_json_begin_object(&j);
#define J_STR(k, v) (epctx_json_key(&j, k), epctx_json_string(&j, v))
#define J_INT(k, v) (epctx_json_key(&j, k), epctx_json_int(&j, (int64_t)(v)))
#define J_NUM(k, v) (epctx_json_key(&j, k), epctx_json_double(&j, v))
    J_STR("package", c.package);
    J_STR("load_mode", c.load_mode);
    J_INT("threads", c.threads);
    J_INT("runs", total);
    J_NUM("create_cold_ms", create_cold);
    J_NUM("create_warm_ms", create_warm);
    J_NUM("first_run_ms", first_run);
    J_INT("cached_after_cold_create_bytes", cold_read);
    J_INT("arena_bytes", arena);
    J_NUM("run_median_ms", median);
    J_NUM("run_p99_ms", p99);
    J_NUM("runs_per_s", total / (wall / 1e3));
    J_INT("peak_rss_bytes", peak);
    J_INT("private_dirty_after_create_bytes", pd_create);
    J_INT("private_dirty_after_first_run_bytes", pd_run);
    J_INT("private_dirty_after_runs_bytes", pd_runs);
    J_INT("rss_after_create_bytes", rss_create);
    J_INT("rss_after_first_run_bytes", rss_run);
    J_INT("intra_op_threads", intra_op);
    J_INT("create_allocs", create_allocs);
    J_INT("create_held_bytes", create_held);
    J_INT("first_run_allocs", first_run_allocs);
    J_INT("allocs_per_run", run_allocs);
    J_INT("alloc_bytes_per_run", run_bytes);
    J_INT("run_peak_bytes", run_peak);
    J_INT("page_faults_per_run", run_faults);
    if (c.sessions > 1) {
      J_INT("sessions", c.sessions);
      epctx_json_key(&j, "shared");
      epctx_json_bool(&j, c.share);
      epctx_json_key(&j, "session_create_ms");
      epctx_json_begin_array(&j);
      for (int i = 0; i < c.sessions; ++i) epctx_json_double(&j, share_create_ms[i]);
      epctx_json_end_array(&j);
      J_INT("one_session_pss_bytes", one.pss);
      J_INT("n_sessions_pss_bytes", many.pss);
      J_NUM("n_over_one_pss", ratio);
      J_INT("one_session_rss_bytes", one.rss);
      J_INT("n_sessions_rss_bytes", many.rss);
      J_INT("one_session_private_dirty_bytes", one.private_dirty);
      J_INT("n_sessions_private_dirty_bytes", many.private_dirty);
    }
#undef J_STR
#undef J_INT
#undef J_NUM
    epctx_json_end_object(&j);
    epctx_json_finish(&j);
  } else {
    printf("package:            %s (load mode %s)\n", c.package, c.load_mode);
    printf("create:             cold %.3f ms, warm %.3f ms (median of 5)\n", create_cold,
           create_warm);
    printf("cold create read:   %.1f KiB of the package into the page cache\n", cold_read / 1024.0);
    printf("first run:          %.3f ms\n", first_run);
    printf("runs:               %d on %d thread(s): median %.4f ms, p99 %.4f ms, %.1f runs/s\n",
           total, c.threads, median, p99, total / (wall / 1e3));
    printf("run arena:          %.1f KiB (planned at create or after the first run)\n",
           arena / 1024.0);
    printf("intra-op threads:   %zu per run, the caller's included (%s)\n", intra_op,
           c.intra_op_threads > 0 ? "--intra-op-threads"
           : has_intra_op         ? "the runtime's default"
                                  : "no session.intra_op_num_threads in this runtime");
    printf("allocations:        create %lld (%.1f KiB held), first run %lld\n", create_allocs,
           create_held / 1024.0, first_run_allocs);
    printf("per later run:      %lld allocations, %.1f KiB, peak %.1f KiB live (the arena it "
           "needed), %lld page faults\n",
           run_allocs, run_bytes / 1024.0, run_peak / 1024.0, run_faults);
    printf("peak RSS:           %.1f MiB\n", peak / 1048576.0);
    printf("private dirty:      +%.1f KiB after create, +%.1f KiB after first run, +%.1f KiB "
           "after all runs\n",
           pd_create / 1024.0, pd_run / 1024.0, pd_runs / 1024.0);
    printf("RSS:                +%.1f KiB after create, +%.1f KiB after first run\n",
           rss_create / 1024.0, rss_run / 1024.0);
    if (c.sessions > 1) {
      printf("%d sessions (%s):  create", c.sessions, c.share ? "shared group" : "no sharing");
      for (int i = 0; i < c.sessions; ++i) printf(" %.3f", share_create_ms[i]);
      printf(" ms\n");
      printf("memory, 1 vs %d:    PSS +%.1f KiB vs +%.1f KiB (%.3fx); RSS +%.1f vs +%.1f KiB; "
             "private dirty +%.1f vs +%.1f KiB\n",
             c.sessions, one.pss / 1024.0, many.pss / 1024.0, ratio, one.rss / 1024.0,
             many.rss / 1024.0, one.private_dirty / 1024.0, many.private_dirty / 1024.0);
    }
  }
  epctx_session_release(s);
  free_inputs(&in);
  for (int i = 0; i < c.num_inputs; ++i) free((void*)c.input_names[i]);
  free(times);
  free(ws);
  free(tids);
  epctx_env_release(env);
  return 0;
}
