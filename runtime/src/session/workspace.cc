// SPDX-License-Identifier: Apache-2.0
#include "session/workspace.h"
#include "trust/keyring.h"

namespace epctx {

bool ContextKey::operator==(const ContextKey& o) const {
  return file.device == o.file.device && file.inode == o.file.inode && file.size == o.file.size &&
         file.mtime_ns == o.file.mtime_ns && driver == o.driver && load_mode == o.load_mode;
}

char kBorrowedRegion;

void ReleaseRegion(epctx_pal_region* r) {
  if (r->handle == &kBorrowedRegion) *r = epctx_pal_region{};
  else epctx_pal_unmap(r);
}

void ReleaseLoaded(const Allocator& alloc, LoadedContext* c) {
  if (c->ctx) c->driver->driver->release_context(c->driver->driver, c->ctx);
  c->ctx = nullptr;
  ReleaseRegion(&c->region);
  if (c->copy_host) {
    // Driver memory (hal.h, ABI 2.3): the driver wipes it.
    c->driver->fns.free_context_memory(c->driver->driver, c->copy_host, c->aligned_copy,
                                       c->wipe_size);
  } else {
    if (c->aligned_copy && c->wipe_size) trust::Wipe(c->aligned_copy, c->wipe_size);
    alloc.Free(c->aligned_copy);
  }
  c->aligned_copy = nullptr;
  c->wipe_size = 0;
  c->copy_host = nullptr;
}

ContextGroup* ContextGroup::Create(const Allocator& alloc) {
  epctx_pal_mutex* m = epctx_pal_mutex_create();
  if (!m) return nullptr;
  ContextGroup* g = alloc.New<ContextGroup>(alloc, m);
  if (!g) epctx_pal_mutex_destroy(m);
  return g;
}

ContextGroup::~ContextGroup() { epctx_pal_mutex_destroy(mutex_); }

void ContextGroup::AddRef() {
  epctx_pal_mutex_lock(mutex_);
  ++refs_;
  epctx_pal_mutex_unlock(mutex_);
}

void ContextGroup::Release() {
  epctx_pal_mutex_lock(mutex_);
  bool last = --refs_ == 0;
  epctx_pal_mutex_unlock(mutex_);
  // Sessions hold references while they use contexts, so the last release
  // finds the list empty.
  if (last) {
    Allocator a = alloc_;
    a.Delete(this);
  }
}

Status ContextGroup::Acquire(const ContextKey& key, LoadFn fn, void* user, SharedContext** out) {
  *out = nullptr;
  epctx_pal_mutex_lock(mutex_);
  for (SharedContext* c = head_; c; c = c->next) {
    if (c->listed && c->key == key) {
      ++c->users;
      *out = c;
      epctx_pal_mutex_unlock(mutex_);
      return Status::Ok();
    }
  }
  SharedContext* c = alloc_.New<SharedContext>(alloc_);
  if (!c) {
    epctx_pal_mutex_unlock(mutex_);
    return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory for a shared context");
  }
  Status st = fn(user, c->arena, &c->loaded);
  if (!st.ok()) {
    ReleaseLoaded(alloc_, &c->loaded);
    alloc_.Delete(c);
    epctx_pal_mutex_unlock(mutex_);
    return st;
  }
  c->key = key;
  c->users = 1;
  c->listed = true;
  c->loaded.node = nullptr;  // belonged to the loading session's model
  c->next = head_;
  head_ = c;
  *out = c;
  epctx_pal_mutex_unlock(mutex_);
  return Status::Ok();
}

void ContextGroup::Unuse(SharedContext* c) {
  epctx_pal_mutex_lock(mutex_);
  bool last = --c->users == 0;
  if (last) {
    for (SharedContext** p = &head_; *p; p = &(*p)->next) {
      if (*p == c) {
        *p = c->next;
        break;
      }
    }
  }
  epctx_pal_mutex_unlock(mutex_);
  if (last) {
    ReleaseLoaded(alloc_, &c->loaded);
    alloc_.Delete(c);
  }
}

int ContextGroup::GetGraph(const LoadedContext& lc, const char* name, epctx_hal_graph** graph,
                           epctx_hal_graph_info* info, char* msg, size_t msg_cap) {
  epctx_pal_mutex_lock(mutex_);
  int rc = lc.driver->driver->get_graph(lc.driver->driver, lc.ctx, name, graph, info, msg, msg_cap);
  epctx_pal_mutex_unlock(mutex_);
  return rc;
}

void ContextGroup::StopSharing() {
  epctx_pal_mutex_lock(mutex_);
  for (SharedContext* c = head_; c; c = c->next) c->listed = false;
  epctx_pal_mutex_unlock(mutex_);
}

uint32_t ContextGroup::NumShared() {
  epctx_pal_mutex_lock(mutex_);
  uint32_t n = 0;
  for (SharedContext* c = head_; c; c = c->next) n += c->listed ? 1 : 0;
  epctx_pal_mutex_unlock(mutex_);
  return n;
}

}  // namespace epctx
