/* SPDX-License-Identifier: Apache-2.0 */
// Helpers for the generation tests: small models built in C++, a runner over
// the runtime's C API (the reference is the source model run on the
// runtime's CPU kernels), EPContext attribute readers, and the list of
// generated ctx models the ORT acceptance test checks afterwards.
// Header-only; everything is returned by value.
#ifndef EPCTX_TESTS_GEN_GEN_UTIL_H
#define EPCTX_TESTS_GEN_GEN_UTIL_H

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <epctx/epctx.h>
#include <onnx/onnx_pb.h>

#include "epctx_host/compile_api.h"
#include "epctx_host/model_io.h"
#include "../host/model_builder.h"

// Asserts a CompileResult is ok, printing its message when not (expands at
// the use site, after <cmocka.h>).
#define ASSERT_OK(r)                                                \
  do {                                                              \
    if (!(r).ok()) print_error("%s\n", (r).status.message.c_str()); \
    assert_true((r).ok());                                          \
  } while (0)

namespace gentest {

using epctx::host::CompileResult;
using epctx::host::CompileSettings;
using epctx::host::ModelInput;
// Files: the host tools' own helpers (ReadFileBytes throws ToolError, which
// fails the test, when the file cannot be read).
using epctx::host::FileExists;
using epctx::host::ReadFileBytes;

inline std::string& WorkDir() {
  static std::string dir;
  return dir;
}

// A fresh folder <work>/<name>/ (removed first).
inline std::string Fresh(const std::string& name) {
  const std::string d = WorkDir() + "/" + name;
  std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
  if (std::system(cmd.c_str()) != 0) std::abort();
  return d;
}

inline int64_t FileSize(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

inline void Save(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

// Sets the work folder (created) and empties its ctx model list.
inline void Begin(const char* dir) {
  WorkDir() = dir;
  std::string cmd = "mkdir -p '" + WorkDir() + "'";
  if (std::system(cmd.c_str()) != 0) std::abort();
  std::ofstream(WorkDir() + "/ctx_models.txt", std::ios::trunc);
}

// Lists a generated ctx model for the ORT acceptance test (gen_ort_accepts).
inline void RecordForOrt(const std::string& path) {
  std::ofstream(WorkDir() + "/ctx_models.txt", std::ios::app) << path << "\n";
}

// Deterministic weights in [-0.5, 0.5), stored as raw_data.
inline void Weight(testutil::ModelBuilder& b, const std::string& name, std::vector<int64_t> dims,
                   uint32_t seed) {
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
  }
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
}

// A classifier: x[1,N] -> MatMul W1 -> Add b1 -> Relu -> MatMul W2 -> Relu
// (the backbone, weights from `backbone_seed`) -> MatMul head -> y[1,classes].
// Two models with the same backbone seed share 2*N*N+N floats of weights.
inline onnx::ModelProto BackboneModel(const std::string& tag, int64_t n, int64_t classes,
                                      uint32_t backbone_seed, uint32_t head_seed) {
  testutil::ModelBuilder b(13);
  b.model().mutable_graph()->set_name(tag);
  b.Input(tag + "_x", {1, n}).Output(tag + "_y", {1, classes});
  Weight(b, tag + "_w1", {n, n}, backbone_seed);
  Weight(b, tag + "_b1", {n}, backbone_seed + 1);
  Weight(b, tag + "_w2", {n, n}, backbone_seed + 2);
  Weight(b, tag + "_head", {n, classes}, head_seed);
  b.Node("MatMul", {tag + "_x", tag + "_w1"}, {tag + "_h1"});
  b.Node("Add", {tag + "_h1", tag + "_b1"}, {tag + "_h2"});
  b.Node("Relu", {tag + "_h2"}, {tag + "_h3"});
  b.Node("MatMul", {tag + "_h3", tag + "_w2"}, {tag + "_h4"});
  b.Node("Relu", {tag + "_h4"}, {tag + "_h5"});
  b.Node("MatMul", {tag + "_h5", tag + "_head"}, {tag + "_y"});
  return b.model();
}

// ORT's "model A": a part the backend compiles and a part left to the CPU.
// x[1,8] -> Relu -> Pow(.., e) [CPU] -> MatMul W -> Relu -> y[1,8]: two
// partitions around one CPU node that has an initializer input `e`.
inline onnx::ModelProto MixedModel() {
  testutil::ModelBuilder b(13);
  b.Input("x", {1, 8}).Output("y", {1, 8});
  b.Init("e", {1}, 2.0f);
  Weight(b, "w", {8, 8}, 7);
  b.Node("Relu", {"x"}, {"r"});
  b.Node("PRelu", {"r", "e"}, {"p"});
  b.Node("MatMul", {"p", "w"}, {"m"});
  b.Node("Relu", {"m"}, {"y"});
  return b.model();
}

// Only CPU ops: nothing to compile.
inline onnx::ModelProto CpuOnlyModel() {
  testutil::ModelBuilder b(13);
  b.Input("x", {1, 4}).Output("y", {1, 4});
  b.Node("Softsign", {"x"}, {"y"});
  return b.model();
}

struct Tensor {
  std::string name;
  epctx_dtype dtype = EPCTX_DTYPE_FLOAT;
  std::vector<int64_t> dims;
  std::vector<float> f;    // float data
  std::vector<int32_t> i;  // int32 data
};

inline Tensor Floats(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  Tensor t;
  t.name = name;
  t.dims = dims;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  t.f.resize(static_cast<size_t>(n));
  for (size_t k = 0; k < t.f.size(); ++k) t.f[k] = std::sin(0.37f * (k + 1) * (seed + 1));
  return t;
}

struct RunOutcome {
  int code = EPCTX_OK;
  std::string message;
  std::vector<std::vector<float>> outputs;
  size_t driver_nodes = 0, cpu_nodes = 0;
};

// Creates a session (from the file, or from its bytes when `ctx_path_option`
// is non-empty: that value is passed as ep.context_file_path), runs it once.
inline RunOutcome RunModel(const std::string& path, const std::vector<Tensor>& inputs,
                           const std::string& ctx_path_option = "") {
  RunOutcome r;
  epctx_env* env = nullptr;
  epctx_session_options* opts = nullptr;
  epctx_session* s = nullptr;
  std::string bytes;
  epctx_status* st = epctx_env_create(nullptr, 0, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  if (!st) st = epctx_session_options_create(&opts);
  if (!st && !ctx_path_option.empty()) {
    st = epctx_session_options_set(opts, "ep.context_file_path", ctx_path_option.c_str());
    bytes = ReadFileBytes(path);
    if (!st) st = epctx_session_create_from_buffer(env, bytes.data(), bytes.size(), opts, &s);
  } else if (!st) {
    st = epctx_session_create(env, path.c_str(), opts, &s);
  }
  std::vector<epctx_tensor*> in, out;
  std::vector<const char*> names;
  if (!st) {
    r.driver_nodes = epctx_session_driver_node_count(s);
    r.cpu_nodes = epctx_session_cpu_node_count(s);
    for (const auto& t : inputs) {
      epctx_tensor* x = nullptr;
      void* data = t.dtype == EPCTX_DTYPE_FLOAT ? (void*)t.f.data() : (void*)t.i.data();
      size_t bytes_n = t.dtype == EPCTX_DTYPE_FLOAT ? t.f.size() * 4 : t.i.size() * 4;
      if (!st)
        st = epctx_tensor_wrap(env, t.dtype, t.dims.data(), t.dims.size(), data, bytes_n, &x);
      in.push_back(x);
      names.push_back(t.name.c_str());
    }
    out.assign(epctx_session_output_count(s), nullptr);
    if (!st)
      st =
          epctx_session_run(s, names.data(), in.data(), in.size(), nullptr, out.data(), out.size());
    if (!st)
      for (auto* o : out) {
        const float* p = static_cast<const float*>(epctx_tensor_data(o));
        r.outputs.emplace_back(p, p + epctx_tensor_bytes(o) / 4);
      }
  }
  if (st) {
    r.code = epctx_status_code(st);
    r.message = epctx_status_message(st);
    epctx_status_release(st);
  }
  for (auto* t : in)
    if (t) epctx_tensor_release(t);
  for (auto* t : out)
    if (t) epctx_tensor_release(t);
  if (s) epctx_session_release(s);
  if (opts) epctx_session_options_release(opts);
  if (env) epctx_env_release(env);
  return r;
}

// Creates one session per model in one env, all alive at once, then runs
// each once on its single input. Returns one outcome per model.
inline std::vector<RunOutcome> RunTogether(const std::vector<std::string>& paths,
                                           const std::vector<Tensor>& inputs) {
  std::vector<RunOutcome> out(paths.size());
  epctx_env* env = nullptr;
  epctx_status* st = epctx_env_create(nullptr, 0, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  std::vector<epctx_session*> sessions(paths.size(), nullptr);
  for (size_t k = 0; k < paths.size() && !st; ++k)
    st = epctx_session_create(env, paths[k].c_str(), nullptr, &sessions[k]);
  for (size_t k = 0; k < paths.size() && !st; ++k) {
    const Tensor& t = inputs[k];
    epctx_tensor* x = nullptr;
    epctx_tensor* y = nullptr;
    const char* name = t.name.c_str();
    st = epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, t.dims.data(), t.dims.size(),
                           const_cast<float*>(t.f.data()), t.f.size() * 4, &x);
    if (!st) st = epctx_session_run(sessions[k], &name, &x, 1, nullptr, &y, 1);
    if (!st) {
      const float* p = static_cast<const float*>(epctx_tensor_data(y));
      out[k].outputs.emplace_back(p, p + epctx_tensor_bytes(y) / 4);
      out[k].driver_nodes = epctx_session_driver_node_count(sessions[k]);
    }
    if (x) epctx_tensor_release(x);
    if (y) epctx_tensor_release(y);
  }
  if (st) {
    for (auto& o : out) {
      o.code = epctx_status_code(st);
      o.message = epctx_status_message(st);
    }
    epctx_status_release(st);
  }
  for (auto* s : sessions)
    if (s) epctx_session_release(s);
  if (env) epctx_env_release(env);
  return out;
}

inline bool Close(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-4f) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > tol * (1.0f + std::fabs(b[i]))) return false;
  return true;
}

inline onnx::ModelProto LoadProto(const std::string& path) {
  return epctx::host::ParseModel(ReadFileBytes(path), path);
}

inline std::vector<const onnx::NodeProto*> EpNodes(const onnx::ModelProto& m) {
  std::vector<const onnx::NodeProto*> out;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "EPContext") out.push_back(&n);
  return out;
}

inline const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

inline std::string AttrS(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = Attr(n, name);
  return a ? a->s() : std::string("<absent>");
}

inline int64_t AttrI(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = Attr(n, name);
  return a ? a->i() : -999;
}

inline CompileSettings Settings(epctx::host::ConfigEntries config = {}) {
  CompileSettings s;
  s.config = std::move(config);
  return s;
}

}  // namespace gentest

#endif
