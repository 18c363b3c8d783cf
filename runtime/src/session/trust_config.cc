// SPDX-License-Identifier: Apache-2.0
#include "session/trust_config.h"

#include <cstring>

#include <keys_format.h>
#include <manifest_format.h>

#include "core/types.h"

namespace epctx {
namespace {

// base + suffix in the arena, or nullptr when it is full.
const char* WithSuffix(Arena& arena, const char* base, const char* suffix) {
  const size_t n = cstr_len(base), s = cstr_len(suffix);
  char* p = static_cast<char*>(arena.Alloc(n + s + 1, 1));
  if (!p) return nullptr;
  memcpy(p, base, n);
  memcpy(p + n, suffix, s + 1);
  return p;
}

}  // namespace

Status ResolveVerifyConfig(const Options& options, const char* model_path, Arena& arena,
                           const char* label, trust::VerifyConfig* out) {
  *out = trust::VerifyConfig{};
  const char* pv = options.Get(kOptSignaturePolicy);
  if (pv && !trust::ParsePolicy(pv, &out->policy))
    return Status::Error(EPCTX_INVALID_ARGUMENT, "session option '%s': bad value '%s'",
                         kOptSignaturePolicy, pv);
  out->expected_model_id = options.Get(kOptExpectedModelId);
  if (out->policy == trust::Policy::kOff) {
    if (out->expected_model_id)
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "%s: session option '%s' needs signature checks, but '%s' is 'off'",
                           label, kOptExpectedModelId, kOptSignaturePolicy);
    return Status::Ok();
  }
  const char* explicit_path = options.Get(kOptSignaturePath);
  if (explicit_path) {
    out->signature_path = explicit_path;
    return Status::Ok();
  }
  const char* base = model_path ? model_path : options.Get(kOptEpContextFilePath);
  if (!base) {
    if (out->expected_model_id)
      return Status::Error(EPCTX_SIGNATURE_INVALID,
                           "%s: session option '%s' = '%s': a model loaded from a buffer needs "
                           "session option '%s' or '%s' to find its manifest",
                           label, kOptExpectedModelId, out->expected_model_id, kOptSignaturePath,
                           kOptEpContextFilePath);
    if (out->policy == trust::Policy::kRequired)
      return Status::Error(EPCTX_SIGNATURE_INVALID,
                           "%s: signature policy 'required': a model loaded from a buffer needs "
                           "session option '%s' or '%s' to find its manifest",
                           label, kOptSignaturePath, kOptEpContextFilePath);
    return Status::Ok();
  }
  out->signature_path = WithSuffix(arena, base, EPCTX_MF_SIG_SUFFIX);
  if (!out->signature_path) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label);
  return Status::Ok();
}

Status ResolveKeysPath(const Options& options, const char* model_path, Arena& arena,
                       const char* label, const char** path, bool* required) {
  *path = nullptr;
  const char* given = options.Get(kOptKeysPath);
  *required = given != nullptr;
  const char* base = model_path ? model_path : options.Get(kOptEpContextFilePath);
  if (!given && (!base || !base[0])) return Status::Ok();  // a buffer with no path: none
  *path = given ? WithSuffix(arena, given, "") : WithSuffix(arena, base, EPCTX_KEYS_SUFFIX);
  if (!*path) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", label);
  return Status::Ok();
}

}  // namespace epctx
