/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* getopt_long */
#include "cli_args.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <epctx/epctx.h>

static const epctx_cli_option kCommon[] = {
    {EPCTX_CLI_HELP, "help", 'h', NULL, "print this help and exit"},
    {EPCTX_CLI_VERSION, "version", 0, NULL, "print the version and exit"},
    {EPCTX_CLI_JSON, "json", 0, NULL, NULL /* the tool's json_help */},
    {EPCTX_CLI_CONFIG, NULL, 'C', "key=value",
     "session config entry (repeatable; ORT's \"key|value key2|value2\" too;\n"
     "<epctx/session_config_keys.h> lists the keys)"},
    {0, NULL, 0, NULL, NULL}};

/* getopt_long returns a long option's val: kept apart from short chars. */
enum { kLongBase = 0x10000 };

_Static_assert(sizeof(struct epctx_cli_longopt) == sizeof(struct option) &&
                   offsetof(struct epctx_cli_longopt, val) == offsetof(struct option, val),
               "epctx_cli_parser mirrors struct option");

/* The tool's options then the common ones, as one sequence. */
static const epctx_cli_option* nth(const epctx_cli_tool* t, int i) {
  int n = 0;
  while (t->options && t->options[n].id) ++n;
  if (i < n) return &t->options[i];
  i -= n;
  return kCommon[i].id ? &kCommon[i] : NULL;
}

void epctx_cli_init(epctx_cli_parser* p, const epctx_cli_tool* tool, int argc, char** argv) {
  memset(p, 0, sizeof *p);
  p->tool = tool;
  p->argc = argc;
  p->argv = argv;
  size_t s = 0, l = 0;
  /* ':' first: a missing value is reported as ':' rather than '?'. */
  p->shortopts[s++] = ':';
  for (int i = 0; nth(tool, i) && l < EPCTX_CLI_MAX_OPTIONS; ++i) {
    const epctx_cli_option* o = nth(tool, i);
    if (o->short_name) {
      p->shortopts[s++] = o->short_name;
      if (o->arg) p->shortopts[s++] = ':';
    }
    if (o->long_name) {
      p->longopts[l].name = o->long_name;
      p->longopts[l].has_arg = o->arg ? required_argument : no_argument;
      p->longopts[l].val = kLongBase + o->id;
      ++l;
    }
  }
  p->shortopts[s] = '\0';
  optind = 0; /* glibc: 0 also resets its internal state */
  opterr = 0;
}

static int id_of_short(const epctx_cli_tool* t, int c) {
  for (int i = 0; nth(t, i); ++i)
    if (nth(t, i)->short_name == c) return nth(t, i)->id;
  return -1;
}

int epctx_cli_next(epctx_cli_parser* p, const char** value) {
  *value = NULL;
  if (p->done) return 0;
  int c = getopt_long(p->argc, p->argv, p->shortopts, (const struct option*)p->longopts, NULL);
  if (c == -1) {
    p->done = 1;
    p->operands = p->argv + optind;
    p->num_operands = p->argc - optind;
    return 0;
  }
  /* The offending word: getopt has just stepped past it (argv may have been
   * permuted, so no index from before the call holds). */
  const char* arg = p->argv[optind > 0 && optind <= p->argc ? optind - 1 : 0];
  if (c == '?') {
    if (optopt >= kLongBase) {
      /* glibc: a long flag given a value ("--quiet=1") */
      size_t n = strcspn(arg, "=");
      epctx_cli_usage_error(p->tool, "option '%.*s' takes no value", (int)n, arg);
    } else if (optopt && optopt < 256)
      epctx_cli_usage_error(p->tool, "unknown option '-%c'", optopt);
    else epctx_cli_usage_error(p->tool, "unknown option '%s'", arg);
    return -1;
  }
  if (c == ':') {
    epctx_cli_usage_error(p->tool, "option '%s' needs a value", arg);
    return -1;
  }
  *value = optarg;
  return c >= kLongBase ? c - kLongBase : id_of_short(p->tool, c);
}

static void print_option(const epctx_cli_option* o, const char* help, FILE* to) {
  char head[96];
  if (o->short_name && o->long_name)
    snprintf(head, sizeof head, "-%c, --%s%s%s", o->short_name, o->long_name, o->arg ? " " : "",
             o->arg ? o->arg : "");
  else if (o->long_name)
    snprintf(head, sizeof head, "--%s%s%s", o->long_name, o->arg ? " " : "", o->arg ? o->arg : "");
  else snprintf(head, sizeof head, "-%c %s", o->short_name, o->arg ? o->arg : "");
  const int col = 26;
  int n = fprintf(to, "  %s", head);
  if (n >= col) {
    fputc('\n', to);
    n = 0;
  }
  fprintf(to, "%*s", col - n, "");
  for (const char* c = help; *c; ++c) {
    fputc(*c, to);
    if (*c == '\n') fprintf(to, "%*s", col, "");
  }
  fputc('\n', to);
}

