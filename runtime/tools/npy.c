/* SPDX-License-Identifier: Apache-2.0 */
/* .npy reader and writer. The header is a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
 * parsed here with a small tokenizer that accepts exactly the keys numpy
 * writes (in any order) and nothing else. File contents are untrusted: every
 * length is checked against the bytes left before it is used. */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

struct dtype_row {
  epctx_dtype dtype;
  const char* descr; /* without the byte-order character */
  size_t size;
  const char* name;
};

/* numpy has no bfloat16. Its tensors travel as 2-byte void ('|V2', what
 * np.save writes for a uint16 array viewed as 'V2', and what ml_dtypes'
 * bfloat16 arrays save as) holding the raw bits; a V2 array read here is
 * bfloat16. Read back in numpy: np.load(f).view('<u2') gives the bits. */

/* clang-format off */
static const struct dtype_row kTypes[] = {
    {EPCTX_DTYPE_FLOAT, "f4", 4, "float32"},
    {EPCTX_DTYPE_DOUBLE, "f8", 8, "float64"},
    {EPCTX_DTYPE_FLOAT16, "f2", 2, "float16"},
    {EPCTX_DTYPE_INT8, "i1", 1, "int8"},
    {EPCTX_DTYPE_UINT8, "u1", 1, "uint8"},
    {EPCTX_DTYPE_INT16, "i2", 2, "int16"},
    {EPCTX_DTYPE_UINT16, "u2", 2, "uint16"},
    {EPCTX_DTYPE_INT32, "i4", 4, "int32"},
    {EPCTX_DTYPE_UINT32, "u4", 4, "uint32"},
    {EPCTX_DTYPE_INT64, "i8", 8, "int64"},
    {EPCTX_DTYPE_UINT64, "u8", 8, "uint64"},
    {EPCTX_DTYPE_BOOL, "b1", 1, "bool"},
    {EPCTX_DTYPE_BFLOAT16, "V2", 2, "bfloat16"},
};
/* clang-format on */
#define NUM_TYPES (sizeof(kTypes) / sizeof(kTypes[0]))

static const struct dtype_row* find_type(epctx_dtype dtype) {
  for (size_t i = 0; i < NUM_TYPES; ++i)
    if (kTypes[i].dtype == dtype) return &kTypes[i];
  return NULL;
}

const char* epctx_npy_descr(epctx_dtype dtype) {
  const struct dtype_row* row = find_type(dtype);
  return row ? row->descr : NULL;
}

size_t epctx_npy_item_size(epctx_dtype dtype) {
  const struct dtype_row* row = find_type(dtype);
  return row ? row->size : 0;
}

const char* epctx_npy_dtype_name(epctx_dtype dtype) {
  const struct dtype_row* row = find_type(dtype);
  if (row) return row->name;
  if (dtype == EPCTX_DTYPE_STRING) return "string";
  return "unknown";
}

static int fail(char* err, size_t err_size, int code, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char* err, size_t err_size, int code, const char* fmt, ...) {
  if (err && err_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* ---- header dict tokenizer ---- */

struct cursor {
  const char* p;
  const char* end;
};

static void skip_space(struct cursor* c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) ++c->p;
}

static int eat(struct cursor* c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    ++c->p;
    return 1;
  }
  return 0;
}

/* A quoted Python string without escapes; out and len view its contents. */
static int read_quoted(struct cursor* c, const char** out, size_t* len) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
  char quote = *c->p++;
  const char* start = c->p;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\') return 0;
    ++c->p;
  }
  if (c->p >= c->end) return 0;
  *out = start;
  *len = (size_t)(c->p - start);
  ++c->p;
  return 1;
}

static int read_word(struct cursor* c, const char* word) {
  skip_space(c);
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
  c->p += n;
  return 1;
}

/* A non-negative decimal integer that fits int64 (Python may add an L). */
static int read_dim(struct cursor* c, int64_t* out) {
  skip_space(c);
  if (c->p >= c->end || *c->p < '0' || *c->p > '9') return 0;
  int64_t v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    int d = *c->p - '0';
    if (v > (INT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
    ++c->p;
  }
  if (c->p < c->end && *c->p == 'L') ++c->p;
  *out = v;
  return 1;
}

struct header {
  int have_descr, have_order, have_shape;
  const char* descr;
  size_t descr_len;
  int fortran;
  size_t rank;
  int64_t dims[EPCTX_MAX_RANK];
};

static int parse_shape(struct cursor* c, struct header* h, const char* name, char* err,
                       size_t err_size) {
  if (!eat(c, '('))
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: npy header 'shape' is not a tuple",
                name);
  h->rank = 0;
  if (eat(c, ')')) return 0;
  for (;;) {
    int64_t d;
    if (!read_dim(c, &d))
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                  "%s: npy header 'shape' holds something other than a "
                  "non-negative integer",
                  name);
    if (h->rank == EPCTX_MAX_RANK)
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: rank above %d is not supported", name,
                  EPCTX_MAX_RANK);
    h->dims[h->rank++] = d;
    int comma = eat(c, ',');
    if (eat(c, ')')) return 0;
    if (!comma)
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                  "%s: npy header 'shape' tuple is malformed", name);
  }
}

