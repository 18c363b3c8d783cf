/* SPDX-License-Identifier: Apache-2.0 */
/* runtime/tools/npy.{h,c}: every supported dtype round-trips, numpy's own
 * files read back, and each malformed header gets a clear refusal.
 *
 * usage: test_npy WORK_DIR [NUMPY_FILE] — NUMPY_FILE is an np.save output of
 * float32 shape (1, 3, 8, 8) (tests/models: conv_basic/input_0.npy). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npy.h"
#include "test_io.h"

static const char* g_work;
static const char* g_numpy_file;

static void round_trips_every_dtype(void** state) {
  (void)state;
  static const epctx_dtype types[] = {EPCTX_DTYPE_FLOAT,   EPCTX_DTYPE_DOUBLE, EPCTX_DTYPE_FLOAT16,
                                      EPCTX_DTYPE_INT8,    EPCTX_DTYPE_UINT8,  EPCTX_DTYPE_INT16,
                                      EPCTX_DTYPE_UINT16,  EPCTX_DTYPE_INT32,  EPCTX_DTYPE_UINT32,
                                      EPCTX_DTYPE_INT64,   EPCTX_DTYPE_UINT64, EPCTX_DTYPE_BOOL,
                                      EPCTX_DTYPE_BFLOAT16};
  const int64_t dims[3] = {2, 3, 5};
  unsigned char data[2 * 3 * 5 * 8];
  for (size_t i = 0; i < sizeof(data); ++i) data[i] = (unsigned char)(i * 7 + 1);
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
    char path[4096], err[256];
    size_t item = epctx_npy_item_size(types[t]);
    size_t bytes = 30 * item;
    if (types[t] == EPCTX_DTYPE_BOOL)
      for (size_t i = 0; i < bytes; ++i) data[i] &= 1;
    snprintf(path, sizeof(path), "%s/rt_%s.npy", g_work, epctx_npy_descr(types[t]));
    assert_int_equal(epctx_npy_write(path, types[t], dims, 3, data, bytes, err, sizeof(err)), 0);
    epctx_npy a;
    int rc = epctx_npy_read(path, &a, err, sizeof(err));
    if (rc) fail_msg("%s", err);
    assert_int_equal(a.dtype, types[t]);
    assert_int_equal(a.rank, 3);
    assert_int_equal(a.dims[0], 2);
    assert_int_equal(a.dims[1], 3);
    assert_int_equal(a.dims[2], 5);
    assert_int_equal(a.bytes, bytes);
    assert_memory_equal(a.data, data, bytes);
    epctx_npy_free(&a);
  }
}

static void round_trips_scalar_and_vector(void** state) {
  (void)state;
  char path[4096], err[256];
  float v = 2.5f;
  snprintf(path, sizeof(path), "%s/scalar.npy", g_work);
  assert_int_equal(epctx_npy_write(path, EPCTX_DTYPE_FLOAT, NULL, 0, &v, 4, err, sizeof(err)), 0);
  epctx_npy a;
  assert_int_equal(epctx_npy_read(path, &a, err, sizeof(err)), 0);
  assert_int_equal(a.rank, 0);
  assert_int_equal(a.bytes, 4);
  assert_true(*(float*)a.data == 2.5f);
  epctx_npy_free(&a);

  int64_t n = 4;
  int64_t vec[4] = {1, -2, 3, -4};
  snprintf(path, sizeof(path), "%s/vector.npy", g_work);
  assert_int_equal(epctx_npy_write(path, EPCTX_DTYPE_INT64, &n, 1, vec, 32, err, sizeof(err)), 0);
  size_t size;
  FILE* f = fopen(path, "rb");
  assert_non_null(f);
  char head[256] = {0};
  size = fread(head, 1, sizeof(head) - 1, f);
  fclose(f);
  /* numpy's own spelling of a 1-D shape; magic + header padded to a
   * multiple of 64 bytes and ended by a newline, then the data. */
  assert_non_null(strstr(head + 10, "'descr': '<i8', 'fortran_order': False, 'shape': (4,), }"));
  size_t data_off = 10 + ((size_t)(unsigned char)head[8] | ((size_t)(unsigned char)head[9] << 8));
  assert_int_equal(data_off % 64, 0);
  assert_int_equal(size, data_off + 32);
  assert_int_equal(head[data_off - 1], '\n');
  assert_int_equal(epctx_npy_read(path, &a, err, sizeof(err)), 0);
  assert_memory_equal(a.data, vec, 32);
  epctx_npy_free(&a);
}

