/* SPDX-License-Identifier: Apache-2.0 */
// The vnpu backend's compiler half: what epctx-compile links to target the
// reference virtual NPU (hal/drivers/vnpu/README.md is the spec).
#ifndef EPCTX_HOST_VNPU_BACKEND_H
#define EPCTX_HOST_VNPU_BACKEND_H

#include <memory>

#include <epctx_host/backend.h>

namespace epctx {
namespace host {

std::unique_ptr<Backend> CreateVnpuBackend();

}  // namespace host
}  // namespace epctx

#endif
