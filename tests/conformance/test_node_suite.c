/* SPDX-License-Identifier: Apache-2.0 */
/* The ONNX node conformance suite (gen_node_suite.py) through the CLIs:
 * per test, epctx-compile --ep <ep>, then epctx-run --output-dir, then every
 * output against onnx's expected one (tu_compare_npy: floats within
 * |a-b| <= 1e-7 + 1e-3*|b|, NaN matching NaN; integers and bools exact;
 * dtype and shape always). A test with rank-0 inputs runs a second time
 * with each fed as a 1-element rank-1 tensor, as ONNX Runtime accepts, and
 * passes only when that run matches too. Tests whose outputs are random draws
 * (random_tests.txt) get the checks that file names instead of values.
 *
 * Most of the suite fails today, so a checked-in list names the tests
 * expected to fail, with why. A test passes when its result agrees with the
 * list: a failure not listed fails it, and so does a listed test that now
 * passes (remove its line): the list can only shrink. README.md in this
 * folder has the file formats and how to regenerate the list.
 *
 * usage: test_node_suite COMPILE RUN SUITE_DIR WORK_DIR EP EXPECTED_FAILURES
 *                        RANDOM_TESTS [EMULATOR [ARG...]]
 * EMULATOR (cross builds) runs RUN, e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu.
 * Environment:
 *   EPCTX_NODE_SUITE_PACKAGES=DIR  run DIR/<ep>/<test>/model_ctx.onnx, the
 *                               packages an earlier run of this suite
 *                               compiled there (the host build's work
 *                               folder), instead of compiling each test
 *                               again; a test whose package is missing,
 *                               older than that build's copy of the model
 *                               (DIR/../node/<test>/model.onnx) or made from
 *                               other bytes than ours is compiled as usual.
 *                               tests/run-all.sh sets it for the sanitizer
 *                               and cross presets: their runtime is what
 *                               they test, and the host build's compiler
 *                               made the same packages a moment before.
 *   EPCTX_NODE_SUITE_UPDATE=1   rewrite EXPECTED_FAILURES from this run's
 *                               results instead of checking against it
 *   EPCTX_NODE_SUITE_FILTER=RE  only the tests whose name matches the POSIX
 *                               extended regex RE (an update then keeps the
 *                               other tests' lines)
 * Prints the passes per op type and "node suite: <ep> N/TOTAL", also
 * written to WORK_DIR/summary.txt (tests/run-all.sh reads it). */
#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "model_check.h"
#include "test_util.h"

#define RUN_TIMEOUT_S 120.0
#define MAX_EMULATOR_ARGS 8

static const char* g_compile;
static const char* g_run;
static const char* g_suite;
static const char* g_work;
static const char* g_ep;
static const char* g_list_path;
static const char* const* g_emulator;
static size_t g_num_emulator;
static int g_updating;        /* EPCTX_NODE_SUITE_UPDATE: record, do not judge */
static char g_packages[4096]; /* EPCTX_NODE_SUITE_PACKAGES/<ep>, or "" */

/* One suite test: what the list and random_tests.txt say, what happened. */
typedef struct node_case {
  const char* name;
  const char* listed_reason; /* NULL: not in the expected-failures list */
  const char* random_check;  /* NULL: compare values */
  int ran;
  int passed;
  char op[64];
  char reason[512]; /* why it failed: the first line of the error */
} node_case;

/* ---- list files: "<name> <rest of the line>", '#' comments ---- */

typedef struct name_list {
  char** lines;
  long count;
} name_list;

static void read_list(const char* path, name_list* l) {
  l->count = tu_read_lines(path, &l->lines);
  if (l->count < 0) {
    l->count = 0;
    l->lines = NULL;
  }
}

