/* SPDX-License-Identifier: Apache-2.0 */
/* Sharing loaded context binaries (context groups, ep.share_ep_contexts),
 * weight pages shared between processes, the read load mode surviving a
 * truncated file, and the container checks every load runs.
 * usage: test_mem_sharing SMALL_PACKAGE_DIR BIG_PACKAGE_DIR SCRATCH_DIR
 * (package dirs hold model_ctx.onnx + model_vnpu.bin from epctx-compile). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mem_util.h"

static const char* g_small;
static const char* g_big;
static const char* g_scratch;
static epctx_env* g_env;

static const char* join(char* buf, const char* dir, const char* name) {
  snprintf(buf, PATH_MAX, "%s/%s", dir, name);
  return buf;
}

/* Mappings of `path` in /proc/self/maps. */
static int count_mappings(const char* path) {
  char real[PATH_MAX];
  assert_non_null(realpath(path, real));
  FILE* f = fopen("/proc/self/maps", "r");
  assert_non_null(f);
  char line[PATH_MAX + 256];
  int n = 0;
  size_t len = strlen(real);
  while (fgets(line, sizeof line, f)) {
    size_t l = strlen(line);
    if (l && line[l - 1] == '\n') line[--l] = '\0';
    if (l >= len && strcmp(line + l - len, real) == 0 && line[l - len - 1] == ' ') ++n;
  }
  fclose(f);
  return n;
}

static void copy_file(const char* from, const char* to) {
  FILE* a = fopen(from, "rb");
  assert_non_null(a);
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s.tmp", to);
  FILE* b = fopen(tmp, "wb");
  assert_non_null(b);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, a)) > 0) assert_int_equal(fwrite(buf, 1, n, b), n);
  fclose(a);
  fclose(b);
  /* rename: a new inode, as a real package update would be. */
  assert_int_equal(rename(tmp, to), 0);
}

/* Copies the small package into SCRATCH/name; model and bin (PATH_MAX
 * buffers) receive the copies' paths. Returns model. */
static const char* copy_package(const char* name, char* model, char* bin) {
  char dir[PATH_MAX], a[PATH_MAX];
  join(dir, g_scratch, name);
  mkdir(dir, 0755);
  join(bin, dir, "model_vnpu.bin");
  copy_file(join(a, g_small, "model_ctx.onnx"), join(model, dir, "model_ctx.onnx"));
  copy_file(join(a, g_small, "model_vnpu.bin"), bin);
  return model;
}

static void group_shares_one_loaded_context(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  join(model, g_small, "model_ctx.onnx");
  join(bin, g_small, "model_vnpu.bin");
  epctx_context_group* g = NULL;
  mem_check(epctx_context_group_create(g_env, &g), "group");
  epctx_session* s1 = mem_create(g_env, model, g, NULL, NULL);
  epctx_session* s2 = mem_create(g_env, model, g, NULL, NULL);
  assert_int_equal(count_mappings(bin), 1);
  assert_int_equal(epctx_context_group_loaded_count(g), 1);
  static float y1[MEM_MAX_OUT], y2[MEM_MAX_OUT];
  size_t n = mem_run(g_env, s1, 1, y1);
  assert_int_equal(mem_run(g_env, s2, 1, y2), n);
  assert_memory_equal(y1, y2, n * 4);
  /* Any order: the group handle first, then the sessions. */
  epctx_context_group_release(g);
  assert_int_equal(mem_run(g_env, s2, 1, y2), n);
  epctx_session_release(s1);
  assert_int_equal(count_mappings(bin), 1);
  assert_int_equal(mem_run(g_env, s2, 1, y2), n);
  assert_memory_equal(y1, y2, n * 4);
  epctx_session_release(s2);
  assert_int_equal(count_mappings(bin), 0);
}

