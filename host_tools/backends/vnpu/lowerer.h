// SPDX-License-Identifier: Apache-2.0
// Lowerer: one partition's ONNX nodes -> one IrGraph (vnpu_ir.h). The float
// ops are lowered in lower.cc, the int8 level in lower_int8.cc; this class
// is what both halves share: the graph under construction, the value ->
// tensor map, and the helpers that make tensors and fuse activations.
//
// A Lowerer lowers one partition once (Run moves its graph out). The
// partition, GraphInfo and WeightStore are borrowed and must outlive it;
// the NodeProto pointers it holds point into GraphInfo's model.
#ifndef EPCTX_HOST_VNPU_LOWERER_H
#define EPCTX_HOST_VNPU_LOWERER_H

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "int8_match.h"
#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace vnpu {

// Product of d[from, to) (1 when empty).
int64_t Product(const std::vector<int64_t>& d, size_t from, size_t to);

class Lowerer {
 public:
  Lowerer(const Partition& p, const GraphInfo& info, WeightStore& ws)
      : p_(p), info_(info), ws_(ws) {}

  // Lowers the partition; throws CompileError naming the node.
  IrGraph Run();

 private:
  // lower.cc: the helpers both halves use, then the float ops.
  [[noreturn]] void Fail(const std::string& why) const;
  int Add(const IrTensor& t);
  std::vector<int64_t> Shape(const std::string& name) const;
  // A node with float16 constants keeps its weights float16 in the
  // container (stream 1.2; the driver widens them once at bind) when every
  // packed value is exactly a float16: packing and zero padding are; BN
  // folding and Gemm alpha/beta scaling usually are not, and stay float32.
  int Weight(const std::vector<float>& v, std::vector<int64_t> shape, const std::string& name);
  // A value read by the current node.
  int In(const std::string& name);
  bool IsHalf(const std::string& name) const;
  // Whether `name` is written straight into the caller's output buffer (a
  // float16 output is computed in the arena and narrowed at the end).
  bool DirectOutput(const std::string& name) const { return outputs_.count(name) && !IsHalf(name); }
  // A value the current node produces.
  int Out(const std::string& name);
  const onnx::NodeProto* SoleConsumer(const std::string& value, const std::set<std::string>& ops);
  void SetAct(IrOp& op, const onnx::NodeProto& n);
  // The sole consumer of `value` when it is a Mul or Add of it (either
  // operand order) by a float constant that is one value or, when C > 0, one
  // per channel of axis 1 (shape [C, 1, 1], [1, C, 1, 1], ...: the Add of a
  // bias that an exporter kept apart from its conv), with the constant as C
  // values (1 for C 0) in *v and whether it multiplies in *mul; else null.
  // A convolution folds it into its weights and bias (ocr_det: 28 Conv ->
  // Mul(s) -> Add(t), and its head's ConvTranspose -> Add(bias)).
  const onnx::NodeProto* ChannelAffine(const std::string& value, int64_t C, std::vector<float>* v,
                                       bool* mul);
  const onnx::NodeProto* ScalarAffine(const std::string& value, float* v, bool* mul);
  // Folds what follows a convolution's output into its weights and bias for
  // as long as it is affine per output channel: a BatchNormalization, or a
  // Mul or Add by a constant that is one value or one per channel.
  // scale(o, s) multiplies output channel o's weights by s. Returns the value
  // the convolution now produces.
  template <typename Scale>
  std::string FoldChannelAffine(std::string value, int64_t CO, std::vector<float>& b,
                                bool* has_bias, const Scale& scale);
  // The one-element float constant operand of binary node n whose other
  // operand is `value`, in *k; false when n is not that.
  bool ScalarOperand(const onnx::NodeProto& n, const std::string& value, float* k);
  // The only consumer of `value` when it has exactly one and is not a
  // partition output.
  const onnx::NodeProto* OnlyConsumer(const std::string& value);
  // Hard-swish as exporters write it, x * clip(x + 3, 0, 6) / 6 (Add, Clip,
  // Mul, Div: 24 in ocr_det, each a pass over memory), then at most one
  // scalar Mul and one scalar Add, in that order: into op's HARD_SWISH
  // activation, whose alpha and beta are that Mul and Add (the driver keeps
  // the ops' order, so the result is the same floats). Returns the value op
  // now produces.
  std::string FuseHardSwish(IrOp& op, const std::string& x);
  // x * Sigmoid(x) (SiLU, as exporters write it: a Sigmoid and a Mul of
  // both) as SWISH; returns the value the op now writes.
  std::string FuseSwish(IrOp& op, const std::string& x);
  // Fuses a following activation into op; returns the value op now produces.
  // A LeakyRelu whose only consumer is a Max with a one-element constant
  // takes the Max too (LEAKY_RELU_MAX, stream 1.5: the same floats, one
  // pass over the output while it is in cache instead of two more).
  std::string FuseAct(IrOp& op, const std::string& value);
  // Pads [top, left, bottom, right] from pads / auto_pad.
  void Pads(const onnx::NodeProto& n, const std::vector<int64_t>& in, int64_t kh, int64_t kw,
            int64_t sh, int64_t sw, int64_t dh, int64_t dw, IrOp& op);
  // Tensor t seen with another shape of the same size: an alias when t lives
  // in the arena, else a COPY into the arena.
  int View(int t, std::vector<int64_t> shape, const std::string& name);
  // Binds value `name` to the bytes of arena tensor t (same size, another
  // shape): an alias, or a COPY when the value is a partition output.
  void BindAs(int t, const std::string& name);
  // A 1-D convolution (NCL) runs as a 2-D one over [N, C, 1, L]: the input
  // and output are viewed with H = 1 and the window is 1 x K.
  void Conv(const onnx::NodeProto& n);
  // ONNX ConvTranspose -> CONV_TRANSPOSE2D; weights keep ONNX's layout
  // [Cin][Cout_g][KH][KW]. An explicit output_shape is honoured through the
  // output tensor's shape, which shape inference derived from it: the pads
  // are what makes the formula meet that shape.
  void ConvTranspose(const onnx::NodeProto& n);
  void ScaleShiftOf(const onnx::NodeProto& bn, size_t C, std::vector<float>* scale,
                    std::vector<float>* shift);
  void Gemm(const onnx::NodeProto& n);
  // Element strides of an operand of shape xs broadcast to the output ys
  // (0 along broadcast dimensions).
  std::vector<int64_t> Strides(const std::vector<int64_t>& xs, const std::vector<int64_t>& ys);
  // A BINARY op out = a (kind) b, operands of shapes as and bs broadcast to ys.
  void PushBinary(fb::BinaryKind kind, int a, const std::vector<int64_t>& as, int b,
                  const std::vector<int64_t>& bs, int out, const std::vector<int64_t>& ys);
  void Binary(const onnx::NodeProto& n);
  // x + x * s, where s is a small gate (the per-channel [1, C, 1, 1] of a
  // squeeze-and-excitation block that adds its input back), is x * (1 + s):
  // the + 1 on the gate, then one pass over x instead of two (ocr_det's
  // 96 x 160 x 160 Mul and Add, 1.9 ms). The same value up to rounding.
  bool SelfGated(const onnx::NodeProto& mul);
  void Pool(const onnx::NodeProto& n);
  void Softmax(const onnx::NodeProto& n);
  void Node(const onnx::NodeProto& n);