/* The rest of the line after `name` when `name` is listed ("" if bare). */
static const char* list_find(const name_list* l, const char* name) {
  size_t n = strlen(name);
  for (long i = 0; i < l->count; ++i) {
    const char* line = l->lines[i];
    if (line[0] == '#' || strncmp(line, name, n) != 0) continue;
    if (line[n] == '\0') return line + n;
    if (line[n] == ' ' || line[n] == '\t') {
      const char* rest = line + n;
      while (*rest == ' ' || *rest == '\t') ++rest;
      return rest;
    }
  }
  return NULL;
}

/* ---- running one test ---- */

/* dst = src with every occurrence of `a` and of `b` removed: the suite's and
 * the work folder's paths, so reasons read the same on every build. */
static void strip_paths(const char* src, const char* a, const char* b, char* dst, size_t size) {
  size_t la = strlen(a), lb = strlen(b), n = 0;
  while (*src && n + 1 < size) {
    if (la && !strncmp(src, a, la)) {
      src += la;
    } else if (lb && !strncmp(src, b, lb)) {
      src += lb;
    } else {
      dst[n++] = *src++;
    }
  }
  dst[n] = '\0';
}

/* The line of a tool's stderr that says what went wrong: its own error
 * ("<tool>: error: ", dropped), a sanitizer's report, or the first line. */
static const char* error_line(const char* text) {
  const char* at = strstr(text, ": error: ");
  if (at) return at + strlen(": error: ");
  static const char* const kReports[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                         "runtime error: "};
  for (size_t i = 0; i < sizeof(kReports) / sizeof(kReports[0]); ++i)
    if ((at = strstr(text, kReports[i])) != NULL) {
      while (at > text && at[-1] != '\n') --at;
      return at;
    }
  while (*text == '\n') ++text;
  return text;
}

/* "<step>: <error line of text>" without the build's paths. */
static void set_reason(node_case* c, const char* step, const char* text, const char* dir,
                       const char* work) {
  char line[1024];
  text = error_line(text);
  size_t n = strcspn(text, "\n");
  if (n >= sizeof(line)) n = sizeof(line) - 1;
  memcpy(line, text, n);
  line[n] = '\0';
  char stripped[1024];
  strip_paths(line, dir, work, stripped, sizeof(stripped));
  snprintf(c->reason, sizeof(c->reason), "%s: %s", step, stripped);
}

/* epctx-run's output file name for an output (README: characters outside
 * [A-Za-z0-9._-] and a leading '.' become '_'; a repeated name gets _<i>). */
static void output_file_name(const tu_manifest* m, size_t index, char* out, size_t size) {
  char names[TU_MAX_IO][128];
  for (size_t i = 0; i <= index; ++i) {
    size_t n = 0;
    for (const char* p = m->outputs[i]; *p && n + 1 < sizeof(names[i]) - 16; ++p) {
      char c = *p;
      int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || (c == '.' && n > 0);
      names[i][n++] = ok ? c : '_';
    }
    names[i][n] = '\0';
    if (n == 0) snprintf(names[i], sizeof(names[i]), "output_%zu", i);
    for (size_t j = 0; j < i; ++j)
      if (!strcmp(names[i], names[j])) {
        size_t len = strlen(names[i]);
        snprintf(names[i] + len, sizeof(names[i]) - len, "_%zu", i);
        break;
      }
  }
  snprintf(out, size, "%s.npy", names[index]);
}

/* The checks for random outputs (random_tests.txt): "shape" (dtype and shape
 * only), "in V..." (every value is one of V), "dropout" (output 0 is 0 or
 * x / (1 - ratio) elementwise, ratio = input 1 or 0.5; output 1, the mask,
 * is true exactly where output 0 is not 0, for x != 0). */
