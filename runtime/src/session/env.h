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
  const epctx_hal_driver* driver = nullptr;
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
  // Whether a message of `level` would be delivered: callers test it before
  // formatting anything costly, e.g. on the run path.
  bool LogOn(int level) const { return level <= log_level; }
  void Log(int level, const char* fmt, ...) const __attribute__((format(printf, 3, 4)));
};

}  // namespace epctx

#endif
