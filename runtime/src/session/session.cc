// SPDX-License-Identifier: Apache-2.0
// Session creation: the three parts (session.h) built in order.
#include "session/session.h"

namespace epctx {

Status Session::Create(Env* env, const char* path, const void* buffer, size_t size,
                       const Options& options, Session** out) {
  *out = nullptr;
  Session* s = env->alloc.New<Session>(env);
  if (!s) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory creating a session");
  Status st = s->Load(path, buffer, size, options);
  const Budget& budget = s->model_.budget();
  if (st.code() == EPCTX_OUT_OF_MEMORY && budget.refused())
    st.Prefix("epctx.max_memory_bytes=%llu refused %llu more bytes (%llu in use)",
              static_cast<unsigned long long>(budget.limit()),
              static_cast<unsigned long long>(budget.refused()),
              static_cast<unsigned long long>(budget.in_use()));
  if (!st.ok()) {
    env->alloc.Delete(s);
    return st;
  }
  *out = s;
  return Status::Ok();
}

Status Session::Load(const char* path, const void* buffer, size_t size, const Options& options) {
  EPCTX_RETURN_IF_ERROR(binder_.Configure(options));
  EPCTX_RETURN_IF_ERROR(model_.Open(path, buffer, size, options));
  EPCTX_RETURN_IF_ERROR(plan_.Build(!options.Flag(kOptDisablePrepacking)));
  BindResult bound;
  EPCTX_RETURN_IF_ERROR(binder_.Bind(plan_.main(), &bound));
  EPCTX_RETURN_IF_ERROR(plan_.Order(bound));
  EPCTX_RETURN_IF_ERROR(model_.Finish());
  if (options.Flag(kOptStopShareEpContexts)) binder_.StopSharing();
  plan_.StartThreads(options);
  model_.env()->Log(EPCTX_LOG_INFO,
                    "%s: session created: %u driver steps, %u CPU steps, "
                    "%u contexts, run arena %llu bytes, metadata %zu bytes, "
                    "prepared weights %llu bytes",
                    model_.label(), driver_steps(), cpu_steps(), binder_.num_contexts(),
                    (unsigned long long)arena_bytes(), model_.meta_bytes(),
                    (unsigned long long)prepared_bytes());
  return Status::Ok();
}

}  // namespace epctx
