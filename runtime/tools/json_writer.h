/* SPDX-License-Identifier: Apache-2.0 */
/* The one JSON writer of the epctx tools (--json): streaming, to a FILE,
 * with RFC 8259 string escaping (quotes, backslashes, control characters;
 * bytes >= 0x80 pass through, invalid UTF-8 becomes U+FFFD so the output
 * always parses). Commas and nesting are tracked here, so callers only say
 * what comes next. C11, shared by the device tools and the host tools. */
#ifndef EPCTX_TOOLS_JSON_WRITER_H
#define EPCTX_TOOLS_JSON_WRITER_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EPCTX_JSON_MAX_DEPTH 32

typedef struct epctx_json {
  FILE* out;
  int depth;
  int pretty;                                /* newlines and two-space indents */
  unsigned char count[EPCTX_JSON_MAX_DEPTH]; /* items written at each level (saturates) */
  int after_key;
} epctx_json;

void epctx_json_init(epctx_json* j, FILE* out, int pretty);
void epctx_json_begin_object(epctx_json* j);
void epctx_json_end_object(epctx_json* j);
void epctx_json_begin_array(epctx_json* j);
void epctx_json_end_array(epctx_json* j);
/* An object member's name; the next value call is its value. */
void epctx_json_key(epctx_json* j, const char* key);
void epctx_json_string(epctx_json* j, const char* s);
/* n bytes (NUL allowed, written as \u0000). */
void epctx_json_string_n(epctx_json* j, const char* s, size_t n);
void epctx_json_int(epctx_json* j, int64_t v);
void epctx_json_uint(epctx_json* j, uint64_t v);
/* NaN and infinities have no JSON form: written as null. */
void epctx_json_double(epctx_json* j, double v);
void epctx_json_bool(epctx_json* j, int v);
void epctx_json_null(epctx_json* j);
/* Ends the document with a newline. */
void epctx_json_finish(epctx_json* j);

#ifdef __cplusplus
}
#endif
#endif