static int check_random(const char* check, const tu_manifest* m, const char* dir, epctx_npy* got,
                        char* msg, size_t size) {
  if (!strcmp(check, "shape")) return 0;
  if (!strncmp(check, "in ", 3)) {
    double allowed[16];
    size_t num_allowed = 0;
    char* end;
    for (const char* p = check + 3; num_allowed < 16; p = end) {
      double v = strtod(p, &end);
      if (end == p) break;
      allowed[num_allowed++] = v;
    }
    for (size_t o = 0; o < m->num_outputs; ++o) {
      size_t n = got[o].bytes / epctx_npy_item_size(got[o].dtype);
      for (size_t i = 0; i < n; ++i) {
        double v = tu_element(got[o].dtype, got[o].data, i);
        size_t k = 0;
        while (k < num_allowed && v != allowed[k]) ++k;
        if (k == num_allowed) {
          snprintf(msg, size, "output '%s': value %g at %zu is not one of '%s'", m->outputs[o], v,
                   i, check + 3);
          return -1;
        }
      }
    }
    return 0;
  }
  if (!strcmp(check, "dropout")) {
    char path[4096], err[512];
    epctx_npy x, r;
    memset(&r, 0, sizeof(r));
    snprintf(path, sizeof(path), "%sinput_0.npy", dir);
    if (epctx_npy_read(path, &x, err, sizeof(err))) {
      snprintf(msg, size, "%s", err);
      return -1;
    }
    double ratio = 0.5;
    snprintf(path, sizeof(path), "%sinput_1.npy", dir);
    if (m->num_inputs > 1 && epctx_npy_read(path, &r, err, sizeof(err)) == 0 && r.bytes)
      ratio = tu_element(r.dtype, r.data, 0);
    epctx_npy_free(&r);
    int rc = 0;
    size_t n = x.bytes / epctx_npy_item_size(x.dtype);
    for (size_t i = 0; i < n && !rc; ++i) {
      double xi = tu_element(x.dtype, x.data, i);
      double kept = xi / (1 - ratio);
      double y = tu_element(got[0].dtype, got[0].data, i);
      int is_kept = fabs(y - kept) <= 1e-6 + 1e-3 * fabs(kept);
      if (y != 0 && !is_kept) {
        snprintf(msg, size, "output '%s' at %zu: %g is neither 0 nor x/(1-%g) = %g", m->outputs[0],
                 i, y, ratio, kept);
        rc = -1;
      } else if (m->num_outputs > 1 && xi != 0 &&
                 (tu_element(got[1].dtype, got[1].data, i) != 0) != (y != 0)) {
        snprintf(msg, size, "mask '%s' at %zu disagrees with output '%s' (%g)", m->outputs[1], i,
                 m->outputs[0], y);
        rc = -1;
      }
    }
    epctx_npy_free(&x);
    return rc;
  }
  snprintf(msg, size, "random_tests.txt: unknown check '%s'", check);
  return -1;
}

/* Compares every output file with its expected array. */
static int compare_outputs(node_case* c, const tu_manifest* m, const char* dir, const char* out_dir,
                           const char* work) {
  epctx_npy got[TU_MAX_IO], want[TU_MAX_IO];
  memset(got, 0, sizeof(got));
  memset(want, 0, sizeof(want));
  int rc = -1;
  size_t loaded = 0;
  char msg[1024], err[512], path[4096];
  for (; loaded < m->num_outputs; ++loaded) {
    char file[160];
    output_file_name(m, loaded, file, sizeof(file));
    snprintf(path, sizeof(path), "%sexpected_%zu.npy", dir, loaded);
    if (epctx_npy_read(path, &want[loaded], err, sizeof(err))) {
      snprintf(msg, sizeof(msg), "'%s': %s", m->outputs[loaded], err);
      set_reason(c, "expected output", msg, dir, work);
      goto done;
    }
    snprintf(path, sizeof(path), "%s/%s", out_dir, file);
    if (epctx_npy_read(path, &got[loaded], err, sizeof(err))) {
      ++loaded;
      snprintf(msg, sizeof(msg), "'%s': %s", m->outputs[loaded - 1], err);
      set_reason(c, "output", msg, dir, work);
      goto done;
    }
    if (tu_same_type_and_shape(&got[loaded], &want[loaded], err, sizeof(err)) ||
        (!c->random_check &&
         tu_compare_npy(&got[loaded], &want[loaded], 1e-7, 1e-3, err, sizeof(err)))) {
      ++loaded;
      snprintf(msg, sizeof(msg), "output '%s': %s", m->outputs[loaded - 1], err);
      set_reason(c, "compare", msg, dir, work);
      goto done;
    }
  }
  if (c->random_check && check_random(c->random_check, m, dir, got, msg, sizeof(msg))) {
    set_reason(c, "random check", msg, dir, work);
    goto done;
  }
  rc = 0;
done:
  for (size_t i = 0; i < TU_MAX_IO; ++i) {
    epctx_npy_free(&got[i]);
    epctx_npy_free(&want[i]);
  }
  return rc;
}

