/* SPDX-License-Identifier: Apache-2.0 */
// Internal to the compile library: moving the CPU-fallback initializers of a
// generated model into one external data file
// (ep.context_model_external_initializers_file_name, ORT threshold 0).
#ifndef EPCTX_HOST_SRC_EXTERNAL_INITIALIZERS_H
#define EPCTX_HOST_SRC_EXTERNAL_INITIALIZERS_H

#include <string>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

// Rewrites every initializer of `model` with data (all but strings) as
// external data in `location` (relative to the model), each at a multiple of
// 64 bytes, and returns the file's bytes; the caller writes them to the file.
// Throws ToolError naming an initializer whose data cannot be converted.
std::string ExternalizeInitializers(onnx::ModelProto& model, const std::string& location);

}  // namespace host
}  // namespace epctx

#endif
