// SPDX-License-Identifier: Apache-2.0
// The extension module epctx._epctx: the runtime's C API for Python. The
// package (epctx/__init__.py) puts ONNX Runtime's names on top of it.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>

#include <epctx/epctx.h>

#include "errors.h"
#include "options.h"
#include "session.h"

namespace py = pybind11;

PYBIND11_MODULE(_epctx, m) {
  namespace b = epctx::py_binding;
  m.doc() = "epctx runtime (C API) binding; use the epctx package.";
  b::RegisterErrorTranslator();
  b::BindOptions(m);
  b::BindSession(m);
  m.def("version", &epctx_version, "The runtime's release, MAJOR.MINOR.PATCH.");
  m.def("api_version", &epctx_api_version, "EPCTX_API_VERSION of the runtime.");
  m.def(
      "code_name", [](int code) { return epctx_code_name(code); }, py::arg("code"));
  // The process's env: settings every later session sees.
  m.def(
      "load_driver_library",
      [](const std::string& path) {
        b::Check(epctx_env_load_driver_library(b::SharedEnv().get(), path.c_str()));
      },
      py::arg("path"), "Loads an NPU driver library (EPCTX_HAL_ENTRY_POINT) into the env.");
  m.def(
      "add_trusted_key",
      [](const py::bytes& key) {
        const std::string k = key;
        b::Check(epctx_env_add_trusted_key(b::SharedEnv().get(), k.data(), k.size()));
      },
      py::arg("key"), "Trusts an ECDSA P-256 public key (PEM or DER bytes) for signed packages.");
  m.def(
      "add_decryption_key",
      [](const std::string& key_id, const py::bytes& key) {
        std::string k = key;
        epctx_status* st =
            epctx_env_add_decryption_key(b::SharedEnv().get(), key_id.c_str(), k.data(), k.size());
        std::fill(k.begin(), k.end(), '\0');
        b::Check(st);
      },
      py::arg("key_id"), py::arg("key"),
      "Adds the 32-byte data key of key_id for encrypted packages (epctx-compile --encrypt-key).");
  m.def(
      "set_rollback_store",
      [](const std::string& folder) {
        b::Check(epctx_env_set_rollback_store(b::SharedEnv().get(), folder.c_str()));
      },
      py::arg("folder"), "Folder of the anti-rollback counters of signed packages.");
  m.def(
      "set_default_logger_severity",
      [](int severity) {
        // ORT's severities (0 verbose .. 4 fatal) onto the env's levels
        // (0 error .. 3 verbose).
        static constexpr int kLevels[] = {EPCTX_LOG_VERBOSE, EPCTX_LOG_INFO, EPCTX_LOG_WARNING,
                                          EPCTX_LOG_ERROR, EPCTX_LOG_ERROR};
        if (severity < 0 || severity > 4) b::Throw(EPCTX_INVALID_ARGUMENT, "severity: 0..4");
        b::Check(epctx_env_set_log_level(b::SharedEnv().get(), kLevels[severity]));
      },
      py::arg("severity"), "ORT's severity: 0 verbose, 1 info, 2 warning (default), 3 error.");
}