static int has_strings(const tu_manifest* m) {
  for (size_t i = 0; i < TU_MAX_IO; ++i)
    if (!strcmp(m->input_dtypes[i], "string") || !strcmp(m->output_dtypes[i], "string")) return 1;
  return 0;
}

/* Writes input_<i>.npy of `dir` as a rank-1 [1] tensor to `to` when it is
 * rank 0: 1 when written, 0 when it is not a scalar, -1 on error (msg). */
static int scalar_as_rank1(const char* dir, size_t i, const char* to, char* msg, size_t size) {
  char path[4096];
  epctx_npy a;
  snprintf(path, sizeof(path), "%sinput_%zu.npy", dir, i);
  if (epctx_npy_read(path, &a, msg, size)) return -1;
  int rc = 0;
  if (a.rank == 0) {
    const int64_t one[1] = {1};
    rc = epctx_npy_write(to, a.dtype, one, 1, a.data, a.bytes, msg, size) ? -1 : 1;
  }
  epctx_npy_free(&a);
  return rc;
}

/* Runs the compiled test `ctx` on its inputs and compares its outputs; with
 * `scalars_as_rank1`, every rank-0 input is fed as a 1-element rank-1
 * tensor, as ONNX Runtime accepts (issue 23): 1 passed, 0 failed (reason
 * set), 2 when `scalars_as_rank1` found no rank-0 input. */
static int run_once(node_case* c, const tu_manifest* m, const char* dir, const char* work,
                    const char* ctx, int scalars_as_rank1) {
  char out_dir[4096], msg[8192];
  const char* argv[MAX_EMULATOR_ARGS + 2 * TU_MAX_IO + 16];
  char bindings[TU_MAX_IO][4096 + 160];
  size_t n = 0, scalars = 0;
  for (size_t i = 0; i < g_num_emulator; ++i) argv[n++] = g_emulator[i];
  argv[n++] = g_run;
  argv[n++] = ctx;
  for (size_t i = 0; i < m->num_inputs; ++i) {
    char rank1[4096];
    snprintf(rank1, sizeof(rank1), "%sinput_%zu_rank1.npy", work, i);
    int w = scalars_as_rank1 ? scalar_as_rank1(dir, i, rank1, msg, sizeof(msg)) : 0;
    if (w < 0) {
      set_reason(c, "rank-1 input", msg, dir, work);
      return 0;
    }
    scalars += (size_t)w;
    if (w) snprintf(bindings[i], sizeof(bindings[i]), "%s=%s", m->inputs[i], rank1);
    else snprintf(bindings[i], sizeof(bindings[i]), "%s=%sinput_%zu.npy", m->inputs[i], dir, i);
    argv[n++] = "--input";
    argv[n++] = bindings[i];
  }
  if (scalars_as_rank1 && !scalars) return 2;
  snprintf(out_dir, sizeof(out_dir), "%sout%s", work, scalars_as_rank1 ? "_rank1" : "");
  if (tu_make_clean_dir(out_dir)) {
    set_reason(c, "work folder", out_dir, "", "");
    return 0;
  }
  const char* step = scalars_as_rank1 ? "run, rank-0 inputs fed as [1]" : "run";
  const char* tail[] = {"--output-dir", out_dir, "--repeat", "0", "--quiet", NULL};
  for (size_t i = 0; tail[i]; ++i) argv[n++] = tail[i];
  argv[n] = NULL;
  tu_proc p;
  if (tu_run_timeout(argv, work, RUN_TIMEOUT_S, &p) != 0) {
    set_reason(c, step, p.err ? p.err : "cannot start epctx-run", dir, work);
    tu_proc_free(&p);
    return 0;
  }
  if (p.timed_out) {
    snprintf(msg, sizeof(msg), "killed after %.0f s", RUN_TIMEOUT_S);
    set_reason(c, step, msg, dir, work);
  } else if (!p.exited) {
    snprintf(msg, sizeof(msg), "killed by signal %d; %s", p.signal, error_line(p.err));
    set_reason(c, step, msg, dir, work);
  } else if (p.exit_code != 0) {
    if (!p.err[0]) snprintf(msg, sizeof(msg), "exit %d", p.exit_code);
    set_reason(c, step, p.err[0] ? p.err : msg, dir, work);
  }
  int ran = p.exited && p.exit_code == 0 && !p.timed_out;
  tu_proc_free(&p);
  return ran && compare_outputs(c, m, dir, out_dir, work) == 0;
}

