/* SPDX-License-Identifier: Apache-2.0 */
// Protobuf wire-format reading over untrusted bytes.
//
// A Reader walks the fields of one message, [msg.data, msg.data+msg.size),
// which lies inside a larger file buffer (`file`, used only to report byte
// offsets from the start of the file). It owns nothing: every Bytes/StrView
// it hands out is a view into the caller's buffer and lives as long as it.
//
// Next() reads a whole field: the tag and, for length-delimited fields, only
// the length prefix; the payload is returned as a view and never scanned.
// So skipping an unknown field, or a 100 MB embedded payload, costs the same
// as skipping a varint. Errors are INVALID_PROTOBUF and name the byte offset
// and the message/field ("truncated varint at offset 1234 in
// NodeProto.input"); callers put the file and node in front with Prefix().
//
// Checks follow the protobuf encoding rules: varints are at most 10 bytes
// and the tenth carries only bit 63; field number 0 and the group/reserved
// wire types 3, 4, 6, 7 are rejected; every length is compared with the
// bytes left (`len > end - p`) before it is used.
#ifndef EPCTX_ONNX_WIRE_H
#define EPCTX_ONNX_WIRE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/status.h"
#include "core/types.h"

namespace epctx {
namespace onnx {
namespace wire {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// How the elements of a repeated scalar field are encoded.
enum class Scalar { kVarint, kFixed32, kFixed64 };

// Names a message and its fields, for error messages only.
struct MsgInfo {
  const char* name;           // "NodeProto"
  const char* const* fields;  // fields[number], nullptr where unnamed
  uint32_t num_fields;
};

struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t value = 0;  // kVarint, kFixed32, kFixed64 payload
  Bytes bytes;         // kLen payload (a view)
  size_t offset = 0;   // offset of the tag from the start of the file
};

enum class VarintResult { kOk, kTruncated, kOverlong };

// Decodes one varint at p (advancing it). Never reads at or past `end`.
inline VarintResult ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* out) {
  if (p < end && *p < 0x80) {
    *out = *p++;
    return VarintResult::kOk;
  }
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (p == end) return VarintResult::kTruncated;
    uint8_t b = *p++;
    if (i == 9 && b > 1) return VarintResult::kOverlong;
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (b < 0x80) {
      *out = v;
      return VarintResult::kOk;
    }
  }
  return VarintResult::kOverlong;
}

class Reader {
 public:
  Reader(const uint8_t* file, Bytes msg, const MsgInfo* info)
      : file_(file), p_(msg.data), end_(msg.data + msg.size), info_(info) {}

  bool more() const { return p_ < end_; }

  // Reads the next field into *f. Only call while more().
  Status Next(Field* f) {
    f->offset = static_cast<size_t>(p_ - file_);
    uint64_t tag;
    VarintResult vr = ReadVarint(p_, end_, &tag);
    if (vr != VarintResult::kOk) return VarintError(vr, f->offset, 0, "tag");
    if (tag > 0xffffffffu || (tag >> 3) == 0) return BadTag(*f, tag);
    f->number = static_cast<uint32_t>(tag >> 3);
    f->wire_type = static_cast<uint32_t>(tag & 7);
    switch (f->wire_type) {
      case kVarint: {
        size_t at = static_cast<size_t>(p_ - file_);
        vr = ReadVarint(p_, end_, &f->value);
        if (vr != VarintResult::kOk) return VarintError(vr, at, f->number, "varint");
        return Status::Ok();
      }
      case kLen: {
        size_t at = static_cast<size_t>(p_ - file_);
        uint64_t len;
        vr = ReadVarint(p_, end_, &len);
        if (vr != VarintResult::kOk) return VarintError(vr, at, f->number, "length");
        if (len > static_cast<uint64_t>(end_ - p_)) return PastEnd(*f, at, len);
        f->bytes.data = p_;
        f->bytes.size = static_cast<size_t>(len);
        p_ += len;
        return Status::Ok();
      }
      case kFixed32:
      case kFixed64: {
        size_t n = f->wire_type == kFixed32 ? 4 : 8;
        if (n > static_cast<size_t>(end_ - p_)) return TruncatedFixed(*f, n);
        uint8_t b[8];
        memcpy(b, p_, n);
        uint64_t v = 0;
        for (size_t i = n; i-- > 0;) v = (v << 8) | b[i];
        f->value = v;
        p_ += n;
        return Status::Ok();
      }
      default: return BadTag(*f, tag);
    }
  }

