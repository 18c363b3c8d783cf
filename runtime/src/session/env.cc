// SPDX-License-Identifier: Apache-2.0
#include "session/env.h"

#include <cstdarg>

#include <epctx/pal.h>

#include "session/workspace.h"

namespace epctx {
namespace {
void* host_alloc(void* user, size_t size, size_t alignment) {
  return static_cast<Env*>(user)->alloc.Alloc(size, alignment);
}
void host_free(void* user, void* p) { static_cast<Env*>(user)->alloc.Free(p); }
void host_log(void* user, int level, const char* message) {
  static_cast<Env*>(user)->Log(level, "%s", message);
}
}  // namespace

Env::Env(const Allocator& a, int level) : alloc(a), log_level(level) {
  hal_host.user = this;
  hal_host.alloc = host_alloc;
  hal_host.free = host_free;
  hal_host.log = host_log;
  shared_group = ContextGroup::Create(alloc);
}

Env::~Env() {
  if (shared_group) shared_group->Release();
}

Status Env::RegisterDriver(const epctx_hal_driver* driver) {
  if (!driver) return Status::Error(EPCTX_INVALID_ARGUMENT, "register driver: driver is NULL");
  if (driver->abi_version != EPCTX_HAL_ABI_VERSION)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "register driver: HAL ABI version %u, this runtime expects %u",
                         driver->abi_version, EPCTX_HAL_ABI_VERSION);
  if (driver->struct_size < sizeof(epctx_hal_driver) || !driver->get_info ||
      !driver->check_compatibility || !driver->load_context || !driver->get_graph ||
      !driver->execute || !driver->release_context)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "register driver: struct of %u bytes with missing functions (expected %zu "
                         "bytes, all set)",
                         driver->struct_size, sizeof(epctx_hal_driver));
  if (num_drivers == kMaxDrivers)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "register driver: at most %d drivers",
                         kMaxDrivers);
  DriverEntry e;
  e.driver = driver;
  int rc = driver->get_info(driver, &e.info);
  if (rc != EPCTX_OK || !e.info.name)
    return Status::Error(EPCTX_EP_FAIL, "register driver: get_info failed (%s)",
                         epctx_code_name(rc));
  for (int i = 0; i < num_drivers; ++i)
    if (drivers[i].driver == driver)
      return Status::Error(EPCTX_INVALID_ARGUMENT, "register driver '%s': already registered",
                           e.info.name);
  if (e.info.payload_alignment == 0) e.info.payload_alignment = 1;
  drivers[num_drivers++] = e;
  return Status::Ok();
}

void Env::Log(int level, const char* fmt, ...) const {
  if (level > log_level) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vformat(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (log_fn)
    log_fn(log_user, level, buf);
  else
    epctx_pal_log(level, buf);
}

}  // namespace epctx
