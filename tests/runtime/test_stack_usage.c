/* SPDX-License-Identifier: Apache-2.0 */
/* No function of the device code (runtime core, kernels, registry, vnpu,
 * micro-kernels, POSIX PAL) may use more than 4 KiB of stack: create and Run
 * must work on small thread stacks and bare-metal boards. GCC's
 * -fstack-usage (EPCTX_STACK_USAGE) writes each object's frame sizes to a
 * .su file beside it; this reads them all.
 *
 * argv[1]: the device objects, one path a line (x.cc.o; its x.cc.su is read)
 * argv[2]: the exceptions: "<source file> <function>  # reason" a line, where
 *          <function> is a substring of the .su name. The list may only
 *          shrink: an entry whose function no longer needs it fails too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LIMIT 4096
#define MAX_EXCEPTIONS 32

struct Frame {
  char* where; /* "file:line:col:function" as GCC wrote it */
  long bytes;
  int dynamic_unbounded;
};

struct Exception {
  char file[256];
  char function[512];
  int used;
};

static const char* g_objects_path;
static const char* g_exceptions_path;
static struct Frame* g_frames;
static size_t g_num_frames, g_cap_frames;
static size_t g_num_objects, g_missing_su;
static char g_first_missing[1024];
static struct Exception g_exceptions[MAX_EXCEPTIONS];
static int g_num_exceptions;

static void add_frame(const char* where, long bytes, int unbounded) {
  if (g_num_frames == g_cap_frames) {
    g_cap_frames = g_cap_frames ? 2 * g_cap_frames : 4096;
    g_frames = realloc(g_frames, g_cap_frames * sizeof *g_frames);
    assert_non_null(g_frames);
  }
  g_frames[g_num_frames].where = strdup(where);
  g_frames[g_num_frames].bytes = bytes;
  g_frames[g_num_frames].dynamic_unbounded = unbounded;
  ++g_num_frames;
}

static void read_su(const char* object) {
  char su[1024];
  size_t n = strlen(object);
  if (n < 2 || n + 2 >= sizeof su || strcmp(object + n - 2, ".o") != 0) return;
  memcpy(su, object, n - 2);
  strcpy(su + n - 2, ".su");
  ++g_num_objects;
  FILE* f = fopen(su, "r");
  if (!f) {
    if (!g_missing_su++) snprintf(g_first_missing, sizeof g_first_missing, "%s", su);
    return;
  }
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    /* file:line:col:function TAB bytes TAB static|dynamic|dynamic,bounded */
    char* tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = '\0';
    char* kind = NULL;
    long bytes = strtol(tab + 1, &kind, 10);
    int unbounded = kind && strstr(kind, "dynamic") && !strstr(kind, "bounded");
    add_frame(line, bytes, unbounded);
  }
  fclose(f);
}

static int setup(void** state) {
  (void)state;
  FILE* f = fopen(g_objects_path, "r");
  if (!f) fail_msg("cannot open %s", g_objects_path);
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0]) read_su(line);
  }
  fclose(f);
  f = fopen(g_exceptions_path, "r");
  if (!f) fail_msg("cannot open %s", g_exceptions_path);
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char* hash = strchr(line, '#');
    if (hash) *hash = '\0';
    struct Exception e = {{0}, {0}, 0};
    if (sscanf(line, "%255s %511s", e.file, e.function) != 2) continue;
    if (g_num_exceptions == MAX_EXCEPTIONS) fail_msg("more than %d exceptions", MAX_EXCEPTIONS);
    g_exceptions[g_num_exceptions++] = e;
  }
  fclose(f);
  return 0;
}

/* The exception covering frame `where`, or NULL. */
static struct Exception* exception_for(const char* where) {
  for (int i = 0; i < g_num_exceptions; ++i) {
    struct Exception* e = &g_exceptions[i];
    const char* file_end = strchr(where, ':');
    if (!file_end) continue;
    size_t fl = strlen(e->file);
    /* the .su names the source by path: match its last component(s) */
    if ((size_t)(file_end - where) < fl || memcmp(file_end - fl, e->file, fl) != 0) continue;
    if (file_end - where > (ptrdiff_t)fl && file_end[-(ptrdiff_t)fl - 1] != '/') continue;
    if (strstr(file_end, e->function)) return e;
  }
  return NULL;
}

static void every_device_object_reports_its_frames(void** state) {
  (void)state;
  /* The runtime has about a hundred objects and some 800 functions: a
   * build without -fstack-usage would leave nothing to check. */
  assert_true(g_num_objects >= 50);
  if (g_missing_su)
    fail_msg("%zu of %zu objects have no .su file (first: %s); build with EPCTX_STACK_USAGE=ON",
             g_missing_su, g_num_objects, g_first_missing);
  assert_true(g_num_frames >= 500);
}

static void no_device_function_uses_more_than_4_kib_of_stack(void** state) {
  (void)state;
  int bad = 0;
  for (size_t i = 0; i < g_num_frames; ++i) {
    const struct Frame* fr = &g_frames[i];
    if (fr->bytes <= LIMIT && !fr->dynamic_unbounded) continue;
    struct Exception* e = exception_for(fr->where);
    if (e) {
      e->used = 1;
      continue;
    }
    print_error("%s: %ld bytes of stack%s (limit %d)\n", fr->where, fr->bytes,
                fr->dynamic_unbounded ? ", plus an unbounded dynamic part" : "", LIMIT);
    ++bad;
  }
  if (bad)
    fail_msg("%d functions over the stack limit (shrink their frames; see the .su files)", bad);
}

static void every_exception_is_still_needed(void** state) {
  (void)state;
  int stale = 0;
  for (int i = 0; i < g_num_exceptions; ++i) {
    const struct Exception* e = &g_exceptions[i];
    int over = 0;
    for (size_t k = 0; k < g_num_frames && !over; ++k)
      over = (g_frames[k].bytes > LIMIT || g_frames[k].dynamic_unbounded) &&
             exception_for(g_frames[k].where) == e;
    if (!over) {
      print_error("exception '%s %s' covers no function over %d bytes: remove it\n", e->file,
                  e->function, LIMIT);
      ++stale;
    }
  }
  assert_int_equal(stale, 0);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <objects.txt> <exceptions.txt>\n", argv[0]);
    return 2;
  }
  g_objects_path = argv[1];
  g_exceptions_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_device_object_reports_its_frames),
      cmocka_unit_test(no_device_function_uses_more_than_4_kib_of_stack),
      cmocka_unit_test(every_exception_is_still_needed),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
