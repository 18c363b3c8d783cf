// SPDX-License-Identifier: Apache-2.0
// The cold half of the wire reader: packed counts and the error messages.
#include "onnx/wire.h"

namespace epctx {
namespace onnx {
namespace wire {
namespace {

const char* WireTypeName(uint32_t wt) {
  switch (wt) {
    case kVarint: return "varint";
    case kFixed64: return "fixed64";
    case kLen: return "length-delimited";
    case kFixed32: return "fixed32";
    case 3: return "start-group";
    case 4: return "end-group";
    default: return "reserved";
  }
}

}  // namespace

const char* Reader::FieldName(uint32_t number, char* buf, size_t cap) const {
  if (number == 0) {
    format(buf, cap, "%s", info_->name);
  } else if (number < info_->num_fields && info_->fields[number]) {
    format(buf, cap, "%s.%s", info_->name, info_->fields[number]);
  } else {
    format(buf, cap, "%s field %u", info_->name, number);
  }
  return buf;
}

Status Reader::Count(const Field& f, Scalar k, uint64_t* n) const {
  if (f.wire_type != kLen) {
    if (f.wire_type != ElementWireType(k)) return WrongWireType(f, ElementWireType(k));
    *n = 1;
    return Status::Ok();
  }
  if (k == Scalar::kVarint) {
    // Every varint ends in exactly one byte below 0x80; a packed run that
    // does not end in one is cut short. Overlong varints are caught when
    // the elements are decoded.
    uint64_t c = 0;
    for (size_t i = 0; i < f.bytes.size; ++i) c += f.bytes.data[i] < 0x80;
    if (f.bytes.size > 0 && f.bytes.data[f.bytes.size - 1] >= 0x80) {
      return VarintError(VarintResult::kTruncated, offset_of(f.bytes.data + f.bytes.size - 1),
                         f.number, "packed varint");
    }
    *n = c;
    return Status::Ok();
  }
  size_t w = k == Scalar::kFixed32 ? 4 : 8;
  if (f.bytes.size % w != 0) return BadPackedSize(f, w);
  *n = f.bytes.size / w;
  return Status::Ok();
}

Status Reader::WrongWireType(const Field& f, uint32_t expected) const {
  char name[96];
  return Status::Error(EPCTX_INVALID_PROTOBUF,
                       "%s at offset %zu: expected wire type %u (%s), found %u (%s)",
                       FieldName(f.number, name, sizeof name), f.offset, expected,
                       WireTypeName(expected), f.wire_type, WireTypeName(f.wire_type));
}

Status Reader::VarintError(VarintResult vr, size_t at, uint32_t field, const char* what) const {
  char name[96];
  FieldName(field, name, sizeof name);
  if (vr == VarintResult::kTruncated)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "truncated %s at offset %zu in %s", what, at,
                         name);
  return Status::Error(EPCTX_INVALID_PROTOBUF,
                       "overlong %s (more than 64 bits) at offset %zu in %s", what, at, name);
}

Status Reader::BadTag(const Field& f, uint64_t tag) const {
  char name[96];
  FieldName(0, name, sizeof name);
  if (tag > 0xffffffffu)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "tag %llu at offset %zu in %s is out of range",
                         static_cast<unsigned long long>(tag), f.offset, name);
  if ((tag >> 3) == 0)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "field number 0 at offset %zu in %s", f.offset,
                         name);
  uint32_t wt = static_cast<uint32_t>(tag & 7);
  return Status::Error(EPCTX_INVALID_PROTOBUF, "invalid wire type %u (%s) at offset %zu in %s", wt,
                       WireTypeName(wt), f.offset,
                       FieldName(static_cast<uint32_t>(tag >> 3), name, sizeof name));
}

Status Reader::PastEnd(const Field& f, size_t at, uint64_t len) const {
  char name[96];
  return Status::Error(EPCTX_INVALID_PROTOBUF,
                       "length %llu at offset %zu in %s runs past the end of the message "
                       "(%zu bytes left)",
                       static_cast<unsigned long long>(len), at,
                       FieldName(f.number, name, sizeof name), static_cast<size_t>(end_ - p_));
}

Status Reader::TruncatedFixed(const Field& f, size_t n) const {
  char name[96];
  return Status::Error(
      EPCTX_INVALID_PROTOBUF, "truncated fixed%zu at offset %zu in %s: %zu bytes left", n * 8,
      offset_of(p_), FieldName(f.number, name, sizeof name), static_cast<size_t>(end_ - p_));
}

Status Reader::BadPackedSize(const Field& f, size_t w) const {
  char name[96];
  return Status::Error(EPCTX_INVALID_PROTOBUF,
                       "packed %s at offset %zu: %zu bytes is not a multiple of %zu",
                       FieldName(f.number, name, sizeof name), f.offset, f.bytes.size, w);
}

}  // namespace wire
}  // namespace onnx
}  // namespace epctx
