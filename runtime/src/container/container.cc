// SPDX-License-Identifier: Apache-2.0
#include "container/container.h"

#include <cstring>

#include "container_generated.h"
#include "container_header.h"
#include "core/fb_verify.h"
#include "core/sort.h"

namespace epctx {
namespace {

ContainerVersion version_of(const fb::Version* v) {
  ContainerVersion r;
  if (v) {
    r.major = v->major();
    r.minor = v->minor();
    r.patch = v->patch();
  }
  return r;
}

// Orders graph names bytewise, then by length.
int compare_names(const ContainerGraph& a, const ContainerGraph& b) {
  size_t n = a.name_size < b.name_size ? a.name_size : b.name_size;
  int c = n ? memcmp(a.name, b.name, n) : 0;
  if (c) return c;
  return a.name_size == b.name_size ? 0 : (a.name_size < b.name_size ? -1 : 1);
}

// A segment must lie inside the container and start on the alignment.
Status check_segment(const fb::Segment* s, uint64_t total, uint32_t align, const char* label,
                     const char* what, const uint8_t* base, Bytes* out) {
  if (!s) {
    *out = Bytes{};
    return Status::Ok();
  }
  uint64_t off = s->offset(), size = s->size();
  if (off > total || size > total - off)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: %s segment [%llu, +%llu) lies outside the container of %llu bytes",
                         label, what, (unsigned long long)off, (unsigned long long)size,
                         (unsigned long long)total);
  if (size != 0 && (off & (align - 1)) != 0)
    return Status::Error(EPCTX_INVALID_CONTAINER, "%s: %s segment offset %llu is not aligned to %u",
                         label, what, (unsigned long long)off, align);
  out->data = size ? base + off : nullptr;
  out->size = static_cast<size_t>(size);
  return Status::Ok();
}

}  // namespace

bool LooksLikeContainer(Bytes blob) {
  return blob.size >= EPCTX_CONTAINER_MAGIC_SIZE &&
         memcmp(blob.data, EPCTX_CONTAINER_MAGIC, EPCTX_CONTAINER_MAGIC_SIZE) == 0;
}

