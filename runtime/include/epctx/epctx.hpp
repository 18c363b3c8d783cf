// SPDX-License-Identifier: Apache-2.0
// Header-only C++17 wrapper over <epctx/epctx.h>. No exceptions: every
// fallible call returns epctx::cpp::Result (ok() or code + message) and
// hands results out through parameters. Objects are move-only RAII owners of
// the C handles; an empty object (moved-from or never created) holds nullptr.
//
// The wrapper lives in epctx::cpp, not epctx: the runtime's own classes are
// epctx::Env, epctx::Session, ..., and an application linking the static
// library would otherwise get two definitions of, say, epctx::Env::~Env and
// the linker would keep one of them (an ODR violation ASan caught).
#ifndef EPCTX_EPCTX_HPP
#define EPCTX_EPCTX_HPP

#include <cstddef>
#include <cstdint>
#include <utility>

#include <epctx/epctx.h>

namespace epctx {
namespace cpp {

inline const char* Version() { return epctx_version(); }

// Owns an epctx_status*; ok() when it holds nullptr.
class [[nodiscard]] Result {
 public:
  Result() = default;
  explicit Result(epctx_status* s) : s_(s) {}
  Result(Result&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Result& operator=(Result&& o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~Result() { epctx_status_release(s_); }
  bool ok() const { return s_ == nullptr; }
  int code() const { return epctx_status_code(s_); }
  const char* code_name() const { return epctx_code_name(code()); }
  const char* message() const { return epctx_status_message(s_); }

 private:
  epctx_status* s_ = nullptr;
};

template <typename T, void (*kRelease)(T*)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T* p) : p_(p) {}
  Handle(Handle&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (p_) kRelease(p_);
  }
  T* get() const { return p_; }
  T* release() { return std::exchange(p_, nullptr); }
  explicit operator bool() const { return p_ != nullptr; }

 protected:
  T* p_ = nullptr;
};

class Env : public Handle<epctx_env, epctx_env_release> {
 public:
  // An env with the default allocator and every built-in driver.
  static Result Create(Env* out, int log_level = 1, const epctx_allocator* allocator = nullptr) {
    epctx_env* e = nullptr;
    Result r(epctx_env_create(allocator, log_level, &e));
    if (!r.ok()) return r;
    *out = Env(e);
    return Result(epctx_env_register_builtin_drivers(e));
  }
  Result RegisterDriver(const epctx_hal_driver* d) {
    return Result(epctx_env_register_driver(p_, d));
  }
  // fn must be thread-safe (see epctx_env_set_log_callback).
  Result SetLogCallback(epctx_log_fn fn, void* user) {
    return Result(epctx_env_set_log_callback(p_, fn, user));
  }
  Result SetLogLevel(int level) { return Result(epctx_env_set_log_level(p_, level)); }

 private:
  using Handle::Handle;
};

class SessionOptions : public Handle<epctx_session_options, epctx_session_options_release> {
 public:
  static Result Create(SessionOptions* out) {
    epctx_session_options* o = nullptr;
    Result r(epctx_session_options_create(&o));
    if (r.ok()) *out = SessionOptions(o);
    return r;
  }
  Result Set(const char* key, const char* value) {
    return Result(epctx_session_options_set(p_, key, value));
  }
  // The context binary (or external data) named `name` from memory or a
  // descriptor instead of the file system (see epctx.h).
  Result AddExternalBuffer(const char* name, const void* data, size_t size) {
    return Result(epctx_session_options_add_external_buffer(p_, name, data, size));
  }
  Result AddExternalFd(const char* name, int fd, uint64_t offset, uint64_t length) {
    return Result(epctx_session_options_add_external_fd(p_, name, fd, offset, length));
  }

 private:
  using Handle::Handle;
};

// Terminate flag and deadline for runs (epctx_run_options).
class RunOptions : public Handle<epctx_run_options, epctx_run_options_release> {
 public:
  static Result Create(RunOptions* out) {
    epctx_run_options* o = nullptr;
    Result r(epctx_run_options_create(&o));
    if (r.ok()) *out = RunOptions(o);
    return r;
  }
  // Thread-safe.
  void SetTerminate(bool terminate) { epctx_run_options_set_terminate(p_, terminate ? 1 : 0); }
  Result SetTimeoutUs(uint64_t us) { return Result(epctx_run_options_set_timeout_us(p_, us)); }

