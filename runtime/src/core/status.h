/* SPDX-License-Identifier: Apache-2.0 */
// Status: the one error channel of the device code (no exceptions).
//
// A Status is a code plus an inline, fixed-size message, so reporting an
// error never allocates and never fails. Messages name the file, node,
// attribute or field concerned and what was expected vs found; when a
// message is too long it is cut, never dropped.
#ifndef EPCTX_CORE_STATUS_H
#define EPCTX_CORE_STATUS_H

#include <cstdarg>
#include <cstddef>

#include <epctx/status.h>

namespace epctx {

// printf-like into buf (always NUL-terminated when cap > 0). Supports
// %s %d %i %u %ld %lu %lld %llu %zu %x %llx %c %% and "%.*s"; no floats
// except %g-lite via %f (6 significant digits). Returns the length written.
size_t format(char* buf, size_t cap, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
size_t vformat(char* buf, size_t cap, const char* fmt, va_list ap);

class [[nodiscard]] Status {
 public:
  static constexpr size_t kMaxMessage = 384;

  Status() : code_(EPCTX_OK) { msg_[0] = '\0'; }
  static Status Ok() { return Status(); }
  static Status Error(int code, const char* fmt, ...)
      __attribute__((format(printf, 2, 3)));

  bool ok() const { return code_ == EPCTX_OK; }
  int code() const { return code_; }
  // The detailed code behind code(): when a failure was reported under a
  // broader code (a load failure as INVALID_GRAPH), the code it had before,
  // e.g. INCOMPATIBLE_SDK or NO_SUCHFILE; otherwise code().
  int cause() const { return cause_ ? cause_ : code_; }
  const char* message() const { return msg_; }

  // Puts context in front of the message: "<prefix>: <old message>".
  Status& Prefix(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  // Whether the message has room for more context in front. Errors from deep
  // subgraphs gather a prefix per level; once the message is long, outer
  // levels add none, so the cause and the innermost names survive the cut.
  bool HasRoom() const;
  // Changes the code, keeping the message (e.g. to report a load failure as
  // INVALID_GRAPH while the message keeps the cause). The first code it
  // replaces is kept as cause().
  Status& WithCode(int code) {
    if (code != code_ && cause_ == 0) cause_ = code_;
    code_ = code;
    return *this;
  }

 private:
  int code_;
  int cause_ = 0;  // 0: none, cause() is code()
  char msg_[kMaxMessage];
};

}  // namespace epctx

// Returns the status of `expr` from the enclosing function when it failed.
#define EPCTX_RETURN_IF_ERROR(expr)            \
  do {                                         \
    ::epctx::Status epctx_st_ = (expr);        \
    if (!epctx_st_.ok()) return epctx_st_;     \
  } while (0)

#endif
