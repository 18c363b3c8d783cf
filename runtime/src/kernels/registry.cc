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
    {"", "Mod", 10, kLatest, kern::Mod},
    {"", "Sum", 6, kLatest, kern::Sum},
    {"", "Mean", 6, kLatest, kern::Mean},
    {"", "Equal", 7, kLatest, kern::Equal},
    {"", "Less", 7, kLatest, kern::Less},
    {"", "Greater", 7, kLatest, kern::Greater},
    {"", "LessOrEqual", 12, kLatest, kern::LessOrEqual},
    {"", "GreaterOrEqual", 12, kLatest, kern::GreaterOrEqual},
    {"", "And", 7, kLatest, kern::And},
    {"", "Or", 7, kLatest, kern::Or},
    {"", "Xor", 7, kLatest, kern::Xor},
    {"", "Not", 1, kLatest, kern::Not},
    {"", "BitShift", 11, kLatest, kern::BitShift},
    {"", "Where", 9, kLatest, kern::Where},
    {"", "Sin", 7, kLatest, kern::Sin},
    {"", "Cos", 7, kLatest, kern::Cos},
    {"", "Tan", 7, kLatest, kern::Tan},
    {"", "Asin", 7, kLatest, kern::Asin},
    {"", "Acos", 7, kLatest, kern::Acos},
    {"", "Atan", 7, kLatest, kern::Atan},
    {"", "Sinh", 9, kLatest, kern::Sinh},
    {"", "Cosh", 9, kLatest, kern::Cosh},
    {"", "Asinh", 9, kLatest, kern::Asinh},
    {"", "Acosh", 9, kLatest, kern::Acosh},
    {"", "Atanh", 9, kLatest, kern::Atanh},
    {"", "Erf", 9, kLatest, kern::Erf},
    {"", "Ceil", 6, kLatest, kern::Ceil},
    {"", "Floor", 6, kLatest, kern::Floor},
    {"", "Round", 11, kLatest, kern::RoundHalfToEven},
    {"", "Reciprocal", 6, kLatest, kern::Reciprocal},
    {"", "Sign", 9, kLatest, kern::Sign},
    {"", "IsNaN", 9, kLatest, kern::IsNaN},
    {"", "IsInf", 10, kLatest, kern::IsInf},
    {"", "Elu", 6, kLatest, kern::Elu},
    {"", "Selu", 6, kLatest, kern::Selu},
    {"", "Celu", 12, kLatest, kern::Celu},
    {"", "Softplus", 1, kLatest, kern::Softplus},
    {"", "Softsign", 1, kLatest, kern::Softsign},
    {"", "HardSwish", 14, kLatest, kern::HardSwish},
    {"", "ThresholdedRelu", 10, kLatest, kern::ThresholdedRelu},
    {"", "PRelu", 7, kLatest, kern::PRelu},
    {"", "Shrink", 9, kLatest, kern::Shrink},
    {"", "CastLike", 15, kLatest, kern::CastLike},
    // END family elementwise

    // BEGIN family reduce
    // The rows above cap ReduceMean/Max/Min at 17; the kernels read axes
    // from input 1 from opset 18.
    {"", "ReduceMean", 18, kLatest, kern::ReduceMean},
    {"", "ReduceMax", 18, kLatest, kern::ReduceMax},
    {"", "ReduceMin", 18, kLatest, kern::ReduceMin},
    {"", "ReduceProd", 1, kLatest, kern::ReduceProd},
    {"", "ReduceL1", 1, kLatest, kern::ReduceL1},
    {"", "ReduceL2", 1, kLatest, kern::ReduceL2},
    {"", "ReduceLogSum", 1, kLatest, kern::ReduceLogSum},
    {"", "ReduceLogSumExp", 1, kLatest, kern::ReduceLogSumExp},
    {"", "ReduceSumSquare", 1, kLatest, kern::ReduceSumSquare},
    {"", "ArgMax", 1, kLatest, kern::ArgMax},
    {"", "ArgMin", 1, kLatest, kern::ArgMin},
    {"", "Hardmax", 1, kLatest, kern::Hardmax},
    {"", "LayerNormalization", 17, kLatest, kern::LayerNormalization},
    {"", "InstanceNormalization", 1, kLatest, kern::InstanceNormalization},
    {"", "LRN", 1, kLatest, kern::LRN},
    {"", "MeanVarianceNormalization", 9, kLatest, kern::MeanVarianceNormalization},
    {"", "TopK", 1, kLatest, kern::TopK},
    {"", "CumSum", 11, kLatest, kern::CumSum},
    // END family reduce

    // BEGIN family data
    {"", "Size", 1, kLatest, kern::Size},
    {"", "Trilu", 14, kLatest, kern::Trilu},
    {"", "ConstantOfShape", 9, kLatest, kern::ConstantOfShape},
    {"", "Range", 11, kLatest, kern::Range},
    {"", "EyeLike", 9, kLatest, kern::EyeLike},
    {"", "OneHot", 9, kLatest, kern::OneHot},
    {"", "GatherElements", 11, kLatest, kern::GatherElements},
    {"", "GatherND", 11, kLatest, kern::GatherND},
    {"", "Scatter", 9, 10, kern::Scatter},
    {"", "ScatterElements", 11, kLatest, kern::ScatterElements},
    {"", "ScatterND", 11, kLatest, kern::ScatterND},
    {"", "Split", 2, kLatest, kern::Split},
    {"", "Expand", 8, kLatest, kern::Expand},
    {"", "Tile", 6, kLatest, kern::Tile},
    {"", "DepthToSpace", 1, kLatest, kern::DepthToSpace},
    {"", "SpaceToDepth", 1, kLatest, kern::SpaceToDepth},
    {"", "Pad", 2, kLatest, kern::Pad},
    {"", "Compress", 9, kLatest, kern::Compress},
    {"", "NonZero", 9, kLatest, kern::NonZero},
    {"", "ReverseSequence", 10, kLatest, kern::ReverseSequence},
    {"", "Det", 11, kLatest, kern::Det},
    {"", "Unique", 11, kLatest, kern::Unique},
    {"", "RandomUniform", 1, kLatest, kern::RandomUniform},
    {"", "RandomNormal", 1, kLatest, kern::RandomNormal},
    {"", "RandomUniformLike", 1, kLatest, kern::RandomUniformLike},
    {"", "RandomNormalLike", 1, kLatest, kern::RandomNormalLike},
    {"", "Bernoulli", 15, kLatest, kern::Bernoulli},
    {"", "Multinomial", 7, kLatest, kern::Multinomial},
    {"", "Dropout", 7, kLatest, kern::Dropout},
    {"", "Einsum", 12, kLatest, kern::Einsum},
    {"", "TfIdfVectorizer", 9, kLatest, kern::TfIdfVectorizer},
    // END family data

    // BEGIN family recurrent
    {"", "RNN", 7, kLatest, kern::RNN},
    {"", "GRU", 7, kLatest, kern::GRU},
    {"", "LSTM", 7, kLatest, kern::LSTM},
    {"", "DFT", 17, kLatest, kern::DFT},
    {"", "STFT", 17, kLatest, kern::STFT},
    {"", "HannWindow", 17, kLatest, kern::HannWindow},
    {"", "HammingWindow", 17, kLatest, kern::HammingWindow},
    {"", "BlackmanWindow", 17, kLatest, kern::BlackmanWindow},
    {"", "MelWeightMatrix", 17, kLatest, kern::MelWeightMatrix},
    // END family recurrent

    // BEGIN family controlflow
    // END family controlflow

    // BEGIN family quant
    {"", "QuantizeLinear", 10, kLatest, kern::QuantizeLinear},
    {"", "DequantizeLinear", 10, kLatest, kern::DequantizeLinear},
    {"", "DynamicQuantizeLinear", 11, kLatest, kern::DynamicQuantizeLinear},
    {"", "MatMulInteger", 10, kLatest, kern::MatMulInteger},
    {"", "QLinearMatMul", 10, kLatest, kern::QLinearMatMul},
    {"", "ConvInteger", 10, kLatest, kern::ConvInteger},
    {"", "QLinearConv", 10, kLatest, kern::QLinearConv},
    {"", "NegativeLogLikelihoodLoss", 12, kLatest, kern::NegativeLogLikelihoodLoss},
    {"", "SoftmaxCrossEntropyLoss", 12, kLatest, kern::SoftmaxCrossEntropyLoss},
    {"ai.onnx.preview.training", "Adagrad", 1, 1, kern::Adagrad},
    {"ai.onnx.preview.training", "Adam", 1, 1, kern::Adam},
    {"ai.onnx.preview.training", "Momentum", 1, 1, kern::Momentum},
    // END family quant

    // BEGIN family spatial
    {"", "Resize", 18, kLatest, kern::Resize},
    {"", "Upsample", 7, 9, kern::Upsample},
    {"", "NonMaxSuppression", 10, kLatest, kern::NonMaxSuppression},
    {"", "GridSample", 16, kLatest, kern::GridSample},
    {"", "LpPool", 2, kLatest, kern::LpPool},
    {"", "GlobalLpPool", 2, kLatest, kern::GlobalLpPool},
    {"", "MaxUnpool", 9, kLatest, kern::MaxUnpool},
    {"", "RoiAlign", 10, kLatest, kern::RoiAlign},
    // END family spatial

};

bool IsDefaultDomain(StrView d) { return d.empty() || d.eq("ai.onnx"); }

}  // namespace

bool KernelTableRow(uint32_t i, const char** domain, const char** op, int64_t* min_opset,
                    int64_t* max_opset) {
  if (i >= sizeof(kKernels) / sizeof(kKernels[0])) return false;
  *domain = kKernels[i].domain;
  *op = kKernels[i].op;
  *min_opset = kKernels[i].min_opset;
  *max_opset = kKernels[i].max_opset;
  return true;
}

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
