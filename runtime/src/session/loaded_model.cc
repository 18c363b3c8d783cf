// SPDX-License-Identifier: Apache-2.0
// The parsed and verified model (loaded_model.h): mapping, the signed
// package's checks before parsing, parsing, initializer data.
#include "session/loaded_model.h"

#include <cstring>
#include <new>

#include <manifest_format.h>

#include "session/plan.h"
#include "session/trust_config.h"
#include "session/workspace.h"
#include "trust/sealed.h"

namespace epctx {
namespace {

// Folder part of a path ("" for a bare file name), copied into the arena.
const char* dir_of(Arena& arena, const char* path) {
  const char* slash = cstr_rchr(path, '/');
  if (!slash) return arena.Strdup("", 0);
  size_t n = static_cast<size_t>(slash - path);
  return arena.Strdup(path, n == 0 ? 1 : n);  // "/x" -> "/"
}

}  // namespace

const char* ContextBaseDir(const Options& options, const char* model_path, Arena& arena) {
  const char* ctx_path = options.Get(kOptEpContextFilePath);
  if (ctx_path && !ctx_path[0]) ctx_path = nullptr;  // "" is no path (ORT refuses it too)
  if (ctx_path) return dir_of(arena, ctx_path);
  return model_path ? dir_of(arena, model_path) : nullptr;
}

LoadedModel::LoadedModel(Env* env)
    : env_(env), budget_(env->alloc), alloc_(budget_.allocator()), meta_(alloc_, 8 * 1024) {}

struct LoadedModel::SealedData {
  explicit SealedData(const Allocator& a) : asset(a) {}
  StrView name;  // as the model references it
  trust::SealedAsset asset;
  uint8_t* plain = nullptr;  // the whole plaintext; ranges decrypted as used
  uint64_t size = 0;
  SealedData* next = nullptr;
};

LoadedModel::~LoadedModel() {
  // Plaintext is wiped before it goes back to the allocator.
  for (SealedData* d = sealed_data_; d;) {
    SealedData* next = d->next;
    if (d->plain) trust::Wipe(d->plain, size_t(d->size));
    alloc_.Free(d->plain);
    d->~SealedData();
    alloc_.Free(d);
    d = next;
  }
  if (model_plain_) trust::Wipe(model_plain_, model_plain_size_);
  alloc_.Free(model_plain_);
  for (uint32_t i = 0; i < num_data_regions_; ++i) ReleaseRegion(&data_regions_[i]);
  epctx_pal_unmap(&model_region_);
}

Status LoadedModel::OpenSealedModel(const char* path, const Options& options) {
  // The key of an encrypted file is bound to the name it is referenced by;
  // for the model, its file name.
  const char* named = path ? path : options.Get(kOptEpContextFilePath);
  if (!named || !named[0])
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "%s: the model is encrypted under its file name, which a model loaded "
                         "from a buffer does not have: set %s to its path",
                         label_, kOptEpContextFilePath);
  const char* slash = cstr_rchr(named, '/');
  const char* base = slash ? slash + 1 : named;
  const trust::ManifestFile* listed = nullptr;
  EPCTX_RETURN_IF_ERROR(verifier_.Listed(EPCTX_MF_ROLE_MODEL, StrView{}, model_bytes_, &listed));
  char what[200];
  format(what, sizeof what, "%s: encrypted model", label_);
  const trust::KeyWrapFile* wraps = nullptr;
  EPCTX_RETURN_IF_ERROR(key_wraps_.Get(label_, &wraps));
  trust::SealedAsset sa(env_->alloc);
  EPCTX_RETURN_IF_ERROR(
      sa.Open(model_bytes_, StrView{base, cstr_len(base)}, env_->trust, what, listed, wraps));
  const uint64_t size = sa.header().plaintext_size;  // <= the file's size
  // Page-aligned: embedded payloads keep the alignment the compiler gave
  // them in the file.
  model_plain_ = static_cast<uint8_t*>(alloc_.Alloc(size ? size_t(size) : 1, 4096));
  if (!model_plain_)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for %llu bytes", what,
                         static_cast<unsigned long long>(size));
  model_plain_size_ = size_t(size);
  EPCTX_RETURN_IF_ERROR(sa.Decrypt(0, size, model_plain_));
  model_bytes_ = Bytes{model_plain_, size_t(size)};
  env_->Log(EPCTX_LOG_VERBOSE, "%s: %llu bytes decrypted (key id '%s')", what,
            static_cast<unsigned long long>(size), sa.header().key_id);
  return Status::Ok();
}

