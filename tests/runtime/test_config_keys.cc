// SPDX-License-Identifier: Apache-2.0
// <epctx/session_config_keys.h> against the runtime: the header lists
// exactly the keys Options accepts, each default it names is a value the
// runtime accepts, and what it documents as the default is what a session
// does without the key.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cstring>

extern "C" {
#include <cmocka.h>
}

#include <epctx/epctx.h>
#include <epctx/session_config_keys.h>

#include "session/options.h"
#include "trust/verifier.h"

namespace {

struct Row {
  const char* key;
  const char* scope;
  const char* def;
};

#define EPCTX_TEST_ROW(key, scope, def) {key, scope, def},
const Row kRows[] = {EPCTX_SESSION_CONFIG_KEYS(EPCTX_TEST_ROW)};
#undef EPCTX_TEST_ROW
constexpr uint32_t kNumRows = sizeof kRows / sizeof kRows[0];

void header_lists_exactly_the_keys_the_runtime_accepts(void** state) {
  (void)state;
  assert_int_equal(epctx::Options::KnownKeyCount(), kNumRows);
  for (uint32_t i = 0; i < epctx::Options::KnownKeyCount(); ++i) {
    const char* k = epctx::Options::KnownKey(i);
    bool listed = false;
    for (const Row& r : kRows) listed = listed || std::strcmp(r.key, k) == 0;
    if (!listed) fail_msg("the runtime accepts '%s', the header does not list it", k);
  }
  assert_null(epctx::Options::KnownKey(kNumRows));
  for (const Row& r : kRows) {
    epctx::Options o;
    // Any value: a key the runtime did not know fails with "unknown key".
    epctx::Status st = o.Set(r.key, "\x01");
    if (!st.ok() && std::strstr(st.message(), "unknown key"))
      fail_msg("the header lists '%s', the runtime does not know it", r.key);
    const bool scope_ok = !std::strcmp(r.scope, "RUN") || !std::strcmp(r.scope, "GEN") ||
                          !std::strcmp(r.scope, "BOTH");
    if (!scope_ok) fail_msg("'%s': scope '%s'", r.key, r.scope);
  }
  epctx::Options o;
  epctx::Status st = o.Set("ep.context_enabled", "1");
  assert_int_equal(st.code(), EPCTX_INVALID_ARGUMENT);
  assert_non_null(std::strstr(st.message(), "'ep.context_enabled': unknown key"));
}

void every_documented_default_is_accepted_as_a_value(void** state) {
  (void)state;
  for (const Row& r : kRows) {
    if (!r.def[0]) continue;  // "unset"
    epctx::Options o;
    epctx::Status st = o.Set(r.key, r.def);
    if (!st.ok()) fail_msg("default of '%s' ('%s') is refused: %s", r.key, r.def, st.message());
    assert_string_equal(o.Get(r.key), r.def);
  }
}

void defaults_match_what_the_runtime_does_without_the_key(void** state) {
  (void)state;
  epctx::Options o;
  for (const Row& r : kRows) assert_null(o.Get(r.key));
  // Flags default to 0: Flag() is false when unset.
  for (const Row& r : kRows)
    if (!std::strcmp(r.def, "0") && std::strcmp(r.scope, "GEN")) assert_false(o.Flag(r.key));
  // The signature policy the verifier applies without the key.
  epctx::trust::Policy p;
  for (const Row& r : kRows)
    if (!std::strcmp(r.key, EPCTX_CONFIG_SIGNATURE_POLICY)) {
      assert_true(epctx::trust::ParsePolicy(r.def, &p));
      assert_true(p == epctx::trust::DefaultPolicy());
    }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(header_lists_exactly_the_keys_the_runtime_accepts),
      cmocka_unit_test(every_documented_default_is_accepted_as_a_value),
      cmocka_unit_test(defaults_match_what_the_runtime_does_without_the_key),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
