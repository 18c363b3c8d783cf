/* SPDX-License-Identifier: Apache-2.0 */
// Small value types shared by the device code: byte and string views, and
// element-type helpers.
#ifndef EPCTX_CORE_TYPES_H
#define EPCTX_CORE_TYPES_H

#include <cstddef>
#include <cstdint>

#include <epctx/epctx.h>

namespace epctx {

// A view of bytes inside a mapping or buffer; never owns.
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// A view of characters (not NUL-terminated); never owns.
struct StrView {
  const char* data = nullptr;
  size_t size = 0;

  bool empty() const { return size == 0; }
  bool eq(const char* s) const {
    size_t i = 0;
    for (; i < size; ++i)
      if (s[i] == '\0' || s[i] != data[i]) return false;
    return s[i] == '\0';
  }
  bool eq(StrView o) const {
    return size == o.size && (size == 0 || __builtin_memcmp(data, o.data, size) == 0);
  }
  bool ieq(const char* s) const;  // ASCII case-insensitive
  // For "%.*s": printf wants an int precision.
  int len() const { return size > 0x7fffffff ? 0x7fffffff : static_cast<int>(size); }
};

// NUL-terminated string helpers, so the core needs no libc beyond mem*.
size_t cstr_len(const char* s);
bool cstr_eq(const char* a, const char* b);
// Last occurrence of c in s, or nullptr.
const char* cstr_rchr(const char* s, char c);

// Why `p` is not a plain relative path, or nullptr when it is one: not
// empty, not absolute, no NUL byte, no empty or ".." component. The one rule
// for names inside a package (context files, manifest entries); the PAL
// still enforces containment on the file system.
const char* relative_path_problem(StrView p);

// Little-endian loads from bytes of any alignment (file headers).
inline uint16_t load_le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t load_le64(const uint8_t* p) {
  return static_cast<uint64_t>(load_le32(p)) | static_cast<uint64_t>(load_le32(p + 4)) << 32;
}

// Bytes per element; 0 for STRING and unknown types.
size_t dtype_size(int32_t dtype);
// "float", "int64", ...; "unknown" for others.
const char* dtype_name(int32_t dtype);

constexpr int kMaxRank = EPCTX_MAX_RANK;

// Product of dims into *out; false on a negative dim or overflow.
bool shape_elements(const int64_t* dims, size_t rank, uint64_t* out);

// Kernels load BOOL elements as C++ bool, for which any byte but 0 and 1 is
// undefined behaviour: tensors from outside (initializers, caller inputs)
// are checked once where they enter. The index of the first other byte, or
// -1 when all are 0/1.
inline int64_t first_non_bool(const void* data, uint64_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (uint64_t i = 0; i < bytes; ++i)
    if (p[i] > 1) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace epctx

#endif
