/* SPDX-License-Identifier: Apache-2.0 */
/* The smallest application that keeps every part of the runtime alive: it
 * registers the built-in drivers (vnpu), trusts a key (trust), creates a
 * session from a path given at run time (core: ONNX reader, container,
 * session; CPU kernels through the registry) and runs it. Linked with
 * --gc-sections against the runtime's objects, its map file says what each
 * part costs (size_report.py). It is never run. */
#include <epctx/epctx.h>

#include <stddef.h>

int main(int argc, char** argv) {
  epctx_env* env = NULL;
  epctx_session* session = NULL;
  epctx_tensor* out = NULL;
  epctx_status* s = epctx_env_create(NULL, 1, &env);
  if (!s) s = epctx_env_register_builtin_drivers(env);
  if (!s && argc > 2) s = epctx_env_add_trusted_key(env, argv[2], 65);
  if (!s && argc > 1) s = epctx_session_create(env, argv[1], NULL, &session);
  if (!s && session) s = epctx_session_run(session, NULL, NULL, 0, NULL, &out, 1);
  int rc = epctx_status_code(s);
  epctx_status_release(s);
  epctx_tensor_release(out);
  epctx_session_release(session);
  epctx_env_release(env);
  return rc;
}
