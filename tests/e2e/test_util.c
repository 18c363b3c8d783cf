/* SPDX-License-Identifier: Apache-2.0 */
/* Test helpers: child processes, files, manifests, tensor comparison. */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

int tu_make_clean_dir(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s", dir);
  for (char* p = path + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
  DIR* d = opendir(dir);
  if (!d) return -1;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    char file[4096];
    struct stat st;
    snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
    if (lstat(file, &st) == 0 && !S_ISDIR(st.st_mode)) unlink(file);
  }
  closedir(d);
  return 0;
}

int tu_run(const char* const* argv, const char* scratch_dir, tu_proc* p) {
  memset(p, 0, sizeof(*p));
  char out_path[4096], err_path[4096];
  snprintf(out_path, sizeof(out_path), "%s/.child.%d.out", scratch_dir, (int)getpid());
  snprintf(err_path, sizeof(err_path), "%s/.child.%d.err", scratch_dir, (int)getpid());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char* const*)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    p->err = malloc(4200);
    if (p->err)
      snprintf(p->err, 4200, "cannot start %s: %s", argv[0], strerror(rc));
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  p->exited = WIFEXITED(status);
  p->exit_code = p->exited ? WEXITSTATUS(status) : -1;
  p->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  p->out = (char*)tu_read_file(out_path, NULL);
  p->err = (char*)tu_read_file(err_path, NULL);
  unlink(out_path);
  unlink(err_path);
  if (!p->out) p->out = calloc(1, 1);
  if (!p->err) p->err = calloc(1, 1);
  return 0;
}

void tu_proc_free(tu_proc* p) {
  free(p->out);
  free(p->err);
  p->out = p->err = NULL;
}

size_t tu_count_lines(const char* s) {
  size_t n = 0;
  const char* p = s;
  for (; *p; ++p)
    if (*p == '\n') ++n;
  if (p != s && p[-1] != '\n') ++n;
  return n;
}

/* Splits the rest of a manifest line into names. */
static size_t split_names(char* rest, char names[][128], size_t max) {
  size_t n = 0;
  for (char* tok = strtok(rest, " \t"); tok && n < max; tok = strtok(NULL, " \t"))
    snprintf(names[n++], 128, "%s", tok);
  return n;
}

int tu_read_manifest(const char* path, tu_manifest* m, char* err, size_t size) {
  memset(m, 0, sizeof(*m));
  m->vnpu_driver_nodes = m->vnpu_cpu_nodes = -1;
  char* text = (char*)tu_read_file(path, NULL);
  if (!text) {
    snprintf(err, size, "%s: cannot read", path);
    return -1;
  }
  char* save = NULL;
  for (char* line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char* space = strchr(line, ' ');
    char* rest = space ? space + 1 : line + strlen(line);
    if (space) *space = '\0';
    if (!strcmp(line, "case")) snprintf(m->name, sizeof(m->name), "%s", rest);
    else if (!strcmp(line, "inputs")) m->num_inputs = split_names(rest, m->inputs, TU_MAX_IO);
    else if (!strcmp(line, "outputs")) m->num_outputs = split_names(rest, m->outputs, TU_MAX_IO);
    else if (!strcmp(line, "vnpu_driver_nodes")) m->vnpu_driver_nodes = atol(rest);
    else if (!strcmp(line, "vnpu_cpu_nodes")) m->vnpu_cpu_nodes = atol(rest);
    else if (!strcmp(line, "input_shape") && m->num_input_shapes < TU_MAX_IO)
      snprintf(m->input_shapes[m->num_input_shapes++], 160, "%s", rest);
  }
  free(text);
  if (!m->name[0] || !m->num_outputs) {
    snprintf(err, size, "%s: no 'case' or 'outputs' line", path);
    return -1;
  }
  return 0;
}

long tu_read_lines(const char* path, char*** lines) {
  char* text = (char*)tu_read_file(path, NULL);
  if (!text) return -1;
  long n = 0, cap = 16;
  char** out = malloc(sizeof(char*) * (size_t)cap);
  char* save = NULL;
  for (char* line = strtok_r(text, "\n", &save); line && out;
       line = strtok_r(NULL, "\n", &save)) {
    if (!*line) continue;
    if (n == cap) {
      cap *= 2;
      char** grown = realloc(out, sizeof(char*) * (size_t)cap);
      if (!grown) break;
      out = grown;
    }
    out[n++] = strdup(line);
  }
  free(text);
  *lines = out;
  return out ? n : -1;
}

void tu_free_lines(char** lines, long count) {
  for (long i = 0; i < count; ++i) free(lines[i]);
  free(lines);
}

void tu_max_errors(const float* a, const float* b, size_t n, double* max_abs,
                   double* max_ref) {
  *max_abs = 0;
  *max_ref = 0;
  for (size_t i = 0; i < n; ++i) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= *max_abs)) *max_abs = d; /* NaN propagates */
    if (fabs((double)b[i]) > *max_ref) *max_ref = fabs((double)b[i]);
  }
}

int tu_compare(const epctx_tensor* actual, const epctx_npy* expected,
               double atol, double rtol, char* msg, size_t size) {
  if (epctx_tensor_dtype(actual) != expected->dtype) {
    snprintf(msg, size, "dtype %s, expected %s",
             epctx_npy_dtype_name(epctx_tensor_dtype(actual)),
             epctx_npy_dtype_name(expected->dtype));
    return -1;
  }
  int same = epctx_tensor_rank(actual) == expected->rank;
  for (size_t i = 0; same && i < expected->rank; ++i)
    same = epctx_tensor_dims(actual)[i] == expected->dims[i];
  if (!same || epctx_tensor_bytes(actual) != expected->bytes) {
    char a[128] = "", e[128] = "";
    size_t ua = 0, ue = 0;
    for (size_t i = 0; i < epctx_tensor_rank(actual) && ua < sizeof(a); ++i)
      ua += (size_t)snprintf(a + ua, sizeof(a) - ua, "%lld,",
                             (long long)epctx_tensor_dims(actual)[i]);
    for (size_t i = 0; i < expected->rank && ue < sizeof(e); ++i)
      ue += (size_t)snprintf(e + ue, sizeof(e) - ue, "%lld,",
                             (long long)expected->dims[i]);
    snprintf(msg, size, "shape [%s], expected [%s]", a, e);
    return -1;
  }
  const void* data = epctx_tensor_data((epctx_tensor*)actual);
  if (expected->dtype != EPCTX_DTYPE_FLOAT) {
    if (memcmp(data, expected->data, expected->bytes) != 0) {
      snprintf(msg, size, "%s values differ", epctx_npy_dtype_name(expected->dtype));
      return -1;
    }
    return 0;
  }
  const float* a = data;
  const float* b = expected->data;
  size_t n = expected->bytes / sizeof(float);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= atol + rtol * fabs((double)b[i]))) {
      if (!bad) first = i;
      ++bad;
    }
  }
  if (bad) {
    double max_abs, max_ref;
    tu_max_errors(a, b, n, &max_abs, &max_ref);
    snprintf(msg, size,
             "%zu of %zu values outside |a-b| <= %g + %g*|b|; first at %zu: "
             "got %.9g, expected %.9g; max |a-b| %.3g",
             bad, n, atol, rtol, first, a[first], b[first], max_abs);
    return -1;
  }
  return 0;
}
