// SPDX-License-Identifier: Apache-2.0
// The AN547 image: runs the embedded signed package once and checks it.
//
// Boot -> bare-metal PAL over the embedded files and a static arena -> env
// with the trusted key and a (RAM) rollback store -> session with
// epctx.signature_policy=required and the expected model id -> run on the
// reference inputs -> compare with the reference outputs. Prints one line,
// "mps3-an547: PASS ..." or "mps3-an547: FAIL ...", and returns 0 or 1
// (startup.c turns that into QEMU's exit status).
//
// Built twice (CMakeLists.txt): the plain image must run the model; the
// tampered image (EPCTX_BOARD_EXPECT_REFUSAL = an epctx_code) embeds the
// package with one byte flipped and passes only when session creation fails
// with exactly that code.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <epctx/epctx.h>
#include <epctx/pal_baremetal.h>

#include "board_assets.h"
#include "semihost.h"

namespace {

// The runtime's arena: metadata, tensors and run buffers of the session.
alignas(16) __attribute__((section(".noinit"))) unsigned char g_arena[1536 * 1024];

char g_line[512];

int finish(bool pass, const char* what) {
  snprintf(g_line, sizeof g_line, "mps3-an547: %s: %s (arena peak %u of %u bytes)\n",
           pass ? "PASS" : "FAIL", what, static_cast<unsigned>(epctx_pal_baremetal_heap_peak()),
           static_cast<unsigned>(sizeof g_arena));
  semihost_write(g_line);
  return pass ? 0 : 1;
}

int fail_status(const char* step, epctx_status* st) {
  char what[400];
  snprintf(what, sizeof what, "%s: %s: %s", step, epctx_code_name(epctx_status_code(st)),
           epctx_status_message(st));
  epctx_status_release(st);
  return finish(false, what);
}

#ifndef EPCTX_BOARD_EXPECT_REFUSAL  // the tampered image never runs
// |a - e| <= 1e-5 + 1e-4 |e| elementwise, as tests/e2e/npy_compare.c.
bool matches(const board_tensor& expected, epctx_tensor* out, char* why, size_t cap) {
  if (epctx_tensor_dtype(out) != EPCTX_DTYPE_FLOAT || expected.dtype != EPCTX_DTYPE_FLOAT ||
      epctx_tensor_bytes(out) != expected.bytes) {
    snprintf(why, cap, "output '%s': %u bytes of dtype %d, expected %u float bytes", expected.name,
             static_cast<unsigned>(epctx_tensor_bytes(out)),
             static_cast<int>(epctx_tensor_dtype(out)), static_cast<unsigned>(expected.bytes));
    return false;
  }
  const float* a = static_cast<const float*>(epctx_tensor_data(out));
  const float* e = static_cast<const float*>(expected.data);
  size_t n = expected.bytes / sizeof(float), bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (!(fabsf(a[i] - e[i]) <= 1e-5f + 1e-4f * fabsf(e[i]))) ++bad;
  if (bad) {
    snprintf(why, cap, "output '%s': %u of %u elements outside |a-e| <= 1e-5 + 1e-4|e|",
             expected.name, static_cast<unsigned>(bad), static_cast<unsigned>(n));
    return false;
  }
  return true;
}
#endif

int run_image() {
  static const epctx_baremetal_platform platform = {board_files,    board_num_files, g_arena,
                                                    sizeof g_arena, semihost_write,  nullptr};
  if (epctx_pal_baremetal_init(&platform) != EPCTX_OK)
    return finish(false, "the board's file table or arena was refused");

  epctx_env* env = nullptr;
  epctx_status* st = epctx_env_create(nullptr, /*log_level=*/1, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  if (!st) st = epctx_env_add_trusted_key(env, board_public_key, board_public_key_size);
  if (!st && board_data_key_size)
    st = epctx_env_add_decryption_key(env, board_data_key_id, board_data_key, board_data_key_size);
  // A RAM stand-in for the OTP counter (pal_baremetal.h): the store name only
  // labels it.
  if (!st) st = epctx_env_set_rollback_store(env, "otp");
  if (st) return fail_status("env", st);

  epctx_session_options* opts = nullptr;
  st = epctx_session_options_create(&opts);
  if (!st) st = epctx_session_options_set(opts, "epctx.signature_policy", "required");
  if (!st) st = epctx_session_options_set_expected_model_id(opts, board_model_id);
  if (st) return fail_status("session options", st);

  epctx_session* session = nullptr;
  st = epctx_session_create(env, board_model_path, opts, &session);
  epctx_session_options_release(opts);
#ifdef EPCTX_BOARD_EXPECT_REFUSAL
  char what[400];
  if (!st) {
    epctx_session_release(session);
    epctx_env_release(env);
    snprintf(what, sizeof what, "tampered package '%s' was accepted, expected %s", board_model_path,
             epctx_code_name(EPCTX_BOARD_EXPECT_REFUSAL));
    return finish(false, what);
  }
  int code = epctx_status_code(st);
  snprintf(what, sizeof what, "tampered package refused%s: %s: %s",
           code == EPCTX_BOARD_EXPECT_REFUSAL ? "" : " with the wrong code", epctx_code_name(code),
           epctx_status_message(st));
  epctx_status_release(st);
  epctx_env_release(env);
  return finish(code == EPCTX_BOARD_EXPECT_REFUSAL, what);
#else
  if (st) return fail_status("session create", st);

  enum { kMax = 8 };
  if (board_num_inputs > kMax || board_num_expected > kMax ||
      epctx_session_output_count(session) != board_num_expected)
    return finish(false, "the reference data does not fit the model's inputs/outputs");
  const char* in_names[kMax];
  epctx_tensor* inputs[kMax] = {};
  for (size_t i = 0; i < board_num_inputs && !st; ++i) {
    const board_tensor& t = board_inputs[i];
    in_names[i] = t.name;
    // Borrowed, never written: the runtime reads inputs only.
    st = epctx_tensor_wrap(env, static_cast<epctx_dtype>(t.dtype), t.dims, t.rank,
                           const_cast<void*>(t.data), t.bytes, &inputs[i]);
  }
  epctx_tensor* outputs[kMax] = {};
  if (!st)
    st = epctx_session_run(session, in_names, inputs, board_num_inputs, nullptr, outputs,
                           board_num_expected);
  if (st) return fail_status("run", st);

  char why[300] = "";
  bool ok = true;
  for (size_t i = 0; i < board_num_expected && ok; ++i)
    ok = matches(board_expected[i], outputs[i], why, sizeof why);
  char what[400];
  if (ok)
    snprintf(what, sizeof what,
             "signed %spackage '%s' (model id '%s') verified%s and ran: %u EPContext node(s) on "
             "vnpu, %u CPU node(s), %u output(s) match the reference",
             board_data_key_size ? "encrypted " : "", board_model_path, board_model_id,
             board_data_key_size ? ", decrypted" : "",
             static_cast<unsigned>(epctx_session_driver_node_count(session)),
             static_cast<unsigned>(epctx_session_cpu_node_count(session)),
             static_cast<unsigned>(board_num_expected));
  for (size_t i = 0; i < board_num_expected; ++i) epctx_tensor_release(outputs[i]);
  for (size_t i = 0; i < board_num_inputs; ++i) epctx_tensor_release(inputs[i]);
  epctx_session_release(session);
  epctx_env_release(env);
  return finish(ok, ok ? what : why);
#endif
}

}  // namespace

extern "C" int main(void) { return run_image(); }