static void last_session_releases_the_shared_context(void** state) {
  (void)state;
  char model[PATH_MAX];
  join(model, g_small, "model_ctx.onnx");
  epctx_context_group* g = NULL;
  mem_check(epctx_context_group_create(g_env, &g), "group");
  epctx_session* s1 = mem_create(g_env, model, g, NULL, NULL);
  assert_int_equal(epctx_context_group_loaded_count(g), 1);
  epctx_session_release(s1);
  assert_int_equal(epctx_context_group_loaded_count(g), 0);
  epctx_context_group_release(g);
}

static void ort_share_keys_share_and_stop_sharing(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  join(model, g_small, "model_ctx.onnx");
  join(bin, g_small, "model_vnpu.bin");
  static const char* const share[] = {"ep.share_ep_contexts", "1", NULL};
  static const char* const stop[] = {"ep.share_ep_contexts", "1", "ep.stop_share_ep_contexts", "1",
                                     NULL};
  epctx_session* s1 = mem_create(g_env, model, NULL, share, NULL);
  epctx_session* s2 = mem_create(g_env, model, NULL, share, NULL);
  assert_int_equal(count_mappings(bin), 1);
  epctx_session* s3 = mem_create(g_env, model, NULL, stop, NULL);  // takes it, then stops
  assert_int_equal(count_mappings(bin), 1);
  epctx_session* s4 = mem_create(g_env, model, NULL, share, NULL);  // a new round: loads again
  assert_int_equal(count_mappings(bin), 2);
  epctx_session* s5 = mem_create(g_env, model, NULL, NULL, NULL);  // no sharing
  assert_int_equal(count_mappings(bin), 3);
  epctx_session* all[] = {s2, s5, s1, s4, s3};
  for (int i = 0; i < 5; ++i) epctx_session_release(all[i]);
  assert_int_equal(count_mappings(bin), 0);
}

static void share_key_rejects_other_values(void** state) {
  (void)state;
  epctx_session_options* o = NULL;
  mem_check(epctx_session_options_create(&o), "options");
  epctx_status* st = epctx_session_options_set(o, "ep.share_ep_contexts", "yes");
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "expected 0 or 1, found 'yes'"));
  epctx_status_release(st);
  epctx_session_options_release(o);
}

static void replaced_file_is_loaded_again(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX], a[PATH_MAX];
  copy_package("replaced", model, bin);
  epctx_context_group* g = NULL;
  mem_check(epctx_context_group_create(g_env, &g), "group");
  epctx_session* s1 = mem_create(g_env, model, g, NULL, NULL);
  copy_file(join(a, g_small, "model_vnpu.bin"), bin);
  epctx_session* s2 = mem_create(g_env, model, g, NULL, NULL);
  assert_int_equal(epctx_context_group_loaded_count(g), 2);
  epctx_session_release(s1);
  epctx_session_release(s2);
  epctx_context_group_release(g);
}

/* epctx.load_mode=read copies model, context binaries and external data
 * into memory: the files may change or shrink while the session lives. */
static void read_mode_survives_truncated_files(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  copy_package("truncated_read", model, bin);
  static const char* const read_mode[] = {"epctx.load_mode", "read", NULL};
  epctx_session* s = mem_create(g_env, model, NULL, read_mode, NULL);
  assert_int_equal(count_mappings(bin), 0);
  static float before[MEM_MAX_OUT], after[MEM_MAX_OUT];
  size_t n = mem_run(g_env, s, 2, before);
  assert_int_equal(truncate(bin, 0), 0);
  assert_int_equal(truncate(model, 0), 0);
  assert_int_equal(mem_run(g_env, s, 2, after), n);
  assert_memory_equal(before, after, n * 4);
  epctx_session_release(s);
}

/* The documented hazard of the default mmap mode: a file truncated under a
 * live session faults (SIGBUS) on the next access. Shown in a child. */
static void mmap_mode_truncation_faults_as_documented(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  copy_package("truncated_mmap", model, bin);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGBUS, SIG_DFL); /* cmocka's handler would catch it */
    static float y[MEM_MAX_OUT];
    epctx_session* s = mem_create(g_env, model, NULL, NULL, NULL);
    mem_run(g_env, s, 0, y);
    if (truncate(bin, 0) != 0) _exit(3);
    mem_run(g_env, s, 0, y);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGBUS);
}

