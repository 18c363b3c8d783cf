// SPDX-License-Identifier: Apache-2.0
// epctx.InferenceSession: ONNX Runtime's Python session over the C API.
//
// A session holds the process's env (shared by every session, created on
// first use with the built-in drivers; see SharedEnv), the epctx_session,
// its options, and, for a model given as bytes, those bytes (the runtime
// borrows them for the session's life). run() wraps the inputs without
// copying (tensors.h), releases the GIL for the run itself, and returns
// numpy arrays that own the output tensors.
#ifndef EPCTX_PYTHON_SESSION_H
#define EPCTX_PYTHON_SESSION_H

#include <memory>

#include <pybind11/pybind11.h>

#include <epctx/epctx.h>

namespace epctx {
namespace py_binding {

// The env every session of this process uses (vnpu and the other built-in
// drivers registered). Lives until the last session using it is gone.
std::shared_ptr<epctx_env> SharedEnv();

void BindSession(pybind11::module_& m);

}  // namespace py_binding
}  // namespace epctx

#endif