/* Whether files a and b both read and hold the same bytes. */
static int same_bytes(const char* a, const char* b) {
  size_t na = 0, nb = 0;
  unsigned char* da = tu_read_file(a, &na);
  unsigned char* db = da ? tu_read_file(b, &nb) : NULL;
  const int same = da && db && na == nb && (na == 0 || memcmp(da, db, na) == 0);
  free(da);
  free(db);
  return same;
}

/* The steps of one test: compile, run, compare; when it has rank-0 inputs,
 * run and compare again with them fed as [1]. dir (the test's folder in the
 * suite) and work (its scratch folder) end in '/'. */
static void run_steps(node_case* c, const tu_manifest* m, const char* dir, const char* work) {
  char path[4096], ctx[4096], msg[8192];
  if (tu_make_clean_dir(work)) {
    set_reason(c, "work folder", work, "", "");
    return;
  }
  snprintf(path, sizeof(path), "%smodel.onnx", dir);
  snprintf(ctx, sizeof(ctx), "%smodel_ctx.onnx", work);
  if (g_packages[0]) {
    /* The package's build generated its own copy of the suite beside its
     * work folder (DIR/../node): it is current when that model has our
     * model's bytes and is not newer than the package. */
    char pre[4096], theirs[4096];
    struct stat ps, ts;
    snprintf(pre, sizeof(pre), "%s/%s/model_ctx.onnx", g_packages, c->name);
    snprintf(theirs, sizeof(theirs), "%s/../../node/%s/model.onnx", g_packages, c->name);
    if (stat(pre, &ps) == 0 && stat(theirs, &ts) == 0 && ps.st_mtime >= ts.st_mtime &&
        same_bytes(theirs, path)) {
      c->passed = run_once(c, m, dir, work, pre, 0) == 1 && run_once(c, m, dir, work, pre, 1) != 0;
      return;
    }
  }
  /* Nothing for the backend still writes a model, all of it on the CPU. */
  if (mc_compile(g_compile, path, ctx, g_ep, 0, NULL, work, msg, sizeof(msg))) {
    const char* err = strstr(msg, "; stderr: ");
    set_reason(c, "compile", err ? err + strlen("; stderr: ") : msg, dir, work);
    return;
  }
  c->passed = run_once(c, m, dir, work, ctx, 0) == 1 && run_once(c, m, dir, work, ctx, 1) != 0;
}

