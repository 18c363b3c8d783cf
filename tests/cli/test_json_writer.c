/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' one JSON writer (runtime/tools/json_writer.h): escaping that
 * keeps any string valid JSON, commas and nesting, numbers without a JSON
 * form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_writer.h"

typedef struct doc {
  char* text;
  size_t size;
  FILE* f;
  epctx_json j;
} doc;

static void doc_open(doc* d, int pretty) {
  d->f = open_memstream(&d->text, &d->size);
  assert_non_null(d->f);
  epctx_json_init(&d->j, d->f, pretty);
}

static const char* doc_close(doc* d) {
  fclose(d->f);
  return d->text;
}

static void strings_are_escaped(void** state) {
  (void)state;
  doc d;
  doc_open(&d, 0);
  epctx_json_begin_array(&d.j);
  epctx_json_string(&d.j, "a \"quoted\" path\\with\\backslashes");
  epctx_json_string(&d.j, "tab\tnew\nline\r\x01\x1f\x7f");
  epctx_json_string(&d.j, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* valid UTF-8 kept */
  epctx_json_string(&d.j, "bad \xff \xc3 \xed\xa0\x80 \xc0\xaf end");   /* invalid: U+FFFD */
  epctx_json_string_n(&d.j, "nul\0byte", 8);
  epctx_json_string(&d.j, NULL);
  epctx_json_end_array(&d.j);
  epctx_json_finish(&d.j);
  assert_string_equal(doc_close(&d),
                      "[\"a \\\"quoted\\\" path\\\\with\\\\backslashes\", "
                      "\"tab\\tnew\\nline\\r\\u0001\\u001f\\u007f\", "
                      "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\", "
                      "\"bad \\ufffd \\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd end\", "
                      "\"nul\\u0000byte\", null]\n");
  free(d.text);
}

static void objects_arrays_and_numbers(void** state) {
  (void)state;
  doc d;
  doc_open(&d, 0);
  epctx_json_begin_object(&d.j);
  epctx_json_key(&d.j, "k\"ey");
  epctx_json_int(&d.j, -5);
  epctx_json_key(&d.j, "u");
  epctx_json_uint(&d.j, UINT64_MAX);
  epctx_json_key(&d.j, "d");
  epctx_json_double(&d.j, 0.125);
  epctx_json_key(&d.j, "tenth");
  epctx_json_double(&d.j, 0.1);
  epctx_json_key(&d.j, "nan");
  epctx_json_double(&d.j, 0.0 / 0.0);
  epctx_json_key(&d.j, "empty");
  epctx_json_begin_array(&d.j);
  epctx_json_end_array(&d.j);
  epctx_json_key(&d.j, "nested");
  epctx_json_begin_array(&d.j);
  epctx_json_begin_object(&d.j);
  epctx_json_key(&d.j, "b");
  epctx_json_bool(&d.j, 1);
  epctx_json_end_object(&d.j);
  epctx_json_bool(&d.j, 0);
  epctx_json_end_array(&d.j);
  epctx_json_end_object(&d.j);
  epctx_json_finish(&d.j);
  assert_string_equal(doc_close(&d), "{\"k\\\"ey\": -5, \"u\": 18446744073709551615, \"d\": 0.125, "
                                     "\"tenth\": 0.1, \"nan\": null, \"empty\": [], "
                                     "\"nested\": [{\"b\": true}, false]}\n");
  free(d.text);
}

static void pretty_output_indents(void** state) {
  (void)state;
  doc d;
  doc_open(&d, 1);
  epctx_json_begin_object(&d.j);
  epctx_json_key(&d.j, "a");
  epctx_json_begin_array(&d.j);
  epctx_json_int(&d.j, 1);
  epctx_json_int(&d.j, 2);
  epctx_json_end_array(&d.j);
  epctx_json_key(&d.j, "b");
  epctx_json_null(&d.j);
  epctx_json_end_object(&d.j);
  epctx_json_finish(&d.j);
  assert_string_equal(doc_close(&d), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": null\n}\n");
  free(d.text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(strings_are_escaped),
      cmocka_unit_test(objects_arrays_and_numbers),
      cmocka_unit_test(pretty_output_indents),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
