/* SPDX-License-Identifier: Apache-2.0 */
/* The C API calls apps reach for beside load and run: versions, the env's
 * log callback, run options (terminate, deadline) and model metadata. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <epctx/epctx.h>
#include <epctx/hal.h>

static const char* g_dir;

static const char* path_of(const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

static epctx_env* new_env(int level) {
  epctx_env* env = NULL;
  epctx_status* st = epctx_env_create(NULL, level, &env);
  if (!st) st = epctx_env_register_builtin_drivers(env);
  if (st) fail_msg("%s", epctx_status_message(st));
  return env;
}

static epctx_session* open_model(epctx_env* env, const char* name) {
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create(env, path_of(name), NULL, &s);
  if (st) fail_msg("%s: %s", name, epctx_status_message(st));
  return s;
}

/* ---- versions ---- */

static void version_is_the_project_version(void** state) {
  (void)state;
  assert_string_equal(epctx_version(), EPCTX_EXPECTED_VERSION);
  assert_int_equal(epctx_api_version(), EPCTX_API_VERSION);
  assert_int_equal(epctx_hal_abi_version(), EPCTX_HAL_ABI_VERSION);
}

/* ---- log callback ---- */

typedef struct log_sink {
  pthread_mutex_t mu;
  int count[4];
  char text[16384];
} log_sink;

static void collect(void* user, int level, const char* message) {
  log_sink* l = (log_sink*)user;
  pthread_mutex_lock(&l->mu);
  assert_true(level >= 0 && level <= 3);
  assert_null(strchr(message, '\n'));
  l->count[level]++;
  size_t n = strlen(l->text);
  snprintf(l->text + n, sizeof l->text - n, "%d|%s\n", level, message);
  pthread_mutex_unlock(&l->mu);
}

#if EPCTX_TEST_HAS_VNPU
static void verbose_log_covers_create_route_and_run(void** state) {
  (void)state;
  static log_sink l = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}};
  epctx_env* env = new_env(EPCTX_LOG_VERBOSE);
  assert_null(epctx_env_set_log_callback(env, collect, &l));
  epctx_session* s = open_model(env, "add_relu.onnx");
  float x[6] = {0};
  int64_t dims[2] = {2, 3};
  epctx_tensor* in = NULL;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, &in));
  const char* names[1] = {"x"};
  epctx_tensor* out[1] = {NULL};
  assert_null(epctx_session_run(s, names, (const epctx_tensor* const*)&in, 1, NULL, out, 1));
  /* create: loading, verify, parse, the summary; run: one line */
  assert_non_null(strstr(l.text, "3|"));
  assert_non_null(strstr(l.text, "add_relu.onnx: loading ("));
  assert_non_null(strstr(l.text, "not verified (signature policy if_signed, no manifest)"));
  assert_non_null(strstr(l.text, "parsed: IR version"));
  assert_non_null(strstr(l.text, "2|"));
  assert_non_null(strstr(l.text, "session created: 0 driver steps, 2 CPU steps"));
  assert_non_null(strstr(l.text, "run: 1 inputs, 1 outputs"));
  /* route: the driver a source goes to (the container is bad after that) */
  epctx_session* bad = NULL;
  epctx_status* st = epctx_session_create(env, path_of("bad_container.onnx"), NULL, &bad);
  assert_non_null(st);
  epctx_status_release(st);
  assert_non_null(strstr(l.text, "EPContext node 'ctx_node_0': source 'vnpu' routes to driver"));
  epctx_tensor_release(out[0]);
  epctx_tensor_release(in);
  epctx_session_release(s);
  epctx_env_release(env);
}
#endif

static void log_level_filters_what_the_callback_gets(void** state) {
  (void)state;
  static log_sink l = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}};
  epctx_env* env = new_env(EPCTX_LOG_VERBOSE);
  assert_null(epctx_env_set_log_callback(env, collect, &l));
  assert_null(epctx_env_set_log_level(env, EPCTX_LOG_WARNING));
  epctx_session* s = open_model(env, "add_relu.onnx");
  epctx_session_release(s);
  assert_int_equal(l.count[2] + l.count[3], 0);
  assert_null(epctx_env_set_log_level(env, EPCTX_LOG_INFO));
  s = open_model(env, "add_relu.onnx");
  epctx_session_release(s);
  assert_int_equal(l.count[3], 0);
  assert_int_equal(l.count[2], 1); /* the "session created" line */
  epctx_status* st = epctx_env_set_log_level(env, 4);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "expected 0 (error) to 3 (verbose), found 4"));
  epctx_status_release(st);
  st = epctx_env_set_log_callback(NULL, collect, &l);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  epctx_status_release(st);
  epctx_env_release(env);
}

