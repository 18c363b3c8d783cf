// SPDX-License-Identifier: Apache-2.0
// The public C API (<epctx/epctx.h>) over the C++ core.
//
// Statuses are allocated with the PAL's default allocator because some calls
// (options, tensors) have no env; when even that fails the caller gets a
// static "out of memory" status, which epctx_status_release ignores.
#include <epctx/epctx.h>
#include <epctx/pal.h>

#include <cstddef>
#include <cstring>

#include "capi/capi_internal.h"
#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"
#include "session/env.h"
#include "session/options.h"
#include "session/session.h"
#include "session/workspace.h"

struct epctx_status {
  int code;
  char message[epctx::Status::kMaxMessage];
  int cause;  // epctx::Status::cause(): the code itself when there is no other
};

struct epctx_env {
  epctx::Env env;
  explicit epctx_env(const epctx::Allocator& a, int level) : env(a, level) {}
};

struct epctx_session_options {
  epctx::Options options;
};

struct epctx_tensor {
  epctx::Allocator alloc;
  epctx::TensorRef t;
  bool owns;
  // A driver's device-visible I/O buffer (epctx_session_create_io_tensor):
  // returned with its free_io on release.
  const epctx::DriverEntry* io_driver = nullptr;
  epctx_hal_graph* io_graph = nullptr;
};

// Where an epctx_tensor keeps its TensorRef: Session::Run reads inputs and
// bound outputs in place through it.
constexpr size_t kRefOffset = offsetof(epctx_tensor, t);

struct epctx_session {
  epctx::Session* s;
  epctx::Allocator alloc;
  epctx::capi::ModelMetadata* meta;
};

namespace {

epctx_status g_oom{EPCTX_OUT_OF_MEMORY, "out of memory allocating a status", EPCTX_OUT_OF_MEMORY};

epctx_status* make_status(const epctx::Status& st) {
  if (st.ok()) return nullptr;
  epctx_status* out = static_cast<epctx_status*>(epctx_pal_alloc(sizeof(epctx_status), 16));
  if (!out) return &g_oom;
  out->code = st.code();
  out->cause = st.cause();
  // message() may be a short static string: copy up to its NUL only.
  const char* m = st.message();
  size_t n = 0;
  while (n + 1 < sizeof out->message && m[n]) ++n;
  memcpy(out->message, m, n);
  out->message[n] = '\0';
  return out;
}

epctx_status* error(int code, const char* what) {
  return make_status(epctx::Status::Error(code, "%s", what));
}

epctx::Status fill_ref(epctx_dtype dtype, const int64_t* dims, size_t rank, epctx::TensorRef* t,
                       uint64_t* bytes) {
  size_t esize = epctx::dtype_size(dtype);
  if (!esize)
    return epctx::Status::Error(EPCTX_NOT_IMPLEMENTED, "tensor: element type %d is not supported",
                                static_cast<int>(dtype));
  if (rank > static_cast<size_t>(epctx::kMaxRank) || (rank && !dims))
    return epctx::Status::Error(EPCTX_INVALID_ARGUMENT, "tensor: rank %zu exceeds %d", rank,
                                epctx::kMaxRank);
  uint64_t elems = 0;
  if (!epctx::shape_elements(dims, rank, &elems) || elems > (UINT64_MAX >> 8) / esize)
    return epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                                "tensor: shape has a negative dimension or overflows");
  *t = epctx::TensorRef{};
  t->dtype = dtype;
  t->rank = static_cast<uint32_t>(rank);
  for (size_t i = 0; i < rank; ++i) t->dims[i] = dims[i];
  *bytes = elems * esize;
  t->bytes = *bytes;
  return epctx::Status::Ok();
}

struct EmitTarget {
  epctx_tensor** outputs;
  const epctx::Allocator* alloc;
};

epctx::Status emit_copy(void* user, size_t index, const epctx::TensorRef& v) {
  EmitTarget* et = static_cast<EmitTarget*>(user);
  epctx_tensor* t = et->alloc->New<epctx_tensor>();
  if (!t) return epctx::Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for an output tensor");
  t->alloc = *et->alloc;
  t->t = v;
  t->owns = true;
  t->t.data = et->alloc->Alloc(v.bytes ? static_cast<size_t>(v.bytes) : 1, 64);
  if (!t->t.data) {
    et->alloc->Delete(t);
    return epctx::Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for an output tensor");
  }
  if (v.bytes) memcpy(t->t.data, v.data, static_cast<size_t>(v.bytes));
  et->outputs[index] = t;
  return epctx::Status::Ok();
}

