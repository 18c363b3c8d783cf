/* SPDX-License-Identifier: Apache-2.0 */
// A zero-copy view of an ONNX ModelProto, parsed from untrusted bytes.
//
// ParseModel walks the protobuf wire format once and fills plain structs
// whose arrays live in a caller-provided Arena and whose strings and raw
// tensor bytes are views into the input buffer (the mapped model file). The
// input buffer must outlive the view; the Arena owns everything else.
//
// Only what the runtime needs is decoded; unknown fields are skipped as the
// protobuf rules say. Every length and count is checked against the bytes
// left before it is used, so a truncated or hostile file yields
// INVALID_PROTOBUF naming the message and field (never a crash).
#ifndef EPCTX_ONNX_MODEL_H
#define EPCTX_ONNX_MODEL_H

#include <cstdint>

#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"

namespace epctx {
namespace onnx {

// AttributeProto.AttributeType
// clang-format off
enum class AttrType : int32_t {
  kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5,
  kFloats = 6, kInts = 7, kStrings = 8, kTensors = 9, kGraphs = 10,
  kSparseTensor = 11, kSparseTensors = 12, kTypeProto = 13, kTypeProtos = 14,
};
// clang-format on

// "FLOAT", "INTS", ... as the ONNX spec spells them; "UNDEFINED" otherwise.
const char* attr_type_name(AttrType type);

enum class Storage : int32_t {
  kNone = 0,      // no data fields at all (an empty tensor or a bad one)
  kRaw = 1,       // raw_data: `data` points into the file (or an aligned copy)
  kTyped = 2,     // float_data/int32_data/...: decoded into the arena
  kExternal = 3,  // data_location=EXTERNAL: see external_*; data == nullptr
};

struct TensorView {
  StrView name;
  int32_t dtype = 0;  // epctx_dtype / TensorProto.DataType
  uint32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  Storage storage = Storage::kNone;
  // Element data, aligned to the element size. A view into the file when the
  // raw bytes were aligned; otherwise an arena copy (copied == true).
  const void* data = nullptr;
  uint64_t bytes = 0;
  bool copied = false;
  // external_data entries "location", "offset", "length" (-1 when absent).
  StrView external_location;
  int64_t external_offset = 0;
  int64_t external_length = -1;
};

struct GraphView;

struct AttributeView {
  StrView name;
  AttrType type = AttrType::kUndefined;
  float f = 0.0f;
  int64_t i = 0;
  StrView s;                         // STRING: a view into the file
  const TensorView* t = nullptr;     // TENSOR
  const float* floats = nullptr;     // FLOATS (arena)
  const int64_t* ints = nullptr;     // INTS (arena)
  const StrView* strings = nullptr;  // STRINGS (arena array of views)
  uint32_t count = 0;                // element count of FLOATS/INTS/STRINGS
  Bytes graph;                       // GRAPH: the raw GraphProto bytes
  const GraphView* g = nullptr;      // GRAPH: parsed (arena), nested graphs too
};

struct NodeView {
  StrView name;
  StrView op_type;
  StrView domain;                   // "" and "ai.onnx" both mean the default domain
  const StrView* inputs = nullptr;  // "" for an omitted optional input
  uint32_t num_inputs = 0;
  const StrView* outputs = nullptr;
  uint32_t num_outputs = 0;
  const AttributeView* attrs = nullptr;
  uint32_t num_attrs = 0;

  // First attribute with that name, or nullptr.
  const AttributeView* attr(const char* attr_name) const;
};

// dims and dim_params are arena arrays of `rank` entries (nullptr when rank
// is 0): a value info costs memory in proportion to its bytes in the file,
// not kMaxRank dims for every (possibly empty) entry.
struct ValueInfoView {
  StrView name;
  bool is_tensor = false;  // type.tensor_type present
  int32_t dtype = 0;
  bool has_shape = false;
  uint32_t rank = 0;
  const int64_t* dims = nullptr;        // -1: symbolic or unknown
  const StrView* dim_params = nullptr;  // the dim_param names of symbolic dims
};

struct GraphView {
  StrView name;
  const NodeView* nodes = nullptr;
  uint32_t num_nodes = 0;
  const TensorView* initializers = nullptr;
  uint32_t num_initializers = 0;
  const ValueInfoView* inputs = nullptr;
  uint32_t num_inputs = 0;
  const ValueInfoView* outputs = nullptr;
  uint32_t num_outputs = 0;
  // Named value_info entries only: an unnamed one describes no value.
  const ValueInfoView* value_infos = nullptr;
  uint32_t num_value_infos = 0;
};

// Subgraphs (GRAPH attributes of If, Loop, Scan ...) nest at most this deep
// below the main graph; a deeper one is INVALID_GRAPH naming the node, so a
// hostile file cannot make the parser, the planner or a run recurse without
// bound.
constexpr uint32_t kMaxGraphDepth = 16;

struct OpsetImport {
  StrView domain;
  int64_t version = 0;
};

struct StringPair {
  StrView key;
  StrView value;
};

struct ModelView {
  int64_t ir_version = 0;
  StrView producer_name;
  StrView producer_version;
  StrView domain;
  int64_t model_version = 0;
  const OpsetImport* opsets = nullptr;
  uint32_t num_opsets = 0;
  const StringPair* metadata = nullptr;
  uint32_t num_metadata = 0;
  GraphView graph;

  // Opset version imported for a domain ("" / "ai.onnx" alike); -1 if none.
  int64_t opset(StrView op_domain) const;
};

// Parses a ModelProto. `label` names the source in messages (a file path or
// "<buffer>"). A model without a graph is INVALID_PROTOBUF; ranks above
// kMaxRank are NOT_IMPLEMENTED naming the tensor. GRAPH attributes are parsed
// into their own GraphViews (AttributeView::g), at most kMaxGraphDepth deep.
Status ParseModel(Bytes buf, const char* label, Arena& arena, ModelView* out);

// Parses one TensorProto (used for TENSOR attributes and by tools).
Status ParseTensor(Bytes buf, const char* label, Arena& arena, TensorView* out);

}  // namespace onnx
}  // namespace epctx

#endif
