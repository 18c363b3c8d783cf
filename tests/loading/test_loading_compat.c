/* SPDX-License-Identifier: Apache-2.0 */
/* Version compatibility at load (runtime/src/session/compat.h) and the
 * pre-flight C API: every rule's branch, the status cause, PREFER_RECOMPILATION
 * loading unless session.fail_on_suboptimal_compiled_model=1, and nothing
 * reaching the driver's load_context when a rule fails.
 * Items (ort_epcontext.md): §5 41, 42 (our counterparts); §9.8.
 * tqnn defaults: driver 1.5.0, SDK 2.3.1, hardware "tq-1.2"; cx_ok.onnx was
 * compiled for SDK 2.3.0, "tq-1.2", min driver 1.5.0 (node and header). */
#include "loading_util.h"

static void set_sdk(uint32_t a, uint32_t b, uint32_t c) {
  tqnn_config_get()->sdk_version = (epctx_hal_version){a, b, c};
}
static void set_driver(uint32_t a, uint32_t b, uint32_t c) {
  tqnn_config_get()->driver_version = (epctx_hal_version){a, b, c};
}
static void set_hw(const char* s) {
  snprintf(tqnn_config_get()->hardware_architecture, 32, "%s", s);
}

/* Loads `model` under the current tqnn config; expects failure with cause
 * and needles, and that no blob reached the driver. */
static void expect_incompatible(const char* model, int cause, const char* n1, const char* n2) {
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  expect(load(env, model, NULL, &s), EPCTX_INVALID_GRAPH, cause, LOAD_FAILED,
         epctx_code_name(cause), n1, n2, NULL);
  assert_null(s);
  assert_int_equal(tqnn_record_get()->loads, 0);
  epctx_env_release(env);
}

static void expect_loads(const char* model, epctx_session_options* o) {
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  ok(load(env, model, o, &s));
  assert_int_equal(tqnn_record_get()->loads, 1);
  epctx_session_release(s);
  epctx_env_release(env);
}

static void matching_versions_load_with_the_container(void** state) {
  (void)state;
  tqnn_reset();
  expect_loads("cx_ok.onnx", NULL);
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->is_container[0], 1);
  assert_int_equal(r->weights_size[0], 100);
  assert_memory_equal(r->blob_copy[0], "EPCTXBIN", 8);
  assert_int_equal(r->checks, 1); /* the driver's veto was still asked */
  assert_string_equal(r->bound[0], "cx");
}

static void sdk_rules(void** state) {
  (void)state;
  tqnn_reset();
  set_sdk(3, 0, 0); /* major differs */
  expect_incompatible("cx_ok.onnx", EPCTX_INCOMPATIBLE_SDK, "SDK 2.3.0", "SDK 3.0.0");
  tqnn_reset();
  set_sdk(2, 2, 9); /* device minor older */
  expect_incompatible("cx_ok.onnx", EPCTX_INCOMPATIBLE_SDK, "SDK 2.3.0", "SDK 2.2.9");
  tqnn_reset();
  set_sdk(3, 0, 0); /* version only in the container header */
  expect_incompatible("cx_header_only.onnx", EPCTX_INCOMPATIBLE_SDK, "SDK 2.3.0", "SDK 3.0.0");
  tqnn_reset();
  set_sdk(2, 3, 0); /* patch differences do not matter */
  expect_loads("cx_ok.onnx", NULL);
}

static void hardware_rules(void** state) {
  (void)state;
  const char* bad[] = {"xx-1.2", "tq-2.2", "tq-1.1", "tq-0.9", "garbage"};
  for (int i = 0; i < 5; ++i) {
    tqnn_reset();
    set_hw(bad[i]);
    expect_incompatible("cx_ok.onnx", EPCTX_INCOMPATIBLE_HARDWARE, "'tq-1.2'", bad[i]);
  }
}

static void driver_version_rule(void** state) {
  (void)state;
  tqnn_reset();
  set_driver(1, 4, 9);
  expect_incompatible("cx_ok.onnx", EPCTX_INCOMPATIBLE_DRIVER, ">= 1.5.0", "is 1.4.9");
  tqnn_reset();
  set_driver(2, 0, 0); /* any newer driver is fine */
  expect_loads("cx_ok.onnx", NULL);
}

static void node_attributes_must_agree_with_the_header(void** state) {
  (void)state;
  tqnn_reset();
  expect_incompatible("cx_disagree_sdk.onnx", EPCTX_INCOMPATIBLE_SDK, "2.2.0", "sdk_version 2.3.0");
  tqnn_reset();
  expect_incompatible("cx_disagree_hw.onnx", EPCTX_INCOMPATIBLE_HARDWARE, "'tq-1.1'",
                      "header's 'tq-1.2'");
}

