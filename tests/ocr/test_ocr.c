/* SPDX-License-Identifier: Apache-2.0 */
/* epctx-ocr end to end: PP-OCRv4's packages (tests/ocr/make_ocr_models.sh)
 * read the picture tests/ocr/render_text.py drew, the same pipeline on ONNX
 * Runtime reads the same, and bad inputs give one error line.
 *
 * usage: test_ocr EPCTX_OCR OCR_ORT ORT_LIB MODELS_CACHE WORK REC_WIDTHS
 *   WORK holds ocr/ (the packages), text.png and text.json (the truth). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "test_util.h"

static const char* g_ocr;
static const char* g_ort;
static const char* g_ort_lib;
static const char* g_cache;
static const char* g_work;
static const char* g_widths;

static char* path_of(const char* name) {
  static char buf[8][4096];
  static int next;
  char* p = buf[next++ % 8];
  snprintf(p, 4096, "%s/%s", g_work, name);
  return p;
}

static cJSON* read_json_file(const char* path) {
  size_t size = 0;
  unsigned char* text = tu_read_file(path, &size);
  if (!text) fail_msg("cannot read %s", path);
  cJSON* j = cJSON_ParseWithLength((const char*)text, size);
  free(text);
  if (!j) fail_msg("%s is not JSON", path);
  return j;
}

/* Runs a command that must succeed and print one JSON object. */
static cJSON* run_json(const char* const* argv) {
  tu_proc p;
  assert_int_equal(tu_run_timeout(argv, g_work, 300, &p), 0);
  if (!p.exited || p.exit_code != 0)
    fail_msg("%s exited %d: %s", argv[0], p.exit_code, p.err ? p.err : "");
  cJSON* j = cJSON_Parse(p.out);
  if (!j) fail_msg("%s printed no JSON: %s", argv[0], p.out);
  tu_proc_free(&p);
  return j;
}

static cJSON* run_epctx(void) {
  static cJSON* cached;
  if (!cached) {
    const char* argv[] = {g_ocr,
                          "--models",
                          path_of("ocr"),
                          "-o",
                          path_of("result.png"),
                          "--json",
                          path_of("text.png"),
                          NULL};
    cached = run_json(argv);
  }
  return cached;
}

/* Axis-aligned bounds of a [[x, y] x 4] box. */
static void bounds(const cJSON* box, double b[4]) {
  b[0] = b[1] = 1e9;
  b[2] = b[3] = -1e9;
  const cJSON* pt;
  cJSON_ArrayForEach(pt, box) {
    double x = cJSON_GetArrayItem(pt, 0)->valuedouble, y = cJSON_GetArrayItem(pt, 1)->valuedouble;
    b[0] = x < b[0] ? x : b[0];
    b[1] = y < b[1] ? y : b[1];
    b[2] = x > b[2] ? x : b[2];
    b[3] = y > b[3] ? y : b[3];
  }
}

static double iou(const double a[4], const double b[4]) {
  double w = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]);
  double h = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);
  if (w <= 0 || h <= 0) return 0;
  double inter = w * h, ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]);
  return inter / (ua - inter);
}

static void reads_every_rendered_line(void** state) {
  (void)state;
  cJSON* truth = read_json_file(path_of("text.json"));
  const cJSON* want = cJSON_GetObjectItem(truth, "lines");
  const cJSON* got = cJSON_GetObjectItem(run_epctx(), "lines");
  assert_int_equal(cJSON_GetArraySize(got), cJSON_GetArraySize(want));
  for (int i = 0; i < cJSON_GetArraySize(want); ++i) {
    const cJSON* w = cJSON_GetArrayItem(want, i);
    const cJSON* g = cJSON_GetArrayItem(got, i);
    assert_string_equal(cJSON_GetObjectItem(g, "text")->valuestring,
                        cJSON_GetObjectItem(w, "text")->valuestring);
    assert_int_equal(cJSON_GetObjectItem(g, "angle")->valueint,
                     cJSON_GetObjectItem(w, "angle")->valueint);
    assert_true(cJSON_GetObjectItem(g, "score")->valuedouble > 0.9);
  }
  cJSON_Delete(truth);
}

