// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime's C API as the plugin EP sees it. onnxruntime_c_api.h
// includes onnxruntime_ep_c_api.h itself (which has no include guard), so
// that one header is all the EP includes. The API table comes from the
// OrtApiBase ORT passes to CreateEpFactories: the library never links
// libonnxruntime.
#ifndef EPCTX_ORT_EP_ORT_API_H
#define EPCTX_ORT_EP_ORT_API_H

#include <onnxruntime_c_api.h>

#include <string>

namespace epctx {
namespace ort_ep {

// An OrtStatus for ORT: epctx's codes are ORT's numbers up to
// ORT_MODEL_REQUIRES_COMPILATION; epctx's own (above) become ORT_EP_FAIL.
inline OrtStatus* MakeStatus(const OrtApi& api, int code, const std::string& message) {
  OrtErrorCode ort = code >= ORT_FAIL && code <= ORT_MODEL_REQUIRES_COMPILATION
                         ? static_cast<OrtErrorCode>(code)
                         : ORT_EP_FAIL;
  return api.CreateStatus(ort, message.c_str());
}

}  // namespace ort_ep
}  // namespace epctx

// Returns from the enclosing function when an ORT call fails.
#define EPCTX_ORT_RETURN_IF_ERROR(expr)  \
  do {                                   \
    OrtStatus* ort_status_ = (expr);     \
    if (ort_status_) return ort_status_; \
  } while (0)

#endif
