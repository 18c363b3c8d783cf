// Every CPU kernel, declared for the registry. Each is a KernelFn; the file
// that defines it is named for its family (conv.cc, pool.cc, ...).
#ifndef EPCTX_KERNELS_OPS_H
#define EPCTX_KERNELS_OPS_H

#include "kernels/kernel.h"

namespace epctx {
namespace kern {

#define EPCTX_KERNEL(name) Status name(KernelContext& ctx)
// conv.cc, conv_transpose.cc
EPCTX_KERNEL(Conv);
EPCTX_KERNEL(ConvTranspose);
// linalg.cc
EPCTX_KERNEL(Gemm);
EPCTX_KERNEL(MatMul);
// binary.cc
EPCTX_KERNEL(Add);
EPCTX_KERNEL(Sub);
EPCTX_KERNEL(Mul);
EPCTX_KERNEL(Div);
EPCTX_KERNEL(Pow);
EPCTX_KERNEL(Max);
EPCTX_KERNEL(Min);
// unary.cc
EPCTX_KERNEL(Relu);
EPCTX_KERNEL(LeakyRelu);
EPCTX_KERNEL(Sigmoid);
EPCTX_KERNEL(HardSigmoid);
EPCTX_KERNEL(Tanh);
EPCTX_KERNEL(Exp);
EPCTX_KERNEL(Log);
EPCTX_KERNEL(Sqrt);
EPCTX_KERNEL(Abs);
EPCTX_KERNEL(Neg);
EPCTX_KERNEL(Clip);
// pool.cc
EPCTX_KERNEL(MaxPool);
EPCTX_KERNEL(AveragePool);
EPCTX_KERNEL(GlobalAveragePool);
EPCTX_KERNEL(GlobalMaxPool);
// norm.cc
EPCTX_KERNEL(BatchNormalization);
EPCTX_KERNEL(Softmax);
EPCTX_KERNEL(LogSoftmax);
// reduce.cc
EPCTX_KERNEL(ReduceMean);
EPCTX_KERNEL(ReduceMax);
EPCTX_KERNEL(ReduceMin);
EPCTX_KERNEL(ReduceSum);
// shape_ops.cc
EPCTX_KERNEL(Reshape);
EPCTX_KERNEL(Flatten);
EPCTX_KERNEL(Squeeze);
EPCTX_KERNEL(Unsqueeze);
EPCTX_KERNEL(Identity);
EPCTX_KERNEL(Shape);
EPCTX_KERNEL(Constant);
// data_ops.cc
EPCTX_KERNEL(Transpose);
EPCTX_KERNEL(Concat);
EPCTX_KERNEL(Slice);
EPCTX_KERNEL(Gather);
// cast.cc
EPCTX_KERNEL(Cast);
// resize.cc
EPCTX_KERNEL(Resize);
// BEGIN family elementwise: comparison, logic, math, activations, Cast/CastLike, dtypes of Add..Min/Pow/Clip
// END family elementwise

// BEGIN family reduce: reductions, ArgMax/ArgMin, CumSum, TopK, Hardmax, Softmax family, normalisation, losses
// END family reduce

// BEGIN family data: shape and data movement, Pad, Split, Scatter/Gather families, Einsum, Det, random ops, Dropout
// END family data

// BEGIN family recurrent: RNN, GRU, LSTM, signal (DFT, STFT, windows, MelWeightMatrix)
// END family recurrent

// BEGIN family controlflow: If, Loop, Scan
// control_flow.cc, scan.cc
EPCTX_KERNEL(If);
EPCTX_KERNEL(Loop);
EPCTX_KERNEL(Scan);
// END family controlflow

// BEGIN family quant: QuantizeLinear .. QLinearMatMul, ConvInteger, MatMulInteger, MatMul/Gemm dtypes
// END family quant

// BEGIN family spatial: Conv/ConvTranspose/pooling variants, Resize modes, RoiAlign, GridSample, NMS, MaxUnpool
// END family spatial

#undef EPCTX_KERNEL

}  // namespace kern
}  // namespace epctx

#endif
