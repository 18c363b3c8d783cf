// SPDX-License-Identifier: Apache-2.0
// The C API's informational and control calls: versions, the env's log
// sink, run options, model metadata.
#include <epctx/epctx.h>
#include <epctx/hal.h>

#include "capi/capi_internal.h"
#include "core/memory.h"
#include "core/types.h"

#ifndef EPCTX_VERSION_STRING
#error "EPCTX_VERSION_STRING comes from the CMake project version"
#endif

namespace epctx {
namespace capi {

struct ModelMetadata {
  explicit ModelMetadata(const Allocator& a) : arena(a, 1024) {}
  Arena arena;
  const char* fields[4] = {"", "", "", ""};  // by epctx_metadata_field
  const char** keys = nullptr;
  const char** values = nullptr;
  uint32_t num_props = 0;
};

ModelMetadata* BuildMetadata(const Allocator& alloc, const onnx::ModelView& model) {
  ModelMetadata* m = alloc.New<ModelMetadata>(alloc);
  if (!m) return nullptr;
  const StrView src[4] = {model.producer_name, model.producer_version, model.domain,
                          model.graph.name};
  bool ok = true;
  for (int i = 0; i < 4; ++i) {
    m->fields[i] = m->arena.Strdup(src[i].data, src[i].size);
    ok = ok && m->fields[i];
  }
  const uint32_t n = model.num_metadata;
  m->keys = m->arena.AllocArray<const char*>(n + 1);
  m->values = m->arena.AllocArray<const char*>(n + 1);
  ok = ok && m->keys && m->values;
  for (uint32_t i = 0; ok && i < n; ++i) {
    const onnx::StringPair& p = model.metadata[i];
    m->keys[i] = m->arena.Strdup(p.key.data, p.key.size);
    m->values[i] = m->arena.Strdup(p.value.data, p.value.size);
    ok = m->keys[i] && m->values[i];
  }
  if (!ok) {
    alloc.Delete(m);
    return nullptr;
  }
  m->num_props = n;
  return m;
}

void FreeMetadata(const Allocator& alloc, ModelMetadata* m) { alloc.Delete(m); }

}  // namespace capi
}  // namespace epctx

namespace {
epctx_status* invalid(const char* what) {
  return epctx::capi::MakeStatus(epctx::Status::Error(EPCTX_INVALID_ARGUMENT, "%s", what));
}
}  // namespace

extern "C" {

const char* epctx_version(void) { return EPCTX_VERSION_STRING; }
int epctx_api_version(void) { return EPCTX_API_VERSION; }
uint32_t epctx_hal_abi_version(void) { return EPCTX_HAL_ABI_VERSION; }

epctx_status* epctx_env_set_log_callback(epctx_env* env, epctx_log_fn fn, void* user) {
  if (!env) return invalid("log callback: env is NULL");
  epctx::Env* e = epctx::capi::EnvOf(env);
  e->log_fn = fn;
  e->log_user = fn ? user : nullptr;
  return nullptr;
}

epctx_status* epctx_env_set_log_level(epctx_env* env, int level) {
  if (!env) return invalid("log level: env is NULL");
  if (level < EPCTX_LOG_ERROR || level > EPCTX_LOG_VERBOSE)
    return epctx::capi::MakeStatus(epctx::Status::Error(
        EPCTX_INVALID_ARGUMENT, "log level: expected 0 (error) to 3 (verbose), found %d", level));
  epctx::capi::EnvOf(env)->log_level = level;
  return nullptr;
}

epctx_status* epctx_run_options_create(epctx_run_options** out) {
  if (!out) return invalid("run options: out is NULL");
  *out = epctx::Allocator::Default().New<epctx_run_options>();
  return *out ? nullptr
              : epctx::capi::MakeStatus(
                    epctx::Status::Error(EPCTX_OUT_OF_MEMORY, "run options: out of memory"));
}

void epctx_run_options_release(epctx_run_options* o) { epctx::Allocator::Default().Delete(o); }

void epctx_run_options_set_terminate(epctx_run_options* o, int terminate) {
  if (o) o->o.terminate.store(terminate ? 1u : 0u, std::memory_order_relaxed);
}

epctx_status* epctx_run_options_set_timeout_us(epctx_run_options* o, uint64_t timeout_us) {
  if (!o) return invalid("run options: options is NULL");
  // A year: anything longer is a unit mistake, and the sum with the clock
  // must not wrap.
  const uint64_t kMaxUs = 365ull * 24 * 3600 * 1000000;
  if (timeout_us > kMaxUs)
    return epctx::capi::MakeStatus(epctx::Status::Error(
        EPCTX_INVALID_ARGUMENT, "run options: timeout of %llu us exceeds a year (%llu us)",
        (unsigned long long)timeout_us, (unsigned long long)kMaxUs));
  o->o.timeout_ns = timeout_us * 1000;
  return nullptr;
}

const char* epctx_session_metadata(const epctx_session* s, epctx_metadata_field field) {
  if (!s || field < EPCTX_METADATA_PRODUCER_NAME || field > EPCTX_METADATA_GRAPH_NAME)
    return nullptr;
  return epctx::capi::MetadataOf(s)->fields[field];
}

int64_t epctx_session_model_version(const epctx_session* s) {
  return s ? epctx::capi::SessionOf(s)->model().model_version : 0;
}

int64_t epctx_session_ir_version(const epctx_session* s) {
  return s ? epctx::capi::SessionOf(s)->model().ir_version : 0;
}

size_t epctx_session_metadata_prop_count(const epctx_session* s) {
  return s ? epctx::capi::MetadataOf(s)->num_props : 0;
}

epctx_status* epctx_session_metadata_prop(const epctx_session* s, size_t index, const char** key,
                                          const char** value) {
  if (!s || !key || !value) return invalid("metadata prop: session, key or value is NULL");
  const epctx::capi::ModelMetadata* m = epctx::capi::MetadataOf(s);
  if (index >= m->num_props)
    return epctx::capi::MakeStatus(epctx::Status::Error(
        EPCTX_INVALID_ARGUMENT, "metadata prop: index %zu, the model has %u metadata_props", index,
        m->num_props));
  *key = m->keys[index];
  *value = m->values[index];
  return nullptr;
}

const char* epctx_session_metadata_lookup(const epctx_session* s, const char* key) {
  if (!s || !key) return nullptr;
  const epctx::capi::ModelMetadata* m = epctx::capi::MetadataOf(s);
  for (uint32_t i = 0; i < m->num_props; ++i)
    if (epctx::cstr_eq(m->keys[i], key)) return m->values[i];
  return nullptr;
}

}  // extern "C"
