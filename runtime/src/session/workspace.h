/* SPDX-License-Identifier: Apache-2.0 */
// The shared workspace: context binaries loaded once and used by many
// sessions (ORT's ep.share_ep_contexts, and the explicit context-group API).
//
// A ContextGroup is a list of loaded contexts keyed by the identity of the
// file they came from (device, inode, size, mtime; the driver; the load
// mode). A session that finds its context file in the group takes a
// reference to the loaded copy (mapping, parsed container, driver context)
// instead of mapping and loading it again; weights are therefore mapped once
// per group, and the driver sees one context.
//
// Lifetimes: a SharedContext lives while a session uses it; the last user's
// Unuse releases the driver context and unmaps the file, so nothing stays
// loaded for a group nobody uses. The group itself is reference-counted: the
// handle that created it holds one reference, every session that uses it one
// more, so handles and sessions may be released in any order. The env (its
// allocator and drivers) must outlive the group.
//
// Threads: every method may be called from any thread. One PAL mutex guards
// the list and every count; it is held while a missing context loads, so two
// sessions asking for the same file at once load it once. get_graph on a
// shared context also runs under it (see GetGraph), so a driver never sees
// concurrent get_graph calls on one context.
#ifndef EPCTX_SESSION_WORKSPACE_H
#define EPCTX_SESSION_WORKSPACE_H

#include <epctx/pal.h>

#include "core/memory.h"
#include "core/status.h"
#include "session/context_binder.h"

namespace epctx {

struct ContextKey {
  epctx_pal_file_id file{};
  const DriverEntry* driver = nullptr;
  int load_mode = 0;
  bool operator==(const ContextKey& o) const;
};

struct SharedContext {
  explicit SharedContext(const Allocator& a) : arena(a, 1024) {}
  SharedContext* next = nullptr;
  uint32_t users = 0;
  bool listed = false;  // still findable by later sessions
  ContextKey key;
  Arena arena;           // the parsed container's arrays
  LoadedContext loaded;  // owned here; sessions copy the views
};

class ContextGroup {
 public:
  // A group with one reference (the caller's); nullptr when out of memory.
  static ContextGroup* Create(const Allocator& alloc);

  void AddRef();
  void Release();  // the last reference frees the group

  // Loads the context into `out` (fn(user, arena, out) does the work, with
  // an arena living as long as the context). Sessions free what fn set with
  // ReleaseLoaded.
  typedef Status (*LoadFn)(void* user, Arena& arena, LoadedContext* out);

  // The context loaded from `key`, loading it with fn when the group lacks
  // it. On success *out holds one use, ended with Unuse.
  Status Acquire(const ContextKey& key, LoadFn fn, void* user, SharedContext** out);
  void Unuse(SharedContext* c);

  // get_graph on a shared context, serialised with every other call here.
  int GetGraph(const LoadedContext& lc, const char* name, epctx_hal_graph** graph,
               epctx_hal_graph_info* info, char* msg, size_t msg_cap);

  // ep.stop_share_ep_contexts: contexts loaded so far stay with the sessions
  // using them, but later sessions no longer find them.
  void StopSharing();

  // Contexts currently loaded and findable (for tests and tools).
  uint32_t NumShared();

 private:
  ContextGroup(const Allocator& a, epctx_pal_mutex* m) : alloc_(a), mutex_(m) {}
  ~ContextGroup();
  friend class Allocator;

  Allocator alloc_;
  epctx_pal_mutex* mutex_;
  uint32_t refs_ = 1;
  SharedContext* head_ = nullptr;
};

// Frees what a context load set in `c` (driver context, mapping, copy),
// in that order: a copy from the driver's alloc_context_memory goes back
// through free_context_memory once release_context has returned.
void ReleaseLoaded(const Allocator& alloc, LoadedContext* c);

// A region over memory the app lent (an external file given from memory
// with epctx_session_options_add_external_buffer) carries this handle and
// is never given to the PAL.
extern char kBorrowedRegion;  // NOLINT(readability-identifier-naming): a marker, never written
// Unmaps a region the PAL made; forgets a borrowed one.
void ReleaseRegion(epctx_pal_region* r);

}  // namespace epctx

#endif
