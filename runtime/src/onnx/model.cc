// SPDX-License-Identifier: Apache-2.0
// ModelProto -> ModelView: the model, graph, node, attribute and value-info
// messages (TensorProto is in tensor.cc).
//
// Each message with repeated sub-messages is read in two passes: the first
// walks only its own tags (sub-messages are jumped over by their length
// prefix) and counts, then the arrays are allocated in the arena at their
// final size and a second pass fills them. Counts are bounded by the
// message's bytes because every occurrence costs at least two bytes.
// Errors gather context on the way out, innermost first, so a message reads
// "model.onnx: node 'conv1': attribute 'pads': <what went wrong>".
#include "onnx/parse_internal.h"

namespace epctx {
namespace onnx {
namespace {

using detail::AllocViews;
using wire::Field;
using wire::MsgInfo;
using wire::Reader;
using wire::Scalar;

// clang-format off
const char* const kModelFields[] = {
    nullptr, "ir_version", "producer_name", "producer_version", "domain",
    "model_version", "doc_string", "graph", "opset_import", nullptr, nullptr,
    nullptr, nullptr, nullptr, "metadata_props"};
const MsgInfo kModelInfo = {"ModelProto", kModelFields, 15};

const char* const kOpsetFields[] = {nullptr, "domain", "version"};
const MsgInfo kOpsetInfo = {"OperatorSetIdProto", kOpsetFields, 3};

const char* const kEntryFields[] = {nullptr, "key", "value"};
const MsgInfo kEntryInfo = {"StringStringEntryProto", kEntryFields, 3};

const char* const kGraphFields[] = {
    nullptr, "node", "name", nullptr, nullptr, "initializer", nullptr, nullptr,
    nullptr, nullptr, "doc_string", "input", "output", "value_info",
    "quantization_annotation", "sparse_initializer"};
const MsgInfo kGraphInfo = {"GraphProto", kGraphFields, 16};

const char* const kNodeFields[] = {nullptr, "input", "output", "name", "op_type",
                                   "attribute", "doc_string", "domain"};
const MsgInfo kNodeInfo = {"NodeProto", kNodeFields, 8};

const char* const kAttrFields[] = {
    nullptr, "name", "f", "i", "s", "t", "g", "floats", "ints", "strings",
    "tensors", "graphs", nullptr, "doc_string", "tp", "type_protos", nullptr,
    nullptr, nullptr, nullptr, "type", "ref_attr_name", "sparse_tensor",
    "sparse_tensors"};
const MsgInfo kAttrInfo = {"AttributeProto", kAttrFields, 24};

const char* const kValueInfoFields[] = {nullptr, "name", "type", "doc_string"};
const MsgInfo kValueInfoInfo = {"ValueInfoProto", kValueInfoFields, 4};

const char* const kTypeFields[] = {nullptr, "tensor_type", nullptr, nullptr,
                                   "sequence_type", "map_type", "denotation",
                                   nullptr, "sparse_tensor_type", "optional_type"};
const MsgInfo kTypeInfo = {"TypeProto", kTypeFields, 10};

const char* const kTypeTensorFields[] = {nullptr, "elem_type", "shape"};
const MsgInfo kTypeTensorInfo = {"TypeProto.Tensor", kTypeTensorFields, 3};

const char* const kShapeFields[] = {nullptr, "dim"};
const MsgInfo kShapeInfo = {"TensorShapeProto", kShapeFields, 2};

const char* const kDimFields[] = {nullptr, "dim_value", "dim_param", "denotation"};
const MsgInfo kDimInfo = {"TensorShapeProto.Dimension", kDimFields, 4};
// clang-format on

struct Ctx {
  const uint8_t* file;
  Arena* arena;
  uint32_t depth;  // of the graph being parsed: 0 for the main graph
};

Status ParseGraph(const Ctx& c, Bytes msg, GraphView* g);

// ---- ValueInfoProto ----

Status ParseDim(const Ctx& c, Bytes msg, int64_t* dims, StrView* params, uint32_t i) {
  Reader r(c.file, msg, &kDimInfo);
  dims[i] = -1;
  Field f;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    if (f.number == 1) {
      int64_t d = 0;
      EPCTX_RETURN_IF_ERROR(r.Int(f, &d));
      if (d < 0)
        return Status::Error(EPCTX_INVALID_PROTOBUF,
                             "dim %u has negative dim_value %lld at offset %zu", i,
                             static_cast<long long>(d), f.offset);
      dims[i] = d;
      params[i] = StrView();
    } else if (f.number == 2) {
      EPCTX_RETURN_IF_ERROR(r.Str(f, &params[i]));
      dims[i] = -1;
    }
  }
  return Status::Ok();
}

Status ParseShape(const Ctx& c, Bytes msg, ValueInfoView* v) {
  v->has_shape = true;
  Reader r(c.file, msg, &kShapeInfo);
  Field f;
  uint64_t rank = 0;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    if (f.number == 1) {
      Bytes b;
      EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
      ++rank;
    }
  }
  if (rank > static_cast<uint64_t>(kMaxRank))
    return Status::Error(EPCTX_NOT_IMPLEMENTED, "rank %llu exceeds the supported maximum %d",
                         static_cast<unsigned long long>(rank), kMaxRank);
  // A second shape (the field repeated) replaces the first, as protobuf
  // merging of a singular message field would for its dims.
  v->rank = static_cast<uint32_t>(rank);
  v->dims = nullptr;
  v->dim_params = nullptr;
  int64_t* dims;
  StrView* params;
  EPCTX_RETURN_IF_ERROR(detail::AllocViews(*c.arena, rank, "dims", &dims));
  EPCTX_RETURN_IF_ERROR(detail::AllocViews(*c.arena, rank, "dim_params", &params));
  Reader again(c.file, msg, &kShapeInfo);
  uint32_t i = 0;
  while (again.more()) {
    EPCTX_RETURN_IF_ERROR(again.Next(&f));
    if (f.number == 1) EPCTX_RETURN_IF_ERROR(ParseDim(c, f.bytes, dims, params, i++));
  }
  v->dims = dims;
  v->dim_params = params;
  return Status::Ok();
}

Status ParseTensorType(const Ctx& c, Bytes msg, ValueInfoView* v) {
  v->is_tensor = true;
  Reader r(c.file, msg, &kTypeTensorInfo);
  Field f;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    if (f.number == 1) {
      EPCTX_RETURN_IF_ERROR(r.Int32(f, &v->dtype));
    } else if (f.number == 2) {
      Bytes b;
      EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
      EPCTX_RETURN_IF_ERROR(ParseShape(c, b, v));
    }
  }
  return Status::Ok();
}