/* ---- weight pages shared between processes ---- */

typedef struct smaps_sum {
  long long rss, shared_clean, private_clean, private_dirty;
} smaps_sum;

static smaps_sum smaps_of(pid_t pid, const char* path) {
  char real[PATH_MAX], file[64], line[PATH_MAX + 256];
  assert_non_null(realpath(path, real));
  snprintf(file, sizeof file, "/proc/%d/smaps", (int)pid);
  FILE* f = fopen(file, "r");
  assert_non_null(f);
  smaps_sum s = {0, 0, 0, 0};
  int in = 0;
  long long kb;
  size_t len = strlen(real);
  while (fgets(line, sizeof line, f)) {
    size_t l = strlen(line);
    if (l && line[l - 1] == '\n') line[--l] = '\0';
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ')) {
      in = l >= len && strcmp(line + l - len, real) == 0;
      continue;
    }
    if (!in) continue;
    if (sscanf(line, "Rss: %lld kB", &kb) == 1) s.rss += kb * 1024;
    else if (sscanf(line, "Shared_Clean: %lld kB", &kb) == 1) s.shared_clean += kb * 1024;
    else if (sscanf(line, "Private_Clean: %lld kB", &kb) == 1) s.private_clean += kb * 1024;
    else if (sscanf(line, "Private_Dirty: %lld kB", &kb) == 1) s.private_dirty += kb * 1024;
  }
  fclose(f);
  return s;
}

