/* SPDX-License-Identifier: Apache-2.0 */
/* The freestanding runtime library (core + vnpu, no PAL) may depend only on
 * the symbols in freestanding_allowlist.txt: mem*, the PAL, and the libm
 * functions its kernels call. Anything else (libstdc++, operator new,
 * exceptions, stdio, ...) would break bare-metal boards.
 *
 * argv[1]: `nm --format=posix -g` output of libepctx_freestanding.a
 * argv[2]: the allowlist (one symbol a line, '#' comments). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_SYMS 20000
static char* g_defined[MAX_SYMS];
static int g_num_defined;
static char* g_undefined[MAX_SYMS];
static int g_num_undefined;
static char* g_allowed[1000];
static int g_num_allowed;
static const char* g_nm_path;
static const char* g_allow_path;

static int contains(char** set, int n, const char* s) {
  for (int i = 0; i < n; ++i)
    if (strcmp(set[i], s) == 0) return 1;
  return 0;
}

static void load(void) {
  FILE* f = fopen(g_nm_path, "r");
  if (!f) fail_msg("cannot open %s", g_nm_path);
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    char name[2048], type[8];
    if (sscanf(line, "%2047s %7s", name, type) != 2) continue;
    if (name[strlen(name) - 1] == ':') continue; /* "lib.a[obj.o]:" header */
    if (type[0] == 'U') {
      if (g_num_undefined < MAX_SYMS && !contains(g_undefined, g_num_undefined, name))
        g_undefined[g_num_undefined++] = strdup(name);
    } else if (g_num_defined < MAX_SYMS) {
      g_defined[g_num_defined++] = strdup(name);
    }
  }
  fclose(f);
  f = fopen(g_allow_path, "r");
  if (!f) fail_msg("cannot open %s", g_allow_path);
  while (fgets(line, sizeof line, f) && g_num_allowed < 1000) {
    char name[512];
    if (line[0] == '#' || sscanf(line, "%511s", name) != 1) continue;
    g_allowed[g_num_allowed++] = strdup(name);
  }
  fclose(f);
}

/* In sanitizer builds (EPCTX_SANITIZED) the compiler itself calls into the
 * sanitizer runtime from every function; those hooks are no dependency of
 * the library's own. */
static int sanitizer_hook(const char* s) {
#ifdef EPCTX_SANITIZED
  static const char* const kPrefixes[] = {"__asan_", "__ubsan_", "__tsan_", "__sanitizer_"};
  for (size_t i = 0; i < sizeof kPrefixes / sizeof kPrefixes[0]; ++i)
    if (strncmp(s, kPrefixes[i], strlen(kPrefixes[i])) == 0) return 1;
#else
  (void)s;
#endif
  return 0;
}

static void undefined_symbols_are_only_allowlisted(void** state) {
  (void)state;
  load();
  assert_true(g_num_defined > 50); /* the library really was read */
  int bad = 0;
  for (int i = 0; i < g_num_undefined; ++i) {
    const char* s = g_undefined[i];
    if (contains(g_defined, g_num_defined, s) || contains(g_allowed, g_num_allowed, s) ||
        sanitizer_hook(s))
      continue;
    fprintf(stderr, "not allowed: %s\n", s);
    ++bad;
  }
  assert_int_equal(bad, 0);
}

static void the_pal_is_left_to_the_platform(void** state) {
  (void)state;
  /* The core calls the PAL but must not define it. */
  assert_true(contains(g_undefined, g_num_undefined, "epctx_pal_map_file"));
  assert_false(contains(g_defined, g_num_defined, "epctx_pal_map_file"));
  assert_true(contains(g_defined, g_num_defined, "epctx_session_create"));
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  g_nm_path = argv[1];
  g_allow_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(undefined_symbols_are_only_allowlisted),
      cmocka_unit_test(the_pal_is_left_to_the_platform),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