Status ParseValueInfoBody(const Ctx& c, Bytes msg, ValueInfoView* v) {
  Reader r(c.file, msg, &kValueInfoInfo);
  Field f;
  Bytes type;
  bool has_type = false;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    if (f.number == 1) EPCTX_RETURN_IF_ERROR(r.Str(f, &v->name));
    if (f.number == 2) {
      EPCTX_RETURN_IF_ERROR(r.Msg(f, &type));
      has_type = true;
    }
  }
  if (!has_type) return Status::Ok();
  Reader t(c.file, type, &kTypeInfo);
  while (t.more()) {
    EPCTX_RETURN_IF_ERROR(t.Next(&f));
    if (f.number == 1) {
      Bytes b;
      EPCTX_RETURN_IF_ERROR(t.Msg(f, &b));
      EPCTX_RETURN_IF_ERROR(ParseTensorType(c, b, v));
    }
  }
  return Status::Ok();
}

Status ParseValueInfo(const Ctx& c, Bytes msg, const char* role, uint32_t index, ValueInfoView* v) {
  Status st = ParseValueInfoBody(c, msg, v);
  if (!st.ok()) {
    if (v->name.empty())
      st.Prefix("%s #%u at offset %zu", role, index, static_cast<size_t>(msg.data - c.file));
    else st.Prefix("%s '%.*s'", role, v->name.len(), v->name.data);
  }
  return st;
}

// ---- AttributeProto ----

AttrType InferAttrType(const bool* seen) {
  // Old writers left `type` unset; the field that carries the value says it.
  if (seen[2]) return AttrType::kFloat;
  if (seen[3]) return AttrType::kInt;
  if (seen[4]) return AttrType::kString;
  if (seen[5]) return AttrType::kTensor;
  if (seen[6]) return AttrType::kGraph;
  if (seen[7]) return AttrType::kFloats;
  if (seen[8]) return AttrType::kInts;
  if (seen[9]) return AttrType::kStrings;
  if (seen[10]) return AttrType::kTensors;
  if (seen[11]) return AttrType::kGraphs;
  return AttrType::kUndefined;
}

