// SPDX-License-Identifier: Apache-2.0
#include "session.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "dtypes.h"
#include "errors.h"
#include "options.h"
#include "tensors.h"

namespace epctx {
namespace py_binding {

namespace py = pybind11;

std::shared_ptr<epctx_env> SharedEnv() {
  static std::mutex mu;
  static std::shared_ptr<epctx_env> env;
  std::lock_guard<std::mutex> lock(mu);
  if (!env) {
    epctx_env* e = nullptr;
    Check(epctx_env_create(nullptr, EPCTX_LOG_WARNING, &e));
    std::shared_ptr<epctx_env> owner(e, epctx_env_release);
    Check(epctx_env_register_builtin_drivers(e));
    env = std::move(owner);
  }
  return env;
}

namespace {

constexpr const char* kEpctxProvider = "EpctxExecutionProvider";
constexpr const char* kCpuProvider = "CPUExecutionProvider";

// ORT's NodeArg: name, shape (None for a symbolic dimension), type string.
struct NodeArg {
  std::string name;
  py::list shape;
  std::string type;
  epctx_dtype dtype = EPCTX_DTYPE_UNDEFINED;
};

NodeArg ToNodeArg(const epctx_io_info& info) {
  NodeArg a;
  a.name = info.name;
  for (size_t i = 0; i < info.rank; ++i) {
    if (info.dims[i] < 0) a.shape.append(py::none());
    else a.shape.append(info.dims[i]);
  }
  a.type = OrtTypeString(info.dtype);
  a.dtype = info.dtype;
  return a;
}

class InferenceSession {
 public:
  InferenceSession(const py::object& model, const py::object& sess_options,
                   const py::object& providers)
      : env_(SharedEnv()), options_(SessionOptions::FromPython(sess_options)) {
    SetProviders(providers);
    epctx_session* s = nullptr;
    if (py::isinstance<py::bytes>(model)) {
      model_bytes_ = py::reinterpret_borrow<py::bytes>(model);
      char* data = nullptr;
      ssize_t size = 0;
      PyBytes_AsStringAndSize(model_bytes_.ptr(), &data, &size);
      py::gil_scoped_release nogil;
      Check(epctx_session_create_from_buffer(env_.get(), data, static_cast<size_t>(size),
                                             options_->get(), &s));
    } else {
      model_path_ = py::str(py::module_::import("os").attr("fspath")(model)).cast<std::string>();
      py::gil_scoped_release nogil;
      Check(epctx_session_create(env_.get(), model_path_.c_str(), options_->get(), &s));
    }
    session_.reset(s);
    for (size_t i = 0; i < epctx_session_input_count(s); ++i) {
      epctx_io_info info{};
      Check(epctx_session_input_info(s, i, &info));
      inputs_.push_back(ToNodeArg(info));
    }
    for (size_t i = 0; i < epctx_session_output_count(s); ++i) {
      epctx_io_info info{};
      Check(epctx_session_output_info(s, i, &info));
      outputs_.push_back(ToNodeArg(info));
    }
  }

  const std::vector<NodeArg>& inputs() const { return inputs_; }
  const std::vector<NodeArg>& outputs() const { return outputs_; }
  const std::vector<std::string>& providers() const { return providers_; }
  const std::string& model_path() const { return model_path_; }
  const SessionOptions& options() const { return *options_; }
  const epctx_session* get() const { return session_.get(); }