void epctx_cli_help(const epctx_cli_tool* t, FILE* to) {
  const char* s = t->synopsis;
  fprintf(to, "usage: %s ", t->name);
  for (; *s; ++s) {
    fputc(*s, to);
    if (*s == '\n') fprintf(to, "       %s ", t->name);
  }
  fprintf(to, "\n%s\n", t->summary);
  for (int i = 0; nth(t, i); ++i) {
    const epctx_cli_option* o = nth(t, i);
    const char* help = o->id == EPCTX_CLI_JSON ? t->json_help : o->help;
    print_option(o, help ? help : "", to);
  }
  if (t->epilog) fprintf(to, "%s", t->epilog);
  fprintf(to, "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

void epctx_cli_version(const epctx_cli_tool* t, FILE* to) {
  fprintf(to, "%s (epctx) %s, C API %d, HAL ABI %u\n", t->name, epctx_version(),
          epctx_api_version(), epctx_hal_abi_version());
}

int epctx_cli_usage_error(const epctx_cli_tool* t, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s: error: %s (see --help)\n", t->name, msg);
  return EPCTX_CLI_EXIT_USAGE;
}

int epctx_cli_split_config(char* text, epctx_cli_config_fn add, void* user, char* err,
                           size_t err_size) {
  const char* eq = strchr(text, '=');
  const char* bar = strchr(text, '|');
  if (eq && (!bar || eq < bar)) {
    if (eq == text) {
      snprintf(err, err_size, "-C '%s': expected key=value (empty key)", text);
      return -1;
    }
    text[eq - text] = '\0';
    return add(user, text, eq + 1, err, err_size) == 0 ? 0 : -1;
  }
  char* p = text;
  int any = 0;
  while (*p) {
    while (*p == ' ') ++p;
    if (!*p) break;
    char* end = p;
    while (*end && *end != ' ') ++end;
    char saved = *end;
    *end = '\0';
    char* sep = strchr(p, '|');
    if (!sep || sep == p) {
      snprintf(err, err_size, "-C '%s': expected key=value or \"key|value ...\"", p);
      return -1;
    }
    *sep = '\0';
    if (add(user, p, sep + 1, err, err_size) != 0) return -1;
    any = 1;
    p = saved ? end + 1 : end;
  }
  if (!any) {
    snprintf(err, err_size, "-C '': expected key=value");
    return -1;
  }
  return 0;
}

int epctx_cli_add_entry(void* entries, const char* key, const char* value, char* err,
                        size_t err_size) {
  epctx_cli_entries* e = (epctx_cli_entries*)entries;
  if (e->count == EPCTX_CLI_MAX_ENTRIES) {
    snprintf(err, err_size, "more than %d -C entries", EPCTX_CLI_MAX_ENTRIES);
    return -1;
  }
  e->keys[e->count] = key;
  e->values[e->count++] = value;
  return 0;
}

long epctx_cli_long(const epctx_cli_tool* tool, const char* opt, const char* v, long lo, long hi) {
  char* end;
  errno = 0;
  const long n = strtol(v, &end, 10);
  if (errno || *end || end == v || n < lo || n > hi)
    exit(epctx_cli_usage_error(tool, "%s '%s': expected an integer from %ld to %ld", opt, v, lo,
                               hi));
  return n;
}

double epctx_cli_double(const epctx_cli_tool* tool, const char* opt, const char* v, double lo,
                        double hi) {
  char* end;
  errno = 0;
  const double d = strtod(v, &end);
  if (errno || *end || end == v || !(d >= lo && d <= hi))
    exit(epctx_cli_usage_error(tool, "%s '%s': expected a number from %g to %g", opt, v, lo, hi));
  return d;
}

const char* epctx_cli_one_operand(const epctx_cli_parser* p, const char* what) {
  if (p->num_operands == 0) exit(epctx_cli_usage_error(p->tool, "no %s given", what));
  if (p->num_operands > 1)
    exit(epctx_cli_usage_error(p->tool, "more than one %s given ('%s' and '%s')", what,
                               p->operands[0], p->operands[1]));
  return p->operands[0];
}
