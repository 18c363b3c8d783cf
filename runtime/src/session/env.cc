// SPDX-License-Identifier: Apache-2.0
#include "session/env.h"

#include <cstdarg>
#include <cstddef>
#include <cstring>

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
  hal_host.struct_size = sizeof hal_host;
  hal_host.user = this;
  hal_host.alloc = host_alloc;
  hal_host.free = host_free;
  hal_host.log = host_log;
  shared_group = ContextGroup::Create(alloc);
}

Env::~Env() {
  if (shared_group) shared_group->Release();
  // Last: nothing may call into a driver after its code is unmapped.
  for (int i = num_libraries; i-- > 0;) epctx_pal_library_close(libraries[i]);
}

namespace {
bool pow2_up_to_page(uint32_t a) { return a && !(a & (a - 1)) && a <= EPCTX_HAL_MAX_ALIGNMENT; }
}  // namespace

Status Env::RegisterDriver(const epctx_hal_driver* driver) {
  if (!driver) return Status::Error(EPCTX_INVALID_ARGUMENT, "register driver: driver is NULL");
  const uint32_t abi = driver->abi_version;
  if (EPCTX_HAL_ABI_MAJOR_OF(abi) != EPCTX_HAL_ABI_MAJOR ||
      EPCTX_HAL_ABI_MINOR_OF(abi) > EPCTX_HAL_ABI_MINOR)
    return Status::Error(EPCTX_INCOMPATIBLE_DRIVER,
                         "register driver: HAL ABI %u.%u, this runtime accepts %u.0 to %u.%u",
                         EPCTX_HAL_ABI_MAJOR_OF(abi), EPCTX_HAL_ABI_MINOR_OF(abi),
                         EPCTX_HAL_ABI_MAJOR, EPCTX_HAL_ABI_MAJOR, EPCTX_HAL_ABI_MINOR);
  // 2.0 ends with release_context; every later minor appends hooks.
  const size_t base = offsetof(epctx_hal_driver, release_context) + sizeof(void*);
  if (driver->struct_size < base || !driver->get_info || !driver->check_compatibility ||
      !driver->load_context || !driver->get_graph || !driver->execute || !driver->release_context)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "register driver: struct of %u bytes with missing functions (expected "
                         "at least %zu bytes, the six functions of ABI %u.0 set)",
                         driver->struct_size, base, EPCTX_HAL_ABI_MAJOR);
  if (num_drivers == kMaxDrivers)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "register driver: at most %d drivers",
                         kMaxDrivers);
  DriverEntry e;
  e.driver = driver;
  // Hooks past the driver's own struct stay null.
  const size_t known = driver->struct_size < sizeof e.fns ? driver->struct_size : sizeof e.fns;
  memcpy(&e.fns, driver, known);
  if (!e.fns.alloc_io != !e.fns.free_io)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "register driver: alloc_io and free_io come together (one is NULL)");
  if (!e.fns.alloc_context_memory != !e.fns.free_context_memory)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "register driver: alloc_context_memory and free_context_memory come "
                         "together (one is NULL)");
  e.info.struct_size = sizeof e.info;
  int rc = driver->get_info(driver, &e.info);
  if (rc != EPCTX_OK || !e.info.name)
    return Status::Error(rc == EPCTX_OK ? EPCTX_EP_FAIL : rc,
                         "register driver: get_info failed (%s%s)", epctx_code_name(rc),
                         rc == EPCTX_OK ? ", no name" : "")
        .WithCode(EPCTX_EP_FAIL);
  for (int i = 0; i < num_drivers; ++i)
    if (drivers[i].driver == driver)
      return Status::Error(EPCTX_INVALID_ARGUMENT, "register driver '%s': already registered",
                           e.info.name);
  if (e.info.payload_alignment == 0) e.info.payload_alignment = 1;
  if (!pow2_up_to_page(e.info.payload_alignment))
    return Status::Error(EPCTX_INCOMPATIBLE_DRIVER,
                         "register driver '%s': payload_alignment %u, expected a power of two "
                         "up to %u",
                         e.info.name, e.info.payload_alignment, EPCTX_HAL_MAX_ALIGNMENT);
  if (e.info.num_source_keys && !e.info.source_keys)
    return Status::Error(EPCTX_INCOMPATIBLE_DRIVER,
                         "register driver '%s': %u source keys but source_keys is NULL",
                         e.info.name, e.info.num_source_keys);
  for (uint32_t k = 0; k < e.info.num_source_keys; ++k)
    if (!e.info.source_keys[k])
      return Status::Error(EPCTX_INCOMPATIBLE_DRIVER,
                           "register driver '%s': source_keys[%u] is NULL", e.info.name, k);
  drivers[num_drivers++] = e;
  Log(2, "registered driver '%s' (HAL ABI %u.%u, payload alignment %u)", e.info.name,
      EPCTX_HAL_ABI_MAJOR_OF(abi), EPCTX_HAL_ABI_MINOR_OF(abi), e.info.payload_alignment);
  return Status::Ok();
}

Status Env::LoadDriverLibrary(const char* path) {
  if (!path || !path[0])
    return Status::Error(EPCTX_INVALID_ARGUMENT, "load driver library: path is empty");
  if (num_libraries == kMaxDrivers || num_drivers == kMaxDrivers)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "load driver library '%s': at most %d drivers",
                         path, kMaxDrivers);
  char msg[Status::kMaxMessage];
  msg[0] = '\0';
  void* lib = nullptr;
  int rc = epctx_pal_library_open(path, &lib, msg, sizeof msg);
  if (rc != EPCTX_OK) return Status::Error(rc, "load driver library '%s': %s", path, msg);
  void* sym = epctx_pal_library_symbol(lib, EPCTX_HAL_ENTRY_POINT);
  if (!sym) {
    epctx_pal_library_close(lib);
    return Status::Error(EPCTX_INCOMPATIBLE_DRIVER,
                         "load driver library '%s': no entry point %s (not an epctx driver, or "
                         "one built for another HAL major than %u)",
                         path, EPCTX_HAL_ENTRY_POINT, EPCTX_HAL_ABI_MAJOR);
  }
  epctx_hal_entry_fn entry;
  static_assert(sizeof entry == sizeof sym, "function and data pointers differ in size");
  memcpy(&entry, &sym, sizeof entry);
  const epctx_hal_driver* driver = entry(EPCTX_HAL_ABI_VERSION);
  if (!driver) {
    epctx_pal_library_close(lib);
    return Status::Error(EPCTX_INCOMPATIBLE_DRIVER,
                         "load driver library '%s': %s returned no driver for HAL ABI %u.%u", path,
                         EPCTX_HAL_ENTRY_POINT, EPCTX_HAL_ABI_MAJOR, EPCTX_HAL_ABI_MINOR);
  }
  Status st = RegisterDriver(driver);
  if (!st.ok()) {
    epctx_pal_library_close(lib);
    return st.Prefix("load driver library '%s'", path);
  }
  libraries[num_libraries++] = lib;
  return Status::Ok();
}

void Env::Log(int level, const char* fmt, ...) const {
  if (level > log_level) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vformat(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (log_fn) log_fn(log_user, level, buf);
  else epctx_pal_log(level, buf);
}

}  // namespace epctx