LoadedModel::SealedData* LoadedModel::FindSealedData(StrView location) const {
  for (SealedData* d = sealed_data_; d; d = d->next)
    if (d->name.size == location.size && memcmp(d->name.data, location.data, location.size) == 0)
      return d;
  return nullptr;
}

Status LoadedModel::SealedDataFile(StrView location, const char* what,
                                   const epctx_pal_region& mapped, SealedData** out) {
  const Bytes file{mapped.data, static_cast<size_t>(mapped.size)};
  const trust::ManifestFile* listed = nullptr;
  EPCTX_RETURN_IF_ERROR(verifier_.Listed(EPCTX_MF_ROLE_DATA, location, file, &listed));
  void* mem = alloc_.Alloc(sizeof(SealedData), alignof(SealedData));
  if (!mem) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label_);
  SealedData* d = new (mem) SealedData(env_->alloc);
  d->name = location;
  char msg[200];
  format(msg, sizeof msg, "%s: %s file '%.*s'", label_, what, location.len(), location.data);
  const trust::KeyWrapFile* wraps = nullptr;
  Status st = key_wraps_.Get(label_, &wraps);
  if (st.ok()) st = d->asset.Open(file, location, env_->trust, msg, listed, wraps);
  if (st.ok()) {
    d->size = d->asset.header().plaintext_size;
    d->plain = static_cast<uint8_t*>(alloc_.Alloc(d->size ? size_t(d->size) : 1, 64));
    if (!d->plain)
      st = Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for %llu bytes", msg,
                         static_cast<unsigned long long>(d->size));
  }
  if (!st.ok()) {
    d->~SealedData();
    alloc_.Free(d);
    return st;
  }
  d->next = sealed_data_;
  sealed_data_ = d;
  *out = d;
  return Status::Ok();
}

Status LoadedModel::Open(const char* path, const void* buffer, size_t size,
                         const Options& options) {
  options_ = &options;
  uint64_t max_memory = 0;
  if (const char* v = options.Get(kOptMaxMemoryBytes)) (void)ParseByteCount(v, &max_memory);
  budget_.set_limit(max_memory);  // checked when set: a value here parses
  const char* mode = options.Get(kOptLoadMode);
  if (mode && cstr_eq(mode, "read")) load_mode_ = EPCTX_PAL_LOAD_READ;
  base_dir_ = ContextBaseDir(options, path, meta_);
  if (path) {
    label_ = meta_.Strdup(path, cstr_len(path));
    char msg[Status::kMaxMessage];
    int rc = epctx_pal_map_file(path, load_mode_, &model_region_, msg, sizeof msg);
    if (rc != EPCTX_OK) return Status::Error(rc, "%s", msg);
    model_bytes_ = Bytes{model_region_.data, static_cast<size_t>(model_region_.size)};
  } else {
    label_ = "<buffer>";
    if (!buffer && size) return Status::Error(EPCTX_INVALID_ARGUMENT, "model buffer is NULL");
    model_bytes_ = Bytes{static_cast<const uint8_t*>(buffer), size};
  }
  if (!label_) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
  env_->Log(EPCTX_LOG_VERBOSE, "%s: loading (%llu bytes, %s)", label_,
            (unsigned long long)model_bytes_.size,
            path ? (load_mode_ == EPCTX_PAL_LOAD_READ ? "read" : "mmap") : "caller's buffer");
  // Signed packages: manifest, key, signature, rollback, then the model's
  // hash, all before the model is parsed.
  trust::VerifyConfig trust_config;
  EPCTX_RETURN_IF_ERROR(ResolveVerifyConfig(options, path, meta_, label_, &trust_config));
  EPCTX_RETURN_IF_ERROR(verifier_.Begin(env_->trust, trust_config, meta_, label_));
  // Encrypted files find their data key in the application's keys, else
  // in the key-wrap file, read when the first of them is opened.
  const char* keys_path = nullptr;
  bool keys_required = false;
  EPCTX_RETURN_IF_ERROR(ResolveKeysPath(options, path, meta_, label_, &keys_path, &keys_required));
  key_wraps_.Configure(keys_path, keys_required);
  // An encrypted model is decrypted (and hashed, signed) before parsing.
  if (trust::LooksSealed(model_bytes_)) EPCTX_RETURN_IF_ERROR(OpenSealedModel(path, options));
  else EPCTX_RETURN_IF_ERROR(verifier_.VerifyModel(model_bytes_));
  if (verifier_.active())
    env_->Log(EPCTX_LOG_INFO,
              "%s: signed package: manifest %s verified for model id '%.*s', "
              "security counter %llu",
              label_, verifier_.signature_path(), verifier_.manifest().model_id.len(),
              verifier_.manifest().model_id.data,
              (unsigned long long)verifier_.manifest().security_counter);
  else
    env_->Log(EPCTX_LOG_VERBOSE, "%s: not verified (signature policy %s, no manifest)", label_,
              trust_config.policy == trust::Policy::kOff ? "off" : "if_signed");
  if (model_bytes_.size == 0)
    return Status::Error(EPCTX_INVALID_PROTOBUF, "%s: empty file, not an ONNX model", label_);
  EPCTX_RETURN_IF_ERROR(onnx::ParseModel(model_bytes_, label_, meta_, &model_));
  env_->Log(EPCTX_LOG_VERBOSE,
            "%s: parsed: IR version %lld, producer '%.*s', %u nodes, %u inputs, "
            "%u outputs",
            label_, (long long)model_.ir_version, model_.producer_name.len(),
            model_.producer_name.data, model_.graph.num_nodes, model_.graph.num_inputs,
            model_.graph.num_outputs);
  if (model_.graph.num_nodes == 0 && model_.graph.num_outputs == 0)
    return Status::Error(EPCTX_INVALID_GRAPH, "%s: the graph has no nodes and no outputs", label_);
  ext_folder_ = options.Get(kOptExternalInitializersFolder);
  // Every graph's initializers may have external data: one region each.
  uint64_t inits = CountInitializers(model_.graph);
  if (inits > (1u << 24))
    return Status::Error(EPCTX_NOT_IMPLEMENTED, "%s: %llu initializers exceed the limit of 16M",
                         label_, (unsigned long long)inits);
  data_regions_ = meta_.AllocArray<epctx_pal_region>(inits + 1);
  if (!data_regions_)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for %llu initializers", label_,
                         (unsigned long long)inits);
  return Status::Ok();
}