static int parse_header(const char* text, size_t len, const char* name, struct header* h, char* err,
                        size_t err_size) {
  struct cursor c = {text, text + len};
  memset(h, 0, sizeof(*h));
  if (!eat(&c, '{'))
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: npy header is not a dict", name);
  while (!eat(&c, '}')) {
    const char* key;
    size_t key_len;
    if (!read_quoted(&c, &key, &key_len) || !eat(&c, ':'))
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: npy header dict is malformed", name);
    if (key_len == 5 && memcmp(key, "descr", 5) == 0) {
      if (!read_quoted(&c, &h->descr, &h->descr_len))
        return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                    "%s: npy header 'descr' is not a simple type string "
                    "(structured dtypes are not supported)",
                    name);
      h->have_descr = 1;
    } else if (key_len == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (read_word(&c, "False")) {
        h->fortran = 0;
      } else if (read_word(&c, "True")) {
        h->fortran = 1;
      } else {
        return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                    "%s: npy header 'fortran_order' is not True/False", name);
      }
      h->have_order = 1;
    } else if (key_len == 5 && memcmp(key, "shape", 5) == 0) {
      int rc = parse_shape(&c, h, name, err, err_size);
      if (rc) return rc;
      h->have_shape = 1;
    } else {
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: npy header has unknown key '%.*s'",
                  name, (int)(key_len > 40 ? 40 : key_len), key);
    }
    if (!eat(&c, ',')) {
      if (!eat(&c, '}'))
        return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: npy header dict is malformed",
                    name);
      break;
    }
  }
  if (!h->have_descr || !h->have_order || !h->have_shape)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: npy header lacks '%s'", name,
                !h->have_descr ? "descr" : (!h->have_order ? "fortran_order" : "shape"));
  return 0;
}

static const struct dtype_row* type_of_descr(const char* d, size_t len) {
  if (len != 3) return NULL;
  /* '=' is native order, little-endian on every epctx target. */
  if (d[0] != '<' && d[0] != '|' && d[0] != '=') return NULL;
  for (size_t i = 0; i < NUM_TYPES; ++i)
    if (memcmp(d + 1, kTypes[i].descr, 2) == 0) return &kTypes[i];
  return NULL;
}

int epctx_npy_parse(const void* file, size_t size, const char* name, epctx_npy* out, char* err,
                    size_t err_size) {
  const unsigned char* b = (const unsigned char*)file;
  memset(out, 0, sizeof(*out));
  if (size < 10 || memcmp(b, kMagic, sizeof(kMagic)) != 0)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                "%s: not a .npy file (missing \\x93NUMPY magic)", name);
  unsigned major = b[6];
  size_t header_len, off;
  if (major == 1) {
    header_len = (size_t)b[8] | ((size_t)b[9] << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: npy header truncated", name);
    header_len = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) | ((size_t)b[11] << 24);
    off = 12;
  } else {
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                "%s: npy format version %u is not supported (expected 1, 2 "
                "or 3)",
                name, major);
  }
  if (header_len > size - off)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                "%s: npy header of %zu bytes runs past the end of the file "
                "(%zu bytes)",
                name, header_len, size);
  struct header h;
  int rc = parse_header((const char*)b + off, header_len, name, &h, err, err_size);
  if (rc) return rc;
  off += header_len;

  const struct dtype_row* type = type_of_descr(h.descr, h.descr_len);
  if (!type) {
    int big = h.descr_len > 0 && h.descr[0] == '>';
    char kind = h.descr_len > 1 ? h.descr[1] : '\0';
    if (kind == 'U' || kind == 'S' || kind == 'O')
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                  "%s: dtype '%.*s': string and object arrays are not "
                  "supported (epctx has no string tensors)",
                  name, (int)(h.descr_len > 20 ? 20 : h.descr_len), h.descr);
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                "%s: dtype '%.*s' is not supported%s (expected one of f2 f4 "
                "f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, little-endian, or V2 for "
                "bfloat16)",
                name, (int)(h.descr_len > 20 ? 20 : h.descr_len), h.descr,
                big ? " (big-endian)" : "");
  }
  /* A 1-D or scalar array is the same in both orders. */
  size_t non_unit = 0;
  for (size_t i = 0; i < h.rank; ++i) non_unit += h.dims[i] != 1;
  if (h.fortran && non_unit > 1)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                "%s: Fortran-order arrays are not supported (save with "
                "np.ascontiguousarray)",
                name);

  size_t count = 1;
  for (size_t i = 0; i < h.rank; ++i) {
    uint64_t d = (uint64_t)h.dims[i];
    if (d != 0 && count > SIZE_MAX / type->size / d)
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: shape is too large", name);
    count *= (size_t)d;
  }
  size_t bytes = count * type->size;
  size_t left = size - off;
  if (bytes != left)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                "%s: expected %zu bytes of %s data for the header's shape, "
                "found %zu",
                name, bytes, type->name, left);

  out->dtype = type->dtype;
  out->rank = h.rank;
  memcpy(out->dims, h.dims, sizeof(int64_t) * h.rank);
  out->bytes = bytes;
  if (bytes > 0) {
    out->data = malloc(bytes);
    if (!out->data)
      return fail(err, err_size, EPCTX_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", name, bytes);
    memcpy(out->data, b + off, bytes);
  }
  return 0;
}

