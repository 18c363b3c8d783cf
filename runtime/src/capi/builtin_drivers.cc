// SPDX-License-Identifier: Apache-2.0
// The drivers compiled into this build. vnpu runs on every target.
#include <epctx/epctx.h>
#include <epctx/vnpu.h>

extern "C" epctx_status* epctx_env_register_builtin_drivers(epctx_env* env) {
  return epctx_env_register_driver(env, epctx_vnpu_driver());
}
