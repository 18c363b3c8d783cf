// SPDX-License-Identifier: Apache-2.0
#include "harness.h"

#include <cstdlib>
#include <cstring>
#include <random>

namespace kt {

using epctx::onnx::AttributeView;
using epctx::onnx::AttrType;

Node::Node(const char* op, const char* name) {
  node_.op_type = Keep(op);
  node_.name = Keep(name);
  outputs_.push_back(Keep("Y"));
}

Node& Node::Domain(const char* domain) {
  node_.domain = Keep(domain);
  return *this;
}

epctx::StrView Node::Keep(const std::string& s) {
  strings_.push_back(std::make_unique<std::string>(s));
  epctx::StrView v;
  v.data = strings_.back()->data();
  v.size = strings_.back()->size();
  return v;
}

Node& Node::Int(const char* name, int64_t v) {
  AttributeView a;
  a.name = Keep(name);
  a.type = AttrType::kInt;
  a.i = v;
  attrs_.push_back(a);
  return *this;
}
Node& Node::Float(const char* name, float v) {
  AttributeView a;
  a.name = Keep(name);
  a.type = AttrType::kFloat;
  a.f = v;
  attrs_.push_back(a);
  return *this;
}
Node& Node::Str(const char* name, const char* v) {
  AttributeView a;
  a.name = Keep(name);
  a.type = AttrType::kString;
  a.s = Keep(v);
  attrs_.push_back(a);
  return *this;
}
Node& Node::Ints(const char* name, std::vector<int64_t> v) {
  ints_.push_back(std::make_unique<std::vector<int64_t>>(std::move(v)));
  AttributeView a;
  a.name = Keep(name);
  a.type = AttrType::kInts;
  a.ints = ints_.back()->data();
  a.count = static_cast<uint32_t>(ints_.back()->size());
  attrs_.push_back(a);
  return *this;
}
Node& Node::Floats(const char* name, std::vector<float> v) {
  floats_.push_back(std::make_unique<std::vector<float>>(std::move(v)));
  AttributeView a;
  a.name = Keep(name);
  a.type = AttrType::kFloats;
  a.floats = floats_.back()->data();
  a.count = static_cast<uint32_t>(floats_.back()->size());
  attrs_.push_back(a);
  return *this;
}
Node& Node::Strs(const char* name, std::vector<std::string> v) {
  strs_.push_back(std::make_unique<std::vector<epctx::StrView>>());
  for (auto& e : v) strs_.back()->push_back(Keep(e));
  AttributeView a;
  a.name = Keep(name);
  a.type = AttrType::kStrings;
  a.strings = strs_.back()->data();
  a.count = static_cast<uint32_t>(strs_.back()->size());
  attrs_.push_back(a);
  return *this;
}
Node& Node::Tensor(const char* name, const epctx::onnx::TensorView* t) {
  AttributeView a;
  a.name = Keep(name);
  a.type = AttrType::kTensor;
  a.t = t;
  attrs_.push_back(a);
  return *this;
}
Node& Node::Outputs(std::vector<std::string> names) {
  outputs_.clear();
  for (auto& n : names) outputs_.push_back(Keep(n));
  return *this;
}

const epctx::onnx::NodeView& Node::view() {
  node_.attrs = attrs_.data();
  node_.num_attrs = static_cast<uint32_t>(attrs_.size());
  node_.outputs = outputs_.data();
  node_.num_outputs = static_cast<uint32_t>(outputs_.size());
  return node_;
}

Host::Host() {
  kh_.user = this;
  kh_.alloc_output = &Host::Alloc;
  kh_.view_output = &Host::View;
  kh_.scratch = &Host::Scratch;
}

Host::~Host() {
  for (void* p : buffers_) free(p);
  for (void* p : scratch_) free(p);
  for (TensorRef* t : tensors_) delete t;
}

void Host::ResetScratch() {
  for (void* p : scratch_) free(p);
  scratch_.clear();
  scratch_bytes_ = 0;
}

TensorRef* Host::Make(int32_t dtype, const Dims& dims, const void* data) {
  TensorRef* t = new TensorRef();
  tensors_.push_back(t);
  t->dtype = dtype;
  t->rank = static_cast<uint32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t->dims[i] = dims[i];
  t->bytes = t->elements() * epctx::dtype_size(dtype);
  void* p = nullptr;
  if (posix_memalign(&p, 64, t->bytes ? t->bytes : 1) != 0) abort();
  buffers_.push_back(p);
  if (data) memcpy(p, data, t->bytes);
  else memset(p, 0, t->bytes);
  t->data = p;
  return t;
}

TensorRef* Host::F(const Dims& dims, const std::vector<float>& v) {
  TensorRef* t = Make(EPCTX_DTYPE_FLOAT, dims, nullptr);
  if (v.size() != t->elements()) abort();
  if (t->bytes) memcpy(t->data, v.data(), t->bytes);
  return t;
}
TensorRef* Host::I64(const Dims& dims, const std::vector<int64_t>& v) {
  TensorRef* t = Make(EPCTX_DTYPE_INT64, dims, nullptr);
  if (v.size() != t->elements()) abort();
  if (t->bytes) memcpy(t->data, v.data(), t->bytes);
  return t;
}
TensorRef* Host::I32(const Dims& dims, const std::vector<int32_t>& v) {
  TensorRef* t = Make(EPCTX_DTYPE_INT32, dims, nullptr);
  if (v.size() != t->elements()) abort();
  if (t->bytes) memcpy(t->data, v.data(), t->bytes);
  return t;
}
TensorRef* Host::Random(const Dims& dims, uint32_t seed) {
  TensorRef* t = Make(EPCTX_DTYPE_FLOAT, dims, nullptr);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  float* p = static_cast<float*>(t->data);
  for (uint64_t i = 0; i < t->elements(); ++i) p[i] = d(rng);
  return t;
}

epctx::Status Host::Alloc(void* user, uint32_t index, int32_t dtype, uint32_t rank,
                          const int64_t* dims, TensorRef** out) {
  Host* h = static_cast<Host*>(user);
  if (index >= 8) return epctx::Status::Error(EPCTX_FAIL, "output index %u", index);
  uint64_t n = 0;
  if (rank > 8 || !epctx::shape_elements(dims, rank, &n) || n > (1ull << 32))
    return epctx::Status::Error(EPCTX_INVALID_ARGUMENT, "bad output shape");
  Dims d(dims, dims + rank);
  h->outputs_[index] = h->Make(dtype, d, nullptr);
  // Poison so kernels that forget to write an element are caught.
  if (dtype == EPCTX_DTYPE_FLOAT) {
    float* p = static_cast<float*>(h->outputs_[index]->data);
    for (uint64_t i = 0; i < n; ++i) p[i] = 12345.0f;
  }
  h->viewed_[index] = false;
  *out = h->outputs_[index];
  return epctx::Status::Ok();
}

epctx::Status Host::View(void* user, uint32_t index, int32_t dtype, uint32_t rank,
                         const int64_t* dims, const void* data) {
  Host* h = static_cast<Host*>(user);
  if (index >= 8 || rank > 8) return epctx::Status::Error(EPCTX_FAIL, "bad view");
  TensorRef* t = new TensorRef();
  h->tensors_.push_back(t);
  t->dtype = dtype;
  t->rank = rank;
  for (uint32_t i = 0; i < rank; ++i) t->dims[i] = dims[i];
  t->bytes = t->elements() * epctx::dtype_size(dtype);
  t->data = const_cast<void*>(data);
  h->outputs_[index] = t;
  h->viewed_[index] = true;
  return epctx::Status::Ok();
}

void* Host::Scratch(void* user, uint64_t bytes, uint32_t alignment) {
  Host* h = static_cast<Host*>(user);
  void* p = nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0) return nullptr;
  h->scratch_.push_back(p);
  h->scratch_bytes_ += bytes;
  return p;
}

