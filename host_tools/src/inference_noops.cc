// SPDX-License-Identifier: Apache-2.0
// Inference no-ops: Dropout and zero Pad (see inference_noops.h).
#include "epctx_host/inference_noops.h"

#include <cstring>
#include <string>
#include <vector>

#include "epctx_host/specialize.h"
#include "fusion.h"

namespace epctx {
namespace host {
namespace {

// The values of an INT64 / BOOL constant held in the model; false when it
// is not one.
bool ConstantInts(const onnx::TensorProto* t, std::vector<int64_t>* out) {
  if (!t || t->data_location() == onnx::TensorProto::EXTERNAL) return false;
  out->clear();
  if (t->data_type() == onnx::TensorProto::INT64) {
    if (t->has_raw_data()) {
      out->resize(t->raw_data().size() / 8);
      if (!out->empty()) std::memcpy(out->data(), t->raw_data().data(), out->size() * 8);
    } else {
      out->assign(t->int64_data().begin(), t->int64_data().end());
    }
    return true;
  }
  if (t->data_type() == onnx::TensorProto::BOOL) {
    if (t->has_raw_data()) {
      for (char c : t->raw_data()) out->push_back(c != 0);
    } else {
      out->assign(t->int32_data().begin(), t->int32_data().end());
    }
    return true;
  }
  return false;
}

bool AllZero(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != 0) return false;
  return true;
}

bool IsInferenceDropout(const onnx::NodeProto& n, const FusionScan& scan) {
  for (const auto& a : n.attribute())
    if (a.name() == "is_test" && a.i() == 0) return false;
  if (n.output_size() > 1 && !n.output(1).empty() &&
      (scan.outputs.count(n.output(1)) || scan.readers.count(n.output(1))))
    return false;
  if (n.input_size() < 3 || n.input(2).empty()) return true;
  std::vector<int64_t> training;
  if (ConstantInts(scan.info.constant(n.input(2)), &training) && AllZero(training)) return true;
  // Training with ratio 0 keeps every element and scales by 1 (torch
  // exports its p = 0 attention dropouts so).
  std::vector<float> ratio;
  return n.input_size() >= 2 && !n.input(1).empty() &&
         FloatValues(scan.info.constant(n.input(1)), 1, &ratio) && ratio[0] == 0.0f;
}

bool IsZeroPad(const onnx::NodeProto& n, const FusionScan& scan) {
  std::vector<int64_t> pads;
  if (n.input_size() >= 2 && !n.input(1).empty()) {
    if (!ConstantInts(scan.info.constant(n.input(1)), &pads)) return false;
  } else {
    for (const auto& a : n.attribute())
      if (a.name() == "pads") pads.assign(a.ints().begin(), a.ints().end());
  }
  return AllZero(pads);
}

}  // namespace

size_t DropInferenceNoops(onnx::ModelProto& model) {
  FusionScan scan(model);
  return BypassIdentities(*model.mutable_graph(), scan, [&](const onnx::NodeProto& n) {
    if (!IsDefaultDomain(n.domain())) return false;
    if (n.op_type() == "Dropout") return IsInferenceDropout(n, scan);
    if (n.op_type() == "Pad") return IsZeroPad(n, scan);
    return false;
  });
}

}  // namespace host
}  // namespace epctx
