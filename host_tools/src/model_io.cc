// SPDX-License-Identifier: Apache-2.0
// Loading models (with external data) and writing files atomically.
#include "epctx_host/model_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include <onnx/checker.h>

#include "epctx_host/diagnostics.h"
#include "epctx_host/topo_sort.h"

namespace epctx {
namespace host {
namespace {

// Reads external initializers into raw_data. The generated model must stand
// alone (design: "newly generated models should not depend on any original
// source files"), and the folding/compiling stages need the bytes anyway.
// `dir` is "" or ends in '/'; `model_path` names the model in messages.
void InlineExternalData(onnx::GraphProto& graph, const std::string& model_path,
                        const std::string& dir) {
  for (auto& t : *graph.mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string location;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (const auto& e : t.external_data()) {
      try {
        if (e.key() == "location") location = e.value();
        if (e.key() == "offset") offset = std::stoull(e.value());
        if (e.key() == "length") {
          length = std::stoull(e.value());
          has_length = true;
        }
      } catch (const std::exception&) {
        throw ToolError(model_path, "initializer '" + t.name() + "': bad external_data " + e.key() +
                                        " '" + e.value() + "'");
      }
    }
    if (location.empty())
      throw ToolError(model_path, "initializer '" + t.name() + "': external data without location");
    const std::string data_path = (location[0] == '/') ? location : dir + location;
    std::string bytes;
    try {
      bytes = ReadFileBytes(data_path);
    } catch (const ToolError& e) {
      throw ToolError(model_path, "initializer '" + t.name() + "': external data " + data_path +
                                      ": " + e.what());
    }
    if (offset > bytes.size() || (has_length && length > bytes.size() - offset))
      throw ToolError(model_path, "initializer '" + t.name() + "': external data range [" +
                                      std::to_string(offset) + ", +" + std::to_string(length) +
                                      ") beyond the " + std::to_string(bytes.size()) +
                                      " bytes of " + data_path);
    if (!has_length) length = bytes.size() - offset;
    t.set_raw_data(bytes.substr(offset, length));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

}  // namespace

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT || !FileExists(path))
      throw ToolError(path, "No such file", EPCTX_NO_SUCHFILE);
    throw ToolError(path, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ToolError(path, "is a directory, not a file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ToolError(path, "read failed");
  return ss.str();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

onnx::ModelProto ParseModel(const std::string& bytes, const std::string& name) {
  onnx::ModelProto model;
  if (bytes.empty())
    throw ToolError(name, "not an ONNX model (empty file)", EPCTX_INVALID_PROTOBUF);
  if (!model.ParseFromString(bytes)) {
    // Every serialised ModelProto starts with field 1 (ir_version, varint):
    // a file that does too but does not parse was most likely cut short.
    if (static_cast<uint8_t>(bytes[0]) == 0x08)
      throw ToolError(name,
                      "truncated or corrupt ONNX model (protobuf parse failed after " +
                          std::to_string(bytes.size()) + " bytes)",
                      EPCTX_INVALID_PROTOBUF);
    throw ToolError(name, "not an ONNX model (protobuf parse failed)", EPCTX_INVALID_PROTOBUF);
  }
  if (model.ir_version() <= 0 || !model.has_graph())
    throw ToolError(name, "not an ONNX model (no ir_version or graph)", EPCTX_INVALID_PROTOBUF);
  return model;
}

namespace {
// Sorts first: exporters and converters write unsorted graphs that ORT
// accepts, and the checker would refuse them.
void CheckLoaded(onnx::ModelProto& model, const std::string& name) {
  SortGraph(*model.mutable_graph(), name);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw ToolError(name, "invalid ONNX model: " + OneLine(e.what()), EPCTX_INVALID_GRAPH);
  }
}
}  // namespace

onnx::ModelProto LoadModel(const std::string& path) {
  onnx::ModelProto model = ParseModel(ReadFileBytes(path), path);
  InlineExternalData(*model.mutable_graph(), path, PathDir(path));
  CheckLoaded(model, path);
  return model;
}

bool HasExternalData(const onnx::ModelProto& model) {
  for (const auto& t : model.graph().initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return true;
  return false;
}

onnx::ModelProto LoadModelFromBuffer(const std::string& bytes, const std::string& name,
                                     const std::string& external_folder) {
  onnx::ModelProto model = ParseModel(bytes, name);
  if (HasExternalData(model)) {
    if (external_folder.empty())
      throw ToolError(name,
                      "the model has external initializers and was given as a buffer: set "
                      "session.model_external_initializers_file_folder_path to their folder",
                      EPCTX_INVALID_ARGUMENT);
    std::string dir = external_folder;
    if (dir.back() != '/') dir += '/';
    InlineExternalData(*model.mutable_graph(), name, dir);
  }
  CheckLoaded(model, name);
  return model;
}

void WriteFileAtomic(const std::string& path, const void* data, size_t size) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw ToolError(path, std::string("cannot create: ") + std::strerror(errno));
  bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
  ok = (std::fflush(f) == 0) && ok;
  ok = (fsync(fileno(f)) == 0 || errno == EINVAL) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    throw ToolError(path, std::string("write failed: ") + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw ToolError(path, std::string("rename failed: ") + std::strerror(err));
  }
}

std::string PathBaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string PathDir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string PathStem(const std::string& path) {
  std::string base = PathBaseName(path);
  size_t dot = base.find_last_of('.');
  return (dot == std::string::npos || dot == 0) ? base : base.substr(0, dot);
}

std::string DefaultOutputPath(const std::string& input) {
  return PathDir(input) + PathStem(input) + "_ctx.onnx";
}

}  // namespace host
}  // namespace epctx