  // lower_transformer.cc: the transformer level (stream 1.8).
  struct Gelu {
    float alpha = 1.f, beta = 0.5f;
    std::vector<const onnx::NodeProto*> nodes;  // Div/Mul, Erf, Add, Mul, Mul
    std::string output;
  };
  // A batched MatMul operand read through folded Transposes (and, for A, a
  // scalar Mul/Div as alpha): the source value and the element stride of
  // each of the operand's dimensions in it.
  struct OperandView {
    std::string source;
    std::vector<int64_t> strides;
    float alpha = 1.f;
  };
  void UnaryNode(const onnx::NodeProto& n);
  void ReduceNode(const onnx::NodeProto& n);
  std::vector<float> ConstOperand(const onnx::NodeProto& n, const std::string& value,
                                  uint64_t count);
  // The decomposed LayerNorm starting at ReduceMean r1 as one LAYER_NORM;
  // false when r1 does not start one.
  bool LayerNormPattern(const onnx::NodeProto& r1);
  void LayerNormNode(const onnx::NodeProto& n);
  // Exact GELU reading x; `whole`: x feeds nothing else.
  bool MatchGelu(const std::string& x, bool whole, Gelu* m);
  std::string FuseGelu(IrOp& op, const std::string& x);
  bool GeluNode(const onnx::NodeProto& scale);
  // The value a MatMul now writes after folding its bias Add into *bias.
  std::string FoldMatMulBias(const onnx::NodeProto& n, int64_t N, std::vector<float>* bias);
  // Before lowering: the Transposes that batched MatMuls read through.
  void PlanFolds();
  void BatchMatMul(const onnx::NodeProto& n);
  void StridedCopyNode(const onnx::NodeProto& n);
  void ResizeNode(const onnx::NodeProto& n);
  void PadNode(const onnx::NodeProto& n);
  void RecurrentNode(const onnx::NodeProto& n);
  // Lowers n if it belongs to the transformer level; false otherwise.
  bool TransformerNode(const onnx::NodeProto& n);

