// SPDX-License-Identifier: Apache-2.0
// SessionOptions and RunOptions of the Python package, over
// epctx_session_options and epctx_run_options.
//
// SessionOptions keeps the config entries it was given (in a map, for
// get_session_config_entry and .config) and an epctx_session_options that
// received each of them when it was set: an unknown key or bad value raises
// then, not at session creation. RunOptions owns an epctx_run_options; its
// terminate flag may be set from any thread while runs use it.
#ifndef EPCTX_PYTHON_OPTIONS_H
#define EPCTX_PYTHON_OPTIONS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include <epctx/epctx.h>

namespace epctx {
namespace py_binding {

class SessionOptions {
 public:
  SessionOptions();
  // Copies of one another share nothing: each builds its own C options.
  SessionOptions(const SessionOptions& o);
  SessionOptions& operator=(const SessionOptions&) = delete;

  void AddConfigEntry(const std::string& key, const std::string& value);
  // INVALID_ARGUMENT for a key that is not set (ORT raises as well).
  std::string GetConfigEntry(const std::string& key) const;
  const std::map<std::string, std::string>& config() const { return config_; }
  const epctx_session_options* get() const { return options_.get(); }

  // A dict {key: value}, a SessionOptions or None -> SessionOptions.
  static std::shared_ptr<SessionOptions> FromPython(const pybind11::handle& value);

 private:
  struct Release {
    void operator()(epctx_session_options* o) const { epctx_session_options_release(o); }
  };
  std::unique_ptr<epctx_session_options, Release> options_;
  std::map<std::string, std::string> config_;
};

class RunOptions {
 public:
  RunOptions();
  void SetTerminate(bool terminate);
  bool terminate() const { return terminate_; }
  void SetTimeoutUs(uint64_t us);
  uint64_t timeout_us() const { return timeout_us_; }
  const epctx_run_options* get() const { return options_.get(); }

 private:
  struct Release {
    void operator()(epctx_run_options* o) const { epctx_run_options_release(o); }
  };
  std::unique_ptr<epctx_run_options, Release> options_;
  bool terminate_ = false;
  uint64_t timeout_us_ = 0;
};

void BindOptions(pybind11::module_& m);

}  // namespace py_binding
}  // namespace epctx

#endif
