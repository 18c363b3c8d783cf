/* SPDX-License-Identifier: Apache-2.0 */
/* The one command-line convention of every epctx tool (epctx-compile,
 * epctx-run, epctx-inspect, epctx-sign, epctx-bench):
 * - getopt_long syntax: `--opt value` and `--opt=value`, short `-o value`,
 *   options and operands in any order, `--` ends the options;
 * - every tool has -h/--help, --version, --json and -C (session config:
 *   `-C key=value`, or ORT's `-C "key|value key2|value2"`);
 * - exit status 0 success, 1 failure, 2 usage error (EPCTX_CLI_EXIT_*);
 * - one table per tool is the source of its parser and its help text, and
 *   tests/cli checks the README's usage against that help.
 * C11 + POSIX/GNU getopt_long, so device tools (built for Linux/Android
 * targets) and the host tools (C++) share it. */
#ifndef EPCTX_TOOLS_CLI_ARGS_H
#define EPCTX_TOOLS_CLI_ARGS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EPCTX_CLI_EXIT_OK 0
#define EPCTX_CLI_EXIT_FAILURE 1
#define EPCTX_CLI_EXIT_USAGE 2

/* Ids of the options every tool has (a tool's own ids are 1..999). */
enum {
  EPCTX_CLI_HELP = 1000,
  EPCTX_CLI_VERSION = 1001,
  EPCTX_CLI_JSON = 1002,
  EPCTX_CLI_CONFIG = 1003
};

typedef struct epctx_cli_option {
  int id;                /* 1..999; 0 ends the table */
  const char* long_name; /* without "--"; NULL: short only */
  char short_name;       /* 0: none */
  const char* arg;       /* value placeholder ("FILE"); NULL: a flag */
  const char* help;      /* '\n' starts a continuation line */
} epctx_cli_option;

typedef struct epctx_cli_tool {
  const char* name;     /* "epctx-run" */
  const char* synopsis; /* what follows the name on the usage line; '\n' separates forms */
  const char* summary;  /* one line: what the tool does */
  const epctx_cli_option* options;
  const char* epilog;    /* text after the options, or NULL */
  const char* json_help; /* what --json prints */
} epctx_cli_tool;

#define EPCTX_CLI_MAX_OPTIONS 48

typedef struct epctx_cli_parser {
  const epctx_cli_tool* tool;
  int argc;
  char** argv;
  int done;
  /* operands (non-options) once epctx_cli_next returned 0 */
  char** operands;
  int num_operands;
  /* getopt_long tables built from the tool's */
  char shortopts[3 * EPCTX_CLI_MAX_OPTIONS + 8];
  struct epctx_cli_longopt {
    const char* name;
    int has_arg;
    int* flag;
    int val;
  } longopts[EPCTX_CLI_MAX_OPTIONS + 8];
} epctx_cli_parser;

void epctx_cli_init(epctx_cli_parser* p, const epctx_cli_tool* tool, int argc, char** argv);
/* The next option: its id, *value its argument (NULL for a flag). 0 when
 * the options are done (operands in p->operands); -1 on a usage error,
 * already reported on stderr. --help and --version are returned like any
 * option: call epctx_cli_help / epctx_cli_version and exit 0. */
int epctx_cli_next(epctx_cli_parser* p, const char** value);

/* The help text generated from the tool's table. */
void epctx_cli_help(const epctx_cli_tool* tool, FILE* to);
/* "NAME (epctx) VERSION" */
void epctx_cli_version(const epctx_cli_tool* tool, FILE* to);
/* Reports "NAME: error: MESSAGE (see --help)" and returns EPCTX_CLI_EXIT_USAGE. */
int epctx_cli_usage_error(const epctx_cli_tool* tool, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* -C: calls add(user, key, value, err, err_size) per entry. `key=value` is
 * one entry whose value runs to the end (spaces allowed); otherwise ORT's
 * form, entries separated by spaces, each `key|value`. Modifies text in
 * place. Returns 0, or -1 with a message in err for an entry without a key
 * or separator, or when add returned non-zero (having written err). */
typedef int (*epctx_cli_config_fn)(void* user, const char* key, const char* value, char* err,
                                   size_t err_size);
int epctx_cli_split_config(char* text, epctx_cli_config_fn add, void* user, char* err,
                           size_t err_size);

/* The -C entries a device tool collects, in order (a `user` of
 * epctx_cli_split_config with epctx_cli_add_entry as its add). */
#define EPCTX_CLI_MAX_ENTRIES 64
typedef struct epctx_cli_entries {
  const char* keys[EPCTX_CLI_MAX_ENTRIES];
  const char* values[EPCTX_CLI_MAX_ENTRIES];
  size_t count;
} epctx_cli_entries;
/* Appends one entry; -1 with "more than 64 -C entries" in err when full. */
int epctx_cli_add_entry(void* entries, const char* key, const char* value, char* err,
                        size_t err_size);

/* Value checks that end the program with a usage error (exit 2, one line
 * "NAME: error: OPT 'V': expected ...") when the value is not one. */
long epctx_cli_long(const epctx_cli_tool* tool, const char* opt, const char* v, long lo, long hi);
double epctx_cli_double(const epctx_cli_tool* tool, const char* opt, const char* v, double lo,
                        double hi);
/* The one operand a tool takes once the options are done: exits 2 with
 * "no WHAT given" or "more than one WHAT given ('A' and 'B')". */
const char* epctx_cli_one_operand(const epctx_cli_parser* p, const char* what);

#ifdef __cplusplus
}
#endif
#endif
