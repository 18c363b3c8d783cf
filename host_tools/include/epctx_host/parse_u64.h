/* SPDX-License-Identifier: Apache-2.0 */
// Command-line number parsing shared by epctx-compile and epctx-sign.
#ifndef EPCTX_HOST_PARSE_U64_H
#define EPCTX_HOST_PARSE_U64_H

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace epctx {
namespace host {

// True when `text` is decimal digits only (no sign, no spaces) and fits in
// 64 bits; the value goes to *out.
inline bool ParseU64(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  unsigned long long n = std::strtoull(text.c_str(), nullptr, 10);
  if (errno) return false;
  *out = n;
  return true;
}

}  // namespace host
}  // namespace epctx

#endif