 private:
  using Handle::Handle;
};

class Tensor : public Handle<epctx_tensor, epctx_tensor_release> {
 public:
  using Handle::Handle;
  static Result Create(Env& env, epctx_dtype dtype, const int64_t* dims, size_t rank, Tensor* out) {
    epctx_tensor* t = nullptr;
    Result r(epctx_tensor_create(env.get(), dtype, dims, rank, &t));
    if (r.ok()) *out = Tensor(t);
    return r;
  }
  static Result Wrap(Env& env, epctx_dtype dtype, const int64_t* dims, size_t rank, void* data,
                     size_t bytes, Tensor* out) {
    epctx_tensor* t = nullptr;
    Result r(epctx_tensor_wrap(env.get(), dtype, dims, rank, data, bytes, &t));
    if (r.ok()) *out = Tensor(t);
    return r;
  }
  epctx_dtype dtype() const { return epctx_tensor_dtype(p_); }
  size_t rank() const { return epctx_tensor_rank(p_); }
  const int64_t* dims() const { return epctx_tensor_dims(p_); }
  size_t bytes() const { return epctx_tensor_bytes(p_); }
  template <typename T>
  T* data() {
    return static_cast<T*>(epctx_tensor_data(p_));
  }
};

class Session : public Handle<epctx_session, epctx_session_release> {
 public:
  static Result Create(Env& env, const char* path, const SessionOptions* options, Session* out) {
    epctx_session* s = nullptr;
    Result r(epctx_session_create(env.get(), path, options ? options->get() : nullptr, &s));
    if (r.ok()) *out = Session(s);
    return r;
  }
  static Result CreateFromBuffer(Env& env, const void* data, size_t size,
                                 const SessionOptions* options, Session* out) {
    epctx_session* s = nullptr;
    Result r(epctx_session_create_from_buffer(env.get(), data, size,
                                              options ? options->get() : nullptr, &s));
    if (r.ok()) *out = Session(s);
    return r;
  }
  size_t input_count() const { return epctx_session_input_count(p_); }
  size_t output_count() const { return epctx_session_output_count(p_); }
  Result InputInfo(size_t i, epctx_io_info* out) const {
    return Result(epctx_session_input_info(p_, i, out));
  }
  Result OutputInfo(size_t i, epctx_io_info* out) const {
    return Result(epctx_session_output_info(p_, i, out));
  }
  // "" when the model does not set the field; see epctx_metadata_field.
  const char* Metadata(epctx_metadata_field f) const {
    const char* v = epctx_session_metadata(p_, f);
    return v ? v : "";
  }
  // metadata_props: the first value of `key`, or nullptr.
  const char* MetadataProp(const char* key) const { return epctx_session_metadata_lookup(p_, key); }
  // outputs[i] receives a new Tensor for output_names[i] (every graph output
  // in order when output_names is nullptr and n_out == output_count()).
  // run_options (optional) can stop the run from another thread.
  Result Run(const char* const* input_names, const Tensor* inputs, size_t n_in,
             const char* const* output_names, Tensor* outputs, size_t n_out,
             const RunOptions& run_options) {
    constexpr size_t kMax = EPCTX_MAX_RUN_TENSORS;
    if (n_in > kMax || n_out > kMax)
      return Run(input_names, inputs, n_in, output_names, outputs, n_out);
    const epctx_tensor* in[kMax];
    epctx_tensor* out[kMax];
    for (size_t i = 0; i < n_in; ++i) in[i] = inputs[i].get();
    for (size_t i = 0; i < n_out; ++i) out[i] = nullptr;
    epctx_run_args a{};
    a.input_names = input_names;
    a.inputs = in;
    a.input_count = n_in;
    a.output_names = output_names;
    a.outputs = out;
    a.output_count = n_out;
    a.run_options = run_options.get();
    Result r(epctx_session_run_with(p_, &a));
    if (r.ok())
      for (size_t i = 0; i < n_out; ++i) outputs[i] = Tensor(out[i]);
    return r;
  }
  Result Run(const char* const* input_names, const Tensor* inputs, size_t n_in,
             const char* const* output_names, Tensor* outputs, size_t n_out) {
    // The C API's own limit; past it the C API reports the error.
    constexpr size_t kMax = EPCTX_MAX_RUN_TENSORS;
    if (n_in > kMax || n_out > kMax)
      return Result(
          epctx_session_run(p_, input_names, nullptr, n_in, output_names, nullptr, n_out));
    const epctx_tensor* in[kMax];
    epctx_tensor* out[kMax];
    for (size_t i = 0; i < n_in; ++i) in[i] = inputs[i].get();
    Result r(epctx_session_run(p_, input_names, in, n_in, output_names, out, n_out));
    if (r.ok())
      for (size_t i = 0; i < n_out; ++i) outputs[i] = Tensor(out[i]);
    return r;
  }

 private:
  using Handle::Handle;
};

}  // namespace cpp
}  // namespace epctx

#endif