/* Compiles, runs and compares one test; fills c->passed / c->reason. */
static void run_case(node_case* c) {
  char dir[4096], path[4096], work[4096], msg[1024];
  tu_manifest m;
  snprintf(dir, sizeof(dir), "%s/%s/", g_suite, c->name);
  snprintf(work, sizeof(work), "%s/%s/", g_work, c->name);
  c->ran = 1;
  snprintf(path, sizeof(path), "%smanifest.txt", dir);
  if (tu_read_manifest(path, &m, msg, sizeof(msg))) {
    set_reason(c, "manifest", msg, "", "");
    return;
  }
  snprintf(c->op, sizeof(c->op), "%s", m.op[0] ? m.op : "?");
  run_steps(c, &m, dir, work);
  if (!c->passed && has_strings(&m)) {
    /* Whatever step failed first, the test cannot pass before this does. */
    char first[sizeof(c->reason)];
    snprintf(first, sizeof(first), "%s", c->reason);
    snprintf(c->reason, sizeof(c->reason), "string tensors: epctx has none; %s", first);
  }
}

/* ---- cmocka ---- */

static void matches_onnx_reference(void** state) {
  node_case* c = *state;
  run_case(c);
  if (g_updating) return;
  if (c->passed && c->listed_reason)
    fail_msg("passes now: remove its line from %s (listed as: %s)", g_list_path, c->listed_reason);
  if (!c->passed && !c->listed_reason) fail_msg("%s (not in %s)", c->reason, g_list_path);
}

typedef struct list_check {
  const name_list* list;
  char** names;
  long count;
} list_check;

/* Every name in the expected-failures list is a suite test. */
static void expected_failures_are_suite_tests(void** state) {
  const list_check* lc = *state;
  long stale = 0;
  for (long i = 0; i < lc->list->count; ++i) {
    const char* line = lc->list->lines[i];
    if (line[0] == '#') continue;
    size_t n = strcspn(line, " \t");
    long k = 0;
    while (k < lc->count && (strlen(lc->names[k]) != n || strncmp(lc->names[k], line, n))) ++k;
    if (k == lc->count) {
      printf("%s: '%.*s' is not a suite test\n", g_list_path, (int)n, line);
      ++stale;
    }
  }
  if (stale) fail_msg("%ld line(s) of %s name no suite test", stale, g_list_path);
}

/* ---- results ---- */

static int by_op_then_name(const void* a, const void* b) {
  const node_case* x = *(node_case* const*)a;
  const node_case* y = *(node_case* const*)b;
  int r = strcmp(x->op, y->op);
  return r ? r : strcmp(x->name, y->name);
}

/* Prints the passes per op type and the total to stdout and summary.txt. */
static void write_summary(node_case* cases, long count, long total) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/summary.txt", g_work);
  FILE* f = fopen(path, "w");
  node_case** order = calloc((size_t)count + 1, sizeof(*order));
  long ran = 0, passed = 0;
  for (long i = 0; i < count; ++i)
    if (cases[i].ran) order[ran++] = &cases[i];
  qsort(order, (size_t)ran, sizeof(*order), by_op_then_name);
  FILE* outs[2] = {stdout, f};
  for (int o = 0; o < 2; ++o)
    if (outs[o]) fprintf(outs[o], "node suite, --ep %s: passes per op type\n", g_ep);
  for (long i = 0; i < ran;) {
    long j = i, ok = 0;
    while (j < ran && !strcmp(order[j]->op, order[i]->op)) ok += order[j++]->passed;
    for (int o = 0; o < 2; ++o)
      if (outs[o]) fprintf(outs[o], "  %-28s %ld/%ld\n", order[i]->op, ok, j - i);
    passed += ok;
    i = j;
  }
  for (int o = 0; o < 2; ++o)
    if (outs[o])
      fprintf(outs[o], "node suite: %s %ld/%ld%s\n", g_ep, passed, total,
              ran < total ? " (filtered)" : "");
  if (f) fclose(f);
  free(order);
}

/* Rewrites the expected-failures list: this run's failures, plus, for tests
 * a filter left out, their old lines. */