  py::list Run(const py::object& output_names, const py::dict& feed,
               const std::shared_ptr<RunOptions>& run_options) {
    std::vector<std::string> out_names;
    if (output_names.is_none()) {
      for (const NodeArg& o : outputs_) out_names.push_back(o.name);
    } else {
      for (const py::handle h : output_names) out_names.push_back(py::str(h).cast<std::string>());
    }
    std::vector<std::string> in_names;
    std::vector<BorrowedTensor> in_tensors;
    for (const auto& [key, value] : feed) {
      std::string name = py::str(key).cast<std::string>();
      epctx_dtype declared = EPCTX_DTYPE_UNDEFINED;
      for (const NodeArg& a : inputs_)
        if (a.name == name) declared = a.dtype;
      in_tensors.push_back(
          BorrowedTensor::FromValue(env_.get(), value, declared, "input '" + name + "'"));
      in_names.push_back(std::move(name));
    }
    std::vector<const char*> in_cnames, out_cnames;
    std::vector<const epctx_tensor*> in_ptrs;
    for (size_t i = 0; i < in_names.size(); ++i) {
      in_cnames.push_back(in_names[i].c_str());
      in_ptrs.push_back(in_tensors[i].get());
    }
    for (const std::string& n : out_names) out_cnames.push_back(n.c_str());
    std::vector<epctx_tensor*> outs(out_names.size(), nullptr);

    epctx_run_args args{};
    args.input_names = in_cnames.data();
    args.inputs = in_ptrs.data();
    args.input_count = in_ptrs.size();
    args.output_names = out_cnames.data();
    args.outputs = outs.data();
    args.output_count = outs.size();
    args.run_options = run_options ? run_options->get() : nullptr;
    epctx_status* st = nullptr;
    {
      py::gil_scoped_release nogil;
      st = epctx_session_run_with(session_.get(), &args);
    }
    Check(st);
    py::list result;
    // Each array takes its tensor as soon as it exists, so a failure
    // converting one output releases the rest.
    std::vector<py::array> arrays;
    for (size_t i = 0; i < outs.size(); ++i) {
      epctx_tensor* t = std::exchange(outs[i], nullptr);
      try {
        arrays.push_back(ArrayOwningTensor(t));
      } catch (...) {
        for (size_t j = i + 1; j < outs.size(); ++j) epctx_tensor_release(outs[j]);
        throw;
      }
    }
    for (py::array& a : arrays) result.append(std::move(a));
    return result;
  }

  py::dict Metadata() const {
    const epctx_session* s = session_.get();
    auto field = [s](epctx_metadata_field f) {
      const char* v = epctx_session_metadata(s, f);
      return std::string(v ? v : "");
    };
    py::dict custom;
    for (size_t i = 0; i < epctx_session_metadata_prop_count(s); ++i) {
      const char* key = nullptr;
      const char* value = nullptr;
      Check(epctx_session_metadata_prop(s, i, &key, &value));
      if (!custom.contains(key)) custom[key] = value;  // the first of duplicates, as lookup
    }
    py::dict d;
    d["producer_name"] = field(EPCTX_METADATA_PRODUCER_NAME);
    d["producer_version"] = field(EPCTX_METADATA_PRODUCER_VERSION);
    d["domain"] = field(EPCTX_METADATA_DOMAIN);
    d["graph_name"] = field(EPCTX_METADATA_GRAPH_NAME);
    d["version"] = epctx_session_model_version(s);
    d["ir_version"] = epctx_session_ir_version(s);
    d["custom_metadata_map"] = custom;
    return d;
  }

 private:
  void SetProviders(const py::object& providers) {
    if (providers.is_none()) {
      providers_ = {kEpctxProvider, kCpuProvider};
      return;
    }
    for (const py::handle h : providers) {
      // ORT also takes (name, options) tuples.
      py::handle name = py::isinstance<py::tuple>(h) ? h.cast<py::tuple>()[0] : h;
      std::string n = py::str(name).cast<std::string>();
      if (n != kEpctxProvider && n != kCpuProvider)
        throw py::value_error("unknown provider '" + n + "'; available: " + kEpctxProvider + ", " +
                              kCpuProvider);
      providers_.push_back(n);
    }
    // The session runs EPContext nodes on the env's drivers and every other
    // node on the CPU whatever the list says; the list is reported back.
  }