Status LoadedModel::Finish() {
  EPCTX_RETURN_IF_ERROR(verifier_.Commit());
  options_ = nullptr;    // the caller's: valid only while creating
  key_wraps_.Release();  // every encrypted file has its key
  // Loading is done: runs read initializers, let the OS read ahead for them.
  epctx_pal_advise(&model_region_, 0, model_region_.size, EPCTX_PAL_ADVISE_NORMAL);
  for (uint32_t i = 0; i < num_data_regions_; ++i)
    epctx_pal_advise(&data_regions_[i], 0, data_regions_[i].size, EPCTX_PAL_ADVISE_NORMAL);
  return Status::Ok();
}

Status LoadedModel::InitializerData(const onnx::TensorView& t, const char* label, TensorRef* r) {
  r->dtype = t.dtype;
  r->rank = t.rank;
  for (uint32_t d = 0; d < t.rank; ++d) r->dims[d] = t.dims[d];
  uint64_t elems = 0;
  size_t esize = dtype_size(t.dtype);
  if (!shape_elements(t.dims, t.rank, &elems) || esize == 0 || elems > UINT64_MAX / esize)
    return Status::Error(EPCTX_NOT_IMPLEMENTED,
                         "%s: initializer '%.*s': type %s or shape not supported", label,
                         t.name.len(), t.name.data, dtype_name(t.dtype));
  uint64_t want = elems * esize;
  if (t.storage != onnx::Storage::kExternal) {
    if (t.bytes != want)
      return Status::Error(
          EPCTX_INVALID_GRAPH, "%s: initializer '%.*s': expected %llu data bytes, found %llu",
          label, t.name.len(), t.name.data, (unsigned long long)want, (unsigned long long)t.bytes);
    r->data = const_cast<void*>(t.data);
    r->bytes = want;
    return CheckBool(*r, t.name);
  }
  // External data: resolved beneath the model folder (or the configured
  // external-initializers folder), mapped, and viewed in place; an
  // encrypted file is mapped and opened once, its plaintext viewed.
  char what[160];
  format(what, sizeof what, "initializer '%.*s' external data", t.name.len(), t.name.data);
  SealedData* sealed = FindSealedData(t.external_location);
  const epctx_pal_region* mapped = nullptr;  // this file's mapping, when plain
  if (!sealed) {
    epctx_pal_region* region = &data_regions_[num_data_regions_];
    EPCTX_RETURN_IF_ERROR(MapBeneath(ext_folder_ ? ext_folder_ : base_dir_,
                                     t.external_location.data, t.external_location.size, what,
                                     region));
    ++num_data_regions_;
    Bytes file{region->data, static_cast<size_t>(region->size)};
    // Signed packages: listed and of the signed size before any range check.
    EPCTX_RETURN_IF_ERROR(
        verifier_.VerifyRange(EPCTX_MF_ROLE_DATA, t.external_location, file, 0, 0));
    if (trust::LooksSealed(file))
      EPCTX_RETURN_IF_ERROR(SealedDataFile(t.external_location, what, *region, &sealed));
    else mapped = region;
  }
  // The bytes the range is of: the mapped file, or an encrypted file's
  // plaintext (decrypted, and hashed when signed, as ranges are used).
  const uint8_t* base = sealed ? sealed->plain : mapped->data;
  const uint64_t size = sealed ? sealed->size : mapped->size;
  uint64_t off = static_cast<uint64_t>(t.external_offset < 0 ? 0 : t.external_offset);
  uint64_t len = t.external_length >= 0 ? static_cast<uint64_t>(t.external_length) : want;
  if (len != want || off > size || len > size - off)
    return Status::Error(EPCTX_INVALID_GRAPH,
                         "%s: %s: range [%llu, +%llu) does not hold the expected %llu bytes of a "
                         "%llu-byte %s",
                         label, what, (unsigned long long)off, (unsigned long long)len,
                         (unsigned long long)want, (unsigned long long)size,
                         sealed ? "plaintext" : "file");
  if (((reinterpret_cast<uintptr_t>(base) + off) & (esize - 1)) != 0)
    return Status::Error(EPCTX_INVALID_GRAPH, "%s: %s: offset %llu is not aligned to %zu", label,
                         what, (unsigned long long)off, esize);
  if (sealed) EPCTX_RETURN_IF_ERROR(sealed->asset.Decrypt(off, off + len, sealed->plain));
  else
    EPCTX_RETURN_IF_ERROR(verifier_.VerifyRange(EPCTX_MF_ROLE_DATA, t.external_location,
                                                Bytes{base, static_cast<size_t>(size)}, off, len));
  r->data = const_cast<uint8_t*>(base + off);
  r->bytes = want;
  return CheckBool(*r, t.name);
}