static int write_list(const node_case* cases, long count) {
  FILE* f = fopen(g_list_path, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", g_list_path);
    return 1;
  }
  fprintf(f,
          "# ONNX node suite: tests expected to fail with epctx-compile --ep %s\n"
          "# (tests/conformance/README.md). One line per test: <name> <why: the\n"
          "# first line of the error>. Regenerate: EPCTX_NODE_SUITE_UPDATE=1.\n",
          g_ep);
  long written = 0;
  for (long i = 0; i < count; ++i) {
    const node_case* c = &cases[i];
    if (c->ran && !c->passed) {
      fprintf(f, "%s %s\n", c->name, c->reason);
      ++written;
    } else if (!c->ran && c->listed_reason) {
      fprintf(f, "%s %s\n", c->name, c->listed_reason);
      ++written;
    }
  }
  fclose(f);
  printf("wrote %ld expected failures to %s\n", written, g_list_path);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 8 || argc > 8 + MAX_EMULATOR_ARGS) {
    fprintf(stderr,
            "usage: %s COMPILE RUN SUITE_DIR WORK_DIR EP EXPECTED_FAILURES RANDOM_TESTS "
            "[EMULATOR [ARG...]]\n",
            argv[0]);
    return 2;
  }
  g_compile = argv[1];
  g_run = argv[2];
  g_suite = argv[3];
  g_work = argv[4];
  g_ep = argv[5];
  g_list_path = argv[6];
  g_emulator = (const char* const*)argv + 8;
  g_num_emulator = (size_t)(argc - 8);
  const char* update = getenv("EPCTX_NODE_SUITE_UPDATE");
  g_updating = update && *update && strcmp(update, "0") != 0;
  const char* packages = getenv("EPCTX_NODE_SUITE_PACKAGES");
  if (packages && *packages) {
    snprintf(g_packages, sizeof(g_packages), "%s/%s", packages, g_ep);
    printf("node suite: running the packages in %s where they are current\n", g_packages);
  }
  const char* filter = getenv("EPCTX_NODE_SUITE_FILTER");
  regex_t re;
  if (filter && *filter && regcomp(&re, filter, REG_EXTENDED | REG_NOSUB)) {
    fprintf(stderr, "EPCTX_NODE_SUITE_FILTER '%s' is not an extended regex\n", filter);
    return 2;
  }
  int filtered = filter && *filter;

  char path[4096];
  snprintf(path, sizeof(path), "%s/cases.txt", g_suite);
  char** names;
  long total = tu_read_lines(path, &names);
  if (total <= 0) {
    fprintf(stderr, "%s: no tests (run tests/conformance/gen_node_suite.py)\n", path);
    return 1;
  }
  name_list expected, random;
  read_list(g_list_path, &expected);
  read_list(argv[7], &random);
  if (tu_make_clean_dir(g_work)) {
    fprintf(stderr, "cannot create %s\n", g_work);
    return 1;
  }

  node_case* cases = calloc((size_t)total, sizeof(*cases));
  struct CMUnitTest* tests = calloc((size_t)total + 1, sizeof(*tests));
  size_t num_tests = 0;
  for (long i = 0; i < total; ++i) {
    node_case* c = &cases[i];
    c->name = names[i];
    c->listed_reason = list_find(&expected, c->name);
    c->random_check = list_find(&random, c->name);
    if (filtered && regexec(&re, c->name, 0, NULL, 0) != 0) continue;
    tests[num_tests].name = c->name;
    tests[num_tests].test_func = matches_onnx_reference;
    tests[num_tests].initial_state = c;
    ++num_tests;
  }
  list_check lc = {&expected, names, total};
  if (!g_updating && !filtered) {
    tests[num_tests].name = "expected_failures_are_suite_tests";
    tests[num_tests].test_func = expected_failures_are_suite_tests;
    tests[num_tests].initial_state = &lc;
    ++num_tests;
  }

  char group[64];
  snprintf(group, sizeof(group), "node_suite_%s", g_ep);
  int failed = _cmocka_run_group_tests(group, tests, num_tests, NULL, NULL);
  write_summary(cases, total, total);
  if (g_updating) failed = write_list(cases, total);

  if (filtered) regfree(&re);
  free(tests);
  free(cases);
  tu_free_lines(expected.lines, expected.count);
  tu_free_lines(random.lines, random.count);
  tu_free_lines(names, total);
  return failed;
}
