// The registry of backends compiled into this build.
#include "epctx_host/backend.h"

namespace epctx {
namespace host {

#ifdef EPCTX_HAVE_VNPU_BACKEND
// Provided by host_tools/backends/vnpu (target epctx_backend_vnpu).
std::unique_ptr<Backend> CreateVnpuBackend();
#endif

std::unique_ptr<Backend> CreateBackend(const std::string& name) {
#ifdef EPCTX_HAVE_VNPU_BACKEND
  if (name == "vnpu") return CreateVnpuBackend();
#endif
  (void)name;
  return nullptr;
}

}  // namespace host
}  // namespace epctx
