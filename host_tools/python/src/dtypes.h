// SPDX-License-Identifier: Apache-2.0
// epctx_dtype <-> numpy dtype and ONNX Runtime's type strings
// ("tensor(float)"). Pure tables: nothing here owns memory.
#ifndef EPCTX_PYTHON_DTYPES_H
#define EPCTX_PYTHON_DTYPES_H

#include <pybind11/numpy.h>

#include <epctx/epctx.h>

namespace epctx {
namespace py_binding {

// "tensor(float)", ...; "tensor(undefined)" for a type the enum does not name.
const char* OrtTypeString(epctx_dtype dtype);
// The numpy dtype of an epctx type; false for STRING, UNDEFINED. BFLOAT16
// has no numpy type and comes out as uint16 (its bits).
bool NumpyDtype(epctx_dtype dtype, pybind11::dtype* out);
// The epctx type of a numpy dtype (byte order ignored); UNDEFINED when
// epctx has none (complex, object, str, datetime ...).
epctx_dtype FromNumpy(const pybind11::dtype& dtype);

}  // namespace py_binding
}  // namespace epctx

#endif
