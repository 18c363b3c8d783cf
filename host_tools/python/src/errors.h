// SPDX-License-Identifier: Apache-2.0
// Failures of the C API become Python exceptions carrying the epctx code:
// the binding throws StatusError (C++), and the translator registered by
// RegisterErrorTranslator raises epctx.EpctxError, or its subclass named
// for the code (epctx.InvalidArgument, ...: epctx/errors.py), with .code,
// .code_name, .cause and the runtime's message.
#ifndef EPCTX_PYTHON_ERRORS_H
#define EPCTX_PYTHON_ERRORS_H

#include <stdexcept>
#include <string>

#include <epctx/epctx.h>

namespace epctx {
namespace py_binding {

class StatusError : public std::runtime_error {
 public:
  StatusError(int code, int cause, const std::string& message)
      : std::runtime_error(message), code_(code), cause_(cause) {}
  int code() const { return code_; }
  int cause() const { return cause_; }

 private:
  int code_;
  int cause_;
};

// Takes ownership of status (releases it) and throws when it is an error.
void Check(epctx_status* status);
// An error the binding finds itself (no C API status behind it).
[[noreturn]] void Throw(int code, const std::string& message);
// Installs the StatusError -> epctx.EpctxError translation (module init).
void RegisterErrorTranslator();

}  // namespace py_binding
}  // namespace epctx

#endif