struct BoundTarget {
  EmitTarget et;
  // Per output, whether the caller bound a tensor (a bit set, not a copy of
  // the pointers: no 2 KB array on the run's stack).
  uint64_t bound[EPCTX_MAX_RUN_TENSORS / 64];
  bool Bound(size_t i) const { return (bound[i / 64] >> (i % 64)) & 1; }
};

// Writes output `index` into the caller's tensor when it has one (in place
// already, unless the value is a constant, an input or a view), else copies
// it into a new tensor.
epctx::Status emit_bound(void* user, size_t index, const epctx::TensorRef& v) {
  BoundTarget* bt = static_cast<BoundTarget*>(user);
  if (!bt->Bound(index)) return emit_copy(&bt->et, index, v);
  epctx_tensor* b = bt->et.outputs[index];
  if (v.data == b->t.data) return epctx::Status::Ok();
  bool same = v.dtype == b->t.dtype && v.rank == b->t.rank;
  for (uint32_t d = 0; same && d < v.rank; ++d) same = v.dims[d] == b->t.dims[d];
  if (!same)
    return epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                                "run: output %zu: the bound tensor is %s of rank %u, the model "
                                "produces %s of rank %u with other dimensions",
                                index, epctx::dtype_name(b->t.dtype), b->t.rank,
                                epctx::dtype_name(v.dtype), v.rank);
  if (v.bytes) memcpy(b->t.data, v.data, static_cast<size_t>(v.bytes));
  return epctx::Status::Ok();
}

}  // namespace

extern "C" {

int epctx_status_code(const epctx_status* s) { return s ? s->code : EPCTX_OK; }
int epctx_status_cause(const epctx_status* s) { return s ? s->cause : EPCTX_OK; }
const char* epctx_status_message(const epctx_status* s) { return s ? s->message : ""; }
void epctx_status_release(epctx_status* s) {
  if (s && s != &g_oom) epctx_pal_free(s);
}

epctx_status* epctx_env_create(const epctx_allocator* allocator, int log_level, epctx_env** out) {
  if (!out) return error(EPCTX_INVALID_ARGUMENT, "env create: out is NULL");
  *out = nullptr;
  epctx::Allocator a = epctx::Allocator::Default();
  if (allocator) {
    if (!allocator->alloc || !allocator->free)
      return error(EPCTX_INVALID_ARGUMENT, "env create: allocator needs alloc and free");
    a = epctx::Allocator(*allocator);
  }
  epctx_env* env = a.New<epctx_env>(a, log_level);
  if (!env) return error(EPCTX_OUT_OF_MEMORY, "env create: out of memory");
  *out = env;
  return nullptr;
}

void epctx_env_release(epctx_env* env) {
  if (!env) return;
  epctx::Allocator a = env->env.alloc;
  a.Delete(env);
}

epctx_status* epctx_env_register_driver(epctx_env* env, const epctx_hal_driver* driver) {
  if (!env) return error(EPCTX_INVALID_ARGUMENT, "register driver: env is NULL");
  return make_status(env->env.RegisterDriver(driver));
}

epctx_status* epctx_env_load_driver_library(epctx_env* env, const char* path) {
  if (!env) return error(EPCTX_INVALID_ARGUMENT, "load driver library: env is NULL");
  return make_status(env->env.LoadDriverLibrary(path));
}

epctx_status* epctx_session_options_create(epctx_session_options** out) {
  if (!out) return error(EPCTX_INVALID_ARGUMENT, "session options: out is NULL");
  *out = epctx::Allocator::Default().New<epctx_session_options>();
  return *out ? nullptr : error(EPCTX_OUT_OF_MEMORY, "session options: out of memory");
}

void epctx_session_options_release(epctx_session_options* o) {
  if (o && o->options.group) o->options.group->Release();
  epctx::Allocator::Default().Delete(o);
}

epctx_status* epctx_session_options_set(epctx_session_options* o, const char* key,
                                        const char* value) {
  if (!o) return error(EPCTX_INVALID_ARGUMENT, "session options: options is NULL");
  return make_status(o->options.Set(key, value));
}

epctx_status* epctx_session_options_set_expected_model_id(epctx_session_options* o,
                                                          const char* model_id) {
  return epctx_session_options_set(o, epctx::kOptExpectedModelId, model_id);
}

epctx_status* epctx_session_options_add_external_buffer(epctx_session_options* o, const char* name,
                                                        const void* data, size_t size) {
  if (!o) return error(EPCTX_INVALID_ARGUMENT, "session options: options is NULL");
  if (!data && size)
    return make_status(epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                                            "external buffer '%s': data is NULL with size %zu",
                                            name ? name : "(null)", size));
  return make_status(o->options.AddExternalFile(name, data, size, -1, 0));
}

