// SPDX-License-Identifier: Apache-2.0
// The registry of backends compiled into this build.
#include "epctx_host/backend.h"

#ifdef EPCTX_HAVE_VNPU_BACKEND
#include "vnpu_backend.h"  // host_tools/backends/vnpu (target epctx_backend_vnpu)
#endif

namespace epctx {
namespace host {

std::unique_ptr<Backend> CreateBackend(const std::string& name) {
#ifdef EPCTX_HAVE_VNPU_BACKEND
  if (name == "vnpu") return CreateVnpuBackend();
#endif
  (void)name;
  return nullptr;
}

}  // namespace host
}  // namespace epctx