Status ParseAttributeBody(const Ctx& c, Bytes msg, AttributeView* a) {
  Reader r(c.file, msg, &kAttrInfo);
  Field f;
  bool seen[24] = {};
  uint64_t n_floats = 0, n_ints = 0, n_strings = 0;
  Bytes tensor;
  int32_t type = 0;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    if (f.number < 24) seen[f.number] = true;
    uint64_t n = 0;
    switch (f.number) {
      case 1: EPCTX_RETURN_IF_ERROR(r.Str(f, &a->name)); break;
      case 2: EPCTX_RETURN_IF_ERROR(r.Float(f, &a->f)); break;
      case 3: EPCTX_RETURN_IF_ERROR(r.Int(f, &a->i)); break;
      case 4: EPCTX_RETURN_IF_ERROR(r.Str(f, &a->s)); break;
      case 5: EPCTX_RETURN_IF_ERROR(r.Msg(f, &tensor)); break;
      case 6: EPCTX_RETURN_IF_ERROR(r.Msg(f, &a->graph)); break;
      case 7:
        EPCTX_RETURN_IF_ERROR(r.Count(f, Scalar::kFixed32, &n));
        n_floats += n;
        break;
      case 8:
        EPCTX_RETURN_IF_ERROR(r.Count(f, Scalar::kVarint, &n));
        n_ints += n;
        break;
      case 9: {
        StrView s;
        EPCTX_RETURN_IF_ERROR(r.Str(f, &s));
        ++n_strings;
        break;
      }
      case 20: EPCTX_RETURN_IF_ERROR(r.Int32(f, &type)); break;
      case 21: {
        StrView ref;
        EPCTX_RETURN_IF_ERROR(r.Str(f, &ref));
        return Status::Error(EPCTX_NOT_IMPLEMENTED,
                             "refers to function attribute '%.*s' (ref_attr_name); "
                             "functions are not supported",
                             ref.len(), ref.data);
      }
      default: break;
    }
  }
  a->type = type != 0 ? static_cast<AttrType>(type) : InferAttrType(seen);

  if (seen[6] && a->type == AttrType::kGraph) {
    if (c.depth >= kMaxGraphDepth)
      return Status::Error(EPCTX_INVALID_GRAPH,
                           "subgraph nesting deeper than the limit of %u graphs", kMaxGraphDepth);
    GraphView* g;
    EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, 1, "subgraph", &g));
    Ctx inner{c.file, c.arena, c.depth + 1};
    Status st = ParseGraph(inner, a->graph, g);
    if (!st.ok() && !g->name.empty() && st.HasRoom())
      st.Prefix("graph '%.*s'", g->name.len(), g->name.data);
    EPCTX_RETURN_IF_ERROR(st);
    a->g = g;
  }
  if (seen[5]) {
    TensorView* t;
    EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, 1, "tensor attribute", &t));
    EPCTX_RETURN_IF_ERROR(detail::ParseTensorAt(c.file, tensor, *c.arena, t));
    a->t = t;
  }
  if (n_floats == 0 && n_ints == 0 && n_strings == 0) return Status::Ok();

  // Only the list of the attribute's own type is kept; others are ignored.
  float* floats = nullptr;
  int64_t* ints = nullptr;
  StrView* strings = nullptr;
  if (a->type == AttrType::kFloats) {
    EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_floats, "floats", &floats));
    a->count = static_cast<uint32_t>(n_floats);
  } else if (a->type == AttrType::kInts) {
    EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_ints, "ints", &ints));
    a->count = static_cast<uint32_t>(n_ints);
  } else if (a->type == AttrType::kStrings) {
    EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_strings, "strings", &strings));
    a->count = static_cast<uint32_t>(n_strings);
  } else {
    return Status::Ok();
  }
  uint32_t k = 0;
  Reader again(c.file, msg, &kAttrInfo);
  while (again.more()) {
    EPCTX_RETURN_IF_ERROR(again.Next(&f));
    if (f.number == 7 && floats) {
      EPCTX_RETURN_IF_ERROR(again.ForEach(f, Scalar::kFixed32, [&](uint64_t v) {
        uint32_t bits = static_cast<uint32_t>(v);
        if (k < a->count) __builtin_memcpy(&floats[k], &bits, 4);
        ++k;
      }));
    } else if (f.number == 8 && ints) {
      EPCTX_RETURN_IF_ERROR(again.ForEach(f, Scalar::kVarint, [&](uint64_t v) {
        if (k < a->count) ints[k] = static_cast<int64_t>(v);
        ++k;
      }));
    } else if (f.number == 9 && strings) {
      if (k < a->count) EPCTX_RETURN_IF_ERROR(again.Str(f, &strings[k]));
      ++k;
    }
  }
  if (k != a->count)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "decoded %u list elements, counted %u", k,
                         a->count);
  a->floats = floats;
  a->ints = ints;
  a->strings = strings;
  return Status::Ok();
}

