// SPDX-License-Identifier: Apache-2.0
// The header-only C++ wrapper (<epctx/epctx.hpp>), built without exceptions
// or RTTI like a device application would be: create, run, read the result,
// and see an error come back as a Result.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include <epctx/epctx.hpp>

static const char* g_dir;

static void wrapper_runs_model_and_owns_outputs(void**) {
  epctx::cpp::Env env;
  epctx::cpp::Result r = epctx::cpp::Env::Create(&env, 0);
  assert_true(r.ok());
  char path[4096];
  snprintf(path, sizeof path, "%s/add_relu.onnx", g_dir);
  epctx::cpp::Session s;
  r = epctx::cpp::Session::Create(env, path, nullptr, &s);
  if (!r.ok()) fail_msg("%s", r.message());
  float x[6] = {-1, 1, -1, 1, -1, 1};
  int64_t dims[2] = {2, 3};
  epctx::cpp::Tensor in[1];
  assert_true(epctx::cpp::Tensor::Wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, &in[0]).ok());
  const char* names[1] = {"x"};
  epctx::cpp::Tensor out[1];
  r = s.Run(names, in, 1, nullptr, out, 1);
  if (!r.ok()) fail_msg("%s", r.message());
  const float want[6] = {0, 2, 1, 4, 3, 6};
  for (int i = 0; i < 6; ++i) assert_float_equal(out[0].data<float>()[i], want[i], 0.0f);
  assert_int_equal(out[0].rank(), 2);
}

static void wrapper_gives_metadata_and_stops_runs_with_run_options(void**) {
  epctx::cpp::Env env;
  assert_true(epctx::cpp::Env::Create(&env, 0).ok());
  assert_true(epctx::cpp::Version()[0] != '\0');
  char path[4096];
  snprintf(path, sizeof path, "%s/metadata.onnx", g_dir);
  epctx::cpp::Session s;
  assert_true(epctx::cpp::Session::Create(env, path, nullptr, &s).ok());
  assert_string_equal(s.Metadata(EPCTX_METADATA_PRODUCER_NAME), "epctx-tests");
  assert_string_equal(s.MetadataProp("license"), "Apache-2.0");
  float x[6] = {0};
  int64_t dims[2] = {2, 3};
  epctx::cpp::Tensor in[1];
  assert_true(epctx::cpp::Tensor::Wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, x, sizeof x, &in[0]).ok());
  const char* names[1] = {"x"};
  epctx::cpp::Tensor out[1];
  epctx::cpp::RunOptions ro;
  assert_true(epctx::cpp::RunOptions::Create(&ro).ok());
  assert_true(s.Run(names, in, 1, nullptr, out, 1, ro).ok());
  assert_float_equal(out[0].data<float>()[5], 5.0f, 0.0f);
  ro.SetTerminate(true);
  epctx::cpp::Result r = s.Run(names, in, 1, nullptr, out, 1, ro);
  assert_int_equal(r.code(), EPCTX_RUN_TERMINATED);
}

static void wrapper_reports_errors_as_results(void**) {
  epctx::cpp::Env env;
  assert_true(epctx::cpp::Env::Create(&env, 0).ok());
  epctx::cpp::Session s;
  epctx::cpp::Result r = epctx::cpp::Session::Create(env, "/nonexistent/model.onnx", nullptr, &s);
  assert_false(r.ok());
  assert_int_equal(r.code(), EPCTX_NO_SUCHFILE);
  assert_string_equal(r.code_name(), "NO_SUCHFILE");
  assert_false(static_cast<bool>(s));
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  g_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(wrapper_runs_model_and_owns_outputs),
      cmocka_unit_test(wrapper_gives_metadata_and_stops_runs_with_run_options),
      cmocka_unit_test(wrapper_reports_errors_as_results),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
