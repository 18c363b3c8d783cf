/* SPDX-License-Identifier: Apache-2.0 */
// The ONNX op types the vnpu runs one-to-one, by vnpu op: the support check
// (support.cc) claims them and lowering (lower.cc) maps them, so both read
// these lists.
#ifndef EPCTX_HOST_VNPU_OPS_H
#define EPCTX_HOST_VNPU_OPS_H

#include <map>
#include <set>
#include <string>

#include "vnpu_ir.h"

namespace epctx {
namespace host {
namespace vnpu {

// UNARY ops; also fused into a preceding CONV2D/GEMM.
inline const std::set<std::string> kActivationOps = {"Relu", "LeakyRelu", "Sigmoid",  "HardSigmoid",
                                                     "Clip", "Tanh",      "HardSwish"};
// BINARY ops (numpy broadcasting), by kind.
inline const std::map<std::string, fb::BinaryKind> kBinaryOps = {
    {"Add", fb::BinaryKind::ADD},     {"Sub", fb::BinaryKind::SUB},
    {"Mul", fb::BinaryKind::MUL},     {"Div", fb::BinaryKind::DIV},
    {"Max", fb::BinaryKind::MAXIMUM}, {"Min", fb::BinaryKind::MINIMUM}};
// Reshape-like ops: an alias or a COPY.
inline const std::set<std::string> kCopyOps = {"Reshape",   "Flatten",  "Squeeze",
                                               "Unsqueeze", "Identity", "Dropout"};

}  // namespace vnpu
}  // namespace host
}  // namespace epctx

#endif