/* A child: creates a session, runs once, reports, waits for `hold` to close. */
static pid_t spawn_runner(const char* model, int* ready_fd, int* hold_fd) {
  int ready[2], hold[2];
  assert_int_equal(pipe(ready), 0);
  assert_int_equal(pipe(hold), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    close(hold[1]);
    epctx_env* env = NULL;
    mem_check(epctx_env_create(NULL, 1, &env), "env");
    mem_check(epctx_env_register_builtin_drivers(env), "drivers");
    static float y[MEM_MAX_OUT];
    epctx_session* s = mem_create(env, model, NULL, NULL, NULL);
    mem_run(env, s, 0, y);
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(3);
    while (read(hold[0], &c, 1) > 0) {
    }
    _exit(0);
  }
  close(ready[1]);
  close(hold[0]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  close(ready[0]);
  *ready_fd = -1;
  *hold_fd = hold[1];
  return pid;
}

static void two_processes_share_the_weight_pages(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  join(model, g_big, "model_ctx.onnx");
  join(bin, g_big, "model_vnpu.bin");
  struct stat st;
  assert_int_equal(stat(bin, &st), 0);
  int r1, h1, r2, h2;
  pid_t a = spawn_runner(model, &r1, &h1);
  pid_t b = spawn_runner(model, &r2, &h2);
  smaps_sum sa = smaps_of(a, bin), sb = smaps_of(b, bin);
  printf("context binary of %lld bytes; process A: Rss %lld, Shared_Clean %lld, Private_Clean "
         "%lld, Private_Dirty %lld; process B: Rss %lld, Shared_Clean %lld, Private_Clean %lld, "
         "Private_Dirty %lld\n",
         (long long)st.st_size, sa.rss, sa.shared_clean, sa.private_clean, sa.private_dirty, sb.rss,
         sb.shared_clean, sb.private_clean, sb.private_dirty);
  close(h1);
  close(h2);
  int status;
  waitpid(a, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  waitpid(b, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* A run reads every weight: nearly the whole file is resident in both,
   * as clean pages shared with the other process; none is private. */
  assert_true(sb.shared_clean >= (long long)st.st_size * 9 / 10);
  assert_true(sa.shared_clean >= (long long)st.st_size * 9 / 10);
  assert_int_equal(sa.private_dirty + sb.private_dirty, 0);
}

/* ---- the container checks on every load ---- */

static void patch(const char* path, long off, const void* bytes, size_t n) {
  int fd = open(path, O_WRONLY);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, bytes, n, off), (ssize_t)n);
  close(fd);
}

static void expect_fails(const char* model, int code, const char* w1, const char* w2) {
  epctx_status* st = NULL;
  epctx_session* s = mem_create(g_env, model, NULL, NULL, &st);
  assert_null(s);
  const char* msg = epctx_status_message(st);
  if (epctx_status_code(st) != code || !strstr(msg, w1) || (w2 && !strstr(msg, w2)))
    fail_msg("expected %s with '%s' and '%s', got %s: %s", epctx_code_name(code), w1, w2 ? w2 : "",
             epctx_code_name(epctx_status_code(st)), msg);
  epctx_status_release(st);
}

static void container_version_outside_the_list_is_refused(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  copy_package("version", model, bin);
  const uint8_t v2[4] = {2, 0, 3, 0}; /* format 2.3 */
  patch(bin, 8, v2, 4);
  /* A context that fails to load is INVALID_GRAPH (ORT's contract); the
   * message keeps the cause's code. */
  expect_fails(model, EPCTX_INVALID_GRAPH, "NOT_IMPLEMENTED",
               "container format 2.3 is not supported; this runtime reads 1.x");
}

static void corrupt_metadata_fails_verification(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  copy_package("metadata", model, bin);
  uint8_t h[64];
  FILE* f = fopen(bin, "rb");
  assert_int_equal(fread(h, 1, 64, f), 64);
  fclose(f);
  uint64_t meta = 0;
  memcpy(&meta, h + 24, 8);
  const uint8_t bad[4] = {0xff, 0xff, 0xff, 0x7f}; /* root offset far outside */
  patch(bin, (long)meta, bad, 4);
  expect_fails(model, EPCTX_INVALID_GRAPH, "failed flatbuffers verification", NULL);
}

static void segment_outside_the_file_is_refused(void** state) {
  (void)state;
  char model[PATH_MAX], bin[PATH_MAX];
  copy_package("segment", model, bin);
  uint8_t h[64];
  FILE* f = fopen(bin, "rb");
  assert_int_equal(fread(h, 1, 64, f), 64);
  fclose(f);
  uint64_t meta = 0, meta_size = 0;
  memcpy(&meta, h + 24, 8);
  memcpy(&meta_size, h + 32, 8);
  /* Cut the file after the metadata and make the header agree: the weight
   * and payload segments now point past the end. */
  uint64_t total = meta + meta_size;
  assert_int_equal(truncate(bin, (off_t)total), 0);
  patch(bin, 16, &total, 8);
  expect_fails(model, EPCTX_INVALID_GRAPH, "segment", "lies outside the container");
  /* And a file shorter than its header says. */
  uint64_t more = total + 4096;
  patch(bin, 16, &more, 8);
  expect_fails(model, EPCTX_INVALID_GRAPH, "truncated or padded file", NULL);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_mem_sharing SMALL_DIR BIG_DIR SCRATCH_DIR\n");
    return 2;
  }
  g_small = argv[1];
  g_big = argv[2];
  g_scratch = argv[3];
  mkdir(g_scratch, 0755);
  mem_check(epctx_env_create(NULL, 0, &g_env), "env");
  mem_check(epctx_env_register_builtin_drivers(g_env), "drivers");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(group_shares_one_loaded_context),
      cmocka_unit_test(last_session_releases_the_shared_context),
      cmocka_unit_test(ort_share_keys_share_and_stop_sharing),
      cmocka_unit_test(share_key_rejects_other_values),
      cmocka_unit_test(replaced_file_is_loaded_again),
      cmocka_unit_test(read_mode_survives_truncated_files),
      cmocka_unit_test(mmap_mode_truncation_faults_as_documented),
      cmocka_unit_test(two_processes_share_the_weight_pages),
      cmocka_unit_test(container_version_outside_the_list_is_refused),
      cmocka_unit_test(corrupt_metadata_fails_verification),
      cmocka_unit_test(segment_outside_the_file_is_refused),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  epctx_env_release(g_env);
  return rc;
}
