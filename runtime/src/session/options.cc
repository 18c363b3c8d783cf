// SPDX-License-Identifier: Apache-2.0
#include "session/options.h"

#include <epctx/session_config_keys.h>

#include "core/budget.h"
#include "core/types.h"
#include "trust/verifier.h"

#include <cstring>

namespace epctx {

const char* const kOptEpContextFilePath = EPCTX_CONFIG_EP_CONTEXT_FILE_PATH;
const char* const kOptExternalInitializersFolder = EPCTX_CONFIG_EXTERNAL_INITIALIZERS_FOLDER;
const char* const kOptLoadMode = EPCTX_CONFIG_LOAD_MODE;
const char* const kOptShareEpContexts = EPCTX_CONFIG_SHARE_EP_CONTEXTS;
const char* const kOptStopShareEpContexts = EPCTX_CONFIG_STOP_SHARE_EP_CONTEXTS;
const char* const kOptAdvise = EPCTX_CONFIG_ADVISE;
const char* const kOptFailOnSuboptimal = EPCTX_CONFIG_FAIL_ON_SUBOPTIMAL;
const char* const kOptDisablePrepacking = EPCTX_CONFIG_DISABLE_PREPACKING;
const char* const kOptSignaturePolicy = EPCTX_CONFIG_SIGNATURE_POLICY;
const char* const kOptSignaturePath = EPCTX_CONFIG_SIGNATURE_PATH;
const char* const kOptKeysPath = EPCTX_CONFIG_KEYS_PATH;
const char* const kOptExpectedModelId = EPCTX_CONFIG_EXPECTED_MODEL_ID;
const char* const kOptMaxMemoryBytes = EPCTX_CONFIG_MAX_MEMORY_BYTES;
const char* const kOptIntraOpThreads = EPCTX_CONFIG_INTRA_OP_NUM_THREADS;

namespace {
// Keys accepted at inference (the public header documents each; a test
// checks the two lists agree). Generation-only keys (ep.context_enable, ...)
// are accepted and ignored so one options set can serve both workflows.
const char* const kKnownKeys[] = {
    EPCTX_CONFIG_EP_CONTEXT_FILE_PATH,
    EPCTX_CONFIG_EXTERNAL_INITIALIZERS_FOLDER,
    EPCTX_CONFIG_LOAD_MODE,
    EPCTX_CONFIG_EP_CONTEXT_ENABLE,
    EPCTX_CONFIG_EP_CONTEXT_EMBED_MODE,
    EPCTX_CONFIG_EP_CONTEXT_NODE_NAME_PREFIX,
    EPCTX_CONFIG_EP_CONTEXT_EXTERNAL_INITIALIZERS_FILE,
    EPCTX_CONFIG_SHARE_EP_CONTEXTS,
    EPCTX_CONFIG_STOP_SHARE_EP_CONTEXTS,
    EPCTX_CONFIG_SIGNATURE_POLICY,
    EPCTX_CONFIG_SIGNATURE_PATH,
    EPCTX_CONFIG_KEYS_PATH,
    EPCTX_CONFIG_EXPECTED_MODEL_ID,
    EPCTX_CONFIG_ADVISE,
    EPCTX_CONFIG_FAIL_ON_SUBOPTIMAL,
    EPCTX_CONFIG_MAX_MEMORY_BYTES,
    EPCTX_CONFIG_INTRA_OP_NUM_THREADS,
    EPCTX_CONFIG_DISABLE_PREPACKING,
};
}  // namespace

uint32_t Options::KnownKeyCount() { return sizeof kKnownKeys / sizeof kKnownKeys[0]; }
const char* Options::KnownKey(uint32_t i) { return i < KnownKeyCount() ? kKnownKeys[i] : nullptr; }

bool ParseThreadCount(const char* value, uint32_t* out) {
  uint32_t v = 0;
  if (!*value) return false;
  for (const char* c = value; *c; ++c) {
    if (*c < '0' || *c > '9' || c - value >= 3) return false;
    v = v * 10 + static_cast<uint32_t>(*c - '0');
  }
  if (v > 256) return false;
  *out = v;
  return true;
}

Status Options::Set(const char* key, const char* value) {
  if (!key || !value)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "session option: key and value must not be NULL");
  const char* known = nullptr;
  for (const char* k : kKnownKeys)
    if (cstr_eq(k, key)) known = k;
  if (!known) return Status::Error(EPCTX_INVALID_ARGUMENT, "session option '%s': unknown key", key);
  size_t n = cstr_len(value);
  if (n > static_cast<size_t>(kMaxValue))
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option '%s': value of %zu bytes exceeds %d", key, n, kMaxValue);
  if (cstr_eq(known, kOptKeysPath) && n == 0)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option 'epctx.keys_path': expected a file path, found an empty "
                         "string");
  if (cstr_eq(known, kOptExpectedModelId) && n == 0)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option 'epctx.expected_model_id': expected a model id, found an "
                         "empty string");
  uint64_t bytes = 0;
  if (cstr_eq(known, kOptMaxMemoryBytes) && !ParseByteCount(value, &bytes))
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option 'epctx.max_memory_bytes': expected a positive byte "
                         "count (digits, optionally K, M or G), found '%s'",
                         value);
  if (cstr_eq(known, kOptLoadMode) && !cstr_eq(value, "mmap") && !cstr_eq(value, "read"))
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option 'epctx.load_mode': expected mmap or read, found '%s'",
                         value);
  if (cstr_eq(known, kOptSignaturePolicy)) {
    trust::Policy p;
    if (!trust::ParsePolicy(value, &p))
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "session option 'epctx.signature_policy': expected required, if_signed "
                           "or off, found '%s'",
                           value);
    if (p != trust::Policy::kRequired && trust::DefaultPolicy() == trust::Policy::kRequired)
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "session option 'epctx.signature_policy': this runtime was built with "
                           "EPCTX_REQUIRE_SIGNATURES, only 'required' is allowed, found '%s'",
                           value);
  }
  if ((cstr_eq(known, kOptShareEpContexts) || cstr_eq(known, kOptStopShareEpContexts) ||
       cstr_eq(known, kOptFailOnSuboptimal) || cstr_eq(known, kOptDisablePrepacking)) &&
      !cstr_eq(value, "0") && !cstr_eq(value, "1"))
    return Status::Error(EPCTX_INVALID_ARGUMENT, "session option '%s': expected 0 or 1, found '%s'",
                         key, value);
  if (cstr_eq(known, kOptAdvise) && !cstr_eq(value, "none") && !cstr_eq(value, "willneed"))
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option 'epctx.advise': expected none or willneed, found '%s'",
                         value);
  if (cstr_eq(known, kOptIntraOpThreads)) {
    uint32_t t = 0;
    if (!ParseThreadCount(value, &t))
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "session option 'session.intra_op_num_threads': expected a thread "
                           "count from 0 (all cores) to 256, found '%s'",
                           value);
  }
  if (cstr_eq(known, kOptEpContextFilePath) && n > 0) {
    // ORT's rule: the key names a model file, never a folder.
    const char* slash = cstr_rchr(value, '/');
    const char* base = slash ? slash + 1 : value;
    if (*base == '\0' || !cstr_rchr(base, '.') || cstr_eq(base, ".") || cstr_eq(base, ".."))
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "session option 'ep.context_file_path' = '%s': context_file_path "
                           "should not point to a folder (give the model file's path, with an "
                           "extension)",
                           value);
  }
  Entry* e = nullptr;
  for (int i = 0; i < count_; ++i)
    if (entries_[i].key == known) e = &entries_[i];
  if (!e) {
    if (count_ == kMaxEntries)
      return Status::Error(EPCTX_INVALID_ARGUMENT, "session option '%s': too many entries", key);
    e = &entries_[count_++];
    e->key = known;
  }
  memcpy(e->value, value, n + 1);
  return Status::Ok();
}

