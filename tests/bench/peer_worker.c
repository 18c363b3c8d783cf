/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 200809L
#include "peer_worker.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char* g_name = "peer-worker";

void peer_set_name(const char* name) { g_name = name; }

void peer_die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: error: ", g_name);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

double peer_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_threads(const char* s) {
  char* end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 1 || v > 1024)
    peer_die("--threads: expected 1..1024, found '%s'", s);
  return (int)v;
}

/* Splits "key=value" at the first '=' in place. */
static void split_pair(char* s, const char* opt, const char** key, const char** value) {
  char* eq = strchr(s, '=');
  if (!eq || eq == s) peer_die("%s: expected NAME=VALUE, found '%s'", opt, s);
  *eq = '\0';
  *key = s;
  *value = eq + 1;
}

void peer_parse_args(int argc, char** argv, peer_args* out) {
  memset(out, 0, sizeof *out);
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (a[0] != '-') {
      if (out->model) peer_die("more than one model ('%s', '%s')", out->model, a);
      out->model = a;
      continue;
    }
    if (i + 1 >= argc) peer_die("%s needs a value", a);
    char* v = argv[++i];
    if (!strcmp(a, "--threads")) {
      out->threads = parse_threads(v);
    } else if (!strcmp(a, "--lib")) {
      out->library = v;
    } else if (!strcmp(a, "-C")) {
      if (out->num_options == PEER_MAX_OPTIONS)
        peer_die("-C: at most %d options", PEER_MAX_OPTIONS);
      split_pair(v, a, &out->option_keys[out->num_options], &out->option_values[out->num_options]);
      ++out->num_options;
    } else if (!strcmp(a, "--input")) {
      if (out->num_inputs == PEER_MAX_INPUTS)
        peer_die("--input: at most %d inputs", PEER_MAX_INPUTS);
      const char* file;
      split_pair(v, a, &out->input_names[out->num_inputs], &file);
      char err[512];
      if (epctx_npy_read(file, &out->inputs[out->num_inputs], err, sizeof err)) peer_die("%s", err);
      ++out->num_inputs;
    } else {
      peer_die("unknown option '%s'", a);
    }
  }
  if (!out->model) peer_die("no model given");
  if (out->num_inputs == 0) peer_die("no --input given");
}

void peer_free_args(peer_args* a) {
  for (size_t i = 0; i < a->num_inputs; ++i) epctx_npy_free(&a->inputs[i]);
}

static void run_or_die(peer_run_fn run, void* state) {
  char err[1024] = "";
  if (run(state, err, sizeof err)) peer_die("run: %s", err);
}

int peer_serve(peer_run_fn run, void* state, double create_ms, int threads) {
  run_or_die(run, state);
  if (threads > 0) printf("ready create_ms=%.3f threads=%d\n", create_ms, threads);
  else printf("ready create_ms=%.3f threads=caller\n", create_ms);
  fflush(stdout);

  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    if (!strncmp(line, "quit", 4)) break;
    long max_runs;
    double budget_ms;
    if (sscanf(line, "run %ld %lf", &max_runs, &budget_ms) != 2 || max_runs < 1 ||
        max_runs > 1000000 || budget_ms < 0)
      peer_die("bad request '%.*s' (expected 'run MAX_RUNS BUDGET_MS' or 'quit')",
               (int)strcspn(line, "\n"), line);
    /* Times go out after the round so printing never lands inside a run. */
    double* us = malloc((size_t)max_runs * sizeof *us);
    if (!us) peer_die("out of memory for %ld run times", max_runs);
    long n = 0;
    double start = peer_now_ms();
    while (n < max_runs) {
      double t0 = peer_now_ms();
      run_or_die(run, state);
      double t1 = peer_now_ms();
      us[n++] = (t1 - t0) * 1e3;
      if (t1 - start >= budget_ms) break;
    }
    fputs("times", stdout);
    for (long k = 0; k < n; ++k) printf(" %.3f", us[k]);
    putchar('\n');
    fflush(stdout);
    free(us);
  }
  return 0;
}