Status LoadedModel::CheckBool(const TensorRef& r, StrView name) const {
  int64_t bad = r.dtype == EPCTX_DTYPE_BOOL ? first_non_bool(r.data, r.bytes) : -1;
  if (bad < 0) return Status::Ok();
  return Status::Error(EPCTX_INVALID_GRAPH,
                       "%s: initializer '%.*s': bool element %lld is byte %u, expected 0 or 1",
                       label_, name.len(), name.data, static_cast<long long>(bad),
                       static_cast<const uint8_t*>(r.data)[bad]);
}

Status LoadedModel::MapBeneath(const char* base, const char* rel, size_t rel_len, const char* what,
                               epctx_pal_region* out) {
  if (const Options::ExternalFile* f = FindExternal(rel, rel_len)) {
    if (f->fd < 0) {
      out->data = static_cast<const uint8_t*>(f->data);
      out->size = f->data ? f->size : 0;
      out->handle = &kBorrowedRegion;
      return Status::Ok();
    }
    char msg[Status::kMaxMessage];
    int rc = epctx_pal_map_fd(f->fd, f->offset, f->size, load_mode_, out, msg, sizeof msg);
    if (rc != EPCTX_OK)
      return Status::Error(rc, "%s: %s: external file '%s' given by descriptor: %s", label_, what,
                           f->name, msg);
    return Status::Ok();
  }
  if (!base)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "%s: %s '%.*s' is relative to the model's folder, which is unknown for a "
                         "model loaded from a buffer. Please specify a valid %s",
                         label_, what, rel_len > 0x7fffffff ? 0 : (int)rel_len, rel,
                         kOptEpContextFilePath);
  if (const void* nul = memchr(rel, '\0', rel_len))
    return Status::Error(EPCTX_PATH_REJECTED, "%s: %s: path '%.*s' contains a NUL byte", label_,
                         what, static_cast<int>(static_cast<const char*>(nul) - rel), rel);
  char* path = meta_.Strdup(rel, rel_len);
  if (!path) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
  char msg[Status::kMaxMessage];
  int rc = epctx_pal_map_file_beneath(base, path, load_mode_, out, msg, sizeof msg);
  if (rc != EPCTX_OK) return Status::Error(rc, "%s: %s: %s", label_, what, msg);
  return Status::Ok();
}

}  // namespace epctx