/* ---- run options ---- */

typedef struct loop_run {
  epctx_env* env;
  epctx_session* s;
  epctx_tensor* in[2];
  int64_t m;
  float v0;
  epctx_tensor* out[1];
} loop_run;

static void loop_open(loop_run* r, epctx_env* env, int64_t trips) {
  memset(r, 0, sizeof *r);
  r->env = env;
  r->s = open_model(env, "endless_loop.onnx");
  r->m = trips;
  int64_t one = 1;
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_INT64, NULL, 0, &r->m, sizeof r->m, &r->in[0]));
  assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, &one, 1, &r->v0, sizeof r->v0, &r->in[1]));
}

static int loop_run_with(loop_run* r, const epctx_run_options* ro, char* msg, size_t cap) {
  static const char* const names[2] = {"m", "v0"};
  epctx_run_args a;
  memset(&a, 0, sizeof a);
  a.input_names = names;
  a.inputs = (const epctx_tensor* const*)r->in;
  a.input_count = 2;
  a.outputs = r->out;
  a.output_count = 1;
  a.run_options = ro;
  epctx_status* st = epctx_session_run_with(r->s, &a);
  int code = epctx_status_code(st);
  snprintf(msg, cap, "%s", epctx_status_message(st));
  epctx_status_release(st);
  return code;
}

static void loop_close(loop_run* r) {
  epctx_tensor_release(r->out[0]);
  epctx_tensor_release(r->in[0]);
  epctx_tensor_release(r->in[1]);
  epctx_session_release(r->s);
}

static void terminate_set_before_the_run_stops_it_at_step_0(void** state) {
  (void)state;
  epctx_env* env = new_env(0);
  loop_run r;
  loop_open(&r, env, 3);
  epctx_run_options* ro = NULL;
  assert_null(epctx_run_options_create(&ro));
  char msg[512];
  assert_int_equal(loop_run_with(&r, ro, msg, sizeof msg), EPCTX_OK);
  assert_float_equal(*(float*)epctx_tensor_data(r.out[0]), 3.0f, 0.0f);
  epctx_tensor_release(r.out[0]);
  r.out[0] = NULL;
  epctx_run_options_set_terminate(ro, 1);
  assert_int_equal(loop_run_with(&r, ro, msg, sizeof msg), EPCTX_RUN_TERMINATED);
  assert_non_null(strstr(msg, "endless_loop.onnx: run terminated by the caller before step 0"));
  assert_null(r.out[0]); /* released like any failed run's */
  assert_string_equal(epctx_code_name(EPCTX_RUN_TERMINATED), "RUN_TERMINATED");
  /* unset: runs proceed again */
  epctx_run_options_set_terminate(ro, 0);
  assert_int_equal(loop_run_with(&r, ro, msg, sizeof msg), EPCTX_OK);
  epctx_run_options_release(ro);
  loop_close(&r);
  epctx_env_release(env);
}

#if EPCTX_TEST_THREADS
typedef struct stopper {
  epctx_run_options* ro;
} stopper;

static void* stop_soon(void* p) {
  usleep(20000);
  epctx_run_options_set_terminate(((stopper*)p)->ro, 1);
  return NULL;
}

static void terminate_from_another_thread_stops_a_running_loop(void** state) {
  (void)state;
  epctx_env* env = new_env(0);
  loop_run r;
  loop_open(&r, env, INT64_MAX); /* never ends on its own */
  epctx_run_options* ro = NULL;
  assert_null(epctx_run_options_create(&ro));
  stopper sp = {ro};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, stop_soon, &sp), 0);
  char msg[512];
  int code = loop_run_with(&r, ro, msg, sizeof msg);
  pthread_join(t, NULL);
  assert_int_equal(code, EPCTX_RUN_TERMINATED);
  /* stopped inside the Loop body: the message names the subgraph */
  assert_non_null(strstr(msg, "run terminated by the caller before step"));
  assert_null(r.out[0]);
  epctx_run_options_release(ro);
  loop_close(&r);
  epctx_env_release(env);
}
#endif

