/* SPDX-License-Identifier: Apache-2.0 */
/* Test helpers: child processes, files, manifests, tensor comparison. */
/* 64-bit file offsets and inode numbers on 32-bit targets too: without
 * them armhf's readdir (under qemu-arm on a 64-bit host's file system)
 * fails with EOVERFLOW, and tu_make_clean_dir left the files of a previous
 * run behind. */
#define _FILE_OFFSET_BITS 64
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    char file[4096];
    struct stat st;
    snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
    if (lstat(file, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(file) != 0) {
      fprintf(stderr, "tu_make_clean_dir: %s: cannot remove: %s\n", file, strerror(errno));
      closedir(d);
      return -1;
    }
    errno = 0;
  }
  const int err = errno;
  closedir(d);
  if (err != 0) {
    fprintf(stderr, "tu_make_clean_dir: %s: cannot list: %s\n", dir, strerror(err));
    return -1;
  }
  return 0;
}

/* Waits for pid until `seconds` have passed (0: for ever), then kills it.
 * SIGCHLD is blocked, so sigtimedwait wakes when the child exits; the wait
 * is capped at 100 ms per round in case an emulator loses the signal. */
static int wait_child(pid_t pid, double seconds, const sigset_t* chld, int* timed_out) {
  int status = 0;
  *timed_out = 0;
  if (seconds <= 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }
  struct timespec now, end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += (time_t)seconds;
  end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
  if (end.tv_nsec >= 1000000000L) {
    end.tv_sec += 1;
    end.tv_nsec -= 1000000000L;
  }
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double left = (double)(end.tv_sec - now.tv_sec) + (double)(end.tv_nsec - now.tv_nsec) / 1e9;
    if (left <= 0) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      *timed_out = 1;
      return status;
    }
    if (left > 0.1) left = 0.1;
    struct timespec ts = {0, (long)(left * 1e9)};
    sigtimedwait(chld, NULL, &ts);
  }
}

int tu_run(const char* const* argv, const char* scratch_dir, tu_proc* p) {
  return tu_run_timeout(argv, scratch_dir, 0, p);
}

int tu_run_timeout(const char* const* argv, const char* scratch_dir, double seconds, tu_proc* p) {
  memset(p, 0, sizeof(*p));
  char out_path[4096], err_path[4096];
  snprintf(out_path, sizeof(out_path), "%s/.child.%d.out", scratch_dir, (int)getpid());
  snprintf(err_path, sizeof(err_path), "%s/.child.%d.err", scratch_dir, (int)getpid());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (seconds > 0) sigprocmask(SIG_BLOCK, &chld, &old);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (seconds > 0) {
    posix_spawnattr_setsigmask(&attr, &old);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  }
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, &attr, (char* const*)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    if (seconds > 0) sigprocmask(SIG_SETMASK, &old, NULL);
    p->err = malloc(4200);
    if (p->err) snprintf(p->err, 4200, "cannot start %s: %s", argv[0], strerror(rc));
    return -1;
  }
  int status = wait_child(pid, seconds, &chld, &p->timed_out);
  if (seconds > 0) {
    /* Drop the SIGCHLD this child left pending, then restore the mask. */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&chld, NULL, &zero) > 0) {
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
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

/* Splits the rest of a manifest line into names of `width` bytes each. */
static size_t split_words(char* rest, char* names, size_t width, size_t max) {
  size_t n = 0;
  for (char* tok = strtok(rest, " \t"); tok && n < max; tok = strtok(NULL, " \t"))
    snprintf(names + width * n++, width, "%s", tok);
  return n;
}

static size_t split_names(char* rest, char names[][128], size_t max) {
  return split_words(rest, names[0], 128, max);
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
    else if (!strcmp(line, "op")) snprintf(m->op, sizeof(m->op), "%s", rest);
    else if (!strcmp(line, "input_dtypes")) split_words(rest, m->input_dtypes[0], 16, TU_MAX_IO);
    else if (!strcmp(line, "output_dtypes")) split_words(rest, m->output_dtypes[0], 16, TU_MAX_IO);
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
  for (char* line = strtok_r(text, "\n", &save); line && out; line = strtok_r(NULL, "\n", &save)) {
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

void tu_max_errors(const float* a, const float* b, size_t n, double* max_abs, double* max_ref) {
  *max_abs = 0;
  *max_ref = 0;
  for (size_t i = 0; i < n; ++i) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= *max_abs)) *max_abs = d; /* NaN propagates */
    if (fabs((double)b[i]) > *max_ref) *max_ref = fabs((double)b[i]);
  }
}

static double half_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0    ? ldexp(mant, -24)
             : exp == 31 ? (mant ? NAN : INFINITY)
                         : ldexp(1024 + mant, exp - 25);
  return (h & 0x8000) ? -v : v;
}