epctx_status* epctx_session_options_add_external_fd(epctx_session_options* o, const char* name,
                                                    int fd, uint64_t offset, uint64_t length) {
  if (!o) return error(EPCTX_INVALID_ARGUMENT, "session options: options is NULL");
  if (fd < 0)
    return make_status(epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                                            "external file '%s': descriptor %d is not valid",
                                            name ? name : "(null)", fd));
  return make_status(o->options.AddExternalFile(name, nullptr, length, fd, offset));
}

epctx_status* epctx_session_options_set_max_memory_bytes(epctx_session_options* o, uint64_t bytes) {
  char digits[24];
  epctx::format(digits, sizeof digits, "%llu", static_cast<unsigned long long>(bytes));
  return epctx_session_options_set(o, epctx::kOptMaxMemoryBytes, digits);
}

namespace {
// A tensor owning `bytes` zeroed bytes from `a`, described by `ref`.
epctx_status* new_owned_tensor(const epctx::Allocator& a, const epctx::TensorRef& ref,
                               uint64_t bytes, epctx_tensor** out) {
  if (bytes > SIZE_MAX) return error(EPCTX_OUT_OF_MEMORY, "tensor create: too large");
  epctx_tensor* t = a.New<epctx_tensor>();
  if (!t) return error(EPCTX_OUT_OF_MEMORY, "tensor create: out of memory");
  t->alloc = a;
  t->t = ref;
  t->owns = true;
  t->t.data = a.Alloc(bytes ? static_cast<size_t>(bytes) : 1, 64);
  if (!t->t.data) {
    a.Delete(t);
    return error(EPCTX_OUT_OF_MEMORY, "tensor create: out of memory for data");
  }
  memset(t->t.data, 0, static_cast<size_t>(bytes));
  *out = t;
  return nullptr;
}
}  // namespace

epctx_status* epctx_tensor_create(epctx_env* env, epctx_dtype dtype, const int64_t* dims,
                                  size_t rank, epctx_tensor** out) {
  if (!env || !out) return error(EPCTX_INVALID_ARGUMENT, "tensor create: env or out is NULL");
  *out = nullptr;
  epctx::TensorRef ref;
  uint64_t bytes = 0;
  epctx::Status st = fill_ref(dtype, dims, rank, &ref, &bytes);
  if (!st.ok()) return make_status(st);
  return new_owned_tensor(env->env.alloc, ref, bytes, out);
}

epctx_status* epctx_tensor_wrap(epctx_env* env, epctx_dtype dtype, const int64_t* dims, size_t rank,
                                void* data, size_t data_bytes, epctx_tensor** out) {
  if (!env || !out) return error(EPCTX_INVALID_ARGUMENT, "tensor wrap: env or out is NULL");
  *out = nullptr;
  epctx::TensorRef ref;
  uint64_t bytes = 0;
  epctx::Status st = fill_ref(dtype, dims, rank, &ref, &bytes);
  if (!st.ok()) return make_status(st);
  if (bytes != data_bytes || (bytes && !data))
    return make_status(epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                                            "tensor wrap: shape needs %llu bytes, %zu given",
                                            (unsigned long long)bytes, data_bytes));
  size_t esize = epctx::dtype_size(dtype);
  if (reinterpret_cast<uintptr_t>(data) % esize != 0)
    return make_status(
        epctx::Status::Error(EPCTX_INVALID_ARGUMENT,
                             "tensor wrap: data is not aligned to its %zu-byte elements", esize));
  const epctx::Allocator& a = env->env.alloc;
  epctx_tensor* t = a.New<epctx_tensor>();
  if (!t) return error(EPCTX_OUT_OF_MEMORY, "tensor wrap: out of memory");
  t->alloc = a;
  t->t = ref;
  t->t.data = data;
  t->owns = false;
  *out = t;
  return nullptr;
}

