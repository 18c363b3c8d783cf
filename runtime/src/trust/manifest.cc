// SPDX-License-Identifier: Apache-2.0
#include "trust/manifest.h"

#include <cstring>

#include <manifest_format.h>

#include "core/sort.h"

namespace epctx {
namespace trust {
namespace {

Status bad(const char* label, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
Status bad(const char* label, const char* fmt, ...) {
  char what[Status::kMaxMessage];
  va_list ap;
  va_start(ap, fmt);
  vformat(what, sizeof what, fmt, ap);
  va_end(ap);
  return Status::Error(EPCTX_SIGNATURE_INVALID, "%s: malformed manifest: %s", label, what);
}

bool has_nul(const uint8_t* p, size_t n) { return n && memchr(p, 0, n) != nullptr; }

Status parse_file(const uint8_t* v, uint32_t len, uint32_t off, const char* label,
                  ManifestFile* f) {
  if (len < EPCTX_MF_FILE_FIXED_SIZE)
    return bad(label, "FILE TLV at offset %u: %u bytes, at least %d expected", off, len,
               EPCTX_MF_FILE_FIXED_SIZE);
  f->role = v[0];
  f->chunk_log2 = v[1];
  uint16_t name_len = load_le16(v + 2);
  f->size = load_le64(v + 4);
  if (f->role > EPCTX_MF_ROLE_DATA)
    return bad(label, "FILE TLV at offset %u: unknown role %u", off, f->role);
  if (f->chunk_log2 < EPCTX_MF_MIN_CHUNK_LOG2 || f->chunk_log2 > EPCTX_MF_MAX_CHUNK_LOG2)
    return bad(label, "FILE TLV at offset %u: chunk_log2 %u outside [%d, %d]", off, f->chunk_log2,
               EPCTX_MF_MIN_CHUNK_LOG2, EPCTX_MF_MAX_CHUNK_LOG2);
  uint32_t rest = len - EPCTX_MF_FILE_FIXED_SIZE;
  if (name_len == 0 || name_len > EPCTX_MF_MAX_STRING || name_len > rest)
    return bad(label, "FILE TLV at offset %u: name length %u invalid (1..%d, %u bytes left)", off,
               name_len, EPCTX_MF_MAX_STRING, rest);
  const uint8_t* name = v + EPCTX_MF_FILE_FIXED_SIZE;
  if (relative_path_problem(StrView{reinterpret_cast<const char*>(name), name_len}))
    return bad(label, "FILE TLV at offset %u: name '%.*s' is not a plain relative path", off,
               static_cast<int>(name_len), reinterpret_cast<const char*>(name));
  f->name = StrView{reinterpret_cast<const char*>(name), name_len};
  uint64_t chunk = uint64_t{1} << f->chunk_log2;
  f->num_chunks = f->size / chunk + (f->size % chunk ? 1 : 0);
  uint64_t hash_bytes = rest - name_len;
  if (f->num_chunks > hash_bytes / EPCTX_MF_HASH_SIZE ||
      hash_bytes != f->num_chunks * EPCTX_MF_HASH_SIZE)
    return bad(label,
               "FILE TLV '%.*s': %llu bytes of chunk hashes, a %llu-byte file needs %llu chunks",
               f->name.len(), f->name.data, (unsigned long long)hash_bytes,
               (unsigned long long)f->size, (unsigned long long)f->num_chunks);
  f->chunk_hashes = name + name_len;
  return Status::Ok();
}

// Orders (role, name) pairs: role first, then the name's bytes, then length.
int compare(uint8_t ra, StrView a, uint8_t rb, StrView b) {
  if (ra != rb) return ra < rb ? -1 : 1;
  size_t n = a.size < b.size ? a.size : b.size;
  int c = n ? memcmp(a.data, b.data, n) : 0;
  if (c) return c;
  return a.size == b.size ? 0 : (a.size < b.size ? -1 : 1);
}

}  // namespace

const ManifestFile* Manifest::Find(uint8_t role, StrView name) const {
  size_t lo = 0, hi = by_name ? num_files : 0;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const ManifestFile& f = files[by_name[mid]];
    int c = compare(f.role, f.name, role, name);
    if (c == 0) return &f;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return nullptr;
}

const ManifestFile* Manifest::Model() const {
  return model_index < num_files && files[model_index].role == EPCTX_MF_ROLE_MODEL
             ? &files[model_index]
             : nullptr;
}

Status ParseManifest(Bytes bytes, const char* label, Arena& arena, Manifest* out) {
  *out = Manifest();
  const uint8_t* p = bytes.data;
  size_t n = bytes.size;
  if (n > EPCTX_MF_MAX_SIZE)
    return bad(label, "%zu bytes exceed the limit of %u", n, EPCTX_MF_MAX_SIZE);
  if (n < EPCTX_MF_HEADER_SIZE)
    return bad(label, "%zu bytes, shorter than the %d-byte header", n, EPCTX_MF_HEADER_SIZE);
  if (memcmp(p, EPCTX_MF_MAGIC, EPCTX_MF_MAGIC_SIZE) != 0) return bad(label, "bad magic");
  uint16_t major = load_le16(p + 8), minor = load_le16(p + 10);
  if (major != EPCTX_MF_FORMAT_MAJOR || minor > EPCTX_MF_FORMAT_MINOR)
    return bad(label, "format %u.%u, this runtime reads %d.0 to %d.%d", major, minor,
               EPCTX_MF_FORMAT_MAJOR, EPCTX_MF_FORMAT_MAJOR, EPCTX_MF_FORMAT_MINOR);
  out->format_minor = minor;
  uint32_t hdr = load_le32(p + 12), prot = load_le32(p + 16), flags = load_le32(p + 20);
  if (hdr != EPCTX_MF_HEADER_SIZE)
    return bad(label, "header_size %u, expected %d", hdr, EPCTX_MF_HEADER_SIZE);
  if (flags != 0 || load_le64(p + 24) != 0)
    return bad(label, "flags or reserved bytes are not zero");
  if (prot < hdr || prot > n)
    return bad(label, "protected_size %u outside [%u, %zu]", prot, hdr, n);

  // Pass 1: count FILE TLVs so the array is sized before filling it.
  uint32_t num_files = 0;
  for (uint32_t off = hdr; off < prot;) {
    if (EPCTX_MF_TLV_HEADER_SIZE > prot - off)
      return bad(label, "TLV header at offset %u straddles the protected area's end %u", off, prot);
    uint32_t len = load_le32(p + off + 4);
    if (len > prot - off - EPCTX_MF_TLV_HEADER_SIZE)
      return bad(label, "TLV type 0x%x at offset %u: length %u runs past the protected area",
                 load_le16(p + off), off, len);
    if (load_le16(p + off) == EPCTX_MF_TLV_FILE) ++num_files;
    off += EPCTX_MF_TLV_HEADER_SIZE + len;
  }
  out->files = arena.AllocArray<ManifestFile>(num_files + 1);
  out->by_name = arena.AllocArray<uint32_t>(num_files + 1);
  if (!out->files || !out->by_name)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label);
  uint32_t num_models = 0;