static double bfloat16_to_double(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

double tu_element(epctx_dtype dtype, const void* data, size_t i) {
  switch (dtype) {
    case EPCTX_DTYPE_FLOAT: return ((const float*)data)[i];
    case EPCTX_DTYPE_DOUBLE: return ((const double*)data)[i];
    case EPCTX_DTYPE_FLOAT16: return half_to_double(((const uint16_t*)data)[i]);
    case EPCTX_DTYPE_BFLOAT16: return bfloat16_to_double(((const uint16_t*)data)[i]);
    case EPCTX_DTYPE_INT8: return ((const int8_t*)data)[i];
    case EPCTX_DTYPE_UINT8:
    case EPCTX_DTYPE_BOOL: return ((const uint8_t*)data)[i];
    case EPCTX_DTYPE_INT16: return ((const int16_t*)data)[i];
    case EPCTX_DTYPE_UINT16: return ((const uint16_t*)data)[i];
    case EPCTX_DTYPE_INT32: return ((const int32_t*)data)[i];
    case EPCTX_DTYPE_UINT32: return ((const uint32_t*)data)[i];
    case EPCTX_DTYPE_INT64: return (double)((const int64_t*)data)[i];
    case EPCTX_DTYPE_UINT64: return (double)((const uint64_t*)data)[i];
    default: return 0;
  }
}

static int is_floating(epctx_dtype dtype) {
  return dtype == EPCTX_DTYPE_FLOAT || dtype == EPCTX_DTYPE_DOUBLE ||
         dtype == EPCTX_DTYPE_FLOAT16 || dtype == EPCTX_DTYPE_BFLOAT16;
}

static void format_dims(const int64_t* dims, size_t rank, char* out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(out + used, size - used, "%s%lld", i ? "," : "", (long long)dims[i]);
}

/* The shared check: an actual array given by parts against an expected one. */
static int compare_parts(epctx_dtype dtype, const int64_t* dims, size_t rank, const void* data,
                         size_t bytes, const epctx_npy* expected, int values, double atol,
                         double rtol, char* msg, size_t size) {
  if (dtype != expected->dtype) {
    snprintf(msg, size, "dtype %s, expected %s", epctx_npy_dtype_name(dtype),
             epctx_npy_dtype_name(expected->dtype));
    return -1;
  }
  int same = rank == expected->rank;
  for (size_t i = 0; same && i < rank; ++i) same = dims[i] == expected->dims[i];
  if (!same || bytes != expected->bytes) {
    char a[128], e[128];
    format_dims(dims, rank, a, sizeof(a));
    format_dims(expected->dims, expected->rank, e, sizeof(e));
    snprintf(msg, size, "shape [%s], expected [%s]", a, e);
    return -1;
  }
  if (!values || bytes == 0) return 0; /* empty tensors may have no data pointer */
  size_t item = epctx_npy_item_size(dtype);
  size_t n = item ? bytes / item : 0;
  if (!is_floating(dtype)) {
    if (memcmp(data, expected->data, bytes) == 0) return 0;
    size_t first = 0, bad = 0;
    for (size_t i = 0; i < n; ++i)
      if (memcmp((const char*)data + i * item, (const char*)expected->data + i * item, item)) {
        if (!bad) first = i;
        ++bad;
      }
    snprintf(msg, size, "%zu of %zu %s values differ; first at %zu: got %.17g, expected %.17g", bad,
             n, epctx_npy_dtype_name(dtype), first, tu_element(dtype, data, first),
             tu_element(dtype, expected->data, first));
    return -1;
  }
  size_t bad = 0, first = 0;
  double max_abs = 0;
  for (size_t i = 0; i < n; ++i) {
    double a = tu_element(dtype, data, i), b = tu_element(dtype, expected->data, i);
    if (a == b || (isnan(a) && isnan(b))) continue;
    double d = fabs(a - b);
    if (!(d <= max_abs)) max_abs = d; /* NaN propagates */
    if (!(d <= atol + rtol * fabs(b))) {
      if (!bad) first = i;
      ++bad;
    }
  }
  if (bad) {
    snprintf(msg, size,
             "%zu of %zu values outside |a-b| <= %g + %g*|b|; first at %zu: "
             "got %.9g, expected %.9g; max |a-b| %.3g",
             bad, n, atol, rtol, first, tu_element(dtype, data, first),
             tu_element(dtype, expected->data, first), max_abs);
    return -1;
  }
  return 0;
}

int tu_compare(const epctx_tensor* actual, const epctx_npy* expected, double atol, double rtol,
               char* msg, size_t size) {
  return compare_parts(epctx_tensor_dtype(actual), epctx_tensor_dims(actual),
                       epctx_tensor_rank(actual), epctx_tensor_data((epctx_tensor*)actual),
                       epctx_tensor_bytes(actual), expected, 1, atol, rtol, msg, size);
}

int tu_compare_npy(const epctx_npy* actual, const epctx_npy* expected, double atol, double rtol,
                   char* msg, size_t size) {
  return compare_parts(actual->dtype, actual->dims, actual->rank, actual->data, actual->bytes,
                       expected, 1, atol, rtol, msg, size);
}

int tu_same_type_and_shape(const epctx_npy* actual, const epctx_npy* expected, char* msg,
                           size_t size) {
  return compare_parts(actual->dtype, actual->dims, actual->rank, actual->data, actual->bytes,
                       expected, 0, 0, 0, msg, size);
}