void epctx_tensor_release(epctx_tensor* t) {
  if (!t) return;
  epctx::Allocator a = t->alloc;
  if (t->io_driver) t->io_driver->fns.free_io(t->io_driver->driver, t->io_graph, t->t.data);
  else if (t->owns) a.Free(t->t.data);
  a.Delete(t);
}

int epctx_tensor_is_device_io(const epctx_tensor* t) { return t && t->io_driver ? 1 : 0; }

epctx_dtype epctx_tensor_dtype(const epctx_tensor* t) {
  return t ? static_cast<epctx_dtype>(t->t.dtype) : EPCTX_DTYPE_UNDEFINED;
}
size_t epctx_tensor_rank(const epctx_tensor* t) { return t ? t->t.rank : 0; }
const int64_t* epctx_tensor_dims(const epctx_tensor* t) { return t ? t->t.dims : nullptr; }
size_t epctx_tensor_bytes(const epctx_tensor* t) { return t ? static_cast<size_t>(t->t.bytes) : 0; }
void* epctx_tensor_data(epctx_tensor* t) { return t ? t->t.data : nullptr; }
size_t epctx_dtype_size(epctx_dtype dtype) { return epctx::dtype_size(dtype); }

static epctx_status* create_session(epctx_env* env, const char* path, const void* data, size_t size,
                                    const epctx_session_options* options, epctx_session** out) {
  if (!env || !out) return error(EPCTX_INVALID_ARGUMENT, "session create: env or out is NULL");
  *out = nullptr;
  epctx::Options* defaults = nullptr;
  if (!options) {
    defaults = epctx::capi::NewEmptyOptions(env->env.alloc);
    if (!defaults) return error(EPCTX_OUT_OF_MEMORY, "session create: out of memory");
  }
  epctx::Session* s = nullptr;
  epctx::Status st = epctx::Session::Create(&env->env, path, data, size,
                                            options ? options->options : *defaults, &s);
  env->env.alloc.Delete(defaults);
  if (!st.ok()) return make_status(st);
  epctx_session* h = env->env.alloc.New<epctx_session>();
  epctx::capi::ModelMetadata* meta =
      h ? epctx::capi::BuildMetadata(env->env.alloc, s->model()) : nullptr;
  if (!meta) {
    env->env.alloc.Delete(h);
    env->env.alloc.Delete(s);
    return error(EPCTX_OUT_OF_MEMORY, "session create: out of memory");
  }
  h->s = s;
  h->alloc = env->env.alloc;
  h->meta = meta;
  *out = h;
  return nullptr;
}

epctx_status* epctx_session_create(epctx_env* env, const char* model_path,
                                   const epctx_session_options* options, epctx_session** out) {
  if (!model_path) return error(EPCTX_INVALID_ARGUMENT, "session create: model_path is NULL");
  return create_session(env, model_path, nullptr, 0, options, out);
}

epctx_status* epctx_session_create_from_buffer(epctx_env* env, const void* data, size_t size,
                                               const epctx_session_options* options,
                                               epctx_session** out) {
  if (!data && size) return error(EPCTX_INVALID_ARGUMENT, "session create: buffer is NULL");
  return create_session(env, nullptr, data ? data : "", size, options, out);
}

void epctx_session_release(epctx_session* s) {
  if (!s) return;
  epctx::Allocator a = s->alloc;
  epctx::capi::FreeMetadata(a, s->meta);
  a.Delete(s->s);
  a.Delete(s);
}

size_t epctx_session_input_count(const epctx_session* s) {
  return s ? s->s->num_public_inputs() : 0;
}

size_t epctx_session_output_count(const epctx_session* s) {
  return s ? s->s->graph().num_outputs : 0;
}