  // lower_int8.cc: the int8 level. Node, In, Out and Run call Int8Node,
  // LazyInt8 and ValueDType.
  fb::DType ValueDType(const std::string& name) const;
  bool InPartition(const onnx::NodeProto* n);
  int IntWeight(const std::vector<int32_t>& v, int32_t onnx_dtype, std::vector<int64_t> shape,
                const std::string& name);
  // A quantised constant as float32 (the float path: a consumer outside any
  // int8 group).
  std::vector<float> Dequantized(const QConst& c);
  // In()'s fallback: the float value of a DequantizeLinear, made on demand.
  int LazyInt8(const std::string& name);
  // The integer tensor a group's DequantizeLinear reads.
  int QIn(const onnx::NodeProto* dq) { return In(dq->input(0)); }
  // Output clamp of a MAC group from its activation (Relu / Clip) folded
  // into the output quantisation.
  void ActClamp(const QGroup& g, IrOp& op);
  // What QCONV2D / QGEMM need besides their geometry.
  struct MacQ;
  void FinishMac(IrOp& op, MacQ& m, const std::string& value, int64_t channels);
  void QConvGeometry(const onnx::NodeProto& n, const std::vector<int64_t>& wd, IrOp& op);
  void QGemmGeometry(const onnx::NodeProto& n, int64_t N, IrOp& op);
  // Bias of a MAC group in the accumulator's scale x_scale * w_scale[c].
  std::vector<int32_t> GroupBias(const onnx::NodeProto& n, int i, float sx, const QConst& w,
                                 int64_t channels);
  void GroupMac(const onnx::NodeProto& n, const QGroup& g);
  // Table mapping each byte of `in` quantisation through f to `out`'s.
  template <typename F>
  int LutTable(const QParam& in, const QParam& out, F f, const std::string& name);
  int Lut(int x, int table, const std::string& value, bool output);
  // A QLUT whose table is a clamp (Relu / Clip in the output's quantisation)
  // and whose input only a QCONV2D / QGEMM writes and only it reads becomes
  // that op's output range; run once every node is lowered.
  void FuseClampLuts();
  int Requant(int x, const QParam& in, const QParam& out, const std::string& name);
  void GroupLut(const onnx::NodeProto& n, const QGroup& g);
  // DequantizeLinear -> x * Sigmoid(x) or x * HardSigmoid(x) -> QuantizeLinear
  // (SiLU, HardSwish as exporters write them) as one QLUT; false when n, the
  // Sigmoid / HardSigmoid, is not the centre of such a group.
  bool SwishLut(const onnx::NodeProto& n);
  void GroupBinary(const onnx::NodeProto& n, const QGroup& g);
  void GroupMaxPool(const onnx::NodeProto& n, const QGroup& g);
  void GroupConcat(const onnx::NodeProto& n, const QGroup& g);
  // Reshape-like between equal quantisations: an alias, or a COPY.
  void GroupView(const QGroup& g);
  // QLinearConv / QLinearMatMul / ConvInteger / MatMulInteger.
  void DirectMac(const onnx::NodeProto& n);
  // Lowers n if it belongs to the int8 level; false for the float path.
  bool Int8Node(const onnx::NodeProto& n);

  const Partition& p_;
  const GraphInfo& info_;
  WeightStore& ws_;
  bool half_node_ = false;  // the node being lowered has a float16 constant
  IrGraph g_;
  std::map<std::string, int> by_name_;
  std::map<std::string, uint32_t> outputs_;
  std::map<std::string, std::vector<const onnx::NodeProto*>> consumers_;
  std::set<const onnx::NodeProto*> consumed_;
  const onnx::NodeProto* node_ = nullptr;
  // The int8 level's.
  GraphIndex ix_{info_.graph};
  std::map<std::string, const onnx::NodeProto*> pending_dq_;
  std::set<const onnx::NodeProto*> part_nodes_;
  std::map<int, std::vector<int32_t>> lut_values_;  // QLUT table tensor -> its values
  // The transformer level's.
  std::map<std::string, OperandView> folds_;  // MatMul output + ":a" / ":b"
};

}  // namespace vnpu
}  // namespace host
}  // namespace epctx

#endif
