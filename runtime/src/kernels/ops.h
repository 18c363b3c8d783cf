/* SPDX-License-Identifier: Apache-2.0 */
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
// binary.cc
EPCTX_KERNEL(Mod);
EPCTX_KERNEL(Sum);
EPCTX_KERNEL(Mean);
// compare.cc
EPCTX_KERNEL(Equal);
EPCTX_KERNEL(Less);
EPCTX_KERNEL(Greater);
EPCTX_KERNEL(LessOrEqual);
EPCTX_KERNEL(GreaterOrEqual);
EPCTX_KERNEL(And);
EPCTX_KERNEL(Or);
EPCTX_KERNEL(Xor);
EPCTX_KERNEL(Not);
EPCTX_KERNEL(BitShift);
// where.cc
EPCTX_KERNEL(Where);
// math.cc
EPCTX_KERNEL(Sin);
EPCTX_KERNEL(Cos);
EPCTX_KERNEL(Tan);
EPCTX_KERNEL(Asin);
EPCTX_KERNEL(Acos);
EPCTX_KERNEL(Atan);
EPCTX_KERNEL(Sinh);
EPCTX_KERNEL(Cosh);
EPCTX_KERNEL(Asinh);
EPCTX_KERNEL(Acosh);
EPCTX_KERNEL(Atanh);
EPCTX_KERNEL(Erf);
EPCTX_KERNEL(Ceil);
EPCTX_KERNEL(Floor);
EPCTX_KERNEL(RoundHalfToEven);  // Round
EPCTX_KERNEL(Reciprocal);
EPCTX_KERNEL(Sign);
EPCTX_KERNEL(IsNaN);
EPCTX_KERNEL(IsInf);
// activation.cc
EPCTX_KERNEL(Elu);
EPCTX_KERNEL(Selu);
EPCTX_KERNEL(Celu);
EPCTX_KERNEL(Softplus);
EPCTX_KERNEL(Softsign);
EPCTX_KERNEL(HardSwish);
EPCTX_KERNEL(ThresholdedRelu);
EPCTX_KERNEL(PRelu);
EPCTX_KERNEL(Shrink);
// cast.cc
EPCTX_KERNEL(CastLike);
// END family elementwise

// BEGIN family reduce: reductions, ArgMax/ArgMin, CumSum, TopK, Hardmax, Softmax family, normalisation, losses
// reduce.cc (ReduceMean/Max/Min/Sum are declared above)
EPCTX_KERNEL(ReduceProd);
EPCTX_KERNEL(ReduceL1);
EPCTX_KERNEL(ReduceL2);
EPCTX_KERNEL(ReduceLogSum);
EPCTX_KERNEL(ReduceLogSumExp);
EPCTX_KERNEL(ReduceSumSquare);
// arg_reduce.cc
EPCTX_KERNEL(ArgMax);
EPCTX_KERNEL(ArgMin);
// softmax.cc (Softmax and LogSoftmax are declared above)
EPCTX_KERNEL(Hardmax);
// norm.cc (BatchNormalization is declared above)
EPCTX_KERNEL(LayerNormalization);
EPCTX_KERNEL(InstanceNormalization);
EPCTX_KERNEL(LRN);
EPCTX_KERNEL(MeanVarianceNormalization);
// topk.cc, cumsum.cc
EPCTX_KERNEL(TopK);
EPCTX_KERNEL(CumSum);
// END family reduce

// BEGIN family data: shape and data movement, Pad, Split, Scatter/Gather families, Einsum, Det, random ops, Dropout
// shape_ops.cc
EPCTX_KERNEL(Size);
// trilu.cc
EPCTX_KERNEL(Trilu);
// generate.cc
EPCTX_KERNEL(ConstantOfShape);
EPCTX_KERNEL(Range);
EPCTX_KERNEL(EyeLike);
EPCTX_KERNEL(OneHot);
// gather_nd.cc
EPCTX_KERNEL(GatherElements);
EPCTX_KERNEL(GatherND);
// scatter.cc
EPCTX_KERNEL(Scatter);
EPCTX_KERNEL(ScatterElements);
EPCTX_KERNEL(ScatterND);
// split.cc
EPCTX_KERNEL(Split);
// expand_tile.cc
EPCTX_KERNEL(Expand);
EPCTX_KERNEL(Tile);
// depth_space.cc
EPCTX_KERNEL(DepthToSpace);
EPCTX_KERNEL(SpaceToDepth);
// pad.cc
EPCTX_KERNEL(Pad);
// select.cc
EPCTX_KERNEL(Compress);
EPCTX_KERNEL(NonZero);
EPCTX_KERNEL(ReverseSequence);
// det.cc
EPCTX_KERNEL(Det);
// unique.cc
EPCTX_KERNEL(Unique);
// random.cc
EPCTX_KERNEL(RandomUniform);
EPCTX_KERNEL(RandomNormal);
EPCTX_KERNEL(RandomUniformLike);
EPCTX_KERNEL(RandomNormalLike);
EPCTX_KERNEL(Bernoulli);
EPCTX_KERNEL(Multinomial);
EPCTX_KERNEL(Dropout);
// einsum.cc
EPCTX_KERNEL(Einsum);
// tfidf.cc
EPCTX_KERNEL(TfIdfVectorizer);
// END family data

// BEGIN family recurrent: RNN, GRU, LSTM, signal (DFT, STFT, windows, MelWeightMatrix)
// rnn.cc
EPCTX_KERNEL(RNN);
EPCTX_KERNEL(GRU);
EPCTX_KERNEL(LSTM);
// signal.cc, signal_windows.cc
EPCTX_KERNEL(DFT);
EPCTX_KERNEL(STFT);
EPCTX_KERNEL(HannWindow);
EPCTX_KERNEL(HammingWindow);
EPCTX_KERNEL(BlackmanWindow);
EPCTX_KERNEL(MelWeightMatrix);
// END family recurrent

// BEGIN family controlflow: If, Loop, Scan
// END family controlflow

// BEGIN family quant: QuantizeLinear .. QLinearMatMul, ConvInteger, MatMulInteger, MatMul/Gemm dtypes
// quant.cc
EPCTX_KERNEL(QuantizeLinear);
EPCTX_KERNEL(DequantizeLinear);
EPCTX_KERNEL(DynamicQuantizeLinear);
// qlinear.cc
EPCTX_KERNEL(MatMulInteger);
EPCTX_KERNEL(QLinearMatMul);
EPCTX_KERNEL(ConvInteger);
EPCTX_KERNEL(QLinearConv);
// loss.cc
EPCTX_KERNEL(NegativeLogLikelihoodLoss);
EPCTX_KERNEL(SoftmaxCrossEntropyLoss);
// training.cc (domain ai.onnx.preview.training)
EPCTX_KERNEL(Adagrad);
EPCTX_KERNEL(Adam);
EPCTX_KERNEL(Momentum);
// END family quant

// BEGIN family spatial: Conv/ConvTranspose/pooling variants, Resize modes, RoiAlign, GridSample, NMS, MaxUnpool
// resize.cc
EPCTX_KERNEL(Upsample);
// nms.cc
EPCTX_KERNEL(NonMaxSuppression);
// grid_sample.cc
EPCTX_KERNEL(GridSample);
// pool.cc
EPCTX_KERNEL(LpPool);
EPCTX_KERNEL(GlobalLpPool);
// max_unpool.cc
EPCTX_KERNEL(MaxUnpool);
// roi_align.cc
EPCTX_KERNEL(RoiAlign);
// END family spatial

#undef EPCTX_KERNEL

}  // namespace kern
}  // namespace epctx

#endif
