/* SPDX-License-Identifier: Apache-2.0 */
// What the QDQ fusions (fuse_qdq.cc: QLinearConv, fuse_qdq_matmul.cc:
// QGemm) read of a DequantizeLinear / QuantizeLinear and write back: its
// constant scales and zero points, a float or DequantizeLinear(int32) bias
// as int32 in the accumulator's scale, and zero-point inputs for operands
// that had none.
#ifndef EPCTX_HOST_QDQ_PARAMS_H
#define EPCTX_HOST_QDQ_PARAMS_H

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

bool IsOp(const onnx::NodeProto* n, const char* op);

size_t Elements(const onnx::TensorProto& t);

// A QuantizeLinear / DequantizeLinear's constant parameters: scales (1 or
// `channels`, positive and finite), zero points (as many) and the zero
// point's dtype (UINT8 without one). False when not constant or of another
// count.
struct QParams {
  std::vector<float> scale;
  std::vector<int32_t> zp;
  int32_t dtype = onnx::TensorProto::UINT8;
  std::string zp_name;  // "" when absent
  float scale_at(size_t c) const { return scale[scale.size() == 1 ? 0 : c]; }
};
bool ParamsOf(const onnx::NodeProto& n, const GraphInfo& info, size_t channels, QParams* q);

// The node's `axis` attribute (1 without one, DequantizeLinear's default).
int64_t AxisOf(const onnx::NodeProto& n);

// `base`, or base_1, base_2, ...: the first name not in `names` (added).
std::string Fresh(std::set<std::string>* names, const std::string& base);

// The `count` values of bias `value` in the accumulator's scale x_scale *
// w.scale_at(c), rounded: a float32 constant, or a DequantizeLinear
// (`producer`) of an INT32 constant, whose integers are taken as they are
// when its scale is the accumulator's and its zero point 0. False when the
// bias is neither.
bool AccumulatorBias(const std::string& value, const onnx::NodeProto* producer,
                     const GraphInfo& info, float x_scale, const QParams& w, size_t count,
                     std::vector<int32_t>* out);

// p's zero-point input, or the name of a new scalar zero of `dtype` (the
// operand's) added to g's initializers.
std::string ZeroPointInput(const QParams& p, int32_t dtype, const std::string& base,
                           std::set<std::string>* names, onnx::GraphProto& g);

}  // namespace host
}  // namespace epctx

#endif