Status ParseAttribute(const Ctx& c, Bytes msg, uint32_t index, AttributeView* a) {
  Status st = ParseAttributeBody(c, msg, a);
  if (!st.ok() && st.HasRoom()) {
    if (a->name.empty())
      st.Prefix("attribute #%u at offset %zu", index, static_cast<size_t>(msg.data - c.file));
    else st.Prefix("attribute '%.*s'", a->name.len(), a->name.data);
  }
  return st;
}

// ---- NodeProto ----

Status ParseNodeBody(const Ctx& c, Bytes msg, NodeView* n) {
  Reader r(c.file, msg, &kNodeInfo);
  Field f;
  uint64_t n_in = 0, n_out = 0, n_attr = 0;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    StrView s;
    switch (f.number) {
      case 1:
        EPCTX_RETURN_IF_ERROR(r.Str(f, &s));
        ++n_in;
        break;
      case 2:
        EPCTX_RETURN_IF_ERROR(r.Str(f, &s));
        ++n_out;
        break;
      case 3: EPCTX_RETURN_IF_ERROR(r.Str(f, &n->name)); break;
      case 4: EPCTX_RETURN_IF_ERROR(r.Str(f, &n->op_type)); break;
      case 5:
        EPCTX_RETURN_IF_ERROR(r.Str(f, &s));
        ++n_attr;
        break;
      case 7: EPCTX_RETURN_IF_ERROR(r.Str(f, &n->domain)); break;
      default: break;
    }
  }
  StrView* inputs;
  StrView* outputs;
  AttributeView* attrs;
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_in, "node inputs", &inputs));
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_out, "node outputs", &outputs));
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_attr, "attributes", &attrs));
  uint32_t i_in = 0, i_out = 0, i_attr = 0;
  Reader again(c.file, msg, &kNodeInfo);
  while (again.more()) {
    EPCTX_RETURN_IF_ERROR(again.Next(&f));
    if (f.number == 1 && i_in < n_in) {
      EPCTX_RETURN_IF_ERROR(again.Str(f, &inputs[i_in++]));
    } else if (f.number == 2 && i_out < n_out) {
      EPCTX_RETURN_IF_ERROR(again.Str(f, &outputs[i_out++]));
    } else if (f.number == 5 && i_attr < n_attr) {
      EPCTX_RETURN_IF_ERROR(ParseAttribute(c, f.bytes, i_attr, &attrs[i_attr]));
      ++i_attr;
    }
  }
  n->inputs = inputs;
  n->num_inputs = i_in;
  n->outputs = outputs;
  n->num_outputs = i_out;
  n->attrs = attrs;
  n->num_attrs = i_attr;
  return Status::Ok();
}

Status ParseNode(const Ctx& c, Bytes msg, uint32_t index, NodeView* n) {
  Status st = ParseNodeBody(c, msg, n);
  if (!st.ok() && st.HasRoom()) {
    if (n->name.empty())
      st.Prefix("node #%u (%.*s) at offset %zu", index, n->op_type.len(), n->op_type.data,
                static_cast<size_t>(msg.data - c.file));
    else st.Prefix("node '%.*s'", n->name.len(), n->name.data);
  }
  return st;
}

// ---- GraphProto ----

// Whether the message's field `number` holds a non-empty string; a walk over
// its top-level tags only. Malformed bytes count as named: the full parse
// reports them.
bool HasName(const Ctx& c, Bytes msg, const MsgInfo* info, uint32_t number) {
  Reader r(c.file, msg, info);
  Field f;
  bool named = false;
  while (r.more()) {
    if (!r.Next(&f).ok()) return true;
    if (f.number == number) named = f.bytes.size > 0;  // the last occurrence wins
  }
  return named;
}