  bool have_counter = false;
  uint32_t seen = 0;  // bit per singleton type
  for (uint32_t off = hdr; off < prot;) {
    uint16_t type = load_le16(p + off), reserved = load_le16(p + off + 2);
    uint32_t len = load_le32(p + off + 4);
    const uint8_t* v = p + off + EPCTX_MF_TLV_HEADER_SIZE;
    if (reserved != 0) return bad(label, "TLV at offset %u: reserved field is not zero", off);
    if (type == EPCTX_MF_TLV_FILE) {
      ManifestFile* f = &out->files[out->num_files];
      EPCTX_RETURN_IF_ERROR(parse_file(v, len, off, label, f));
      if (f->role == EPCTX_MF_ROLE_MODEL) {
        if (num_models++)
          return bad(label, "FILE '%.*s': a second MODEL entry", f->name.len(), f->name.data);
        out->model_index = out->num_files;
      }
      out->by_name[out->num_files] = out->num_files;
      ++out->num_files;
    } else if (type >= EPCTX_MF_TLV_KEY_ID && type <= EPCTX_MF_TLV_PRODUCER) {
      if (seen & (1u << type)) return bad(label, "TLV type 0x%x appears twice", type);
      seen |= 1u << type;
      StrView s{reinterpret_cast<const char*>(v), len};
      switch (type) {
        case EPCTX_MF_TLV_KEY_ID:
          if (len != EPCTX_MF_HASH_SIZE) return bad(label, "KEY_ID of %u bytes, expected 32", len);
          out->key_id = v;
          break;
        case EPCTX_MF_TLV_SECURITY_COUNTER:
          if (len != 8) return bad(label, "SECURITY_COUNTER of %u bytes, expected 8", len);
          out->security_counter = load_le64(v);
          have_counter = true;
          break;
        default:
          if (len > EPCTX_MF_MAX_STRING || has_nul(v, len))
            return bad(label, "string TLV type 0x%x: %u bytes or a NUL byte (limit %d)", type, len,
                       EPCTX_MF_MAX_STRING);
          if (type == EPCTX_MF_TLV_MODEL_ID) out->model_id = s;
          if (type == EPCTX_MF_TLV_SDK_VERSION) out->sdk_version = s;
          if (type == EPCTX_MF_TLV_HW_ARCH) out->hw_arch = s;
          if (type == EPCTX_MF_TLV_MIN_DRIVER_VERSION) out->min_driver_version = s;
          if (type == EPCTX_MF_TLV_PRODUCER) out->producer = s;
      }
    } else if (!(type & EPCTX_MF_TLV_IGNORABLE)) {
      return bad(label, "unknown critical TLV type 0x%x at offset %u", type, off);
    }
    off += EPCTX_MF_TLV_HEADER_SIZE + len;
  }
  if (!out->key_id) return bad(label, "no KEY_ID");
  if (out->model_id.empty()) return bad(label, "no MODEL_ID");
  if (!have_counter) return bad(label, "no SECURITY_COUNTER");
  if (!num_models) return bad(label, "no FILE entry for the model");
  // Duplicates by sorting, not by pairwise search: this runs before the
  // signature is checked, so it must stay O(n log n) for any entry count.
  const ManifestFile* files = out->files;
  HeapSort(out->by_name, out->num_files, [files](uint32_t a, uint32_t b) {
    return compare(files[a].role, files[a].name, files[b].role, files[b].name) < 0;
  });
  for (uint32_t i = 1; i < out->num_files; ++i) {
    const ManifestFile& a = files[out->by_name[i - 1]];
    const ManifestFile& b = files[out->by_name[i]];
    if (compare(a.role, a.name, b.role, b.name) == 0)
      return bad(label, "FILE '%.*s' (role %u) is listed twice", b.name.len(), b.name.data, b.role);
  }

