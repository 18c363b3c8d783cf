/* SPDX-License-Identifier: Apache-2.0 */
// Access to the C API's handle types for C API files other than capi.cc
// (the handle structs stay private to capi.cc).
#ifndef EPCTX_CAPI_CAPI_INTERNAL_H
#define EPCTX_CAPI_CAPI_INTERNAL_H

#include <epctx/epctx.h>

#include "core/status.h"
#include "session/env.h"
#include "session/options.h"
#include "session/run_control.h"
#include "session/session.h"

struct epctx_run_options {
  epctx::RunOptions o;
};

namespace epctx {
namespace capi {

// A caller-owned status for st (nullptr when ok).
epctx_status* MakeStatus(const Status& st);
Env* EnvOf(epctx_env* env);  // env must not be NULL
// The options inside the handle; nullptr for NULL.
const Options* OptionsOf(const epctx_session_options* options);
// Empty options from the allocator, for a call given none (Options are 33 KB:
// too big for a frame); default-initialised, so the entries stay untouched.
// nullptr when out of memory; free with a.Delete.
Options* NewEmptyOptions(const Allocator& a);

// NUL-terminated copies of a model's metadata, made once at session create
// (the model holds views that are not terminated), owned by the session
// handle. capi_info.cc.
struct ModelMetadata;
// nullptr when out of memory.
ModelMetadata* BuildMetadata(const Allocator& alloc, const onnx::ModelView& model);
void FreeMetadata(const Allocator& alloc, ModelMetadata* m);
const ModelMetadata* MetadataOf(const epctx_session* s);  // s must not be NULL
const Session* SessionOf(const epctx_session* s);         // s must not be NULL

}  // namespace capi
}  // namespace epctx

#endif
