// SPDX-License-Identifier: Apache-2.0
#include "dtypes.h"

namespace epctx {
namespace py_binding {

namespace py = pybind11;

namespace {

struct TypeRow {
  epctx_dtype dtype;
  const char* ort_name;
  char kind;  // numpy dtype.kind; 0: no numpy type
  int size;
};

// clang-format off
constexpr TypeRow kTypes[] = {
    {EPCTX_DTYPE_FLOAT,    "tensor(float)",    'f', 4},
    {EPCTX_DTYPE_UINT8,    "tensor(uint8)",    'u', 1},
    {EPCTX_DTYPE_INT8,     "tensor(int8)",     'i', 1},
    {EPCTX_DTYPE_UINT16,   "tensor(uint16)",   'u', 2},
    {EPCTX_DTYPE_INT16,    "tensor(int16)",    'i', 2},
    {EPCTX_DTYPE_INT32,    "tensor(int32)",    'i', 4},
    {EPCTX_DTYPE_INT64,    "tensor(int64)",    'i', 8},
    {EPCTX_DTYPE_STRING,   "tensor(string)",   0,   0},
    {EPCTX_DTYPE_BOOL,     "tensor(bool)",     'b', 1},
    {EPCTX_DTYPE_FLOAT16,  "tensor(float16)",  'f', 2},
    {EPCTX_DTYPE_DOUBLE,   "tensor(double)",   'f', 8},
    {EPCTX_DTYPE_UINT32,   "tensor(uint32)",   'u', 4},
    {EPCTX_DTYPE_UINT64,   "tensor(uint64)",   'u', 8},
    {EPCTX_DTYPE_BFLOAT16, "tensor(bfloat16)", 'u', 2},  // bits, as uint16
};
// clang-format on

const TypeRow* Find(epctx_dtype dtype) {
  for (const TypeRow& r : kTypes)
    if (r.dtype == dtype) return &r;
  return nullptr;
}

}  // namespace

const char* OrtTypeString(epctx_dtype dtype) {
  const TypeRow* r = Find(dtype);
  return r ? r->ort_name : "tensor(undefined)";
}

bool NumpyDtype(epctx_dtype dtype, py::dtype* out) {
  const TypeRow* r = Find(dtype);
  if (!r || r->kind == 0) return false;
  const char code[3] = {r->kind, static_cast<char>('0' + r->size), 0};
  *out = r->kind == 'b' ? py::dtype("?") : py::dtype(code);
  return true;
}

epctx_dtype FromNumpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const auto size = static_cast<int>(dtype.itemsize());
  for (const TypeRow& r : kTypes)
    if (r.kind == kind && r.size == size && r.dtype != EPCTX_DTYPE_BFLOAT16) return r.dtype;
  return EPCTX_DTYPE_UNDEFINED;
}

}  // namespace py_binding
}  // namespace epctx
