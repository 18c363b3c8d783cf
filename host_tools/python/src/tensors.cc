// SPDX-License-Identifier: Apache-2.0
#include "tensors.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "dtypes.h"
#include "errors.h"

namespace epctx {
namespace py_binding {

namespace py = pybind11;

BorrowedTensor::BorrowedTensor(BorrowedTensor&& o) noexcept
    : array_(std::move(o.array_)), tensor_(std::exchange(o.tensor_, nullptr)) {}

BorrowedTensor& BorrowedTensor::operator=(BorrowedTensor&& o) noexcept {
  std::swap(array_, o.array_);
  std::swap(tensor_, o.tensor_);
  return *this;
}

BorrowedTensor::~BorrowedTensor() {
  if (tensor_) epctx_tensor_release(tensor_);
}

BorrowedTensor BorrowedTensor::FromValue(epctx_env* env, const py::handle& value,
                                         epctx_dtype declared, const std::string& what) {
  py::array arr;
  if (py::isinstance<py::array>(value)) {
    arr = py::reinterpret_borrow<py::array>(value);
  } else {
    py::dtype want;
    if (declared != EPCTX_DTYPE_UNDEFINED && NumpyDtype(declared, &want))
      arr = py::array::ensure(py::module_::import("numpy").attr("asarray")(value, want));
    else arr = py::array::ensure(value);
    if (!arr) Throw(EPCTX_INVALID_ARGUMENT, what + ": not convertible to a numpy array");
  }
  const epctx_dtype dtype = FromNumpy(arr.dtype());
  if (dtype == EPCTX_DTYPE_UNDEFINED)
    Throw(EPCTX_NOT_IMPLEMENTED, what + ": numpy dtype " +
                                     py::str(arr.dtype()).cast<std::string>() +
                                     " has no epctx tensor type");
  if (declared != EPCTX_DTYPE_UNDEFINED && dtype != declared)
    Throw(EPCTX_INVALID_ARGUMENT, what + ": unexpected input data type. Actual: (" +
                                      OrtTypeString(dtype) + "), expected: (" +
                                      OrtTypeString(declared) + ")");
  // Zero copy needs C order, alignment and native byte order; otherwise one
  // contiguous copy of the same type.
  const bool native = arr.dtype().attr("isnative").cast<bool>();
  const int flags = arr.flags();
  const bool aligned = (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0;
  const bool c_order = (flags & py::array::c_style) != 0;
  if (!native || !aligned || !c_order) {
    py::dtype native_type = arr.dtype().attr("newbyteorder")("=");
    arr = py::module_::import("numpy").attr("ascontiguousarray")(arr, native_type);
  }
  const auto rank = static_cast<size_t>(arr.ndim());
  if (rank > EPCTX_MAX_RANK)
    Throw(EPCTX_INVALID_ARGUMENT,
          what + ": rank " + std::to_string(rank) + " exceeds " + std::to_string(EPCTX_MAX_RANK));
  int64_t dims[EPCTX_MAX_RANK] = {};
  for (size_t i = 0; i < rank; ++i)
    dims[i] = static_cast<int64_t>(arr.shape(static_cast<ssize_t>(i)));
  BorrowedTensor t;
  // The runtime only reads inputs: a read-only array is borrowed as well.
  Check(epctx_tensor_wrap(env, dtype, dims, rank, const_cast<void*>(arr.data()),
                          static_cast<size_t>(arr.nbytes()), &t.tensor_));
  t.array_ = std::move(arr);
  return t;
}

py::array ArrayOwningTensor(epctx_tensor* tensor) {
  py::capsule owner(tensor, [](void* p) { epctx_tensor_release(static_cast<epctx_tensor*>(p)); });
  const epctx_dtype dtype = epctx_tensor_dtype(tensor);
  py::dtype np_type;
  if (!NumpyDtype(dtype, &np_type))
    Throw(EPCTX_NOT_IMPLEMENTED,
          std::string("output of type ") + OrtTypeString(dtype) + " has no numpy type");
  const size_t rank = epctx_tensor_rank(tensor);
  const int64_t* dims = epctx_tensor_dims(tensor);
  std::vector<ssize_t> shape(dims, dims + rank);
  void* data = epctx_tensor_data(tensor);
  // An empty tensor may have no data pointer; numpy then allocates its own
  // (empty) buffer, and the capsule still releases the tensor.
  if (!data) return py::array(np_type, shape, std::vector<ssize_t>{});
  return py::array(np_type, shape, std::vector<ssize_t>{}, data, owner);
}

}  // namespace py_binding
}  // namespace epctx
