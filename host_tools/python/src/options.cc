// SPDX-License-Identifier: Apache-2.0
#include "options.h"

#include <pybind11/stl.h>

#include <epctx/session_config_keys.h>

#include "errors.h"

namespace epctx {
namespace py_binding {

namespace py = pybind11;

SessionOptions::SessionOptions() {
  epctx_session_options* o = nullptr;
  Check(epctx_session_options_create(&o));
  options_.reset(o);
}

SessionOptions::SessionOptions(const SessionOptions& o) : SessionOptions() {
  for (const auto& [key, value] : o.config_) AddConfigEntry(key, value);
}

void SessionOptions::AddConfigEntry(const std::string& key, const std::string& value) {
  Check(epctx_session_options_set(options_.get(), key.c_str(), value.c_str()));
  config_[key] = value;
}

std::string SessionOptions::GetConfigEntry(const std::string& key) const {
  auto it = config_.find(key);
  if (it == config_.end())
    Throw(EPCTX_INVALID_ARGUMENT, "SessionOptions: config entry '" + key + "' is not set");
  return it->second;
}

std::shared_ptr<SessionOptions> SessionOptions::FromPython(const py::handle& value) {
  if (value.is_none()) return std::make_shared<SessionOptions>();
  if (py::isinstance<SessionOptions>(value))
    return std::make_shared<SessionOptions>(value.cast<const SessionOptions&>());
  if (py::isinstance<py::dict>(value)) {
    auto o = std::make_shared<SessionOptions>();
    for (const auto& [k, v] : value.cast<py::dict>())
      o->AddConfigEntry(py::str(k).cast<std::string>(), py::str(v).cast<std::string>());
    return o;
  }
  throw py::type_error("sess_options: an epctx.SessionOptions, a dict of config entries or None");
}

RunOptions::RunOptions() {
  epctx_run_options* o = nullptr;
  Check(epctx_run_options_create(&o));
  options_.reset(o);
}

void RunOptions::SetTerminate(bool terminate) {
  epctx_run_options_set_terminate(options_.get(), terminate ? 1 : 0);
  terminate_ = terminate;
}

void RunOptions::SetTimeoutUs(uint64_t us) {
  Check(epctx_run_options_set_timeout_us(options_.get(), us));
  timeout_us_ = us;
}

namespace {

int64_t ThreadsOf(const SessionOptions& o) {
  auto it = o.config().find(EPCTX_CONFIG_INTRA_OP_NUM_THREADS);
  return it == o.config().end() ? 0 : std::stoll(it->second);
}

// {key: {"scope": "RUN"|"GEN"|"BOTH", "default": str}} from
// <epctx/session_config_keys.h>.
py::dict ConfigKeys() {
  py::dict keys;
#define EPCTX_PY_KEY(key, scope, dflt) \
  keys[key] = py::dict(py::arg("scope") = (scope), py::arg("default") = (dflt));
  EPCTX_SESSION_CONFIG_KEYS(EPCTX_PY_KEY)
#undef EPCTX_PY_KEY
  return keys;
}

}  // namespace

void BindOptions(py::module_& m) {
  py::class_<SessionOptions, std::shared_ptr<SessionOptions>>(
      m, "SessionOptions",
      "Session config entries with ORT's key names (epctx.session_config_keys()).\n"
      "An unknown key or a bad value raises InvalidArgument when set.")
      .def(py::init<>())
      .def("add_session_config_entry", &SessionOptions::AddConfigEntry, py::arg("key"),
           py::arg("value"))
      .def("get_session_config_entry", &SessionOptions::GetConfigEntry, py::arg("key"))
      .def_property_readonly("config", &SessionOptions::config,
                             "The entries set so far, as a dict (a copy).")
      .def_property(
          "intra_op_num_threads", &ThreadsOf,
          [](SessionOptions& o, int64_t n) {
            o.AddConfigEntry(EPCTX_CONFIG_INTRA_OP_NUM_THREADS, std::to_string(n));
          },
          "session.intra_op_num_threads (0: the cores the process may use).");

  py::class_<RunOptions, std::shared_ptr<RunOptions>>(
      m, "RunOptions",
      "Stops runs: terminate (thread-safe, may be set while runs go on) and a\n"
      "deadline per run (timeout_ms / timeout_us, 0: none).")
      .def(py::init<>())
      .def_property("terminate", &RunOptions::terminate, &RunOptions::SetTerminate)
      .def_property("timeout_us", &RunOptions::timeout_us, &RunOptions::SetTimeoutUs)
      .def_property(
          "timeout_ms", [](const RunOptions& r) { return r.timeout_us() / 1000; },
          [](RunOptions& r, uint64_t ms) { r.SetTimeoutUs(ms * 1000); });

  m.def("session_config_keys", &ConfigKeys,
        "Every session config key epctx knows: {key: {'scope', 'default'}}.");
}

}  // namespace py_binding
}  // namespace epctx
