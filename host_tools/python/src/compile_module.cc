// SPDX-License-Identifier: Apache-2.0
// The extension module epctx._epctx_compile: the compile library
// (epctx_host/compile_api.h) for epctx.compile. A module of its own so that
// `import epctx` for inference loads neither libonnx nor protobuf.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "epctx_host/compile_api.h"
#include "errors.h"

namespace py = pybind11;

namespace {

namespace host = epctx::host;

py::dict Report(const host::CompileResult& r, const std::string& ep) {
  py::list models;
  for (const host::ModelReport& m : r.models) {
    py::dict d;
    d["input"] = m.input;
    d["output_path"] = m.output_path;
    d["message"] = m.message;
    d["nodes_total"] = m.nodes_total;
    d["nodes_npu"] = m.nodes_npu;
    d["nodes_cpu"] = m.nodes_cpu;
    d["partitions"] = m.partitions;
    d["partition_names"] = m.partition_names;
    d["model_bytes"] = m.model_bytes;
    if (!m.model_data.empty()) d["model_data"] = py::bytes(m.model_data);
    models.append(std::move(d));
  }
  py::dict d;
  d["models"] = models;
  d["files_written"] = r.files_written;
  d["binary_path"] = r.binary_path;
  d["binary_bytes"] = r.binary_bytes;
  d["compile_ms"] = r.compile_ms;
  d["summary"] = host::FormatResult(r, ep);
  return d;
}

// model: a path or the model's bytes; config: ORT-style entries; the rest
// as CompileSettings (epctx.compile in epctx/__init__.py documents them).
py::dict Compile(const py::object& model,
                 const std::vector<std::pair<std::string, std::string>>& config,
                 const std::string& ep,
                 const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes,
                 const std::vector<std::pair<std::string, std::string>>& backend_options,
                 bool force, bool output_to_memory, bool error_if_no_compiled_nodes) {
  host::ModelInput input;
  if (py::isinstance<py::bytes>(model))
    input = host::ModelInput::FromBuffer(model.cast<std::string>());
  else
    input = host::ModelInput::FromPath(
        py::str(py::module_::import("os").attr("fspath")(model)).cast<std::string>());
  host::CompileSettings settings;
  settings.config = config;
  settings.ep = ep;
  settings.backend_options = backend_options;
  for (const auto& [name, dims] : input_shapes) settings.input_shapes.push_back({name, dims});
  settings.force = force;
  settings.output_to_memory = output_to_memory;
  settings.if_no_compiled_nodes = error_if_no_compiled_nodes ? host::IfNoCompiledNodes::kError
                                                             : host::IfNoCompiledNodes::kGenerate;
  host::CompileResult result;
  {
    py::gil_scoped_release nogil;
    result = host::CompileModel(input, settings);
  }
  if (!result.ok()) epctx::py_binding::Throw(result.status.code, result.status.message);
  return Report(result, ep);
}

}  // namespace

PYBIND11_MODULE(_epctx_compile, m) {
  m.doc() = "epctx compile library binding; use epctx.compile.";
  epctx::py_binding::RegisterErrorTranslator();
  m.def("compile", &Compile, py::arg("model"), py::arg("config"), py::arg("ep"),
        py::arg("input_shapes"), py::arg("backend_options"), py::arg("force"),
        py::arg("output_to_memory"), py::arg("error_if_no_compiled_nodes"));
}
