// SPDX-License-Identifier: Apache-2.0
// numpy arrays <-> epctx tensors without copies where the layout allows.
//
// Inputs: a C-contiguous, aligned, native-byte-order array is wrapped
// (epctx_tensor_wrap) and borrowed: the BorrowedTensor keeps a reference to
// the array, so the memory stays valid while the tensor lives. Any other
// array (strided, misaligned, byte-swapped) is first copied into a
// contiguous one of the same type; values that are not arrays (lists,
// scalars) become arrays of the type the model declares. The element type
// is never converted: a float64 array for a float input is INVALID_ARGUMENT,
// as in ONNX Runtime.
//
// Outputs: the numpy array views the epctx tensor's data and owns the
// tensor through a capsule (its base), released when the array is.
#ifndef EPCTX_PYTHON_TENSORS_H
#define EPCTX_PYTHON_TENSORS_H

#include <string>

#include <pybind11/numpy.h>

#include <epctx/epctx.h>

namespace epctx {
namespace py_binding {

class BorrowedTensor {
 public:
  BorrowedTensor() = default;
  BorrowedTensor(BorrowedTensor&& o) noexcept;
  BorrowedTensor& operator=(BorrowedTensor&& o) noexcept;
  BorrowedTensor(const BorrowedTensor&) = delete;
  BorrowedTensor& operator=(const BorrowedTensor&) = delete;
  ~BorrowedTensor();

  // `value` as a tensor for an input declared `declared` (UNDEFINED: take
  // the array's own type). `what` names the input in messages.
  static BorrowedTensor FromValue(epctx_env* env, const pybind11::handle& value,
                                  epctx_dtype declared, const std::string& what);
  const epctx_tensor* get() const { return tensor_; }
  const pybind11::array& array() const { return array_; }

 private:
  pybind11::array array_;  // keeps the borrowed memory alive
  epctx_tensor* tensor_ = nullptr;
};

// A numpy array over `tensor`'s data that takes ownership of the tensor.
pybind11::array ArrayOwningTensor(epctx_tensor* tensor);

}  // namespace py_binding
}  // namespace epctx

#endif
