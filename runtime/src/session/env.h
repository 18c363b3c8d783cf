/* SPDX-License-Identifier: Apache-2.0 */
// The environment: the application's allocator and the registered drivers.
// Shared by every session created from it; configured before sessions exist
// and read-only afterwards (so sessions may read it from many threads).
#ifndef EPCTX_SESSION_ENV_H
#define EPCTX_SESSION_ENV_H

#include <epctx/hal.h>

#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"
#include "trust/keyring.h"

namespace epctx {

class ContextGroup;  // session/workspace.h

struct DriverEntry {
  const epctx_hal_driver* driver = nullptr;  // `self` for every call
  // The driver's table as this runtime knows it: a driver of an older minor
  // has a shorter one, and the hooks it lacks are null here. Call the
  // optional hooks through this copy, never through `driver`.
  epctx_hal_driver fns{};
  epctx_hal_driver_info info{};

  bool Accepts(StrView source) const {
    for (uint32_t i = 0; i < info.num_source_keys; ++i)
      if (source.ieq(info.source_keys[i])) return true;
    return false;
  }
};

struct Env {
  static constexpr int kMaxDrivers = 16;

  Allocator alloc;
  int log_level = 1;
  // The application's log sink (nullptr: the PAL's log).
  epctx_log_fn log_fn = nullptr;
  void* log_user = nullptr;
  DriverEntry drivers[kMaxDrivers];
  int num_drivers = 0;
  // Driver libraries loaded through the PAL; closed when the env goes.
  void* libraries[kMaxDrivers] = {};
  int num_libraries = 0;
  // What drivers get for allocation and logging; outlives every context.
  epctx_hal_host hal_host{};
  // Trusted public keys and the rollback store (signed packages).
  trust::Keyring trust;

  // The shared workspace of ep.share_ep_contexts=1 (nullptr only when
  // creating it ran out of memory); released with the env.
  ContextGroup* shared_group = nullptr;

  explicit Env(const Allocator& a, int level);
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  Status RegisterDriver(const epctx_hal_driver* driver);
  // Opens a driver shared library, asks its entry point for the driver and
  // registers it; `path` names the library in every error.
  Status LoadDriverLibrary(const char* path);
  // Whether a message of `level` would be delivered: callers test it before
  // formatting anything costly, e.g. on the run path.
  bool LogOn(int level) const { return level <= log_level; }
  void Log(int level, const char* fmt, ...) const __attribute__((format(printf, 3, 4)));
};

}  // namespace epctx

#endif
