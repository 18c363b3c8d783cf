/* SPDX-License-Identifier: Apache-2.0 */
// Status: the one error channel of the device code (no exceptions).
//
// A Status is a code plus a pointer to its message: OK carries nothing, so
// a Status is two words on the stack and returning success costs nothing.
// An error's message lives in a slot of a small fixed pool (reference
// counted, so copies share it); reporting an error still never allocates
// and never fails: when every slot is taken the error keeps its code and
// message() is the code's name. Messages name the file, node, attribute or
// field concerned and what was expected vs found; when a message is too
// long it is cut, never dropped.
#ifndef EPCTX_CORE_STATUS_H
#define EPCTX_CORE_STATUS_H

#include <cstdarg>
#include <cstddef>

#include <epctx/status.h>

namespace epctx {

// printf-like into buf (always NUL-terminated when cap > 0). Supports
// %s %d %i %u %ld %lu %lld %llu %zu %x %llx %c %% and "%.*s"; no floats
// except %g-lite via %f (6 significant digits). Returns the length written.
size_t format(char* buf, size_t cap, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
size_t vformat(char* buf, size_t cap, const char* fmt, va_list ap);

class [[nodiscard]] Status {
 public:
  static constexpr size_t kMaxMessage = 384;

  Status() = default;
  Status(const Status& other);
  Status(Status&& other) noexcept : code_(other.code_), cause_(other.cause_), rep_(other.rep_) {
    other.rep_ = nullptr;
  }
  Status& operator=(const Status& other);
  Status& operator=(Status&& other) noexcept;
  ~Status() {
    if (rep_) Release(rep_);
  }

  static Status Ok() { return Status(); }
  static Status Error(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  bool ok() const { return code_ == EPCTX_OK; }
  int code() const { return code_; }
  // The detailed code behind code(): when a failure was reported under a
  // broader code (a load failure as INVALID_GRAPH), the code it had before,
  // e.g. INCOMPATIBLE_SDK or NO_SUCHFILE; otherwise code().
  int cause() const { return cause_ ? cause_ : code_; }
  // "" for OK; for an error whose message found no slot, the code's name
  // (epctx_code_name). Valid while this Status (or a copy of it) lives.
  const char* message() const;

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

  // How many message slots the pool has and how many are taken now (tests,
  // diagnostics).
  static size_t PoolSlots();
  static size_t PoolSlotsInUse();

  // The pool's slot type (public so status.cc can define the pool).
  struct Rep;

 private:
  static Rep* Take();
  static void Share(Rep* rep);
  static void Release(Rep* rep);

  int code_ = EPCTX_OK;
  int cause_ = 0;  // 0: none, cause() is code()
  Rep* rep_ = nullptr;
};

}  // namespace epctx

// Returns the status of `expr` from the enclosing function when it failed.
#define EPCTX_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::epctx::Status epctx_st_ = (expr);    \
    if (!epctx_st_.ok()) return epctx_st_; \
  } while (0)

#endif