Status ParseContainer(Bytes blob, const char* label, Arena& arena, ContainerView* out) {
  *out = ContainerView{};
  if (blob.size < EPCTX_CONTAINER_HEADER_SIZE)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: %zu bytes is shorter than the %d-byte container header", label,
                         blob.size, EPCTX_CONTAINER_HEADER_SIZE);
  if (!LooksLikeContainer(blob))
    return Status::Error(EPCTX_INVALID_CONTAINER, "%s: container magic \"%s\" not found", label,
                         EPCTX_CONTAINER_MAGIC);
  const uint8_t* h = blob.data;
  out->format_major = load_le16(h + EPCTX_CONTAINER_OFF_FORMAT_MAJOR);
  out->format_minor = load_le16(h + EPCTX_CONTAINER_OFF_FORMAT_MINOR);
  bool known = false;
  for (uint16_t m : kSupportedContainerMajors) known = known || m == out->format_major;
  if (!known) {
    char readable[64];
    size_t len = 0;
    readable[0] = '\0';
    for (uint16_t m : kSupportedContainerMajors)
      len += format(readable + len, len < sizeof readable ? sizeof readable - len : 0, "%s%u.x",
                    len ? ", " : "", m);
    return Status::Error(EPCTX_NOT_IMPLEMENTED,
                         "%s: container format %u.%u is not supported; this runtime reads %s",
                         label, out->format_major, out->format_minor, readable);
  }
  uint32_t header_size = load_le32(h + EPCTX_CONTAINER_OFF_HEADER_SIZE);
  uint64_t total = load_le64(h + EPCTX_CONTAINER_OFF_TOTAL_SIZE);
  uint64_t meta_off = load_le64(h + EPCTX_CONTAINER_OFF_METADATA_OFFSET);
  uint64_t meta_size = load_le64(h + EPCTX_CONTAINER_OFF_METADATA_SIZE);
  uint32_t align = load_le32(h + EPCTX_CONTAINER_OFF_SEGMENT_ALIGNMENT);
  if (header_size < EPCTX_CONTAINER_HEADER_SIZE || header_size > blob.size)
    return Status::Error(EPCTX_INVALID_CONTAINER, "%s: header_size %u: expected 64..%zu", label,
                         header_size, blob.size);
  if (total != blob.size)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: header says %llu bytes, found %zu (truncated or padded file)", label,
                         (unsigned long long)total, blob.size);
  if (align < 64 || (align & (align - 1)) != 0 || align > (1u << 20))
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: segment_alignment %u: expected a power of two in [64, 1 MiB]", label,
                         align);
  if (meta_off < header_size || meta_off > total || meta_size > total - meta_off ||
      (meta_off & 7) != 0 || meta_size == 0)
    return Status::Error(
        EPCTX_INVALID_CONTAINER,
        "%s: metadata [%llu, +%llu) is not an 8-aligned range inside the %llu-byte "
        "container after the header",
        label, (unsigned long long)meta_off, (unsigned long long)meta_size,
        (unsigned long long)total);
  const uint8_t* meta = blob.data + meta_off;
  if ((reinterpret_cast<uintptr_t>(meta) & 7) != 0) {
    // A container embedded at an odd offset of a model (files from other
    // tools; epctx-compile aligns it): flatbuffers reads its buffer with
    // aligned loads, so parse an aligned copy of the metadata. Weight and
    // payload views still point into the blob.
    uint8_t* copy = static_cast<uint8_t*>(arena.Alloc(static_cast<size_t>(meta_size), 8));
    if (!copy)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory copying %llu bytes of metadata",
                           label, (unsigned long long)meta_size);
    memcpy(copy, meta, static_cast<size_t>(meta_size));
    meta = copy;
  }
  flatbuffers::Verifier verifier(meta, static_cast<size_t>(meta_size), 64, 1000000);
  // The identifier is compared here with memcmp: flatbuffers' own check
  // calls strncmp, which a bare-metal board need not have.
  if (meta_size < 8 || memcmp(meta + 4, fb::ContainerIdentifier(), 4) != 0)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: container metadata lacks the \"%s\" identifier", label,
                         fb::ContainerIdentifier());
  if (!VerifyFlatbufferRoot<fb::Container>(verifier, meta, static_cast<size_t>(meta_size)))
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: container metadata failed flatbuffers verification", label);
  const fb::Container* c = fb::GetContainer(meta);
  out->segment_alignment = align;
  out->source = c->source()->c_str();
  out->producer = c->producer() ? c->producer()->c_str() : "";
  out->producer_version = version_of(c->producer_version());
  out->sdk_version = version_of(c->sdk_version());
  out->hardware_architecture =
      c->hardware_architecture() ? c->hardware_architecture()->c_str() : "";
  out->min_driver_version = version_of(c->min_driver_version());
  EPCTX_RETURN_IF_ERROR(
      check_segment(c->weights(), total, align, label, "weights", blob.data, &out->weights));
  const auto* graphs = c->graphs();
  uint32_t n = graphs ? graphs->size() : 0;
  ContainerGraph* gs = n ? arena.AllocArray<ContainerGraph>(n) : nullptr;
  if (n && !gs)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for %u graphs", label, n);
  uint32_t* by_name = n ? arena.AllocArray<uint32_t>(n) : nullptr;
  if (n && !by_name)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for %u graphs", label, n);
  for (uint32_t i = 0; i < n; ++i) {
    const fb::Graph* g = graphs->Get(i);
    gs[i].name = g->name()->c_str();
    gs[i].name_size = cstr_len(gs[i].name);  // C-string semantics, as drivers see names
    char what[96];
    format(what, sizeof what, "graph '%s' payload", gs[i].name);
    EPCTX_RETURN_IF_ERROR(
        check_segment(g->payload(), total, align, label, what, blob.data, &gs[i].payload));
    by_name[i] = i;
  }
  // Duplicate names by sorting: O(n log n) for any graph count.
  HeapSort(by_name, n, [gs](uint32_t a, uint32_t b) { return compare_names(gs[a], gs[b]) < 0; });
  for (uint32_t i = 1; i < n; ++i)
    if (compare_names(gs[by_name[i - 1]], gs[by_name[i]]) == 0)
      return Status::Error(EPCTX_INVALID_CONTAINER, "%s: graph name '%s' appears twice", label,
                           gs[by_name[i]].name);
  out->graphs = gs;
  out->num_graphs = n;
  out->by_name = by_name;
  return Status::Ok();
}

int64_t ContainerView::Find(StrView name) const {
  ContainerGraph key;
  key.name = name.data;
  key.name_size = name.size;
  size_t lo = 0, hi = by_name ? num_graphs : 0;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = compare_names(graphs[by_name[mid]], key);
    if (c == 0) return by_name[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

}  // namespace epctx
