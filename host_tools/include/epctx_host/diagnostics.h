/* SPDX-License-Identifier: Apache-2.0 */
// Errors and progress output of epctx-compile.
//
// Every stage throws ToolError naming the file it was working on and an
// epctx_code (<epctx/status.h>: INVALID_ARGUMENT, NO_SUCHFILE, INVALID_GRAPH,
// ...); the library API returns both, main() prints the single line
// "epctx-compile: error: <file>: <what>".
// Progress owns nothing: it writes verbose stage notes to a stream the caller
// keeps alive (stderr in the tool, nullptr to stay silent).
#ifndef EPCTX_HOST_DIAGNOSTICS_H
#define EPCTX_HOST_DIAGNOSTICS_H

#include <ostream>
#include <stdexcept>
#include <string>

#include <epctx/status.h>

namespace epctx {
namespace host {

class ToolError : public std::runtime_error {
 public:
  ToolError(std::string file, const std::string& what, int code = EPCTX_FAIL)
      : std::runtime_error(what), file_(std::move(file)), code_(code) {}
  const std::string& file() const { return file_; }
  int code() const { return code_; }

 private:
  std::string file_;
  int code_;
};

// A library's multi-line message (the onnx checker puts the node on lines of
// its own) as one line: every line kept, joined by a space, blanks dropped.
inline std::string OneLine(const std::string& s) {
  std::string out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    size_t a = start, b = end;
    while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
    if (b > a) out += (out.empty() ? "" : " ") + s.substr(a, b - a);
    start = end + 1;
  }
  return out;
}

class Progress {
 public:
  explicit Progress(std::ostream* out = nullptr) : out_(out) {}
  void operator()(const std::string& line) const {
    if (out_) *out_ << "epctx-compile: " << line << "\n";
  }
  bool enabled() const { return out_ != nullptr; }

 private:
  std::ostream* out_;
};

}  // namespace host
}  // namespace epctx

#endif
