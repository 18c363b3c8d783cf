// SPDX-License-Identifier: Apache-2.0
// ORT's graph view (OrtGraph, OrtNode, OrtValueInfo, OrtOpAttr) written back
// as ONNX protobuf, so that epctx's runtime and compile library take what
// ORT hands the plugin EP. Everything is copied: the ORT objects need only
// live during the call. Errors are OrtStatus values the caller owns.
#ifndef EPCTX_ORT_EP_ONNX_FROM_ORT_H
#define EPCTX_ORT_EP_ONNX_FROM_ORT_H

#include <onnx/onnx_pb.h>

#include "ort_api.h"

namespace epctx {
namespace ort_ep {

// Name, element type and shape (ORT's and ONNX's element-type numbers are
// the same: TensorProto.DataType).
OrtStatus* ValueInfoToProto(const OrtApi& api, const OrtValueInfo* vi, onnx::ValueInfoProto* out);

// A node with its inputs, outputs and attributes (NOT_IMPLEMENTED for a
// graph attribute: If/Loop/Scan bodies are not converted).
OrtStatus* NodeToProto(const OrtApi& api, const OrtNode* node, onnx::NodeProto* out);

// A whole graph: opsets, inputs, outputs, initializers (their data copied)
// and nodes, as a model.
OrtStatus* GraphToModel(const OrtApi& api, const OrtGraph* graph, onnx::ModelProto* out);

}  // namespace ort_ep
}  // namespace epctx

#endif
