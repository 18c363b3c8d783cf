// FindKernel: the table of CPU kernels by (domain, op_type, opset range).
//
// The opset is the model's import for the node's domain, so a row covers
// every model opset whose version of the op has the semantics the kernel
// implements. Rows end where the spec changes behaviour we do not handle
// (Reduce{Mean,Max,Min} take axes as an input from 18; Resize gains
// antialias/axes in 18); rows for ops whose later versions only add types
// run to 21.
#include "kernels/kernel.h"
#include "kernels/ops.h"

namespace epctx {
namespace {

struct KernelRow {
  const char* domain;  // "" is the default ONNX domain
  const char* op;
  int64_t min_opset;
  int64_t max_opset;
  KernelFn fn;
};

constexpr int64_t kLatest = 21;

const KernelRow kKernels[] = {
    {"", "Conv", 1, kLatest, kern::Conv},
    {"", "ConvTranspose", 1, kLatest, kern::ConvTranspose},
    {"", "Gemm", 7, kLatest, kern::Gemm},
    {"", "MatMul", 1, kLatest, kern::MatMul},
    {"", "Add", 7, kLatest, kern::Add},
    {"", "Sub", 7, kLatest, kern::Sub},
    {"", "Mul", 7, kLatest, kern::Mul},
    {"", "Div", 7, kLatest, kern::Div},
    {"", "Pow", 7, kLatest, kern::Pow},
    {"", "Max", 8, kLatest, kern::Max},
    {"", "Min", 8, kLatest, kern::Min},
    {"", "Relu", 6, kLatest, kern::Relu},
    {"", "LeakyRelu", 6, kLatest, kern::LeakyRelu},
    {"", "Sigmoid", 6, kLatest, kern::Sigmoid},
    {"", "HardSigmoid", 6, kLatest, kern::HardSigmoid},
    {"", "Tanh", 6, kLatest, kern::Tanh},
    {"", "Exp", 6, kLatest, kern::Exp},
    {"", "Log", 6, kLatest, kern::Log},
    {"", "Sqrt", 6, kLatest, kern::Sqrt},
    {"", "Abs", 6, kLatest, kern::Abs},
    {"", "Neg", 6, kLatest, kern::Neg},
    {"", "Clip", 6, kLatest, kern::Clip},
    {"", "Identity", 1, kLatest, kern::Identity},
    {"", "MaxPool", 1, kLatest, kern::MaxPool},
    {"", "AveragePool", 1, kLatest, kern::AveragePool},
    {"", "GlobalAveragePool", 1, kLatest, kern::GlobalAveragePool},
    {"", "GlobalMaxPool", 1, kLatest, kern::GlobalMaxPool},
    {"", "BatchNormalization", 7, kLatest, kern::BatchNormalization},
    {"", "Softmax", 1, kLatest, kern::Softmax},
    {"", "LogSoftmax", 1, kLatest, kern::LogSoftmax},
    {"", "ReduceMean", 1, 17, kern::ReduceMean},
    {"", "ReduceMax", 1, 17, kern::ReduceMax},
    {"", "ReduceMin", 1, 17, kern::ReduceMin},
    {"", "ReduceSum", 1, kLatest, kern::ReduceSum},
    {"", "Reshape", 5, kLatest, kern::Reshape},
    {"", "Flatten", 1, kLatest, kern::Flatten},
    {"", "Squeeze", 1, kLatest, kern::Squeeze},
    {"", "Unsqueeze", 1, kLatest, kern::Unsqueeze},
    {"", "Transpose", 1, kLatest, kern::Transpose},
    {"", "Concat", 4, kLatest, kern::Concat},
    {"", "Slice", 1, kLatest, kern::Slice},
    {"", "Gather", 1, kLatest, kern::Gather},
    {"", "Shape", 1, kLatest, kern::Shape},
    {"", "Cast", 6, kLatest, kern::Cast},
    {"", "Constant", 1, kLatest, kern::Constant},
    {"", "Resize", 10, 17, kern::Resize},

    // BEGIN family elementwise
    // END family elementwise

    // BEGIN family reduce
    // END family reduce

    // BEGIN family data
    // END family data

    // BEGIN family recurrent
    // END family recurrent

    // BEGIN family controlflow
    {"", "If", 1, kLatest, kern::If},
    {"", "Loop", 1, kLatest, kern::Loop},
    {"", "Scan", 8, kLatest, kern::Scan},
    // END family controlflow

    // BEGIN family quant
    // END family quant

    // BEGIN family spatial
    // END family spatial

};

bool IsDefaultDomain(StrView d) { return d.empty() || d.eq("ai.onnx"); }

}  // namespace

KernelFn FindKernel(StrView domain, StrView op_type, int64_t opset) {
  const bool default_domain = IsDefaultDomain(domain);
  for (const KernelRow& row : kKernels) {
    const bool row_default = row.domain[0] == '\0';
    if (row_default ? !default_domain : !domain.eq(row.domain)) continue;
    if (!op_type.eq(row.op)) continue;
    if (opset < row.min_opset || opset > row.max_opset) continue;
    return row.fn;
  }
  return nullptr;
}

}  // namespace epctx