  // The unprotected area: exactly one signature TLV, ending at the file's end.
  size_t rest = n - prot;
  if (rest < EPCTX_MF_TLV_HEADER_SIZE)
    return bad(label, "no signature TLV after the protected area (%zu bytes left)", rest);
  const uint8_t* t = p + prot;
  uint16_t type = load_le16(t);
  uint32_t len = load_le32(t + 4);
  if (type != EPCTX_MF_TLV_SIGNATURE || load_le16(t + 2) != 0)
    return bad(label, "TLV type 0x%x after the protected area, only the signature may be there",
               type);
  if (len < 8 || len > EPCTX_MF_MAX_SIGNATURE)
    return bad(label, "signature of %u bytes, expected 8..%d", len, EPCTX_MF_MAX_SIGNATURE);
  if (len > rest - EPCTX_MF_TLV_HEADER_SIZE)
    return bad(label, "signature TLV of %u bytes runs past the end of the file", len);
  if (len != rest - EPCTX_MF_TLV_HEADER_SIZE)
    return bad(label, "%llu trailing bytes after the signature TLV (it must end the file)",
               (unsigned long long)(rest - EPCTX_MF_TLV_HEADER_SIZE - len));
  out->signed_part = Bytes{p, prot};
  out->signature = Bytes{t + EPCTX_MF_TLV_HEADER_SIZE, len};
  return Status::Ok();
}

}  // namespace trust
}  // namespace epctx