// Graph inputs, outputs and initializers must be named (nothing can refer to
// them otherwise). Checked while counting, before the arrays are allocated,
// so megabytes of empty entries are refused instead of costing ~100 bytes of
// arena each. An unnamed entry is parsed first (into a discarded view), so a
// malformed one still reports its protobuf error.
Status NamedOrError(const Ctx& c, const Field& f, bool tensor, const char* what, uint64_t index) {
  if (HasName(c, f.bytes, tensor ? &detail::kTensorInfo : &kValueInfoInfo, tensor ? 8 : 1))
    return Status::Ok();
  const uint32_t i = static_cast<uint32_t>(index);
  if (tensor) {
    TensorView t;
    Status st = detail::ParseTensorAt(c.file, f.bytes, *c.arena, &t);
    if (!st.ok()) return st.Prefix("%s #%u", what, i);
  } else {
    ValueInfoView v;
    EPCTX_RETURN_IF_ERROR(ParseValueInfo(c, f.bytes, what, i, &v));
  }
  return Status::Error(EPCTX_INVALID_GRAPH, "%s #%llu at offset %zu has no name", what,
                       static_cast<unsigned long long>(index), f.offset);
}

Status ParseGraph(const Ctx& c, Bytes msg, GraphView* g) {
  Reader r(c.file, msg, &kGraphInfo);
  Field f;
  uint64_t n_node = 0, n_init = 0, n_in = 0, n_out = 0, n_vi = 0;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    Bytes b;
    switch (f.number) {
      case 1:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        ++n_node;
        break;
      case 2: EPCTX_RETURN_IF_ERROR(r.Str(f, &g->name)); break;
      case 5:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        EPCTX_RETURN_IF_ERROR(NamedOrError(c, f, true, "initializer", n_init));
        ++n_init;
        break;
      case 11:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        EPCTX_RETURN_IF_ERROR(NamedOrError(c, f, false, "graph input", n_in));
        ++n_in;
        break;
      case 12:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        EPCTX_RETURN_IF_ERROR(NamedOrError(c, f, false, "graph output", n_out));
        ++n_out;
        break;
      case 13:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        if (HasName(c, f.bytes, &kValueInfoInfo, 1)) ++n_vi;
        break;
      case 15:
        return Status::Error(EPCTX_NOT_IMPLEMENTED,
                             "GraphProto.sparse_initializer at offset %zu: sparse "
                             "initializers are not supported",
                             f.offset);
      default: break;
    }
  }
  NodeView* nodes;
  TensorView* inits;
  ValueInfoView *ins, *outs, *vis;
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_node, "nodes", &nodes));
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_init, "initializers", &inits));
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_in, "graph inputs", &ins));
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_out, "graph outputs", &outs));
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_vi, "value_infos", &vis));
  uint32_t i_node = 0, i_init = 0, i_in = 0, i_out = 0, i_vi = 0;
  Reader again(c.file, msg, &kGraphInfo);
  while (again.more()) {
    EPCTX_RETURN_IF_ERROR(again.Next(&f));
    switch (f.number) {
      case 1:
        EPCTX_RETURN_IF_ERROR(ParseNode(c, f.bytes, i_node, &nodes[i_node]));
        ++i_node;
        break;
      case 5: {
        Status st = detail::ParseTensorAt(c.file, f.bytes, *c.arena, &inits[i_init]);
        if (!st.ok()) return st.Prefix("initializer #%u", i_init);
        ++i_init;
        break;
      }
      case 11:
        EPCTX_RETURN_IF_ERROR(ParseValueInfo(c, f.bytes, "graph input", i_in, &ins[i_in]));
        ++i_in;
        break;
      case 12:
        EPCTX_RETURN_IF_ERROR(ParseValueInfo(c, f.bytes, "graph output", i_out, &outs[i_out]));
        ++i_out;
        break;
      case 13: {
        // An unnamed value_info describes nothing: parsed for errors, not kept.
        ValueInfoView unnamed;
        const bool keep = HasName(c, f.bytes, &kValueInfoInfo, 1);
        EPCTX_RETURN_IF_ERROR(
            ParseValueInfo(c, f.bytes, "value_info", i_vi, keep ? &vis[i_vi] : &unnamed));
        if (keep) ++i_vi;
        break;
      }
      default: break;
    }
  }
  g->nodes = nodes;
  g->num_nodes = i_node;
  g->initializers = inits;
  g->num_initializers = i_init;
  g->inputs = ins;
  g->num_inputs = i_in;
  g->outputs = outs;
  g->num_outputs = i_out;
  g->value_infos = vis;
  g->num_value_infos = i_vi;
  return Status::Ok();
}

