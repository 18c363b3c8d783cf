/* SPDX-License-Identifier: Apache-2.0 */
// The interface between epctx-compile and a backend's compiler half.
//
// A backend (host_tools/backends/<name>) pairs with a driver in
// hal/drivers/<name>. epctx-compile asks each backend which nodes it
// supports, forms partitions, then calls Compile once per partition. All the
// graphs of one compile (or of a weight-sharing group) go into one context
// binary: the backend returns one payload per graph and puts its weights in
// the shared WeightStore, which lays them out in the container's weight
// segment.
//
// Host code: exceptions are allowed; Compile throws CompileError with a
// message naming the node and reason, which the tool prints on one line.
#ifndef EPCTX_HOST_BACKEND_H
#define EPCTX_HOST_BACKEND_H

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Version {
  uint32_t major = 0, minor = 0, patch = 0;
  std::string str() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
};

// Static type and shape of a value after shape inference. dims[i] < 0:
// unknown; known == false: nothing is known.
struct ValueType {
  bool known = false;
  int32_t dtype = 0;  // onnx::TensorProto::DataType
  std::vector<int64_t> dims;
  bool fully_static() const {
    if (!known) return false;
    for (int64_t d : dims)
      if (d < 0) return false;
    return true;
  }
};

// What the compiler knows about the whole (folded, shape-inferred) graph.
struct GraphInfo {
  const onnx::GraphProto* graph = nullptr;
  int64_t opset = 0;                       // default-domain opset
  std::map<std::string, ValueType> types;  // every value with a known type
  // Constant values: initializers and folded constants, by name.
  std::map<std::string, const onnx::TensorProto*> constants;

  const ValueType* type(const std::string& name) const {
    auto it = types.find(name);
    return it == types.end() ? nullptr : &it->second;
  }
  const onnx::TensorProto* constant(const std::string& name) const {
    auto it = constants.find(name);
    return it == constants.end() ? nullptr : it->second;
  }
};

struct Support {
  bool supported = false;
  std::string reason;  // why not, when unsupported ("kernel_shape 7x7 > 5")
};

// A connected set of nodes to compile as one graph. Nodes are in
// topological order. inputs/outputs are the values crossing the partition
// boundary, in the order the EPContext node will list them; constants used
// inside are not inputs (the backend packs them as weights).
struct Partition {
  std::string name;  // graph name in the binary == EPContext node name
  std::vector<const onnx::NodeProto*> nodes;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// Weights of all graphs of one context binary. Add returns the offset of the
// bytes inside the weight segment; identical bytes (same content hash) are
// stored once.
class WeightStore {
 public:
  explicit WeightStore(uint32_t alignment = 64) : alignment_(alignment) {}
  uint64_t Add(const void* data, size_t size);
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  uint64_t bytes_added() const { return added_; }    // before deduplication
  uint64_t bytes_unique() const { return unique_; }  // after, without alignment padding
  uint32_t alignment() const { return alignment_; }

 private:
  uint32_t alignment_;
  std::vector<uint8_t> bytes_;
  uint64_t added_ = 0;
  uint64_t unique_ = 0;
  std::multimap<uint64_t, std::pair<uint64_t, uint64_t>> by_hash_;  // hash -> (offset, size)
};

struct CompiledGraph {
  std::string name;
  std::vector<uint8_t> payload;  // the driver's command stream
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;        // "vnpu": also file suffix _vnpu.bin
  virtual std::string source_key() const = 0;  // EPContext `source`
  virtual Version sdk_version() const = 0;
  virtual std::string hardware_architecture() const = 0;  // "vnpu-1.0"
  virtual Version min_driver_version() const = 0;
  // Backend options (-i "key|value"); unknown keys throw CompileError.
  virtual void SetOption(const std::string& key, const std::string& value) = 0;
  virtual Support Supports(const onnx::NodeProto& node, const GraphInfo& info) const = 0;
  virtual CompiledGraph Compile(const Partition& partition, const GraphInfo& info,
                                WeightStore& weights) = 0;
};

// Backends compiled into this build (EPCTX_DRIVERS), by name ("vnpu");
// nullptr if unknown.
std::unique_ptr<Backend> CreateBackend(const std::string& name);
// Their names, in EPCTX_DRIVERS order.
std::vector<std::string> BackendNames();

}  // namespace host
}  // namespace epctx

#endif
