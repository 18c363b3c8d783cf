/* SPDX-License-Identifier: Apache-2.0 */
// For host tests that compile a model in memory and run it: compile with
// an embedded context (CompileToMemory) and run a one-input, one-output
// package on the runtime (RunOne). Failures fail the calling cmocka test.
#ifndef EPCTX_TESTS_HOST_RUN_MODEL_H
#define EPCTX_TESTS_HOST_RUN_MODEL_H

#include <string>
#include <vector>

#include <epctx/epctx.h>

#include "epctx_host/compile_api.h"

// cmocka last: its fail() macro clashes with <ios>.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace testutil {

// The package bytes of `m` compiled for `ep`, context embedded.
inline std::string CompileToMemory(const onnx::ModelProto& m, const std::string& ep) {
  epctx::host::CompileSettings st;
  st.ep = ep;
  st.output_to_memory = true;
  st.config.emplace_back("ep.context_embed_mode", "1");
  epctx::host::CompileResult r = epctx::host::CompileModel(
      epctx::host::ModelInput::FromBuffer(m.SerializeAsString(), "m.onnx"), st);
  if (!r.ok()) fail_msg("compile --ep %s: %s", ep.c_str(), r.status.message.c_str());
  return r.models.at(0).model_data;
}

// Output `out` of package `model` (built-in drivers registered) for float
// input `in` of shape `dims`.
inline std::vector<float> RunOne(const std::string& model, const char* in,
                                 std::vector<int64_t> dims, std::vector<float> x, const char* out) {
  epctx_env* env = nullptr;
  assert_null(epctx_env_create(nullptr, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  epctx_session* ses = nullptr;
  epctx_status* st =
      epctx_session_create_from_buffer(env, model.data(), model.size(), nullptr, &ses);
  if (st) fail_msg("create: %s", epctx_status_message(st));
  epctx_tensor* tin = nullptr;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims.data(), dims.size(), x.data(),
                                x.size() * sizeof(float), &tin));
  const char* names[1] = {in};
  const char* out_names[1] = {out};
  epctx_tensor* tout = nullptr;
  st = epctx_session_run(ses, names, &tin, 1, out_names, &tout, 1);
  if (st) fail_msg("run: %s", epctx_status_message(st));
  const float* p = static_cast<const float*>(epctx_tensor_data(tout));
  std::vector<float> y(p, p + epctx_tensor_bytes(tout) / sizeof(float));
  epctx_tensor_release(tout);
  epctx_tensor_release(tin);
  epctx_session_release(ses);
  epctx_env_release(env);
  return y;
}

}  // namespace testutil

#endif
