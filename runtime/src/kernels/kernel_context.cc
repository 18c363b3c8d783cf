// KernelContext: attribute look-ups with defaults, and errors naming the node.
#include "kernels/kernel.h"

#include <cstdarg>

namespace epctx {

int64_t KernelContext::AttrInt(const char* name, int64_t def) const {
  const onnx::AttributeView* a = node_.attr(name);
  return a && a->type == onnx::AttrType::kInt ? a->i : def;
}

float KernelContext::AttrFloat(const char* name, float def) const {
  const onnx::AttributeView* a = node_.attr(name);
  return a && a->type == onnx::AttrType::kFloat ? a->f : def;
}

StrView KernelContext::AttrString(const char* name, const char* def) const {
  const onnx::AttributeView* a = node_.attr(name);
  if (a && a->type == onnx::AttrType::kString) return a->s;
  StrView v;
  v.data = def;
  v.size = 0;
  // Bounded so g++ does not turn the loop into a strlen call (the core may
  // only call mem* and libm); defaults are short literals.
  if (def)
    while (v.size < 256 && def[v.size] != '\0') ++v.size;
  return v;
}

bool KernelContext::AttrInts(const char* name, const int64_t** values,
                             uint32_t* count) const {
  const onnx::AttributeView* a = node_.attr(name);
  if (!a || a->type != onnx::AttrType::kInts) return false;
  *values = a->ints;
  *count = a->count;
  return true;
}

bool KernelContext::AttrFloats(const char* name, const float** values,
                               uint32_t* count) const {
  const onnx::AttributeView* a = node_.attr(name);
  if (!a || a->type != onnx::AttrType::kFloats) return false;
  *values = a->floats;
  *count = a->count;
  return true;
}

const onnx::TensorView* KernelContext::AttrTensor(const char* name) const {
  const onnx::AttributeView* a = node_.attr(name);
  return a && a->type == onnx::AttrType::kTensor ? a->t : nullptr;
}

Status KernelContext::Fail(int code, const char* fmt, ...) const {
  char msg[Status::kMaxMessage];
  va_list ap;
  va_start(ap, fmt);
  vformat(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return Status::Error(code, "%.*s node '%.*s': %s", node_.op_type.len(),
                       node_.op_type.data, node_.name.len(), node_.name.data,
                       msg);
}

}  // namespace epctx