int epctx_npy_read(const char* path, epctx_npy* out, char* err, size_t err_size) {
  memset(out, 0, sizeof(*out));
  FILE* f = fopen(path, "rb");
  if (!f)
    return fail(err, err_size, EPCTX_NO_SUCHFILE, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  int rc = 0;
  for (;;) {
    if (!buf) {
      rc = fail(err, err_size, EPCTX_OUT_OF_MEMORY, "%s: out of memory", path);
      break;
    }
    size += fread(buf + size, 1, cap - size, f);
    if (size < cap) break;
    if (cap > SIZE_MAX / 2) {
      rc = fail(err, err_size, EPCTX_OUT_OF_MEMORY, "%s: file too large", path);
      break;
    }
    unsigned char* grown = (unsigned char*)realloc(buf, cap * 2);
    if (!grown) free(buf);
    buf = grown;
    cap *= 2;
  }
  if (!rc && ferror(f))
    rc = fail(err, err_size, EPCTX_FAIL, "%s: read error: %s", path, strerror(errno));
  fclose(f);
  if (!rc) rc = epctx_npy_parse(buf, size, path, out, err, err_size);
  free(buf);
  return rc;
}

int epctx_npy_write(const char* path, epctx_dtype dtype, const int64_t* dims, size_t rank,
                    const void* data, size_t bytes, char* err, size_t err_size) {
  const struct dtype_row* type = find_type(dtype);
  if (!type)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: cannot write %s tensors as .npy", path,
                epctx_npy_dtype_name(dtype));
  if (rank > EPCTX_MAX_RANK)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: rank %zu above %d", path, rank,
                EPCTX_MAX_RANK);
  char dict[64 + EPCTX_MAX_RANK * 24];
  int n = snprintf(dict, sizeof(dict), "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                   type->size == 1 || type->descr[0] == 'V' ? '|' : '<', type->descr);
  uint64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return fail(err, err_size, EPCTX_INVALID_ARGUMENT, "%s: negative dimension %lld", path,
                  (long long)dims[i]);
    count *= (uint64_t)dims[i];
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%lld%s", (long long)dims[i],
                  rank == 1 ? "," : (i + 1 < rank ? ", " : ""));
  }
  n += snprintf(dict + n, sizeof(dict) - (size_t)n, "), }");
  if (count * type->size != bytes)
    return fail(err, err_size, EPCTX_INVALID_ARGUMENT,
                "%s: %zu data bytes do not match the shape (%llu expected)", path, bytes,
                (unsigned long long)(count * type->size));

  /* magic(6) + version(2) + len(2) + dict + padding + '\n', total a multiple
   * of 64 as numpy does. */
  size_t body = (size_t)n + 1;
  size_t total = (10 + body + 63) / 64 * 64;
  unsigned char head[10 + sizeof(dict) + 64];
  memcpy(head, kMagic, 6);
  head[6] = 1;
  head[7] = 0;
  size_t header_len = total - 10;
  head[8] = (unsigned char)(header_len & 0xff);
  head[9] = (unsigned char)(header_len >> 8);
  memcpy(head + 10, dict, (size_t)n);
  memset(head + 10 + n, ' ', header_len - (size_t)n - 1);
  head[total - 1] = '\n';

  FILE* f = fopen(path, "wb");
  if (!f) return fail(err, err_size, EPCTX_FAIL, "%s: cannot create: %s", path, strerror(errno));
  int ok = fwrite(head, 1, total, f) == total && (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  if (fclose(f) != 0) ok = 0;
  if (!ok) return fail(err, err_size, EPCTX_FAIL, "%s: write failed: %s", path, strerror(errno));
  return 0;
}

void epctx_npy_free(epctx_npy* array) {
  if (!array) return;
  free(array->data);
  array->data = NULL;
  array->bytes = 0;
}