static void reads_file_written_by_numpy(void** state) {
  (void)state;
  if (!g_numpy_file) fail_msg("no numpy-written file given on the command line");
  epctx_npy a;
  char err[256];
  int rc = epctx_npy_read(g_numpy_file, &a, err, sizeof(err));
  if (rc) fail_msg("%s", err);
  assert_int_equal(a.dtype, EPCTX_DTYPE_FLOAT);
  assert_int_equal(a.rank, 4);
  assert_int_equal(a.dims[0], 1);
  assert_int_equal(a.dims[1], 3);
  assert_int_equal(a.dims[2], 8);
  assert_int_equal(a.dims[3], 8);
  assert_int_equal(a.bytes, 1 * 3 * 8 * 8 * 4);
  epctx_npy_free(&a);
}

/* Builds a v1 (or v2) image: magic, version, header text, then data_len
 * bytes of zeros. */
static size_t make_image(unsigned char* buf, int major, const char* header, size_t data_len) {
  size_t n = strlen(header);
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  size_t off;
  if (major == 1) {
    buf[8] = (unsigned char)(n & 0xff);
    buf[9] = (unsigned char)(n >> 8);
    off = 10;
  } else {
    buf[8] = (unsigned char)(n & 0xff);
    buf[9] = (unsigned char)(n >> 8);
    buf[10] = buf[11] = 0;
    off = 12;
  }
  memcpy(buf + off, header, n);
  memset(buf + off + n, 0, data_len);
  return off + n + data_len;
}

static void expect_refusal(int major, const char* header, size_t data_len, const char* why) {
  unsigned char buf[1024];
  size_t size = make_image(buf, major, header, data_len);
  epctx_npy a;
  char err[512];
  int rc = epctx_npy_parse(buf, size, "case.npy", &a, err, sizeof(err));
  if (rc == 0) fail_msg("accepted header %s", header);
  assert_int_equal(rc, EPCTX_INVALID_ARGUMENT);
  if (!strstr(err, "case.npy") || !strstr(err, why))
    fail_msg("message '%s' lacks the file name or '%s'", err, why);
  assert_null(a.data);
}

static void reads_version_2_header_in_any_key_order(void** state) {
  (void)state;
  unsigned char buf[256];
  size_t size =
      make_image(buf, 2, "{'shape': (2, 2), 'fortran_order': False, 'descr': '<u2'}\n", 8);
  epctx_npy a;
  char err[256];
  assert_int_equal(epctx_npy_parse(buf, size, "v2.npy", &a, err, sizeof(err)), 0);
  assert_int_equal(a.dtype, EPCTX_DTYPE_UINT16);
  assert_int_equal(a.rank, 2);
  epctx_npy_free(&a);
}

/* bfloat16 travels as numpy 2-byte void (npy.h): written '|V2' as np.save
 * writes a 'V2' view, read back from '|V2' and '<V2' as bfloat16. */
static void carries_bfloat16_as_two_byte_void(void** state) {
  (void)state;
  char path[4096], err[256];
  const int64_t dims[1] = {2};
  const uint16_t bits[2] = {0x3f80, 0xc000}; /* 1.0, -2.0 */
  snprintf(path, sizeof(path), "%s/bf16.npy", g_work);
  assert_int_equal(epctx_npy_write(path, EPCTX_DTYPE_BFLOAT16, dims, 1, bits, 4, err, sizeof(err)),
                   0);
  char* text = (char*)tu_read_file(path, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text + 10, "{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }"));
  free(text);
  const char* headers[] = {"{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }",
                           "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }"};
  for (size_t i = 0; i < 2; ++i) {
    unsigned char buf[128];
    size_t size = make_image(buf, 1, headers[i], 4);
    epctx_npy a;
    assert_int_equal(epctx_npy_parse(buf, size, "bf16.npy", &a, err, sizeof(err)), 0);
    assert_int_equal(a.dtype, EPCTX_DTYPE_BFLOAT16);
    assert_int_equal(a.bytes, 4);
    assert_string_equal(epctx_npy_dtype_name(a.dtype), "bfloat16");
    epctx_npy_free(&a);
  }
}