static void boxes_overlap_rendered_lines(void** state) {
  (void)state;
  cJSON* truth = read_json_file(path_of("text.json"));
  const cJSON* want = cJSON_GetObjectItem(truth, "lines");
  const cJSON* got = cJSON_GetObjectItem(run_epctx(), "lines");
  assert_int_equal(cJSON_GetArraySize(got), cJSON_GetArraySize(want));
  for (int i = 0; i < cJSON_GetArraySize(want); ++i) {
    const cJSON* wb = cJSON_GetObjectItem(cJSON_GetArrayItem(want, i), "box");
    double w[4] = {cJSON_GetArrayItem(wb, 0)->valuedouble, cJSON_GetArrayItem(wb, 1)->valuedouble,
                   cJSON_GetArrayItem(wb, 2)->valuedouble, cJSON_GetArrayItem(wb, 3)->valuedouble};
    double g[4];
    bounds(cJSON_GetObjectItem(cJSON_GetArrayItem(got, i), "box"), g);
    double overlap = iou(w, g);
    if (overlap < 0.6)
      fail_msg("line %d: box [%g %g %g %g] overlaps the rendered [%g %g %g %g] by IoU %.2f", i,
               g[0], g[1], g[2], g[3], w[0], w[1], w[2], w[3], overlap);
  }
  cJSON_Delete(truth);
}

static uint32_t be32(const unsigned char* p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void writes_boxes_beside_detection_map(void** state) {
  (void)state;
  cJSON* j = run_epctx();
  size_t size = 0;
  unsigned char* png = tu_read_file(path_of("result.png"), &size);
  assert_non_null(png);
  assert_true(size > 33);
  assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
  assert_memory_equal(png + 12, "IHDR", 4);
  assert_int_equal(be32(png + 16), 2 * cJSON_GetObjectItem(j, "width")->valueint);
  assert_int_equal(be32(png + 20), cJSON_GetObjectItem(j, "height")->valueint);
  free(png);
  const cJSON* t = cJSON_GetObjectItem(j, "timings_ms");
  const char* keys[] = {"det", "cls", "rec", "pre_post", "total"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k)
    assert_true(cJSON_GetObjectItem(t, keys[k])->valuedouble > 0);
  assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "session_create"), "rec"));
}

static void onnx_runtime_reads_the_same(void** state) {
  (void)state;
  char det[4096], cls[4096], rec[4096], keys[4096], widths[256];
  snprintf(det, sizeof det, "%s/ocr_det.onnx", g_cache);
  snprintf(cls, sizeof cls, "%s/ocr_cls.onnx", g_cache);
  snprintf(rec, sizeof rec, "%s/ocr_rec.onnx", g_cache);
  snprintf(keys, sizeof keys, "%s/ocr_keys.txt", g_cache);
  snprintf(widths, sizeof widths, "%s", g_widths);
  const char* argv[] = {g_ort,  g_ort_lib,           det, cls, rec, keys, "640", "640",
                        widths, path_of("text.png"), NULL};
  cJSON* ort = run_json(argv);
  const cJSON* want = cJSON_GetObjectItem(ort, "lines");
  const cJSON* got = cJSON_GetObjectItem(run_epctx(), "lines");
  assert_int_equal(cJSON_GetArraySize(got), cJSON_GetArraySize(want));
  for (int i = 0; i < cJSON_GetArraySize(want); ++i) {
    const cJSON* w = cJSON_GetArrayItem(want, i);
    const cJSON* g = cJSON_GetArrayItem(got, i);
    assert_string_equal(cJSON_GetObjectItem(g, "text")->valuestring,
                        cJSON_GetObjectItem(w, "text")->valuestring);
    double wb[4], gb[4];
    bounds(cJSON_GetObjectItem(w, "box"), wb);
    bounds(cJSON_GetObjectItem(g, "box"), gb);
    for (int k = 0; k < 4; ++k)
      if (gb[k] - wb[k] > 2 || wb[k] - gb[k] > 2)
        fail_msg("line %d: epctx's box edge %d at %g, ONNX Runtime's at %g", i, k, gb[k], wb[k]);
  }
  cJSON_Delete(ort);
}

