/* SPDX-License-Identifier: Apache-2.0 */
// The vnpu int8 level on the compiler side: reading quantisation parameters
// and recognising the QDQ groups onnxruntime's static quantiser writes
// (DequantizeLinear -> op -> QuantizeLinear). The support check
// (support_int8.cc) and lowering (lower_int8.cc) both decide through
// MatchGroup, so a node is claimed exactly when lowering can fuse it.
#ifndef EPCTX_HOST_VNPU_INT8_MATCH_H
#define EPCTX_HOST_VNPU_INT8_MATCH_H

#include <map>
#include <set>
#include <string>
#include <vector>

#include <epctx_host/backend.h>

namespace epctx {
namespace host {
namespace vnpu {

// Producers and consumers of every value of a graph.
struct GraphIndex {
  std::map<std::string, const onnx::NodeProto*> producer;
  std::map<std::string, std::vector<const onnx::NodeProto*>> consumers;
  std::set<std::string> graph_outputs;
  explicit GraphIndex(const onnx::GraphProto* g);
  const onnx::NodeProto* Producer(const std::string& v) const;
  // The one node reading v, when v is not also a graph output.
  const onnx::NodeProto* Sole(const std::string& v) const;
};

// The index of `g`, built once per graph state: the support check asks for
// it on every node, and rebuilding it each time would make partitioning
// quadratic. Reused while g's address, its nodes' addresses and its value
// names are those it was built from.
const GraphIndex& IndexOf(const onnx::GraphProto* g);

// Per-tensor quantisation of a QuantizeLinear / DequantizeLinear node.
struct QParam {
  float scale = 1.f;
  int32_t zp = 0;
  int32_t dtype = 0;  // onnx::TensorProto::INT8 / UINT8 / INT32
  bool operator==(const QParam& o) const {
    return scale == o.scale && zp == o.zp && dtype == o.dtype;
  }
};

// "" and *p filled when node (Q or DQ) is per-tensor with constant float32
// scale and int8/uint8 zero point (int32 allowed for DQ of int32).
std::string PerTensor(const onnx::NodeProto& node, const GraphInfo& info, QParam* p);

// A constant quantised tensor: DequantizeLinear of a constant, with scale
// and zero point per tensor or per index of `axis`.
struct QConst {
  std::vector<int32_t> q;  // the stored integers
  std::vector<int64_t> dims;
  int32_t dtype = 0;          // INT8 / UINT8 / INT32
  std::vector<float> scales;  // 1 or dims[axis]
  std::vector<int32_t> zps;   // same count as scales
  int64_t axis = 0;
  float Scale(int64_t index_on_axis) const {
    return scales.size() == 1 ? scales[0] : scales[size_t(index_on_axis)];
  }
};
// "" when `value` is produced by a DequantizeLinear of a constant.
std::string ConstDq(const std::string& value, const GraphIndex& ix, const GraphInfo& info,
                    QConst* c);
bool IsConstDq(const std::string& value, const GraphIndex& ix, const GraphInfo& info);

// The integers of an INT8/UINT8/INT32 constant.
std::vector<int32_t> Ints(const onnx::TensorProto& t, const std::string& what);

// A QDQ group around node n: its data inputs dequantised (dq[i]), its output
// quantised (q), possibly through one activation (act, Relu or Clip, for
// Conv/Gemm/MatMul and Add/Mul).
struct QGroup {
  const onnx::NodeProto* dq[2] = {nullptr, nullptr};
  std::vector<const onnx::NodeProto*> dq_all;  // Concat: one per input
  QParam in[2];
  std::vector<QParam> in_all;
  const onnx::NodeProto* act = nullptr;
  // MatMul: an Add of a constant bias between it and the rest (torch's
  // Linear: MatMul -> Add), input bias_input of bias_add.
  const onnx::NodeProto* bias_add = nullptr;
  int bias_input = -1;
  const onnx::NodeProto* q = nullptr;
  QParam out;
};

// The op types MatchGroup knows.
bool Int8GroupOp(const std::string& op);

// "" and *g filled when n is the centre of a QDQ group the vnpu runs in
// int8; otherwise why not.
std::string MatchGroup(const onnx::NodeProto& n, const GraphIndex& ix, const GraphInfo& info,
                       QGroup* g);

// Why the vnpu cannot run the quantisation-format node n ("" when it can);
// *handled false when n is not one (the float support check decides).
std::string UnsupportedInt8(const onnx::NodeProto& n, const GraphInfo& info, bool* handled);

}  // namespace vnpu
}  // namespace host
}  // namespace epctx

#endif
