/* SPDX-License-Identifier: Apache-2.0 */
#include "json_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void epctx_json_init(epctx_json* j, FILE* out, int pretty) {
  memset(j, 0, sizeof *j);
  j->out = out;
  j->pretty = pretty;
}

static void indent(epctx_json* j) {
  if (!j->pretty) return;
  fputc('\n', j->out);
  for (int i = 0; i < j->depth; ++i) fputs("  ", j->out);
}

/* Separator before a value or a key at the current level. */
static void before_item(epctx_json* j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth > 0) {
    /* Deeper than the table: those levels share its last slot. */
    unsigned char* n =
        &j->count[j->depth <= EPCTX_JSON_MAX_DEPTH ? j->depth - 1 : EPCTX_JSON_MAX_DEPTH - 1];
    if (*n) fputc(',', j->out);
    if (*n < 255) ++*n;
    if (j->pretty) indent(j);
    else if (*n > 1) fputc(' ', j->out);
  }
}

static void open_level(epctx_json* j, char c) {
  before_item(j);
  fputc(c, j->out);
  if (j->depth < EPCTX_JSON_MAX_DEPTH) j->count[j->depth] = 0;
  j->depth++;
}

static void close_level(epctx_json* j, char c) {
  if (j->depth == 0) return;
  const int had_items = j->depth <= EPCTX_JSON_MAX_DEPTH && j->count[j->depth - 1];
  j->depth--;
  if (had_items) indent(j);
  fputc(c, j->out);
}

void epctx_json_begin_object(epctx_json* j) { open_level(j, '{'); }
void epctx_json_end_object(epctx_json* j) { close_level(j, '}'); }
void epctx_json_begin_array(epctx_json* j) { open_level(j, '['); }
void epctx_json_end_array(epctx_json* j) { close_level(j, ']'); }

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char* s, size_t n) {
  unsigned c = s[0];
  size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (!len || len > n) return 0;
  for (size_t i = 1; i < len; ++i)
    if ((s[i] & 0xc0) != 0x80) return 0;
  /* overlong 3/4-byte forms, surrogates, above U+10FFFF */
  if (len == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))) return 0;
  if (len == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))) return 0;
  return len;
}

static void write_string(FILE* out, const char* str, size_t n) {
  const unsigned char* s = (const unsigned char*)str;
  fputc('"', out);
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc((int)c, out);
    } else if (c == '\n') {
      fputs("\\n", out);
    } else if (c == '\t') {
      fputs("\\t", out);
    } else if (c == '\r') {
      fputs("\\r", out);
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(out, "\\u%04x", c);
    } else if (c >= 0x80) {
      size_t len = utf8_len(s + i, n - i);
      if (len) {
        fwrite(s + i, 1, len, out);
        i += len;
        continue;
      }
      fputs("\\ufffd", out);
    } else {
      fputc((int)c, out);
    }
    ++i;
  }
  fputc('"', out);
}

void epctx_json_key(epctx_json* j, const char* key) {
  before_item(j);
  write_string(j->out, key, strlen(key));
  fputs(": ", j->out);
  j->after_key = 1;
}

void epctx_json_string(epctx_json* j, const char* s) {
  if (!s) {
    epctx_json_null(j);
    return;
  }
  epctx_json_string_n(j, s, strlen(s));
}

void epctx_json_string_n(epctx_json* j, const char* s, size_t n) {
  before_item(j);
  write_string(j->out, s, n);
}

void epctx_json_int(epctx_json* j, int64_t v) {
  before_item(j);
  fprintf(j->out, "%lld", (long long)v);
}

void epctx_json_uint(epctx_json* j, uint64_t v) {
  before_item(j);
  fprintf(j->out, "%llu", (unsigned long long)v);
}

void epctx_json_double(epctx_json* j, double v) {
  if (!isfinite(v)) {
    epctx_json_null(j);
    return;
  }
  before_item(j);
  /* The shortest of 15 or 17 digits that reads back as v. */
  char buf[32];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
  fputs(buf, j->out);
}

void epctx_json_bool(epctx_json* j, int v) {
  before_item(j);
  fputs(v ? "true" : "false", j->out);
}

void epctx_json_null(epctx_json* j) {
  before_item(j);
  fputs("null", j->out);
}

void epctx_json_finish(epctx_json* j) { fputc('\n', j->out); }
