/* SPDX-License-Identifier: Apache-2.0 */
// Loading ONNX models and writing output files.
//
// LoadModel reads a model from a path into a ModelProto the caller owns:
// external initializers are read into raw_data (the generated model must not
// depend on the source's data files), then onnx::checker runs. Failures throw
// ToolError with the path and a one-line reason.
#ifndef EPCTX_HOST_MODEL_IO_H
#define EPCTX_HOST_MODEL_IO_H

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

onnx::ModelProto LoadModel(const std::string& path);

// The same for a model in memory. External data is read from
// `external_folder` (session.model_external_initializers_file_folder_path);
// a model with external data and no folder is INVALID_ARGUMENT naming that key.
onnx::ModelProto LoadModelFromBuffer(const std::string& bytes, const std::string& name,
                                     const std::string& external_folder);
bool HasExternalData(const onnx::ModelProto& model);

// Parses model bytes (no external data). `name` is used in error messages.
onnx::ModelProto ParseModel(const std::string& bytes, const std::string& name);

std::string ReadFileBytes(const std::string& path);  // throws ToolError
bool FileExists(const std::string& path);

// Writes through "<path>.tmp.<pid>" and rename(), so readers never see a
// half-written file. Throws ToolError.
void WriteFileAtomic(const std::string& path, const void* data, size_t size);

// Path helpers. Stem: file name without its last extension
// ("/a/b/m.v2.onnx" -> "m.v2"); Dir: "" or the part up to the last '/',
// including it; BaseName: file name only.
std::string PathStem(const std::string& path);
std::string PathDir(const std::string& path);
std::string PathBaseName(const std::string& path);

// "model.onnx" -> "model_ctx.onnx": the text after the last '.' of the file
// name is replaced; no extension -> "_ctx.onnx" appended.
std::string DefaultOutputPath(const std::string& input);

}  // namespace host
}  // namespace epctx

#endif