static void deadline_stops_a_run_that_would_not_end(void** state) {
  (void)state;
  epctx_env* env = new_env(0);
  loop_run r;
  loop_open(&r, env, INT64_MAX);
  epctx_run_options* ro = NULL;
  assert_null(epctx_run_options_create(&ro));
  /* 300 ms: long enough that the short run below cannot miss it on a busy
   * 2-core CI machine or under qemu, short enough to keep the test quick */
  assert_null(epctx_run_options_set_timeout_us(ro, 300000));
  char msg[512];
  assert_int_equal(loop_run_with(&r, ro, msg, sizeof msg), EPCTX_RUN_DEADLINE_EXCEEDED);
  assert_non_null(strstr(msg, "run exceeded its deadline of 300000 us before step"));
  /* the deadline counts from each run's start, not from when it was set
   * (300 ms ago by now): a short run with the same options still passes */
  loop_close(&r);
  loop_open(&r, env, 2);
  assert_int_equal(loop_run_with(&r, ro, msg, sizeof msg), EPCTX_OK);
  epctx_status* st = epctx_run_options_set_timeout_us(ro, UINT64_MAX);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "exceeds a year"));
  epctx_status_release(st);
  epctx_run_options_release(ro);
  loop_close(&r);
  epctx_env_release(env);
}

/* ---- metadata ---- */

static void metadata_gives_the_model_fields_and_props(void** state) {
  (void)state;
  epctx_env* env = new_env(0);
  epctx_session* s = open_model(env, "metadata.onnx");
  assert_string_equal(epctx_session_metadata(s, EPCTX_METADATA_PRODUCER_NAME), "epctx-tests");
  assert_string_equal(epctx_session_metadata(s, EPCTX_METADATA_PRODUCER_VERSION), "1.2.3");
  assert_string_equal(epctx_session_metadata(s, EPCTX_METADATA_DOMAIN), "org.example");
  assert_string_equal(epctx_session_metadata(s, EPCTX_METADATA_GRAPH_NAME), "add_relu");
  assert_null(epctx_session_metadata(s, (epctx_metadata_field)99));
  assert_int_equal(epctx_session_model_version(s), 7);
  assert_true(epctx_session_ir_version(s) >= 7);
  assert_int_equal(epctx_session_metadata_prop_count(s), 3);
  const char *k = NULL, *v = NULL;
  assert_null(epctx_session_metadata_prop(s, 2, &k, &v));
  assert_string_equal(k, "author");
  assert_string_equal(v, "a duplicate key");
  /* lookup: the first entry of a name */
  assert_string_equal(epctx_session_metadata_lookup(s, "author"), "runtime tests");
  assert_string_equal(epctx_session_metadata_lookup(s, "license"), "Apache-2.0");
  assert_null(epctx_session_metadata_lookup(s, "nothing"));
  epctx_status* st = epctx_session_metadata_prop(s, 3, &k, &v);
  assert_int_equal(epctx_status_code(st), EPCTX_INVALID_ARGUMENT);
  assert_non_null(strstr(epctx_status_message(st), "index 3, the model has 3 metadata_props"));
  epctx_status_release(st);
  epctx_session_release(s);
  /* a model that sets none: empty strings, no props */
  s = open_model(env, "add_relu.onnx");
  assert_string_equal(epctx_session_metadata(s, EPCTX_METADATA_PRODUCER_NAME), "");
  assert_int_equal(epctx_session_metadata_prop_count(s), 0);
  epctx_session_release(s);
  epctx_env_release(env);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_capi_info MODELS_DIR\n");
    return 2;
  }
  g_dir = argv[1];
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(version_is_the_project_version),
#if EPCTX_TEST_HAS_VNPU
    cmocka_unit_test(verbose_log_covers_create_route_and_run),
#endif
    cmocka_unit_test(log_level_filters_what_the_callback_gets),
    cmocka_unit_test(terminate_set_before_the_run_stops_it_at_step_0),
#if EPCTX_TEST_THREADS
    cmocka_unit_test(terminate_from_another_thread_stops_a_running_loop),
#endif
    cmocka_unit_test(deadline_stops_a_run_that_would_not_end),
    cmocka_unit_test(metadata_gives_the_model_fields_and_props),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
