// SPDX-License-Identifier: Apache-2.0
#include "core/types.h"

namespace epctx {

bool StrView::ieq(const char* s) const {
  size_t i = 0;
  for (; i < size; ++i) {
    char a = data[i], b = s[i];
    if (b == '\0') return false;
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return s[i] == '\0';
}

size_t cstr_len(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

bool cstr_eq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

const char* cstr_rchr(const char* s, char c) {
  const char* last = nullptr;
  for (; *s; ++s)
    if (*s == c) last = s;
  return last;
}

const char* relative_path_problem(StrView p) {
  if (p.empty()) return "is empty";
  if (p.data[0] == '/') return "is absolute";
  size_t start = 0;
  for (size_t i = 0; i <= p.size; ++i) {
    if (i < p.size && p.data[i] == '\0') return "contains a NUL byte";
    if (i == p.size || p.data[i] == '/') {
      size_t n = i - start;
      if (n == 0) return "has an empty component";
      if (n == 2 && p.data[start] == '.' && p.data[start + 1] == '.') return "has a '..' component";
      start = i + 1;
    }
  }
  return nullptr;
}

size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case EPCTX_DTYPE_FLOAT:
    case EPCTX_DTYPE_INT32:
    case EPCTX_DTYPE_UINT32: return 4;
    case EPCTX_DTYPE_UINT8:
    case EPCTX_DTYPE_INT8:
    case EPCTX_DTYPE_BOOL: return 1;
    case EPCTX_DTYPE_UINT16:
    case EPCTX_DTYPE_INT16:
    case EPCTX_DTYPE_FLOAT16:
    case EPCTX_DTYPE_BFLOAT16: return 2;
    case EPCTX_DTYPE_INT64:
    case EPCTX_DTYPE_DOUBLE:
    case EPCTX_DTYPE_UINT64: return 8;
    default: return 0;
  }
}

const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case EPCTX_DTYPE_FLOAT: return "float";
    case EPCTX_DTYPE_UINT8: return "uint8";
    case EPCTX_DTYPE_INT8: return "int8";
    case EPCTX_DTYPE_UINT16: return "uint16";
    case EPCTX_DTYPE_INT16: return "int16";
    case EPCTX_DTYPE_INT32: return "int32";
    case EPCTX_DTYPE_INT64: return "int64";
    case EPCTX_DTYPE_STRING: return "string";
    case EPCTX_DTYPE_BOOL: return "bool";
    case EPCTX_DTYPE_FLOAT16: return "float16";
    case EPCTX_DTYPE_DOUBLE: return "double";
    case EPCTX_DTYPE_UINT32: return "uint32";
    case EPCTX_DTYPE_UINT64: return "uint64";
    case EPCTX_DTYPE_BFLOAT16: return "bfloat16";
    default: return "unknown";
  }
}

bool shape_elements(const int64_t* dims, size_t rank, uint64_t* out) {
  uint64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return false;
    uint64_t d = static_cast<uint64_t>(dims[i]);
    if (d != 0 && n > UINT64_MAX / d) return false;
    n *= d;
  }
  *out = n;
  return true;
}

}  // namespace epctx
