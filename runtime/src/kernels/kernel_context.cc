// SPDX-License-Identifier: Apache-2.0
// KernelContext: attribute look-ups with defaults, and errors naming the node.
#include "kernels/kernel.h"

#include <cstdarg>

namespace epctx {

const onnx::AttributeView* KernelContext::Typed(const char* name, onnx::AttrType type) const {
  const onnx::AttributeView* a = node_.attr(name);
  if (!a) return nullptr;
  if (a->type == type) return a;
  if (!bad_attr_) {
    bad_attr_ = a;
    bad_expected_ = type;
  }
  return nullptr;
}

Status KernelContext::AttrStatus() const {
  if (!bad_attr_) return Status::Ok();
  return Fail(EPCTX_INVALID_GRAPH, "attribute '%.*s' must be %s, found %s", bad_attr_->name.len(),
              bad_attr_->name.data, onnx::attr_type_name(bad_expected_),
              onnx::attr_type_name(bad_attr_->type));
}

int64_t KernelContext::AttrInt(const char* name, int64_t def) const {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kInt);
  return a ? a->i : def;
}

float KernelContext::AttrFloat(const char* name, float def) const {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kFloat);
  return a ? a->f : def;
}

StrView KernelContext::AttrString(const char* name, const char* def) const {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kString);
  if (a) return a->s;
  StrView v;
  v.data = def;
  v.size = 0;
  // Bounded so g++ does not turn the loop into a strlen call (the core may
  // only call mem* and libm); defaults are short literals.
  if (def)
    while (v.size < 256 && def[v.size] != '\0') ++v.size;
  return v;
}

bool KernelContext::AttrInts(const char* name, const int64_t** values, uint32_t* count) const {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kInts);
  if (!a) return false;
  *values = a->ints;
  *count = a->count;
  return true;
}

bool KernelContext::AttrFloats(const char* name, const float** values, uint32_t* count) const {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kFloats);
  if (!a) return false;
  *values = a->floats;
  *count = a->count;
  return true;
}

const onnx::TensorView* KernelContext::AttrTensor(const char* name) const {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kTensor);
  return a ? a->t : nullptr;
}

const onnx::GraphView* KernelContext::AttrGraph(const char* name) const {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kGraph);
  return a ? a->g : nullptr;
}

Status KernelContext::RunSubgraph(const char* name, const TensorRef* const* inputs,
                                  uint32_t num_inputs, ValueSink emit, void* emit_user) {
  const onnx::AttributeView* a = Typed(name, onnx::AttrType::kGraph);
  if (!a || !a->g) {
    Status as = AttrStatus();
    return as.ok() ? Fail(EPCTX_INVALID_GRAPH, "attribute '%s' (a graph) is missing", name) : as;
  }
  if (!host_.run_subgraph)
    return Fail(EPCTX_NOT_IMPLEMENTED, "subgraphs cannot run here (no session)");
  return host_.run_subgraph(host_.user, *a, inputs, num_inputs, emit, emit_user);
}

Status KernelContext::Fail(int code, const char* fmt, ...) const {
  char msg[Status::kMaxMessage];
  va_list ap;
  va_start(ap, fmt);
  vformat(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return Status::Error(code, "%.*s node '%.*s': %s", node_.op_type.len(), node_.op_type.data,
                       node_.name.len(), node_.name.data, msg);
}

PrepareContext::PrepareContext(const onnx::NodeView& node, int64_t opset,
                               const TensorRef* const* constants, uint32_t num_inputs,
                               const PrepareHost& host)
    : host_(host),
      kernel_host_{nullptr, NoOutput, NoView, NoScratch},
      kernel_(node, opset, constants, num_inputs, kernel_host_) {}

Status PrepareContext::NoOutput(void*, uint32_t, int32_t, uint32_t, const int64_t*, TensorRef**) {
  return Status::Error(EPCTX_INVALID_ARGUMENT, "a prepare function has no outputs");
}

Status PrepareContext::NoView(void*, uint32_t, int32_t, uint32_t, const int64_t*, const void*) {
  return Status::Error(EPCTX_INVALID_ARGUMENT, "a prepare function has no outputs");
}

Status PrepareContext::Fail(int code, const char* fmt, ...) const {
  char msg[Status::kMaxMessage];
  va_list ap;
  va_start(ap, fmt);
  vformat(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const onnx::NodeView& n = node();
  return Status::Error(code, "%.*s node '%.*s': prepare: %s", n.op_type.len(), n.op_type.data,
                       n.name.len(), n.name.data, msg);
}

void KernelContext::RunChunks(uint32_t chunks, ThreadPool::ChunkFn fn, void* user) const {
  if (chunks > 1 && host_.pool) {
    host_.pool->ParallelFor(chunks, fn, user);
    return;
  }
  for (uint32_t c = 0; c < chunks; ++c) fn(user, c, 0);
}

}  // namespace epctx