  struct Release {
    void operator()(epctx_session* s) const { epctx_session_release(s); }
  };
  std::shared_ptr<epctx_env> env_;  // outlives session_ (declared first)
  std::shared_ptr<SessionOptions> options_;
  py::bytes model_bytes_;  // borrowed by session_ when the model came as bytes
  std::unique_ptr<epctx_session, Release> session_;
  std::string model_path_;
  std::vector<std::string> providers_;
  std::vector<NodeArg> inputs_, outputs_;
};

// ORT's OrtValue, for inputs only: a borrowed view of a numpy array, to
// check that nothing is copied (data_ptr() is the array's own address) and
// to feed run() with it.
class OrtValue {
 public:
  explicit OrtValue(BorrowedTensor t) : tensor_(std::move(t)) {}
  static std::shared_ptr<OrtValue> FromNumpy(const py::array& a) {
    return std::make_shared<OrtValue>(BorrowedTensor::FromValue(
        SharedEnv().get(), a, EPCTX_DTYPE_UNDEFINED, "OrtValue.ortvalue_from_numpy"));
  }
  uintptr_t DataPtr() const {
    return reinterpret_cast<uintptr_t>(epctx_tensor_data(const_cast<epctx_tensor*>(tensor_.get())));
  }
  const BorrowedTensor& tensor() const { return tensor_; }

 private:
  std::shared_ptr<epctx_env> env_ = SharedEnv();
  BorrowedTensor tensor_;
};

}  // namespace

void BindSession(py::module_& m) {
  py::class_<NodeArg>(m, "NodeArg", "A graph input or output, as ORT's NodeArg.")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape)
      .def_readonly("type", &NodeArg::type)
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type +
               "', shape=" + py::repr(a.shape).cast<std::string>() + ")";
      });

  py::class_<OrtValue, std::shared_ptr<OrtValue>>(
      m, "OrtValue", "A numpy array borrowed as an epctx tensor (no copy when C-contiguous).")
      .def_static("ortvalue_from_numpy", &OrtValue::FromNumpy, py::arg("array"))
      .def("data_ptr", &OrtValue::DataPtr)
      .def("numpy", [](const OrtValue& v) { return v.tensor().array(); })
      .def("shape", [](const OrtValue& v) { return v.tensor().array().attr("shape"); })
      .def("data_type",
           [](const OrtValue& v) { return OrtTypeString(epctx_tensor_dtype(v.tensor().get())); });

  py::class_<InferenceSession>(m, "_InferenceSession")
      .def(py::init<const py::object&, const py::object&, const py::object&>(), py::arg("path"),
           py::arg("sess_options") = py::none(), py::arg("providers") = py::none())
      .def("get_inputs", &InferenceSession::inputs)
      .def("get_outputs", &InferenceSession::outputs)
      .def("get_providers", &InferenceSession::providers)
      .def("_metadata", &InferenceSession::Metadata)
      .def_property_readonly("_model_path", &InferenceSession::model_path)
      .def("get_session_options",
           [](const InferenceSession& s) { return std::make_shared<SessionOptions>(s.options()); })
      .def(
          "_run",
          [](InferenceSession& s, const py::object& output_names, const py::dict& feed,
             const py::object& run_options) {
            std::shared_ptr<RunOptions> ro;
            if (!run_options.is_none()) ro = run_options.cast<std::shared_ptr<RunOptions>>();
            // OrtValue feeds: their arrays (already borrowed, C order).
            py::dict plain;
            for (const auto& [k, v] : feed) {
              if (py::isinstance<OrtValue>(v))
                plain[k] = v.cast<const OrtValue&>().tensor().array();
              else plain[k] = v;
            }
            return s.Run(output_names, plain, ro);
          },
          py::arg("output_names"), py::arg("input_feed"), py::arg("run_options") = py::none())
      .def_property_readonly(
          "driver_node_count",
          [](const InferenceSession& s) { return epctx_session_driver_node_count(s.get()); })
      .def_property_readonly("cpu_node_count", [](const InferenceSession& s) {
        return epctx_session_cpu_node_count(s.get());
      });
}

}  // namespace py_binding
}  // namespace epctx