static void refuses_malformed_files(void** state) {
  (void)state;
  const char* ok_tail = "'fortran_order': False, 'shape': (2,), }";
  char header[256];
  snprintf(header, sizeof(header), "{'descr': '>f4', %s", ok_tail);
  expect_refusal(1, header, 8, "big-endian");
  snprintf(header, sizeof(header), "{'descr': '<c8', %s", ok_tail);
  expect_refusal(1, header, 16, "'<c8' is not supported");
  snprintf(header, sizeof(header), "{'descr': '<f4', %s", ok_tail);
  expect_refusal(1, header, 7, "expected 8 bytes");
  expect_refusal(1, header, 9, "found 9");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, "Fortran");
  expect_refusal(1, "{'descr': '<f4', 'shape': (2,), }", 8, "lacks 'fortran_order'");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8,
                 "unknown key 'x'");
  expect_refusal(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8,
                 "structured");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4,
                 "rank above 8");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8,
                 "non-negative");
  expect_refusal(1,
                 "{'descr': '<f8', 'fortran_order': False, "
                 "'shape': (4294967296, 4294967296, 4294967296), }",
                 8, "too large");
  expect_refusal(4, header, 8, "version 4");
  expect_refusal(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", 12,
                 "no string tensors");
  expect_refusal(1, "{'descr': '|S3', 'fortran_order': False, 'shape': (1,), }", 3,
                 "no string tensors");
  expect_refusal(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", 8,
                 "no string tensors");

  unsigned char buf[64];
  epctx_npy a;
  char err[256];
  memcpy(buf, "\x93NUMPX\x01\x00\x00\x00", 10);
  assert_int_equal(epctx_npy_parse(buf, 10, "m.npy", &a, err, sizeof(err)), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "magic"));
  size_t size = make_image(buf, 1, "{}", 0);
  buf[8] = 0xff; /* header length past the end */
  assert_int_equal(epctx_npy_parse(buf, size, "h.npy", &a, err, sizeof(err)),
                   EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "runs past the end"));
}

static void missing_file_is_no_suchfile(void** state) {
  (void)state;
  epctx_npy a;
  char err[512], path[4096];
  snprintf(path, sizeof(path), "%s/absent.npy", g_work);
  assert_int_equal(epctx_npy_read(path, &a, err, sizeof(err)), EPCTX_NO_SUCHFILE);
  assert_non_null(strstr(err, "absent.npy"));
}

static void refuses_to_write_unsupported_dtype(void** state) {
  (void)state;
  char err[256], path[4096];
  int64_t dims[1] = {1};
  uint16_t v = 0;
  snprintf(path, sizeof(path), "%s/string.npy", g_work);
  assert_int_equal(epctx_npy_write(path, EPCTX_DTYPE_STRING, dims, 1, &v, 2, err, sizeof(err)),
                   EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "string"));
  assert_int_equal(epctx_npy_write(path, EPCTX_DTYPE_FLOAT, dims, 1, &v, 2, err, sizeof(err)),
                   EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "do not match"));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s WORK_DIR [NUMPY_FILE]\n", argv[0]);
    return 2;
  }
  g_work = argv[1];
  g_numpy_file = argc > 2 ? argv[2] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trips_every_dtype),
      cmocka_unit_test(round_trips_scalar_and_vector),
      cmocka_unit_test(reads_file_written_by_numpy),
      cmocka_unit_test(reads_version_2_header_in_any_key_order),
      cmocka_unit_test(carries_bfloat16_as_two_byte_void),
      cmocka_unit_test(refuses_malformed_files),
      cmocka_unit_test(missing_file_is_no_suchfile),
      cmocka_unit_test(refuses_to_write_unsupported_dtype),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