epctx::Status Host::Run(Node& node, int64_t opset, std::vector<TensorRef*> inputs) {
  const epctx::onnx::NodeView& v = node.view();
  epctx::KernelFn fn = epctx::FindKernel(v.domain, v.op_type, opset);
  if (!fn)
    return epctx::Status::Error(EPCTX_NOT_IMPLEMENTED, "no kernel for %.*s opset %lld",
                                v.op_type.len(), v.op_type.data, static_cast<long long>(opset));
  for (auto& o : outputs_) o = nullptr;
  std::vector<const TensorRef*> ins(inputs.begin(), inputs.end());
  epctx::KernelContext ctx(v, opset, ins.data(), static_cast<uint32_t>(ins.size()), kh_, prepared_);
  epctx::Status st = fn(ctx);
  epctx::Status attr = ctx.AttrStatus();  // as the session does after each kernel
  return attr.ok() ? st : attr;
}

void* Host::PreparedAlloc(void* user, uint64_t bytes, uint32_t alignment) {
  Host* h = static_cast<Host*>(user);
  void* p = aligned_alloc(alignment < 16 ? 16 : alignment, (bytes + 63) / 64 * 64);
  if (!p) return nullptr;
  h->buffers_.push_back(p);
  h->prepared_bytes_ += bytes;
  return p;
}

epctx::Status Host::Prepare(Node& node, int64_t opset, std::vector<TensorRef*> constants) {
  const epctx::onnx::NodeView& v = node.view();
  epctx::PrepareFn prepare = nullptr;
  if (!epctx::FindKernel(v.domain, v.op_type, opset, &prepare) || !prepare)
    return epctx::Status::Ok();
  std::vector<const TensorRef*> ins(constants.begin(), constants.end());
  epctx::PrepareHost host{this, &Host::PreparedAlloc};
  epctx::PrepareContext ctx(v, opset, ins.data(), static_cast<uint32_t>(ins.size()), host);
  epctx::Status st = prepare(ctx);
  prepared_ = ctx.prepared();
  return st;
}

std::vector<float> ToVec(const TensorRef* t) {
  const float* p = static_cast<const float*>(t->data);
  return std::vector<float>(p, p + t->elements());
}

Dims ShapeVec(const TensorRef* t) { return Dims(t->dims, t->dims + t->rank); }

bool Contains(const char* haystack, const char* needle) {
  return strstr(haystack, needle) != nullptr;
}

float MaxRelErr(const float* a, const float* b, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    float d = a[i] - b[i];
    if (d < 0) d = -d;
    float s = b[i] < 0 ? -b[i] : b[i];
    if (s < 1.0f) s = 1.0f;
    if (d / s > m || d != d) m = d != d ? 1e30f : d / s;
  }
  return m;
}

}  // namespace kt
