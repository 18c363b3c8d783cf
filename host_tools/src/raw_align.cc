// SPDX-License-Identifier: Apache-2.0
// See epctx_host/raw_align.h.
#include "epctx_host/raw_align.h"

#include <cstdint>
#include <vector>

namespace epctx {
namespace host {
namespace {

struct Field {
  uint32_t number = 0, wire = 0;
  size_t start = 0;    // tag offset
  size_t payload = 0;  // payload offset (wire type 2), else end of the varint/fixed
  size_t size = 0;     // payload bytes (wire type 2)
  size_t end = 0;      // one past the field
};

bool ReadVarint(const std::string& b, size_t* pos, size_t end, uint64_t* out) {
  uint64_t v = 0;
  for (int i = 0; i < 10 && *pos < end; ++i) {
    uint8_t c = static_cast<uint8_t>(b[(*pos)++]);
    v |= static_cast<uint64_t>(c & 0x7f) << (7 * i);
    if (c < 0x80) {
      *out = v;
      return true;
    }
  }
  return false;
}

// The fields of the message in [begin, end); false if it does not parse.
bool Fields(const std::string& b, size_t begin, size_t end, std::vector<Field>* out) {
  size_t p = begin;
  while (p < end) {
    Field f;
    f.start = p;
    uint64_t tag = 0, v = 0;
    if (!ReadVarint(b, &p, end, &tag)) return false;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint32_t>(tag & 7);
    switch (f.wire) {
      case 0:
        if (!ReadVarint(b, &p, end, &v)) return false;
        break;
      case 1:
        if (end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (end - p < 4) return false;
        p += 4;
        break;
      case 2:
        if (!ReadVarint(b, &p, end, &v) || v > end - p) return false;
        f.payload = p;
        f.size = static_cast<size_t>(v);
        p += f.size;
        break;
      default: return false;
    }
    f.end = p;
    out->push_back(f);
  }
  return true;
}

size_t VarintLen(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void PutVarint(std::string* o, uint64_t v) {
  while (v >= 0x80) {
    o->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  o->push_back(static_cast<char>(v));
}

// `n` bytes (0 or >= 2) of empty packed float_data fields.
void PutPadding(std::string* o, size_t n) {
  if (n % 2 == 1) {
    o->append("\x22\x80\x00", 3);
    n -= 3;
  }
  for (; n > 0; n -= 2) o->append("\x22\x00", 2);
}

struct Initializer {
  const Field* field;   // the GraphProto field 5
  size_t raw_tag = 0;   // offset of raw_data's tag inside the tensor payload
  size_t raw_head = 0;  // tag + length varint bytes of raw_data
  size_t align = 0;     // 0: leave alone
};

}  // namespace

std::string AlignRawInitializers(const std::string& model, size_t large_align, size_t small_align,
                                 size_t large_bytes, size_t* aligned) {
  if (aligned) *aligned = 0;
  std::vector<Field> top;
  if (!Fields(model, 0, model.size(), &top)) return model;
  const Field* graph = nullptr;
  for (const Field& f : top) {
    if (f.number != 7) continue;
    if (graph || f.wire != 2) return model;  // not a model we know how to edit
    graph = &f;
  }
  if (!graph) return model;
  std::vector<Field> gfields;
  if (!Fields(model, graph->payload, graph->payload + graph->size, &gfields)) return model;
  std::vector<Initializer> inits(gfields.size());
  bool any = false;
  for (size_t i = 0; i < gfields.size(); ++i) {
    const Field& f = gfields[i];
    inits[i].field = &f;
    if (f.number != 5 || f.wire != 2) continue;
    std::vector<Field> tfields;
    if (!Fields(model, f.payload, f.payload + f.size, &tfields)) continue;
    for (const Field& t : tfields) {
      if (t.number != 9 || t.wire != 2 || t.size == 0) continue;
      inits[i].raw_tag = t.start - f.payload;
      inits[i].raw_head = t.payload - t.start;
      inits[i].align = t.size >= large_bytes ? large_align : small_align;
      any = true;
    }
  }
  if (!any) return model;

  const size_t prefix = graph->start + 1;  // tag 0x3a
  std::string body;
  size_t len_bytes = VarintLen(graph->size);
  size_t moved = 0;
  // The graph's length varint moves everything after it: settle its size.
  for (int iter = 0; iter < 4; ++iter) {
    body.clear();
    moved = 0;
    const size_t graph_start = prefix + len_bytes;
    for (const Initializer& in : inits) {
      const Field& f = *in.field;
      if (in.align == 0) {
        body.append(model, f.start, f.end - f.start);
        continue;
      }
      const size_t record = graph_start + body.size();
      const size_t tag_bytes = VarintLen((uint64_t{f.number} << 3) | f.wire);
      size_t pad = 0;
      for (size_t p = 0; p <= in.align + 2; p += (p == 0 ? 2 : 1)) {
        size_t data = record + tag_bytes + VarintLen(f.size + p) + in.raw_tag + p + in.raw_head;
        if (data % in.align == 0) {
          pad = p;
          break;
        }
      }
      body.append(model, f.start, tag_bytes);
      PutVarint(&body, f.size + pad);
      body.append(model, f.payload, in.raw_tag);
      PutPadding(&body, pad);
      body.append(model, f.payload + in.raw_tag, f.size - in.raw_tag);
      if (pad) ++moved;
    }
    if (VarintLen(body.size()) == len_bytes) break;
    len_bytes = VarintLen(body.size());
  }
  if (VarintLen(body.size()) != len_bytes) return model;
  std::string out;
  out.reserve(model.size() + body.size() - graph->size + 8);
  out.append(model, 0, prefix);
  PutVarint(&out, body.size());
  out += body;
  out.append(model, graph->end, std::string::npos);
  if (aligned) *aligned = moved;
  return out;
}

}  // namespace host
}  // namespace epctx