  // Typed reads of a singular field; each checks the wire type first.
  Status Int(const Field& f, int64_t* v) const {
    if (f.wire_type != kVarint) return WrongWireType(f, kVarint);
    *v = static_cast<int64_t>(f.value);
    return Status::Ok();
  }
  Status Int32(const Field& f, int32_t* v) const {
    if (f.wire_type != kVarint) return WrongWireType(f, kVarint);
    *v = static_cast<int32_t>(static_cast<uint32_t>(f.value));
    return Status::Ok();
  }
  Status Float(const Field& f, float* v) const {
    if (f.wire_type != kFixed32) return WrongWireType(f, kFixed32);
    uint32_t bits = static_cast<uint32_t>(f.value);
    memcpy(v, &bits, 4);
    return Status::Ok();
  }
  Status Str(const Field& f, StrView* v) const {
    if (f.wire_type != kLen) return WrongWireType(f, kLen);
    v->data = reinterpret_cast<const char*>(f.bytes.data);
    v->size = f.bytes.size;
    return Status::Ok();
  }
  Status Msg(const Field& f, Bytes* v) const {
    if (f.wire_type != kLen) return WrongWireType(f, kLen);
    *v = f.bytes;
    return Status::Ok();
  }

  // Number of elements one occurrence of a repeated scalar field carries:
  // 1 when unpacked, the packed element count when length-delimited.
  Status Count(const Field& f, Scalar k, uint64_t* n) const;

  // Calls fn(uint64_t) for each element of one occurrence of a repeated
  // scalar field (packed or not). Fixed32/64 elements arrive as their bit
  // patterns; varints as the raw 64-bit value (int32 negatives are
  // sign-extended, as the encoding makes them).
  template <typename Fn>
  Status ForEach(const Field& f, Scalar k, Fn&& fn) const {
    if (f.wire_type != kLen) {
      if (f.wire_type != ElementWireType(k)) return WrongWireType(f, ElementWireType(k));
      fn(f.value);
      return Status::Ok();
    }
    const uint8_t* p = f.bytes.data;
    const uint8_t* end = p + f.bytes.size;
    if (k == Scalar::kVarint) {
      while (p < end) {
        size_t at = static_cast<size_t>(p - file_);
        uint64_t v;
        VarintResult vr = ReadVarint(p, end, &v);
        if (vr != VarintResult::kOk) return VarintError(vr, at, f.number, "packed varint");
        fn(v);
      }
      return Status::Ok();
    }
    size_t w = k == Scalar::kFixed32 ? 4 : 8;
    if (f.bytes.size % w != 0) return BadPackedSize(f, w);
    for (; p < end; p += w) {
      uint64_t v = 0;
      for (size_t i = w; i-- > 0;) v = (v << 8) | p[i];
      fn(v);
    }
    return Status::Ok();
  }

  size_t offset_of(const uint8_t* p) const { return static_cast<size_t>(p - file_); }
  const uint8_t* file() const { return file_; }
  const MsgInfo& info() const { return *info_; }

  // "NodeProto.input" or "NodeProto field 17" into buf.
  const char* FieldName(uint32_t number, char* buf, size_t cap) const;
  Status WrongWireType(const Field& f, uint32_t expected) const;

 private:
  static uint32_t ElementWireType(Scalar k) {
    return k == Scalar::kVarint ? kVarint : k == Scalar::kFixed32 ? kFixed32 : kFixed64;
  }
  Status VarintError(VarintResult vr, size_t at, uint32_t field, const char* what) const;
  Status BadTag(const Field& f, uint64_t tag) const;
  Status PastEnd(const Field& f, size_t at, uint64_t len) const;
  Status TruncatedFixed(const Field& f, size_t n) const;
  Status BadPackedSize(const Field& f, size_t w) const;

  const uint8_t* file_;
  const uint8_t* p_;
  const uint8_t* end_;
  const MsgInfo* info_;
};

}  // namespace wire
}  // namespace onnx
}  // namespace epctx

#endif