/* A run that must fail with exit 1 and one line naming `needle`. */
static void expect_one_error_line(const char* const* argv, const char* needle) {
  tu_proc p;
  assert_int_equal(tu_run_timeout(argv, g_work, 120, &p), 0);
  assert_true(p.exited);
  assert_int_equal(p.exit_code, 1);
  assert_int_equal(tu_count_lines(p.err), 1);
  if (strncmp(p.err, "epctx-ocr: error: ", 18) || !strstr(p.err, needle))
    fail_msg("expected one 'epctx-ocr: error:' line naming '%s', got: %s", needle, p.err);
  assert_string_equal(p.out, "");
  tu_proc_free(&p);
}

static void broken_image_is_one_error_line(void** state) {
  (void)state;
  const char* bad = path_of("broken.png");
  static const char kBytes[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR garbage, not a picture";
  assert_int_equal(tu_write_file(bad, kBytes, sizeof kBytes - 1), 0);
  const char* argv[] = {g_ocr, "--models", path_of("ocr"), bad, NULL};
  expect_one_error_line(argv, "broken.png");
  const char* missing[] = {g_ocr, "--models", path_of("ocr"), path_of("no-such.png"), NULL};
  expect_one_error_line(missing, "no-such.png");
}

static void copy_file(const char* from_dir, const char* name, const char* to_dir,
                      const char* to_name) {
  char from[4096], to[4096];
  snprintf(from, sizeof from, "%s/%s", from_dir, name);
  snprintf(to, sizeof to, "%s/%s", to_dir, to_name);
  size_t size = 0;
  unsigned char* data = tu_read_file(from, &size);
  assert_non_null(data);
  assert_int_equal(tu_write_file(to, data, size), 0);
  free(data);
}

static void missing_model_is_one_error_line(void** state) {
  (void)state;
  const char* ocr = path_of("ocr");
  const char* dir = path_of("no-rec");
  assert_int_equal(tu_make_clean_dir(dir), 0);
  const char* files[] = {"det_ctx.onnx", "ocr_det_vnpu.bin", "cls_ctx.onnx", "ocr_cls_vnpu.bin",
                         "keys.txt"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i)
    copy_file(ocr, files[i], dir, files[i]);
  const char* argv[] = {g_ocr, "--models", dir, path_of("text.png"), NULL};
  expect_one_error_line(argv, "rec_ctx.onnx");
}

static void wrong_kind_of_model_is_one_error_line(void** state) {
  (void)state;
  const char* ocr = path_of("ocr");
  const char* dir = path_of("swapped");
  assert_int_equal(tu_make_clean_dir(dir), 0);
  /* The angle classifier where the detector should be. */
  copy_file(ocr, "cls_ctx.onnx", dir, "det_ctx.onnx");
  copy_file(ocr, "cls_ctx.onnx", dir, "cls_ctx.onnx");
  copy_file(ocr, "ocr_cls_vnpu.bin", dir, "ocr_cls_vnpu.bin");
  copy_file(ocr, "keys.txt", dir, "keys.txt");
  const char* argv[] = {g_ocr, "--models", dir, path_of("text.png"), NULL};
  expect_one_error_line(argv, "not the det model");
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: test_ocr EPCTX_OCR OCR_ORT ORT_LIB MODELS_CACHE WORK REC_WIDTHS\n");
    return 2;
  }
  g_ocr = argv[1];
  g_ort = argv[2];
  g_ort_lib = argv[3];
  g_cache = argv[4];
  g_work = argv[5];
  g_widths = argv[6];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reads_every_rendered_line),
      cmocka_unit_test(boxes_overlap_rendered_lines),
      cmocka_unit_test(writes_boxes_beside_detection_map),
      cmocka_unit_test(onnx_runtime_reads_the_same),
      cmocka_unit_test(broken_image_is_one_error_line),
      cmocka_unit_test(missing_model_is_one_error_line),
      cmocka_unit_test(wrong_kind_of_model_is_one_error_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