const char* Options::Get(const char* key) const {
  for (int i = 0; i < count_; ++i)
    if (cstr_eq(entries_[i].key, key)) return entries_[i].value;
  return nullptr;
}

bool Options::Flag(const char* key) const {
  const char* v = Get(key);
  return v && cstr_eq(v, "1");
}

Status Options::AddExternalFile(const char* name, const void* data, uint64_t size, int fd,
                                uint64_t offset) {
  size_t len = name ? cstr_len(name) : 0;
  if (len == 0 || len > ExternalFile::kMaxName)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "external file: name of %zu bytes, expected 1..%zu (the path as the "
                         "model writes it, e.g. 'model_vnpu.bin')",
                         len, ExternalFile::kMaxName);
  if (name[0] == '/')
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "external file '%s': absolute name, expected the relative path the "
                         "model writes",
                         name);
  if (FindExternalFile(name, len))
    return Status::Error(EPCTX_INVALID_ARGUMENT, "external file '%s': given twice", name);
  if (num_external_ >= kMaxExternalFiles)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "external file '%s': %d external files are set already, the limit", name,
                         kMaxExternalFiles);
  ExternalFile& f = external_[num_external_++];
  memcpy(f.name, name, len + 1);
  f.data = data;
  f.size = size;
  f.fd = fd;
  f.offset = offset;
  return Status::Ok();
}

const Options::ExternalFile* Options::FindExternalFile(const char* name, size_t len) const {
  for (int i = 0; i < num_external_; ++i)
    if (cstr_len(external_[i].name) == len && memcmp(external_[i].name, name, len) == 0)
      return &external_[i];
  return nullptr;
}

}  // namespace epctx
