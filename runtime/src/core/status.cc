// SPDX-License-Identifier: Apache-2.0
#include "core/status.h"

#include <atomic>
#include <cstdint>
#include <cstring>

namespace epctx {
namespace {

struct Out {
  char* buf;
  size_t cap;
  size_t len;
  void put(char c) {
    if (len + 1 < cap) buf[len] = c;
    ++len;
  }
  void puts(const char* s, size_t n) {
    for (size_t i = 0; i < n; ++i) put(s[i]);
  }
};

void put_unsigned(Out& o, unsigned long long v, unsigned base, int min_width, char pad) {
  char tmp[24];
  int n = 0;
  do {
    unsigned d = static_cast<unsigned>(v % base);
    tmp[n++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while (v != 0 && n < 24);
  for (int i = n; i < min_width; ++i) o.put(pad);
  while (n > 0) o.put(tmp[--n]);
}

void put_signed(Out& o, long long v, int min_width, char pad) {
  if (v < 0) {
    o.put('-');
    // Negate in unsigned arithmetic: -LLONG_MIN overflows in signed.
    put_unsigned(o, 0ull - static_cast<unsigned long long>(v), 10, min_width, pad);
  } else {
    put_unsigned(o, static_cast<unsigned long long>(v), 10, min_width, pad);
  }
}

void put_double(Out& o, double v) {
  if (v != v) {
    o.puts("nan", 3);
    return;
  }
  if (v < 0) {
    o.put('-');
    v = -v;
  }
  if (v > 1e18) {
    o.puts("inf", 3);
    return;
  }
  unsigned long long ip = static_cast<unsigned long long>(v);
  double frac = v - static_cast<double>(ip);
  put_unsigned(o, ip, 10, 1, '0');
  // frac >= 0: adding 0.5 and truncating rounds to nearest.
  // NOLINTNEXTLINE(bugprone-incorrect-roundings)
  unsigned long long fp = static_cast<unsigned long long>(frac * 1e6 + 0.5);
  if (fp >= 1000000ull) fp = 999999ull;
  o.put('.');
  put_unsigned(o, fp, 10, 6, '0');
}

}  // namespace

size_t vformat(char* buf, size_t cap, const char* fmt, va_list ap) {
  Out o{buf, cap, 0};
  for (const char* p = fmt; *p; ++p) {
    if (*p != '%') {
      o.put(*p);
      continue;
    }
    ++p;
    char pad = ' ';
    int width = 0;
    if (*p == '0') {
      pad = '0';
      ++p;
    }
    while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
    bool precision_star = false;
    if (p[0] == '.' && p[1] == '*') {
      precision_star = true;
      p += 2;
    }
    int longs = 0;
    bool size_t_arg = false;
    while (*p == 'l') {
      ++longs;
      ++p;
    }
    if (*p == 'z') {
      size_t_arg = true;
      ++p;
    }
    switch (*p) {
      case 's': {
        int n = precision_star ? va_arg(ap, int) : -1;
        const char* s = va_arg(ap, const char*);
        if (!s) s = "(null)";
        size_t len = 0;
        while ((n < 0 || static_cast<int>(len) < n) && s[len]) ++len;
        o.puts(s, len);
        break;
      }
      case 'd':
      case 'i': {
        long long v = size_t_arg   ? static_cast<long long>(va_arg(ap, size_t))
                      : longs >= 2 ? va_arg(ap, long long)
                      : longs == 1 ? va_arg(ap, long)
                                   : va_arg(ap, int);
        put_signed(o, v, width, pad);
        break;
      }
      case 'u':
      case 'x': {
        unsigned long long v = size_t_arg   ? va_arg(ap, size_t)
                               : longs >= 2 ? va_arg(ap, unsigned long long)
                               : longs == 1 ? va_arg(ap, unsigned long)
                                            : va_arg(ap, unsigned);
        put_unsigned(o, v, *p == 'x' ? 16 : 10, width, pad);
        break;
      }
      case 'f':
      case 'g': put_double(o, va_arg(ap, double)); break;
      case 'c': o.put(static_cast<char>(va_arg(ap, int))); break;
      case '%': o.put('%'); break;
      case '\0': --p; break;
      default:
        o.put('%');
        o.put(*p);
        break;
    }
  }
  if (cap > 0) buf[o.len < cap ? o.len : cap - 1] = '\0';
  return o.len < cap ? o.len : (cap ? cap - 1 : 0);
}

size_t format(char* buf, size_t cap, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t n = vformat(buf, cap, fmt, ap);
  va_end(ap);
  return n;
}

// The message pool. Slots are few because an error lives only while it is
// returned up the stack and copied into an epctx_status; a board may size it
// with -DEPCTX_STATUS_SLOTS=n. Taking a slot is a scan with one
// compare-exchange per free candidate: only failures pay for it.
#ifndef EPCTX_STATUS_SLOTS
#define EPCTX_STATUS_SLOTS 32
#endif

struct Status::Rep {
  std::atomic<uint32_t> refs{0};  // 0: free (32-bit: riscv64 has no byte atomics)
  char text[kMaxMessage];
};

namespace {

Status::Rep g_slots[EPCTX_STATUS_SLOTS];

}  // namespace

Status::Rep* Status::Take() {
  for (Rep& r : g_slots) {
    uint32_t expected = 0;
    if (r.refs.load(std::memory_order_relaxed) == 0 &&
        r.refs.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      r.text[0] = '\0';
      return &r;
    }
  }
  return nullptr;
}

// Copies are rare (moves carry errors up the stack), so they stay out of
// line: a Status costs its callers little code.
Status::Status(const Status& other) : code_(other.code_), cause_(other.cause_), rep_(other.rep_) {
  if (rep_) Share(rep_);
}

// Shares before it releases, so self-assignment keeps the slot's count.
// NOLINTNEXTLINE(bugprone-unhandled-self-assignment)
Status& Status::operator=(const Status& other) {
  if (other.rep_) Share(other.rep_);
  if (rep_) Release(rep_);
  code_ = other.code_;
  cause_ = other.cause_;
  rep_ = other.rep_;
  return *this;
}

Status& Status::operator=(Status&& other) noexcept {
  if (this != &other) {
    if (rep_) Release(rep_);
    code_ = other.code_;
    cause_ = other.cause_;
    rep_ = other.rep_;
    other.rep_ = nullptr;
  }
  return *this;
}

void Status::Share(Rep* rep) { rep->refs.fetch_add(1, std::memory_order_relaxed); }

void Status::Release(Rep* rep) { rep->refs.fetch_sub(1, std::memory_order_acq_rel); }

size_t Status::PoolSlots() { return EPCTX_STATUS_SLOTS; }

size_t Status::PoolSlotsInUse() {
  size_t n = 0;
  for (const Rep& r : g_slots) n += r.refs.load(std::memory_order_relaxed) != 0;
  return n;
}

const char* Status::message() const {
  if (rep_) return rep_->text;
  // No slot was left: the code's name is the message (static storage).
  return code_ == EPCTX_OK ? "" : epctx_code_name(code_);
}

Status Status::Error(int code, const char* fmt, ...) {
  Status s;
  s.code_ = code == EPCTX_OK ? EPCTX_FAIL : code;
  s.rep_ = Take();
  if (s.rep_) {
    va_list ap;
    va_start(ap, fmt);
    vformat(s.rep_->text, kMaxMessage, fmt, ap);
    va_end(ap);
  }
  return s;
}

bool Status::HasRoom() const {
  if (!rep_) return true;
  size_t n = 0;
  while (n < kMaxMessage / 2 && rep_->text[n] != '\0') ++n;
  return n < kMaxMessage / 2;
}

Status& Status::Prefix(const char* fmt, ...) {
  // The prefixed message goes to a fresh slot (copies may share the old
  // one); with no slot left the context is dropped and the cause kept.
  Rep* fresh = Take();
  if (!fresh) return *this;
  va_list ap;
  va_start(ap, fmt);
  size_t n = vformat(fresh->text, kMaxMessage, fmt, ap);
  va_end(ap);
  format(fresh->text + n, kMaxMessage - n, ": %s", message());
  if (rep_) Release(rep_);
  rep_ = fresh;
  return *this;
}

}  // namespace epctx

extern "C" const char* epctx_code_name(int code) {
  switch (code) {
    case EPCTX_OK: return "OK";
    case EPCTX_FAIL: return "FAIL";
    case EPCTX_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case EPCTX_NO_SUCHFILE: return "NO_SUCHFILE";
    case EPCTX_NO_MODEL: return "NO_MODEL";
    case EPCTX_ENGINE_ERROR: return "ENGINE_ERROR";
    case EPCTX_RUNTIME_EXCEPTION: return "RUNTIME_EXCEPTION";
    case EPCTX_INVALID_PROTOBUF: return "INVALID_PROTOBUF";
    case EPCTX_MODEL_LOADED: return "MODEL_LOADED";
    case EPCTX_NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case EPCTX_INVALID_GRAPH: return "INVALID_GRAPH";
    case EPCTX_EP_FAIL: return "EP_FAIL";
    case EPCTX_MODEL_LOAD_CANCELED: return "MODEL_LOAD_CANCELED";
    case EPCTX_MODEL_REQUIRES_COMPILATION: return "MODEL_REQUIRES_COMPILATION";
    case EPCTX_NOT_FOUND: return "NOT_FOUND";
    case EPCTX_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case EPCTX_PATH_REJECTED: return "PATH_REJECTED";
    case EPCTX_INVALID_CONTAINER: return "INVALID_CONTAINER";
    case EPCTX_INCOMPATIBLE_DRIVER: return "INCOMPATIBLE_DRIVER";
    case EPCTX_INCOMPATIBLE_SDK: return "INCOMPATIBLE_SDK";
    case EPCTX_INCOMPATIBLE_HARDWARE: return "INCOMPATIBLE_HARDWARE";
    case EPCTX_SIGNATURE_INVALID: return "SIGNATURE_INVALID";
    case EPCTX_KEY_REJECTED: return "KEY_REJECTED";
    case EPCTX_HASH_MISMATCH: return "HASH_MISMATCH";
    case EPCTX_ROLLBACK: return "ROLLBACK";
    case EPCTX_KEY_MISSING: return "KEY_MISSING";
    case EPCTX_DECRYPTION_FAILED: return "DECRYPTION_FAILED";
    case EPCTX_UNSUPPORTED_ALGORITHM: return "UNSUPPORTED_ALGORITHM";
    case EPCTX_RUN_TERMINATED: return "RUN_TERMINATED";
    case EPCTX_RUN_DEADLINE_EXCEEDED: return "RUN_DEADLINE_EXCEEDED";
    default: return "UNKNOWN";
  }
}
