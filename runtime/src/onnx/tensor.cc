// SPDX-License-Identifier: Apache-2.0
// TensorProto -> TensorView.
//
// Two passes over the message. The first reads the scalars (dims, type,
// name, location), remembers raw_data as a view and only counts the typed
// elements; once the type and shape are known the data is checked against
// them, and a second pass decodes typed elements straight into an aligned
// arena buffer of the final size. raw_data is used in place when the file
// bytes are aligned to the element size (zero copy), else copied once.
#include <cstring>

#include "onnx/parse_internal.h"

namespace epctx {
namespace onnx {
namespace detail {

const char* const kTensorFields[] = {nullptr,      "dims",          "data_type",    "segment",
                                     "float_data", "int32_data",    "string_data",  "int64_data",
                                     "name",       "raw_data",      "double_data",  "uint64_data",
                                     "doc_string", "external_data", "data_location"};
const wire::MsgInfo kTensorInfo = {"TensorProto", kTensorFields, 15};

namespace {

using wire::Field;
using wire::Reader;
using wire::Scalar;

const char* const kEntryFields[] = {nullptr, "key", "value"};
const wire::MsgInfo kEntryInfo = {"StringStringEntryProto", kEntryFields, 3};

constexpr int64_t kLocationExternal = 1;

// The typed data fields, indexed by field number.
bool IsTypedField(uint32_t n) { return n == 4 || n == 5 || n == 7 || n == 10 || n == 11; }
Scalar TypedScalar(uint32_t n) {
  return n == 4 ? Scalar::kFixed32 : n == 10 ? Scalar::kFixed64 : Scalar::kVarint;
}
// Whether typed field n may carry elements of dtype (the ONNX rules).
bool TypedFieldHolds(uint32_t n, int32_t dtype) {
  switch (n) {
    case 4: return dtype == EPCTX_DTYPE_FLOAT;
    case 5:
      return dtype == EPCTX_DTYPE_INT32 || dtype == EPCTX_DTYPE_INT16 ||
             dtype == EPCTX_DTYPE_INT8 || dtype == EPCTX_DTYPE_UINT16 ||
             dtype == EPCTX_DTYPE_UINT8 || dtype == EPCTX_DTYPE_BOOL ||
             dtype == EPCTX_DTYPE_FLOAT16 || dtype == EPCTX_DTYPE_BFLOAT16;
    case 7: return dtype == EPCTX_DTYPE_INT64;
    case 10: return dtype == EPCTX_DTYPE_DOUBLE;
    case 11: return dtype == EPCTX_DTYPE_UINT32 || dtype == EPCTX_DTYPE_UINT64;
    default: return false;
  }
}

// A non-negative decimal (external_data offset/length).
bool ParseDecimal(StrView s, int64_t* out) {
  if (s.empty() || s.size > 19) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < s.size; ++i) {
    if (s.data[i] < '0' || s.data[i] > '9') return false;
    v = v * 10 + static_cast<uint64_t>(s.data[i] - '0');
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

Status ParseExternalEntry(const Reader& outer, Bytes msg, TensorView* t) {
  Reader r(outer.file(), msg, &kEntryInfo);
  StrView key, value;
  Field f;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    if (f.number == 1) EPCTX_RETURN_IF_ERROR(r.Str(f, &key));
    if (f.number == 2) EPCTX_RETURN_IF_ERROR(r.Str(f, &value));
  }
  if (key.eq("location")) {
    t->external_location = value;
  } else if (key.eq("offset") || key.eq("length")) {
    int64_t* dst = key.eq("offset") ? &t->external_offset : &t->external_length;
    if (!ParseDecimal(value, dst))
      return Status::Error(EPCTX_INVALID_PROTOBUF,
                           "external_data %.*s '%.*s' at offset %zu is not a "
                           "non-negative integer",
                           key.len(), key.data, value.len() > 32 ? 32 : value.len(), value.data,
                           r.offset_of(msg.data));
  }
  return Status::Ok();
}

// Stores the low bits of v as one element of `size` bytes.
inline void StoreElement(uint8_t* dst, size_t size, int32_t dtype, uint64_t v) {
  switch (size) {
    case 1: {
      uint8_t x = dtype == EPCTX_DTYPE_BOOL ? (v != 0) : static_cast<uint8_t>(v);
      *dst = x;
      break;
    }
    case 2: {
      uint16_t x = static_cast<uint16_t>(v);
      memcpy(dst, &x, 2);
      break;
    }
    case 4: {
      uint32_t x = static_cast<uint32_t>(v);
      memcpy(dst, &x, 4);
      break;
    }
    default: memcpy(dst, &v, 8); break;
  }
}

struct FirstPass {
  uint64_t rank = 0;
  bool has_raw = false;
  Bytes raw;
  int64_t data_location = 0;
  uint64_t num_external = 0;
  uint64_t typed_count = 0;  // elements over all typed fields
  uint32_t typed_field = 0;  // the typed field seen (0: none)
  bool mixed_typed = false;  // more than one kind of typed field
  uint64_t num_strings = 0;
};

Status ScanTensor(Reader& r, TensorView* t, FirstPass* fp) {
  Field f;
  while (r.more()) {
    EPCTX_RETURN_IF_ERROR(r.Next(&f));
    switch (f.number) {
      case 1: {
        EPCTX_RETURN_IF_ERROR(r.ForEach(f, Scalar::kVarint, [&](uint64_t v) {
          if (fp->rank < kMaxRank) t->dims[fp->rank] = static_cast<int64_t>(v);
          ++fp->rank;
        }));
        break;
      }
      case 2: EPCTX_RETURN_IF_ERROR(r.Int32(f, &t->dtype)); break;
      case 3:
        return Status::Error(EPCTX_NOT_IMPLEMENTED,
                             "TensorProto.segment at offset %zu: segmented tensors "
                             "are not supported",
                             f.offset);
      case 6: {
        StrView s;
        EPCTX_RETURN_IF_ERROR(r.Str(f, &s));
        ++fp->num_strings;
        break;
      }
      case 8: EPCTX_RETURN_IF_ERROR(r.Str(f, &t->name)); break;
      case 9:
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &fp->raw));
        fp->has_raw = true;
        break;
      case 13: {
        Bytes b;
        EPCTX_RETURN_IF_ERROR(r.Msg(f, &b));
        ++fp->num_external;
        break;
      }
      case 14: EPCTX_RETURN_IF_ERROR(r.Int(f, &fp->data_location)); break;
      default:
        if (IsTypedField(f.number)) {
          uint64_t n;
          EPCTX_RETURN_IF_ERROR(r.Count(f, TypedScalar(f.number), &n));
          // An empty packed field is, in protobuf, the field absent (our
          // writer uses such fields to align raw_data).
          if (n == 0) break;
          if (fp->typed_field != 0 && fp->typed_field != f.number) fp->mixed_typed = true;
          fp->typed_field = f.number;
          fp->typed_count += n;
        }
        break;
    }
  }
  return Status::Ok();
}

Status ParseTensorBody(const uint8_t* file, Bytes msg, Arena& arena, TensorView* t) {
  Reader r(file, msg, &kTensorInfo);
  FirstPass fp;
  EPCTX_RETURN_IF_ERROR(ScanTensor(r, t, &fp));

  if (fp.rank > static_cast<uint64_t>(kMaxRank))
    return Status::Error(EPCTX_NOT_IMPLEMENTED, "rank %llu exceeds the supported maximum %d",
                         static_cast<unsigned long long>(fp.rank), kMaxRank);
  t->rank = static_cast<uint32_t>(fp.rank);
  for (uint32_t i = 0; i < t->rank; ++i)
    if (t->dims[i] < 0)
      return Status::Error(EPCTX_INVALID_PROTOBUF, "dims[%u] is negative (%lld)", i,
                           static_cast<long long>(t->dims[i]));
  uint64_t elements;
  if (!shape_elements(t->dims, t->rank, &elements))
    return Status::Error(EPCTX_INVALID_PROTOBUF, "the element count of its dims overflows 64 bits");

  if (fp.data_location == kLocationExternal) {
    t->storage = Storage::kExternal;
    Field f;
    Reader again(file, msg, &kTensorInfo);
    while (again.more()) {
      EPCTX_RETURN_IF_ERROR(again.Next(&f));
      if (f.number == 13) EPCTX_RETURN_IF_ERROR(ParseExternalEntry(again, f.bytes, t));
    }
    if (t->external_location.empty())
      return Status::Error(EPCTX_INVALID_PROTOBUF,
                           "data_location is EXTERNAL but external_data has no "
                           "'location' (%llu entries)",
                           static_cast<unsigned long long>(fp.num_external));
    return Status::Ok();
  }
  if (fp.data_location != 0)
    return Status::Error(EPCTX_INVALID_PROTOBUF,
                         "data_location %lld is neither DEFAULT (0) nor EXTERNAL (1)",
                         static_cast<long long>(fp.data_location));

  // Strings stay unparsed: the runtime has no use for string tensors yet.
  if (t->dtype == EPCTX_DTYPE_STRING) return Status::Ok();
  if (fp.mixed_typed || (fp.has_raw && fp.typed_field != 0))
    return Status::Error(EPCTX_INVALID_PROTOBUF, "more than one data field (%s%s)",
                         fp.has_raw ? "raw_data and " : "",
                         kTensorFields[fp.typed_field ? fp.typed_field : 4]);
  if (!fp.has_raw && fp.typed_field == 0) return Status::Ok();  // no data

  size_t esize = dtype_size(t->dtype);
  if (esize == 0)
    return Status::Error(EPCTX_NOT_IMPLEMENTED, "data type %d (%s) is not supported",
                         static_cast<int>(t->dtype), dtype_name(t->dtype));
  if (elements > UINT64_MAX / esize || elements * esize > SIZE_MAX)
    return Status::Error(EPCTX_INVALID_PROTOBUF,
                         "%llu elements of %s overflow the addressable size",
                         static_cast<unsigned long long>(elements), dtype_name(t->dtype));
  uint64_t expected = elements * esize;

  if (fp.has_raw) {
    if (fp.raw.size != expected)
      return Status::Error(EPCTX_INVALID_PROTOBUF,
                           "expected %llu bytes of %s data for %llu elements, found "
                           "%zu bytes in raw_data at offset %zu",
                           static_cast<unsigned long long>(expected), dtype_name(t->dtype),
                           static_cast<unsigned long long>(elements), fp.raw.size,
                           r.offset_of(fp.raw.data));
    t->storage = Storage::kRaw;
    t->bytes = expected;
    if (reinterpret_cast<uintptr_t>(fp.raw.data) % esize == 0) {
      t->data = fp.raw.data;
      return Status::Ok();
    }
    void* copy = arena.Alloc(fp.raw.size, esize);
    if (!copy)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory copying %zu unaligned bytes",
                           fp.raw.size);
    memcpy(copy, fp.raw.data, fp.raw.size);
    t->data = copy;
    t->copied = true;
    return Status::Ok();
  }

