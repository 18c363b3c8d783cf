// SPDX-License-Identifier: Apache-2.0
// A board image built with EPCTX_REQUIRE_SIGNATURES: `required` is the
// default and the only accepted signature policy, and an unsigned model is
// refused. This program compiles runtime/src/trust/policy.cc itself with the
// definition, so its policy functions stand in for the library's (the
// static library's copy is then never linked in).
// argv[1]: an unsigned model (any generated test model).
#include <epctx/epctx.h>

#include <cstring>
#include <initializer_list>

#include "session/options.h"
#include "trust/verifier.h"

// cmocka last: its macros clash with C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

static const char* g_model;

static void required_is_the_default_and_the_only_choice(void**) {
  assert_true(epctx::trust::DefaultPolicy() == epctx::trust::Policy::kRequired);
  epctx::Options o;
  for (const char* weaker : {"off", "if_signed"}) {
    epctx::Status st = o.Set("epctx.signature_policy", weaker);
    assert_int_equal(st.code(), EPCTX_INVALID_ARGUMENT);
    assert_non_null(strstr(st.message(), "EPCTX_REQUIRE_SIGNATURES"));
  }
  assert_true(o.Set("epctx.signature_policy", "required").ok());
}

static void unsigned_model_is_refused_without_any_option(void**) {
  epctx_env* env = nullptr;
  epctx_session* s = nullptr;
  assert_null(epctx_env_create(nullptr, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  epctx_status* st = epctx_session_create(env, g_model, nullptr, &s);
  assert_int_equal(epctx_status_code(st), EPCTX_SIGNATURE_INVALID);
  assert_non_null(strstr(epctx_status_message(st), "not signed"));
  assert_null(s);
  epctx_status_release(st);
  epctx_env_release(env);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_model = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(required_is_the_default_and_the_only_choice),
      cmocka_unit_test(unsigned_model_is_refused_without_any_option),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
