// SPDX-License-Identifier: Apache-2.0
#include "errors.h"

#include <pybind11/pybind11.h>

namespace epctx {
namespace py_binding {

namespace py = pybind11;

void Check(epctx_status* status) {
  if (!status) return;
  const int code = epctx_status_code(status);
  const int cause = epctx_status_cause(status);
  std::string message = epctx_status_message(status);
  epctx_status_release(status);
  throw StatusError(code, cause, message);
}

void Throw(int code, const std::string& message) { throw StatusError(code, code, message); }

void RegisterErrorTranslator() {
  // pybind11 takes a plain function pointer of exactly this signature.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      // epctx.errors builds the instance (the class for the code, its
      // attributes); imported here, at raise time, so the extension does
      // not depend on the package's import order.
      py::object make = py::module_::import("epctx.errors").attr("_from_status");
      py::object exc = make(e.code(), e.cause(), e.what());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });
}

}  // namespace py_binding
}  // namespace epctx
