/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' shared parser (runtime/tools/cli_args.h): both value forms,
 * operands anywhere, the common options, usage errors, -C in both forms and
 * the help text generated from the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_args.h"

enum { OPT_OUT = 1, OPT_REPEAT, OPT_QUIET };

static const epctx_cli_option kOptions[] = {
    {OPT_OUT, "output", 'o', "FILE", "where to write\nsecond line"},
    {OPT_REPEAT, "repeat", 0, "N", "how often"},
    {OPT_QUIET, "quiet", 'q', NULL, "say less"},
    {0, NULL, 0, NULL, NULL}};

static const epctx_cli_tool kTool = {"epctx-test", "[options] MODEL", "Tests the parser.",
                                     kOptions,     "Epilog line.\n",  "print JSON"};

typedef struct seen {
  const char* out;
  const char* repeat;
  int quiet, json, help, version, configs;
  char config[4][2][64];
} seen;

static int add(void* user, const char* key, const char* value, char* err, size_t n) {
  seen* s = (seen*)user;
  if (s->configs == 4) {
    snprintf(err, n, "too many");
    return -1;
  }
  snprintf(s->config[s->configs][0], 64, "%s", key);
  snprintf(s->config[s->configs][1], 64, "%s", value);
  s->configs++;
  return 0;
}

/* Parses argv (NULL-terminated); returns the last id (0 or -1). */
static int parse(char** argv, seen* s, epctx_cli_parser* p) {
  int argc = 0;
  while (argv[argc]) ++argc;
  memset(s, 0, sizeof *s);
  epctx_cli_init(p, &kTool, argc, argv);
  const char* v;
  int id;
  char err[128];
  while ((id = epctx_cli_next(p, &v)) > 0) {
    switch (id) {
      case OPT_OUT: s->out = v; break;
      case OPT_REPEAT: s->repeat = v; break;
      case OPT_QUIET: s->quiet = 1; break;
      case EPCTX_CLI_JSON: s->json = 1; break;
      case EPCTX_CLI_HELP: s->help = 1; break;
      case EPCTX_CLI_VERSION: s->version = 1; break;
      case EPCTX_CLI_CONFIG:
        if (epctx_cli_split_config((char*)v, add, s, err, sizeof err)) return -2;
        break;
      default: fail_msg("unexpected id %d", id);
    }
  }
  return id;
}

static void both_value_forms_and_operands_anywhere(void** state) {
  (void)state;
  char a0[] = "epctx-test", a1[] = "m.onnx", a2[] = "--output=o.onnx", a3[] = "--repeat",
       a4[] = "3", a5[] = "-q", a6[] = "--json", a7[] = "extra";
  char* argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, NULL};
  seen s;
  epctx_cli_parser p;
  assert_int_equal(parse(argv, &s, &p), 0);
  assert_string_equal(s.out, "o.onnx");
  assert_string_equal(s.repeat, "3");
  assert_true(s.quiet && s.json);
  assert_int_equal(p.num_operands, 2);
  assert_string_equal(p.operands[0], "m.onnx");
  assert_string_equal(p.operands[1], "extra");
  char b0[] = "epctx-test", b1[] = "-o", b2[] = "x", b3[] = "--", b4[] = "--not-an-option";
  char* argv2[] = {b0, b1, b2, b3, b4, NULL};
  assert_int_equal(parse(argv2, &s, &p), 0);
  assert_string_equal(s.out, "x");
  assert_int_equal(p.num_operands, 1);
  assert_string_equal(p.operands[0], "--not-an-option");
}

static void common_options_exist_in_every_tool(void** state) {
  (void)state;
  char a0[] = "t", a1[] = "-h", a2[] = "--version", a3[] = "-C", a4[] = "epctx.load_mode=read";
  char* argv[] = {a0, a1, a2, a3, a4, NULL};
  seen s;
  epctx_cli_parser p;
  assert_int_equal(parse(argv, &s, &p), 0);
  assert_true(s.help && s.version);
  assert_int_equal(s.configs, 1);
  assert_string_equal(s.config[0][0], "epctx.load_mode");
  assert_string_equal(s.config[0][1], "read");
}