static void io_info(const epctx::onnx::ValueInfoView& v, const char* name, epctx_io_info* out) {
  out->name = name;
  // The file's elem_type is any int32; a value epctx_dtype does not name
  // would be an invalid enum value in C++ callers (and in epctx.hpp).
  const bool named = epctx::dtype_size(v.dtype) != 0 || v.dtype == EPCTX_DTYPE_STRING;
  out->dtype = named ? static_cast<epctx_dtype>(v.dtype) : EPCTX_DTYPE_UNDEFINED;
  out->rank = v.has_shape ? v.rank : 0;
  out->dims = v.dims;
}

epctx_status* epctx_session_input_info(const epctx_session* s, size_t index, epctx_io_info* out) {
  if (!s || !out) return error(EPCTX_INVALID_ARGUMENT, "input info: session or out is NULL");
  if (index >= s->s->num_public_inputs())
    return error(EPCTX_INVALID_ARGUMENT, "input info: index out of range");
  uint32_t i = static_cast<uint32_t>(index);
  io_info(s->s->public_input(i), s->s->public_input_name(i), out);
  return nullptr;
}

epctx_status* epctx_session_output_info(const epctx_session* s, size_t index, epctx_io_info* out) {
  if (!s || !out) return error(EPCTX_INVALID_ARGUMENT, "output info: session or out is NULL");
  const epctx::onnx::GraphView& g = s->s->graph();
  if (index >= g.num_outputs)
    return error(EPCTX_INVALID_ARGUMENT, "output info: index out of range");
  uint32_t i = static_cast<uint32_t>(index);
  io_info(g.outputs[i], s->s->output_name(i), out);
  return nullptr;
}

epctx_status* epctx_session_create_io_tensor(epctx_session* session, const char* name,
                                             epctx_tensor** out) {
  if (!session || !name || !out)
    return error(EPCTX_INVALID_ARGUMENT, "create io tensor: session, name or out is NULL");
  *out = nullptr;
  const epctx::Allocator& a = session->alloc;
  const epctx::DriverEntry* drv = nullptr;
  epctx_hal_graph* graph = nullptr;
  const epctx_hal_tensor_desc* desc = nullptr;
  epctx::TensorRef ref;
  uint64_t bytes = 0;
  if (session->s->DeviceIo(name, &drv, &graph, &desc)) {
    // The driver's buffer, in the shape and type its graph takes.
    epctx::Status st =
        fill_ref(static_cast<epctx_dtype>(desc->dtype), desc->dims, desc->rank, &ref, &bytes);
    if (!st.ok()) return make_status(st);
    epctx_tensor* t = a.New<epctx_tensor>();
    if (!t) return error(EPCTX_OUT_OF_MEMORY, "create io tensor: out of memory");
    t->alloc = a;
    t->t = ref;
    t->owns = false;
    t->t.data = drv->fns.alloc_io(drv->driver, graph, bytes, 64);
    if (!t->t.data) {
      a.Delete(t);
      return make_status(epctx::Status::Error(
          EPCTX_OUT_OF_MEMORY,
          "create io tensor '%s': driver '%s' refused a device-visible buffer of %llu bytes", name,
          drv->info.name, static_cast<unsigned long long>(bytes)));
    }
    t->io_driver = drv;
    t->io_graph = graph;
    if (bytes) memset(t->t.data, 0, static_cast<size_t>(bytes));
    *out = t;
    return nullptr;
  }
  // No EPContext node on such a driver takes it directly: ordinary memory in
  // the shape the model declares.
  epctx_io_info info{};
  bool found = false;
  for (size_t i = 0; !found && i < epctx_session_input_count(session); ++i)
    found = !epctx_session_input_info(session, i, &info) && epctx::cstr_eq(info.name, name);
  for (size_t i = 0; !found && i < epctx_session_output_count(session); ++i)
    found = !epctx_session_output_info(session, i, &info) && epctx::cstr_eq(info.name, name);
  if (!found)
    return make_status(epctx::Status::Error(
        EPCTX_INVALID_ARGUMENT, "create io tensor: the model has no input or output named '%s'",
        name));
  for (size_t d = 0; d < info.rank; ++d)
    if (info.dims[d] < 0)
      return make_status(epctx::Status::Error(
          EPCTX_INVALID_ARGUMENT,
          "create io tensor '%s': dimension %zu is symbolic; create the tensor in the run's "
          "shape with epctx_tensor_create",
          name, d));
  epctx::Status st = fill_ref(info.dtype, info.dims, info.rank, &ref, &bytes);
  if (!st.ok()) return make_status(st);
  return new_owned_tensor(a, ref, bytes, out);
}

