// SPDX-License-Identifier: Apache-2.0
#include "session/options.h"

#include "core/types.h"
#include "trust/verifier.h"

#include <cstring>

namespace epctx {

const char* const kOptEpContextFilePath = "ep.context_file_path";
const char* const kOptExternalInitializersFolder =
    "session.model_external_initializers_file_folder_path";
const char* const kOptLoadMode = "epctx.load_mode";
const char* const kOptShareEpContexts = "ep.share_ep_contexts";
const char* const kOptStopShareEpContexts = "ep.stop_share_ep_contexts";
const char* const kOptAdvise = "epctx.advise";
const char* const kOptFailOnSuboptimal = "session.fail_on_suboptimal_compiled_model";
const char* const kOptSignaturePolicy = "epctx.signature_policy";
const char* const kOptSignaturePath = "epctx.signature_path";
const char* const kOptExpectedModelId = "epctx.expected_model_id";
const char* const kOptIntraOpThreads = "session.intra_op_num_threads";

namespace {
// Keys accepted at inference. Generation-only keys (ep.context_enable, ...)
// are accepted and ignored so one options set can serve both workflows.
const char* const kKnownKeys[] = {
    "ep.context_file_path",
    "session.model_external_initializers_file_folder_path",
    "epctx.load_mode",
    "ep.context_enable",
    "ep.context_embed_mode",
    "ep.context_node_name_prefix",
    "ep.context_model_external_initializers_file_name",
    "ep.share_ep_contexts",
    "ep.stop_share_ep_contexts",
    "epctx.signature_policy",
    "epctx.signature_path",
    "epctx.expected_model_id",
    "epctx.advise",
    "session.fail_on_suboptimal_compiled_model",
    "session.intra_op_num_threads",
};
}  // namespace

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
  if (!known)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "session option '%s': unknown key", key);
  size_t n = cstr_len(value);
  if (n > static_cast<size_t>(kMaxValue))
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option '%s': value of %zu bytes exceeds %d", key, n, kMaxValue);
  if (cstr_eq(known, kOptExpectedModelId) && n == 0)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option 'epctx.expected_model_id': expected a model id, found an "
                         "empty string");
  if (cstr_eq(known, kOptLoadMode) && !cstr_eq(value, "mmap") && !cstr_eq(value, "read"))
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "session option 'epctx.load_mode': expected mmap or read, found '%s'",
                         value);
  if (cstr_eq(known, kOptSignaturePolicy)) {
    trust::Policy p;
    if (!trust::ParsePolicy(value, &p))
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "session option 'epctx.signature_policy': expected required, if_signed "
                           "or off, found '%s'", value);
    if (p != trust::Policy::kRequired && trust::DefaultPolicy() == trust::Policy::kRequired)
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "session option 'epctx.signature_policy': this runtime was built with "
                           "EPCTX_REQUIRE_SIGNATURES, only 'required' is allowed, found '%s'",
                           value);
  }
  if ((cstr_eq(known, kOptShareEpContexts) || cstr_eq(known, kOptStopShareEpContexts) ||
       cstr_eq(known, kOptFailOnSuboptimal)) &&
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
                           "count from 0 (all cores) to 256, found '%s'", value);
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

}  // namespace epctx