  uint32_t field = fp.typed_field;
  if (!TypedFieldHolds(field, t->dtype))
    return Status::Error(EPCTX_INVALID_PROTOBUF, "%s cannot hold %s elements", kTensorFields[field],
                         dtype_name(t->dtype));
  if (fp.typed_count != elements)
    return Status::Error(EPCTX_INVALID_PROTOBUF,
                         "expected %llu bytes of %s data for %llu elements, found "
                         "%llu bytes (%llu elements) in %s",
                         static_cast<unsigned long long>(expected), dtype_name(t->dtype),
                         static_cast<unsigned long long>(elements),
                         static_cast<unsigned long long>(fp.typed_count * esize),
                         static_cast<unsigned long long>(fp.typed_count), kTensorFields[field]);
  uint8_t* dst = static_cast<uint8_t*>(arena.Alloc(static_cast<size_t>(expected), esize));
  if (!dst && expected > 0)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for %llu bytes of %s",
                         static_cast<unsigned long long>(expected), kTensorFields[field]);
  uint64_t i = 0;
  Scalar kind = TypedScalar(field);
  int32_t dtype = t->dtype;
  Reader again(file, msg, &kTensorInfo);
  Field f;
  while (again.more()) {
    EPCTX_RETURN_IF_ERROR(again.Next(&f));
    if (f.number != field) continue;
    EPCTX_RETURN_IF_ERROR(again.ForEach(f, kind, [&](uint64_t v) {
      // The count pass bounds i; the check guards a count/decode mismatch.
      if (i < elements) StoreElement(dst + i * esize, esize, dtype, v);
      ++i;
    }));
  }
  if (i != elements)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "%s decoded %llu elements, counted %llu",
                         kTensorFields[field], static_cast<unsigned long long>(i),
                         static_cast<unsigned long long>(elements));
  t->storage = Storage::kTyped;
  t->data = dst;
  t->bytes = expected;
  return Status::Ok();
}

}  // namespace

Status ParseTensorAt(const uint8_t* file, Bytes msg, Arena& arena, TensorView* out) {
  *out = TensorView();
  Status st = ParseTensorBody(file, msg, arena, out);
  if (!st.ok()) {
    if (out->name.empty()) st.Prefix("tensor at offset %zu", static_cast<size_t>(msg.data - file));
    else st.Prefix("tensor '%.*s'", out->name.len(), out->name.data);
  }
  return st;
}

}  // namespace detail

Status ParseTensor(Bytes buf, const char* label, Arena& arena, TensorView* out) {
  if (!buf.data && buf.size) return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: null buffer", label);
  Status st = detail::ParseTensorAt(buf.data, buf, arena, out);
  if (!st.ok()) st.Prefix("%s", label ? label : "<buffer>");
  return st;
}

}  // namespace onnx
}  // namespace epctx
