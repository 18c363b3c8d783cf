/* SPDX-License-Identifier: Apache-2.0 */
// Test harness for CPU kernels: builds NodeViews with attributes by hand,
// owns input/output tensors (malloc-backed, freed with the Host), and runs
// FindKernel(...)(ctx).
#ifndef EPCTX_TESTS_KERNELS_HARNESS_H
#define EPCTX_TESTS_KERNELS_HARNESS_H

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace kt {

using epctx::TensorRef;
using Dims = std::vector<int64_t>;

// A node under construction. Strings and arrays live in the builder.
class Node {
 public:
  explicit Node(const char* op, const char* name = "n0");
  Node& Int(const char* name, int64_t v);
  Node& Float(const char* name, float v);
  Node& Str(const char* name, const char* v);
  Node& Ints(const char* name, std::vector<int64_t> v);
  Node& Floats(const char* name, std::vector<float> v);
  Node& Strs(const char* name, std::vector<std::string> v);
  Node& Tensor(const char* name, const epctx::onnx::TensorView* t);
  Node& Outputs(std::vector<std::string> names);
  Node& Domain(const char* domain);  // default "": ai.onnx
  const epctx::onnx::NodeView& view();

 private:
  epctx::StrView Keep(const std::string& s);
  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<std::unique_ptr<std::vector<int64_t>>> ints_;
  std::vector<std::unique_ptr<std::vector<float>>> floats_;
  std::vector<std::unique_ptr<std::vector<epctx::StrView>>> strs_;
  std::vector<epctx::onnx::AttributeView> attrs_;
  std::vector<epctx::StrView> outputs_;
  epctx::onnx::NodeView node_;
};

// Owns every tensor of one kernel run.
class Host {
 public:
  Host();
  ~Host();
  TensorRef* Make(int32_t dtype, const Dims& dims, const void* data = nullptr);
  TensorRef* F(const Dims& dims, const std::vector<float>& v);
  TensorRef* I64(const Dims& dims, const std::vector<int64_t>& v);
  TensorRef* I32(const Dims& dims, const std::vector<int32_t>& v);
  TensorRef* Random(const Dims& dims, uint32_t seed);

  // Runs the kernel for node at opset with these inputs (nullptr = absent),
  // and the state Prepare left, if any.
  epctx::Status Run(Node& node, int64_t opset, std::vector<TensorRef*> inputs);
  // Runs the kernel's prepare function as a session would at create, with
  // these constant inputs (nullptr: not a constant); later Runs see the
  // state it left (prepared()), until ClearPrepared. OK when the kernel has
  // no prepare function.
  epctx::Status Prepare(Node& node, int64_t opset, std::vector<TensorRef*> constants);
  const void* prepared() const { return prepared_; }
  uint64_t prepared_bytes() const { return prepared_bytes_; }
  void ClearPrepared() { prepared_ = nullptr; }

  TensorRef* out(uint32_t i) { return outputs_[i]; }
  bool viewed(uint32_t i) const { return viewed_[i]; }
  uint64_t scratch_bytes() const { return scratch_bytes_; }
  void ResetScratch();
  // Kernels run with this intra-op pool (nullptr: the calling thread only).
  void SetPool(epctx::ThreadPool* pool) { kh_.pool = pool; }

 private:
  static epctx::Status Alloc(void*, uint32_t, int32_t, uint32_t, const int64_t*, TensorRef**);
  static epctx::Status View(void*, uint32_t, int32_t, uint32_t, const int64_t*, const void*);
  static void* Scratch(void*, uint64_t, uint32_t);
  static void* PreparedAlloc(void* user, uint64_t bytes, uint32_t alignment);
  const void* prepared_ = nullptr;
  uint64_t prepared_bytes_ = 0;
  std::vector<void*> buffers_;
  std::vector<void*> scratch_;
  std::vector<TensorRef*> tensors_;
  TensorRef* outputs_[8] = {};
  bool viewed_[8] = {};
  uint64_t scratch_bytes_ = 0;
  epctx::KernelHost kh_;
};

std::vector<float> ToVec(const TensorRef* t);
Dims ShapeVec(const TensorRef* t);
bool Contains(const char* haystack, const char* needle);
// Max |a - b| relative to max(1, |b|).
float MaxRelErr(const float* a, const float* b, size_t n);

}  // namespace kt

#endif