/* A session that takes its context from a group (loaded by a session whose
 * node agreed with the header) still checks its own node against it. */
static void shared_context_header_is_checked_for_each_node(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session_options* o;
  epctx_context_group* g;
  ok(epctx_context_group_create(env, &g));
  ok(epctx_session_options_create(&o));
  ok(epctx_session_options_set_context_group(o, g));
  epctx_session *a, *b;
  ok(load(env, "cx_shared_ok.onnx", o, &a));
  assert_int_equal(epctx_context_group_loaded_count(g), 1);
  expect(load(env, "cx_shared_disagree_sdk.onnx", o, &b), EPCTX_INVALID_GRAPH,
         EPCTX_INCOMPATIBLE_SDK, LOAD_FAILED, "2.2.0", "sdk_version 2.3.0", NULL);
  assert_null(b);
  assert_int_equal(tqnn_record_get()->loads, 1); /* loaded once, by a */
  epctx_session_release(a);
  epctx_session_options_release(o);
  epctx_context_group_release(g);
  epctx_env_release(env);
}

static void malformed_versions_are_incompatible(void** state) {
  (void)state;
  tqnn_reset();
  expect_incompatible("cx_bad_sdk_string.onnx", EPCTX_INCOMPATIBLE_SDK, "'two'", "X.Y.Z");
  tqnn_reset();
  expect_incompatible("cx_bad_hw_string.onnx", EPCTX_INCOMPATIBLE_HARDWARE, "'tq1.2'", "<family>");
}

static void newer_device_loads_unless_suboptimal_is_refused(void** state) {
  (void)state;
  for (int dim = 0; dim < 2; ++dim) {
    tqnn_reset();
    if (dim == 0) set_sdk(2, 4, 0);
    else set_hw("tq-1.3");
    expect_loads("cx_ok.onnx", NULL);
    epctx_session_options* o = opts("session.fail_on_suboptimal_compiled_model", "0", NULL);
    tqnn_record_get()->loads = 0;
    expect_loads("cx_ok.onnx", o);
    epctx_session_options_release(o);
    o = opts("session.fail_on_suboptimal_compiled_model", "1", NULL);
    epctx_env* env = env_with(1, 0);
    epctx_session* s;
    tqnn_record_get()->loads = 0;
    expect(load(env, "cx_ok.onnx", o, &s), EPCTX_INVALID_GRAPH,
           dim == 0 ? EPCTX_INCOMPATIBLE_SDK : EPCTX_INCOMPATIBLE_HARDWARE, LOAD_FAILED,
           "suboptimal", dim == 0 ? "SDK 2.4.0" : "'tq-1.3'", NULL);
    assert_int_equal(tqnn_record_get()->loads, 0);
    epctx_env_release(env);
    epctx_session_options_release(o);
  }
  epctx_session_options* o = NULL;
  ok(epctx_session_options_create(&o));
  expect(epctx_session_options_set(o, "session.fail_on_suboptimal_compiled_model", "yes"),
         EPCTX_INVALID_ARGUMENT, EPCTX_INVALID_ARGUMENT, "expected 0 or 1", NULL);
  epctx_session_options_release(o);
}

static void driver_veto_is_still_asked(void** state) {
  (void)state;
  tqnn_reset();
  tqnn_config_get()->veto = EPCTX_INCOMPATIBLE_HARDWARE;
  expect_incompatible("cx_ok.onnx", EPCTX_INCOMPATIBLE_HARDWARE, "vetoed", "'cx'");
}