// ---- ModelProto ----

Status ParsePair(const Ctx& c, Bytes msg, const MsgInfo* info, StrView* k, StrView* v,
                 int64_t* version) {
  Reader r(c.file, msg, info);
  Field f;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    if (f.number == 1) EPCTX_RETURN_IF_ERROR(r.Str(f, k));
    if (f.number == 2) {
      if (version) EPCTX_RETURN_IF_ERROR(r.Int(f, version));
      else EPCTX_RETURN_IF_ERROR(r.Str(f, v));
    }
  }
  return Status::Ok();
}

Status ParseModelBody(const Ctx& c, Bytes buf, ModelView* m) {
  Reader r(c.file, buf, &kModelInfo);
  Field f;
  uint64_t n_opset = 0, n_meta = 0;
  Bytes graph;
  bool has_graph = false;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    Bytes b;
    switch (f.number) {
      case 1: EPCTX_RETURN_IF_ERROR(r.Int(f, &m->ir_version)); break;
      case 2: EPCTX_RETURN_IF_ERROR(r.Str(f, &m->producer_name)); break;
      case 3: EPCTX_RETURN_IF_ERROR(r.Str(f, &m->producer_version)); break;
      case 4: EPCTX_RETURN_IF_ERROR(r.Str(f, &m->domain)); break;
      case 5: EPCTX_RETURN_IF_ERROR(r.Int(f, &m->model_version)); break;
      case 7:
        // Protobuf would merge repeated occurrences; no ONNX writer emits
        // two graphs, so a second one is treated as a forged file.
        if (has_graph)
          return Status::Error(EPCTX_INVALID_PROTOBUF, "second ModelProto.graph at offset %zu",
                               f.offset);
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &graph));
        has_graph = true;
        break;
      case 8:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        ++n_opset;
        break;
      case 14:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        ++n_meta;
        break;
      default: break;
    }
  }
  if (!has_graph)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "ModelProto has no graph (%zu bytes)", buf.size);
  if (n_opset == 0)
    return Status::Error(EPCTX_INVALID_PROTOBUF,
                         "ModelProto has no opset_import (every model must import one)");
  OpsetImport* opsets;
  StringPair* meta;
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_opset, "opset_imports", &opsets));
  EPCTX_RETURN_IF_ERROR(AllocViews(*c.arena, n_meta, "metadata_props", &meta));
  uint32_t i_opset = 0, i_meta = 0;
  Reader again(c.file, buf, &kModelInfo);
  while (again.more()) {
    EPCTX_RETURN_IF_ERROR(again.Next(&f));
    if (f.number == 8) {
      OpsetImport& o = opsets[i_opset++];
      StrView unused;
      EPCTX_RETURN_IF_ERROR(ParsePair(c, f.bytes, &kOpsetInfo, &o.domain, &unused, &o.version));
    } else if (f.number == 14) {
      StringPair& p = meta[i_meta++];
      EPCTX_RETURN_IF_ERROR(ParsePair(c, f.bytes, &kEntryInfo, &p.key, &p.value, nullptr));
    }
  }
  m->opsets = opsets;
  m->num_opsets = i_opset;
  m->metadata = meta;
  m->num_metadata = i_meta;
  Status st = ParseGraph(c, graph, &m->graph);
  if (!st.ok() && !m->graph.name.empty())
    st.Prefix("graph '%.*s'", m->graph.name.len(), m->graph.name.data);
  return st;
}

}  // namespace

Status ParseModel(Bytes buf, const char* label, Arena& arena, ModelView* out) {
  *out = ModelView();
  if (!label) label = "<buffer>";
  if (!buf.data && buf.size) return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: null buffer", label);
  Ctx c{buf.data, &arena, 0};
  Status st = ParseModelBody(c, buf, out);
  if (!st.ok()) {
    st.Prefix("%s", label);
    *out = ModelView();
  }
  return st;
}

}  // namespace onnx
}  // namespace epctx
