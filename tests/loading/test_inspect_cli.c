/* SPDX-License-Identifier: Apache-2.0 */
/* epctx-inspect (text and JSON) and the tools' vnpu impersonation from the
 * environment (EPCTX_VNPU_*), on gen_loading_models.py's vnpu models.
 * vnpu_inspect.onnx: "vnode" embeds a container (SDK 1.0.0, vnpu-1.0, min
 * driver 1.2.0, one 32-byte graph, 100 weight bytes), "vext" points at
 * vnpu_ctx.bin (the same container), then a CPU Relu. vnpu reports driver
 * 1.0.0 by default, so vnode is UNSUPPORTED (driver) until impersonated.
 * Args: EPCTX_INSPECT EPCTX_RUN MODELS_DIR */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

static const char* g_inspect;
static const char* g_run;
static const char* g_dir;
static char g_out[1 << 16];

/* Runs `fmt` (stdout+stderr captured into g_out); returns the exit status. */
static int sh(const char* fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
  FILE* p = popen(cmd, "r");
  assert_non_null(p);
  size_t n = fread(g_out, 1, sizeof g_out - 1, p);
  g_out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void has(const char* needle) {
  if (!strstr(g_out, needle)) fail_msg("output lacks \"%s\":\n%s", needle, g_out);
}

static void text_lists_nodes_files_containers_and_cpu_nodes(void** state) {
  (void)state;
  assert_int_equal(sh("%s %s/m/vnpu_inspect.onnx", g_inspect, g_dir), 0);
  has("preflight: UNSUPPORTED\n");
  has("name: vnode\n");
  has("source: vnpu\n");
  has("ep_sdk_version: 1.0.0\n");
  has("hardware_architecture: vnpu-1.0\n");
  has("format_version: 1.0\n");
  has("producer: gen_loading_models\n");
  has("producer_version: 0.9.1\n");
  has("min_driver_version: 1.2.0\n");
  has("weight_bytes: 100\n");
  has("payload_bytes: 32\n");
  has("cause: INCOMPATIBLE_DRIVER\n");
  has("name: vext\n");
  has("/m/vnpu_ctx.bin\n");
  has("driver: vnpu\n");
  has("op_type: Relu\n");
  has("cpu_kernel: yes\n");
}

static void json_is_parseable_and_complete(void** state) {
  (void)state;
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           /* A vnpu-1.0 / SDK 1.0 device: the package's own target, so OPTIMAL (a
            * newer vnpu, the default one, would say PREFER_RECOMPILATION). */
           "EPCTX_VNPU_DRIVER_VERSION=1.2.0 EPCTX_VNPU_SDK_VERSION=1.0.0 "
           "EPCTX_VNPU_HARDWARE_ARCHITECTURE=vnpu-1.0 %s %s/m/vnpu_inspect.onnx --json > "
           "%s/inspect.json",
           g_inspect, g_dir, g_dir);
  assert_int_equal(sh("%s", cmd), 0);
  /* Debian's python3 checks the JSON and pulls out the facts. */
  assert_int_equal(
      sh("/usr/bin/python3 -c \"import json,sys; d=json.load(open('%s/inspect.json')); "
         "n=d['epcontext_nodes']; print(d['preflight'], len(n), n[0]['container']['graphs'][0]"
         "['payload_bytes'], n[0]['verdict'], n[1]['embed_mode'], n[1]['file'].endswith("
         "'m/vnpu_ctx.bin'), n[1]['container']['weight_bytes'], d['cpu_nodes'][0]['op_type'], "
         "d['drivers'][0]['driver_version'])\"",
         g_dir),
      0);
  assert_string_equal(g_out, "OPTIMAL 2 32 OPTIMAL 0 True 100 Relu 1.2.0\n");
}

static void environment_impersonates_vnpu_versions(void** state) {
  (void)state;
  assert_int_equal(sh("EPCTX_VNPU_DRIVER_VERSION=1.2.0 EPCTX_VNPU_SDK_VERSION=1.1.0 %s "
                      "%s/m/vnpu_inspect.onnx",
                      g_inspect, g_dir),
                   0);
  has("preflight: PREFER_RECOMPILATION\n");
  assert_int_equal(sh("EPCTX_VNPU_DRIVER_VERSION=1.2.0 EPCTX_VNPU_HARDWARE_ARCHITECTURE=vnpu-2.0 "
                      "%s %s/m/vnpu_inspect.onnx",
                      g_inspect, g_dir),
                   0);
  has("cause: INCOMPATIBLE_HARDWARE\n");
  /* epctx-run: the runtime refuses before the (bogus) payload reaches vnpu. */
  assert_int_not_equal(sh("EPCTX_VNPU_SDK_VERSION=2.0.0 %s %s/m/vnpu_node.onnx", g_run, g_dir), 0);
  has("Failed to load from EpContext model. INCOMPATIBLE_SDK");
  has("SDK 2.0.0");
}

static void errors_are_one_line_with_non_zero_exit(void** state) {
  (void)state;
  const char* cmds[] = {"%s %s/m/no_such_model.onnx", "EPCTX_VNPU_SDK_VERSION=two %s %s/m/x.onnx",
                        "%s %s/m/ctx_a.bin", "%s --bogus %s"};
  for (int i = 0; i < 4; ++i) {
    assert_int_not_equal(sh(cmds[i], g_inspect, g_dir), 0);
    assert_true(strncmp(g_out, "epctx-inspect: error: ", 22) == 0);
    assert_non_null(strchr(g_out, '\n'));
    assert_true(strchr(g_out, '\n')[1] == '\0'); /* exactly one line */
  }
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s EPCTX_INSPECT EPCTX_RUN MODELS_DIR\n", argv[0]);
    return 2;
  }
  g_inspect = argv[1];
  g_run = argv[2];
  g_dir = argv[3];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_lists_nodes_files_containers_and_cpu_nodes),
      cmocka_unit_test(json_is_parseable_and_complete),
      cmocka_unit_test(environment_impersonates_vnpu_versions),
      cmocka_unit_test(errors_are_one_line_with_non_zero_exit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