epctx_status* epctx_session_run(epctx_session* session, const char* const* input_names,
                                const epctx_tensor* const* inputs, size_t input_count,
                                const char* const* output_names, epctx_tensor** outputs,
                                size_t output_count) {
  if (input_count > EPCTX_MAX_RUN_TENSORS || output_count > EPCTX_MAX_RUN_TENSORS)
    return error(EPCTX_INVALID_ARGUMENT, "run: more than 256 inputs or outputs");
  if (!session || (input_count && (!input_names || !inputs)) || (output_count && !outputs))
    return error(EPCTX_INVALID_ARGUMENT, "run: NULL session, names or tensors");
  if (!output_names && output_count != session->s->graph().num_outputs)
    return make_status(epctx::Status::Error(
        EPCTX_INVALID_ARGUMENT, "run: output_names is NULL, so output_count must be %u, found %zu",
        session->s->graph().num_outputs, output_count));
  for (size_t i = 0; i < input_count; ++i)
    if (!inputs[i] || !input_names[i]) return error(EPCTX_INVALID_ARGUMENT, "run: NULL input");
  for (size_t i = 0; i < output_count; ++i) outputs[i] = nullptr;
  EmitTarget et{outputs, &session->alloc};
  epctx::Session::RunRequest req{input_names,  nullptr,   input_count, output_names,
                                 output_count, emit_copy, &et};
  // The session reads each input's TensorRef inside the caller's tensor.
  req.input_objects = reinterpret_cast<const void* const*>(inputs);
  req.ref_offset = kRefOffset;
  epctx::Status st = session->s->Run(req);
  if (!st.ok()) {
    for (size_t i = 0; i < output_count; ++i) {
      epctx_tensor_release(outputs[i]);
      outputs[i] = nullptr;
    }
  }
  return make_status(st);
}

size_t epctx_session_arena_size(const epctx_session* s) {
  return s ? static_cast<size_t>(s->s->arena_bytes()) : 0;
}

size_t epctx_session_planned_value_count(const epctx_session* s) {
  return s ? s->s->planned_values() : 0;
}

epctx_status* epctx_session_run_with(epctx_session* session, const epctx_run_args* args) {
  if (!session || !args) return error(EPCTX_INVALID_ARGUMENT, "run: NULL session or args");
  const size_t input_count = args->input_count, output_count = args->output_count;
  if (input_count > EPCTX_MAX_RUN_TENSORS || output_count > EPCTX_MAX_RUN_TENSORS)
    return error(EPCTX_INVALID_ARGUMENT, "run: more than 256 inputs or outputs");
  if ((input_count && (!args->input_names || !args->inputs)) || (output_count && !args->outputs))
    return error(EPCTX_INVALID_ARGUMENT, "run: NULL names or tensors");
  if (!args->output_names && output_count != session->s->graph().num_outputs)
    return make_status(epctx::Status::Error(
        EPCTX_INVALID_ARGUMENT, "run: output_names is NULL, so output_count must be %u, found %zu",
        session->s->graph().num_outputs, output_count));
  if (!args->arena && args->arena_size)
    return error(EPCTX_INVALID_ARGUMENT, "run: arena_size is set but arena is NULL");
  for (size_t i = 0; i < input_count; ++i)
    if (!args->inputs[i] || !args->input_names[i])
      return error(EPCTX_INVALID_ARGUMENT, "run: NULL input");
  BoundTarget bt{{args->outputs, &session->alloc}, {}};
  for (size_t i = 0; i < output_count; ++i)
    if (args->outputs[i]) bt.bound[i / 64] |= uint64_t{1} << (i % 64);
  epctx::Session::RunRequest req{args->input_names, nullptr,    input_count, args->output_names,
                                 output_count,      emit_bound, &bt};
  // The session reads the TensorRefs inside the caller's tensors, and takes
  // the bound outputs' before any output is emitted into args->outputs.
  req.input_objects = reinterpret_cast<const void* const*>(args->inputs);
  req.bound_output_objects = reinterpret_cast<const void* const*>(args->outputs);
  req.ref_offset = kRefOffset;
  req.arena = args->arena;
  req.arena_size = args->arena_size;
  req.run_options = args->run_options ? &args->run_options->o : nullptr;
  epctx::Status st = session->s->Run(req);
  if (!st.ok()) {
    for (size_t i = 0; i < output_count; ++i) {
      if (bt.Bound(i)) continue;
      epctx_tensor_release(args->outputs[i]);
      args->outputs[i] = nullptr;
    }
  }
  return make_status(st);
}

