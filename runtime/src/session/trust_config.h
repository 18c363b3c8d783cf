/* SPDX-License-Identifier: Apache-2.0 */
// From session options to what trust/ needs: the verifier's policy,
// expected model id and manifest path, and the key-wrap file's path. The
// session resolves them so that trust/ depends on no session type.
#ifndef EPCTX_SESSION_TRUST_CONFIG_H
#define EPCTX_SESSION_TRUST_CONFIG_H

#include "core/memory.h"
#include "core/status.h"
#include "session/options.h"
#include "trust/verifier.h"

namespace epctx {

// model_path: the model's path, or nullptr for a buffer (then
// epctx.signature_path, else "<ep.context_file_path>.sig"). Strings made
// here live in `arena`. INVALID_ARGUMENT for an expected model id with the
// policy off; SIGNATURE_INVALID for 'required' without any manifest path.
Status ResolveVerifyConfig(const Options& options, const char* model_path, Arena& arena,
                           const char* label, trust::VerifyConfig* out);

// The key-wrap file of encrypted packages (schema/keys_format.h): the
// value of epctx.keys_path (*required: its absence is an error), else
// "<model_path>.keys", for a buffer "<ep.context_file_path>.keys", else
// none (*path = nullptr). Made in `arena`.
Status ResolveKeysPath(const Options& options, const char* model_path, Arena& arena,
                       const char* label, const char** path, bool* required);

}  // namespace epctx

#endif