static void config_takes_key_equals_value_and_ort_lists(void** state) {
  (void)state;
  seen s;
  memset(&s, 0, sizeof s);
  char err[128];
  char one[] = "ep.context_file_path=/a b/m_ctx.onnx"; /* value keeps its spaces and '|' */
  assert_int_equal(epctx_cli_split_config(one, add, &s, err, sizeof err), 0);
  assert_int_equal(s.configs, 1);
  assert_string_equal(s.config[0][1], "/a b/m_ctx.onnx");
  char list[] = "ep.context_embed_mode|1  ep.context_node_name_prefix|p_ ";
  assert_int_equal(epctx_cli_split_config(list, add, &s, err, sizeof err), 0);
  assert_int_equal(s.configs, 3);
  assert_string_equal(s.config[1][0], "ep.context_embed_mode");
  assert_string_equal(s.config[1][1], "1");
  assert_string_equal(s.config[2][0], "ep.context_node_name_prefix");
  assert_string_equal(s.config[2][1], "p_");
  char bad[] = "novalue";
  assert_int_equal(epctx_cli_split_config(bad, add, &s, err, sizeof err), -1);
  assert_string_equal(err, "-C 'novalue': expected key=value or \"key|value ...\"");
  char nokey[] = "=v";
  assert_int_equal(epctx_cli_split_config(nokey, add, &s, err, sizeof err), -1);
  assert_non_null(strstr(err, "empty key"));
  char fourth[] = "a=b", fifth[] = "c=d"; /* the callback's own error comes back */
  assert_int_equal(epctx_cli_split_config(fourth, add, &s, err, sizeof err), 0);
  assert_int_equal(epctx_cli_split_config(fifth, add, &s, err, sizeof err), -1);
  assert_string_equal(err, "too many");
}

static void unknown_option_and_missing_value_are_usage_errors(void** state) {
  (void)state;
  char a0[] = "t", a1[] = "m", a2[] = "--bogus";
  char* argv[] = {a0, a1, a2, NULL};
  seen s;
  epctx_cli_parser p;
  assert_int_equal(parse(argv, &s, &p), -1);
  char b0[] = "t", b1[] = "--repeat";
  char* argv2[] = {b0, b1, NULL};
  assert_int_equal(parse(argv2, &s, &p), -1);
  char c0[] = "t", c1[] = "-Z";
  char* argv3[] = {c0, c1, NULL};
  assert_int_equal(parse(argv3, &s, &p), -1);
  char d0[] = "t", d1[] = "--quiet=1"; /* a flag takes no value */
  char* argv4[] = {d0, d1, NULL};
  assert_int_equal(parse(argv4, &s, &p), -1); /* "option '--quiet' takes no value" */
  assert_int_equal(epctx_cli_usage_error(&kTool, "x"), EPCTX_CLI_EXIT_USAGE);
}

static void help_is_generated_from_the_table(void** state) {
  (void)state;
  char* text = NULL;
  size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  epctx_cli_help(&kTool, f);
  fclose(f);
  assert_non_null(strstr(text, "usage: epctx-test [options] MODEL\nTests the parser.\n"));
  assert_non_null(strstr(text, "  -o, --output FILE       where to write\n"
                               "                          second line\n"));
  assert_non_null(strstr(text, "  --repeat N              how often\n"));
  assert_non_null(strstr(text, "  --json                  print JSON\n"));
  assert_non_null(strstr(text, "  -C key=value"));
  assert_non_null(strstr(text, "  --version"));
  assert_non_null(
      strstr(text, "Epilog line.\nExit status: 0 success, 1 failure, 2 usage error.\n"));
  free(text);
  f = open_memstream(&text, &size);
  epctx_cli_version(&kTool, f);
  fclose(f);
  assert_non_null(strstr(text, "epctx-test (epctx) "));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(both_value_forms_and_operands_anywhere),
      cmocka_unit_test(common_options_exist_in_every_tool),
      cmocka_unit_test(config_takes_key_equals_value_and_ort_lists),
      cmocka_unit_test(unknown_option_and_missing_value_are_usage_errors),
      cmocka_unit_test(help_is_generated_from_the_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