size_t epctx_session_driver_node_count(const epctx_session* s) {
  return s ? s->s->driver_steps() : 0;
}
size_t epctx_session_cpu_node_count(const epctx_session* s) { return s ? s->s->cpu_steps() : 0; }

size_t epctx_session_intra_op_thread_count(const epctx_session* s) {
  return s ? s->s->intra_op_threads() : 0;
}

epctx_status* epctx_env_add_trusted_key(epctx_env* env, const void* key, size_t size) {
  if (!env) return error(EPCTX_INVALID_ARGUMENT, "trusted key: env is NULL");
  return make_status(env->env.trust.AddKey(key, size));
}

epctx_status* epctx_env_set_rollback_store(epctx_env* env, const char* folder) {
  if (!env) return error(EPCTX_INVALID_ARGUMENT, "rollback store: env is NULL");
  return make_status(env->env.trust.SetCounterStore(folder));
}

epctx_status* epctx_env_add_decryption_key(epctx_env* env, const char* key_id, const void* key,
                                           size_t size) {
  if (!env) return error(EPCTX_INVALID_ARGUMENT, "decryption key: env is NULL");
  return make_status(env->env.trust.AddDataKey(key_id, key, size));
}

epctx_status* epctx_env_set_key_provider(epctx_env* env, epctx_key_provider_fn fn, void* user) {
  if (!env) return error(EPCTX_INVALID_ARGUMENT, "key provider: env is NULL");
  env->env.trust.SetKeyProvider(fn, user);
  return nullptr;
}

epctx_status* epctx_context_group_create(epctx_env* env, epctx_context_group** out) {
  if (!env || !out) return error(EPCTX_INVALID_ARGUMENT, "context group: env or out is NULL");
  epctx::ContextGroup* g = epctx::ContextGroup::Create(env->env.alloc);
  *out = reinterpret_cast<epctx_context_group*>(g);
  return g ? nullptr : error(EPCTX_OUT_OF_MEMORY, "context group: out of memory");
}

void epctx_context_group_release(epctx_context_group* group) {
  if (group) reinterpret_cast<epctx::ContextGroup*>(group)->Release();
}

size_t epctx_context_group_loaded_count(epctx_context_group* group) {
  return group ? reinterpret_cast<epctx::ContextGroup*>(group)->NumShared() : 0;
}

epctx_status* epctx_session_options_set_context_group(epctx_session_options* o,
                                                      epctx_context_group* group) {
  if (!o) return error(EPCTX_INVALID_ARGUMENT, "session options: options is NULL");
  epctx::ContextGroup* g = reinterpret_cast<epctx::ContextGroup*>(group);
  if (g) g->AddRef();
  if (o->options.group) o->options.group->Release();
  o->options.group = g;
  return nullptr;
}

}  // extern "C"

namespace epctx {
namespace capi {
epctx_status* MakeStatus(const Status& st) { return make_status(st); }
Env* EnvOf(epctx_env* env) { return &env->env; }
const ModelMetadata* MetadataOf(const epctx_session* s) { return s->meta; }
const Session* SessionOf(const epctx_session* s) { return s->s; }
const Options* OptionsOf(const epctx_session_options* options) {
  return options ? &options->options : nullptr;
}
Options* NewEmptyOptions(const Allocator& a) {
  void* p = a.Alloc(sizeof(Options), alignof(Options));
  return p ? new (p) Options : nullptr;
}
}  // namespace capi
}  // namespace epctx