static void vnpu_impersonation_is_checked_by_the_runtime(void** state) {
  (void)state;
  epctx_env* env = env_with(0, 1);
  epctx_session* s;
  assert_int_equal(epctx_vnpu_configure("sdk_version", "2.0.0"), EPCTX_OK);
  epctx_env_release(env);
  env = env_with(0, 1); /* versions are read at registration */
  expect(load(env, "vnpu_node.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INCOMPATIBLE_SDK,
         "SDK 1.0.0", "SDK 2.0.0", NULL);
  epctx_env_release(env);
  assert_int_equal(epctx_vnpu_configure("sdk_version", NULL), EPCTX_OK);
  assert_int_equal(epctx_vnpu_configure("hardware_architecture", "vnpu-2.0"), EPCTX_OK);
  env = env_with(0, 1);
  expect(load(env, "vnpu_node.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INCOMPATIBLE_HARDWARE,
         "'vnpu-1.0'", "'vnpu-2.0'", NULL);
  epctx_env_release(env);
  assert_int_equal(epctx_vnpu_configure("hardware_architecture", NULL), EPCTX_OK);
}

/* ---- pre-flight ---- */

static epctx_compat_report* preflight(epctx_env* env, const char* model, epctx_session_options* o) {
  epctx_compat_report* r = NULL;
  ok(epctx_model_check_compatibility(env, model_path(model), o, &r));
  assert_non_null(r);
  return r;
}

static void preflight_answers_each_branch(void** state) {
  (void)state;
  static const struct {
    int sdk_minor, driver_minor;
    const char* hw;
    int fail_flag;
    epctx_compat want;
    int cause;
  } cases[] = {
      {3, 5, "tq-1.2", 0, EPCTX_COMPAT_OPTIMAL, EPCTX_OK},
      {4, 5, "tq-1.2", 0, EPCTX_COMPAT_PREFER_RECOMPILATION, EPCTX_INCOMPATIBLE_SDK},
      {3, 5, "tq-1.5", 0, EPCTX_COMPAT_PREFER_RECOMPILATION, EPCTX_INCOMPATIBLE_HARDWARE},
      {4, 5, "tq-1.2", 1, EPCTX_COMPAT_UNSUPPORTED, EPCTX_INCOMPATIBLE_SDK},
      {2, 5, "tq-1.2", 0, EPCTX_COMPAT_UNSUPPORTED, EPCTX_INCOMPATIBLE_SDK},
      {3, 5, "tq-1.0", 0, EPCTX_COMPAT_UNSUPPORTED, EPCTX_INCOMPATIBLE_HARDWARE},
      {3, 4, "tq-1.2", 0, EPCTX_COMPAT_UNSUPPORTED, EPCTX_INCOMPATIBLE_DRIVER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    tqnn_reset();
    set_sdk(2, (uint32_t)cases[i].sdk_minor, 0);
    set_driver(1, (uint32_t)cases[i].driver_minor, 0);
    set_hw(cases[i].hw);
    epctx_env* env = env_with(1, 0);
    epctx_session_options* o =
        cases[i].fail_flag ? opts("session.fail_on_suboptimal_compiled_model", "1", NULL) : NULL;
    epctx_compat_report* r = preflight(env, "cx_ok.onnx", o);
    assert_int_equal(epctx_compat_report_overall(r), cases[i].want);
    assert_int_equal(epctx_compat_report_cause(r), cases[i].cause);
    assert_int_equal(epctx_compat_report_node_count(r), 1);
    epctx_compat_node n;
    ok(epctx_compat_report_node(r, 0, &n));
    assert_string_equal(n.node_name, "cx");
    assert_string_equal(n.source, "QNNExecutionProvider");
    assert_string_equal(n.driver, "tqnn");
    assert_int_equal(n.verdict, cases[i].want);
    assert_int_equal(n.container_checked, 1);
    assert_true(cases[i].want == EPCTX_COMPAT_OPTIMAL ? n.reason[0] == '\0' : n.reason[0] != '\0');
    assert_int_equal(tqnn_record_get()->loads, 0);
    epctx_compat_report_release(r);
    epctx_session_options_release(o);
    epctx_env_release(env);
  }
}

static void preflight_never_opens_external_files(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_compat_report* r = preflight(env, "cx_external_missing.onnx", NULL);
  assert_int_equal(epctx_compat_report_overall(r), EPCTX_COMPAT_OPTIMAL);
  epctx_compat_node n;
  ok(epctx_compat_report_node(r, 0, &n));
  assert_int_equal(n.container_checked, 0);
  assert_int_equal(n.embed_mode, 0);
  assert_int_equal(tqnn_record_get()->checks, 1);
  assert_int_equal(tqnn_record_get()->loads, 0);
  epctx_compat_report_release(r);
  /* Loading it does open the file, and fails. */
  epctx_session* s;
  expect(load(env, "cx_external_missing.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_NO_SUCHFILE,
         "not_there.bin", NULL);
  epctx_env_release(env);
}

static void preflight_names_unrouted_nodes_and_cpu_gaps(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_compat_report* r = preflight(env, "unknown_source.onnx", NULL);
  assert_int_equal(epctx_compat_report_overall(r), EPCTX_COMPAT_UNSUPPORTED);
  epctx_compat_node n;
  ok(epctx_compat_report_node(r, 0, &n));
  assert_null(n.driver);
  assert_int_equal(n.cause, EPCTX_NOT_IMPLEMENTED);
  assert_non_null(strstr(n.reason, "TensorrtExecutionProvider"));
  epctx_compat_report_release(r);

  r = preflight(env, "needs_compilation.onnx", NULL);
  assert_int_equal(epctx_compat_report_overall(r), EPCTX_COMPAT_UNSUPPORTED);
  assert_int_equal(epctx_compat_report_cause(r), EPCTX_MODEL_REQUIRES_COMPILATION);
  assert_non_null(strstr(epctx_compat_report_reason(r), "Tokenizer"));
  ok(epctx_compat_report_node(r, 0, &n));
  assert_int_equal(n.verdict, EPCTX_COMPAT_OPTIMAL);
  epctx_compat_report_release(r);

  r = preflight(env, "main0_binding.onnx", NULL);
  assert_int_equal(epctx_compat_report_overall(r), EPCTX_COMPAT_OPTIMAL);
  assert_int_equal(epctx_compat_report_node_count(r), 3);
  ok(epctx_compat_report_node(r, 1, &n));
  assert_string_equal(n.node_name, "n2");
  assert_int_equal(n.main_context, 0);
  epctx_compat_report_release(r);

  r = preflight(env, "ext_parent.onnx", NULL);
  assert_int_equal(epctx_compat_report_overall(r), EPCTX_COMPAT_UNSUPPORTED);
  assert_int_equal(epctx_compat_report_cause(r), EPCTX_PATH_REJECTED);
  epctx_compat_report_release(r);
  epctx_env_release(env);
}

static void preflight_from_buffer_needs_the_base_folder(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  size_t size;
  void* buf = read_all(model_path("two_inputs.onnx"), &size);
  epctx_compat_report* r = NULL;
  ok(epctx_model_check_compatibility_from_buffer(env, buf, size, NULL, &r));
  assert_int_equal(epctx_compat_report_overall(r), EPCTX_COMPAT_UNSUPPORTED);
  epctx_compat_node n;
  ok(epctx_compat_report_node(r, 0, &n));
  assert_non_null(strstr(n.reason, "ep.context_file_path"));
  epctx_compat_report_release(r);
  char ctx[4096];
  snprintf(ctx, sizeof ctx, "%s", model_path("two_inputs.onnx"));
  epctx_session_options* o = opts("ep.context_file_path", ctx, NULL);
  ok(epctx_model_check_compatibility_from_buffer(env, buf, size, o, &r));
  assert_int_equal(epctx_compat_report_overall(r), EPCTX_COMPAT_OPTIMAL);
  epctx_compat_report_release(r);
  epctx_session_options_release(o);
  free(buf);
  /* Bad arguments (ORT item 42's counterpart). */
  expect(epctx_model_check_compatibility(NULL, "x", NULL, &r), EPCTX_INVALID_ARGUMENT,
         EPCTX_INVALID_ARGUMENT, NULL);
  expect(epctx_model_check_compatibility(env, NULL, NULL, &r), EPCTX_INVALID_ARGUMENT,
         EPCTX_INVALID_ARGUMENT, NULL);
  expect(epctx_model_check_compatibility_from_buffer(env, NULL, 0, NULL, &r),
         EPCTX_INVALID_ARGUMENT, EPCTX_INVALID_ARGUMENT, NULL);
  expect(epctx_compat_report_node(NULL, 0, &n), EPCTX_INVALID_ARGUMENT, EPCTX_INVALID_ARGUMENT,
         NULL);
  assert_string_equal(epctx_compat_name(EPCTX_COMPAT_PREFER_RECOMPILATION), "PREFER_RECOMPILATION");
  assert_int_equal(epctx_status_cause(NULL), EPCTX_OK);
  epctx_env_release(env);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(matching_versions_load_with_the_container),
    cmocka_unit_test(sdk_rules),
    cmocka_unit_test(hardware_rules),
    cmocka_unit_test(driver_version_rule),
    cmocka_unit_test(node_attributes_must_agree_with_the_header),
    cmocka_unit_test(shared_context_header_is_checked_for_each_node),
    cmocka_unit_test(malformed_versions_are_incompatible),
    cmocka_unit_test(newer_device_loads_unless_suboptimal_is_refused),
    cmocka_unit_test(driver_veto_is_still_asked),
    cmocka_unit_test(vnpu_impersonation_is_checked_by_the_runtime),
    cmocka_unit_test(preflight_answers_each_branch),
    cmocka_unit_test(preflight_never_opens_external_files),
    cmocka_unit_test(preflight_names_unrouted_nodes_and_cpu_gaps),
    cmocka_unit_test(preflight_from_buffer_needs_the_base_folder),
};

LOADING_MAIN(tests)
