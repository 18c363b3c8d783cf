/* SPDX-License-Identifier: Apache-2.0 */
/* Where context bytes come from: embedded payloads used in place, external
 * files beneath the model's folder (or ep.context_file_path's), and every
 * containment rejection with PATH_REJECTED naming the path.
 * Items (ort_epcontext.md): §5 16, 17, 18, 23, 24, 25, 26, 27, 28, 29, 35;
 * §9.3, 9.5; §9.16 symlink escape, a..b.bin accepted, truncated blob. */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include "loading_util.h"

static const char kBlob0[] = "TQNN\nctx0 1 1 1 4\n";

static void embedded_payload_is_used_in_place(void** state) {
  (void)state;
  size_t size;
  uint8_t* buf = read_all(model_path("two_primaries_embed.onnx"), &size);
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s = NULL;
  ok(epctx_session_create_from_buffer(env, buf, size, NULL, &s));
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->loads, 2);
  for (int k = 0; k < 2; ++k) {
    /* The very bytes of the caller's buffer: no copy was made. */
    assert_true(r->blob_data[k] >= buf && r->blob_data[k] + r->blob_size[k] <= buf + size);
    assert_memory_equal(r->blob_data[k], k ? "TQNN\nctx_b" : "TQNN\nctx_a", 10);
  }
  epctx_session_release(s);
  epctx_env_release(env);
  free(buf);
}

static void external_files_load_from_subfolders_and_odd_names(void** state) {
  (void)state;
  const char* models[] = {"ext_subfolder.onnx", "ext_dotdot_in_name.onnx",
                          "ext_symlink_inside.onnx"};
  const char* want[] = {kBlob0, kBlob0, "TQNN\nctx_a 1 1 1 4\n"};
  for (int i = 0; i < 3; ++i) {
    tqnn_reset();
    epctx_env* env = env_with(1, 0);
    epctx_session* s;
    ok(load(env, models[i], NULL, &s));
    tqnn_record* r = tqnn_record_get();
    assert_int_equal(r->loads, 1);
    assert_int_equal(r->blob_size[0], strlen(want[i]));
    assert_memory_equal(r->blob_copy[0], want[i], strlen(want[i]));
    epctx_session_release(s);
    epctx_env_release(env);
  }
}

static void containment_rejects_with_path_rejected(void** state) {
  (void)state;
  static const struct {
    const char* model;
    const char* needle;
  } cases[] = {
      {"ext_absolute.onnx", "/m/ctx_a.bin"}, /* item 26 */
      {"ext_parent.onnx", "../outside.bin"}, /* item 25 (from a file) */
      {"ext_parent_inner.onnx", "sub/../../outside.bin"},
      {"ext_empty.onnx", "empty file name"}, /* item 28 */
      {"ext_nul.onnx", "'ctx_a.bin' contains a NUL"},
      {"ext_symlink_escape.onnx", "link_out.bin"}, /* 9.16 */
      {"ext_fifo.onnx", "fifo.bin"},
      {"ext_directory.onnx", "adir"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    tqnn_reset();
    epctx_env* env = env_with(1, 0);
    epctx_session* s;
    expect(load(env, cases[i].model, NULL, &s), EPCTX_PATH_REJECTED, EPCTX_PATH_REJECTED,
           LOAD_FAILED, cases[i].needle, NULL);
    assert_null(s);
    assert_int_equal(tqnn_record_get()->loads, 0);
    epctx_env_release(env);
  }
}

static void missing_file_is_invalid_graph_caused_by_no_such_file(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  /* item 27: relative file that does not exist, with ep.context_file_path */
  char ctx[4096];
  snprintf(ctx, sizeof ctx, "%s", model_path("ext_missing.onnx"));
  epctx_session_options* o = opts("ep.context_file_path", ctx, NULL);
  expect(load(env, "ext_missing.onnx", o, &s), EPCTX_INVALID_GRAPH, EPCTX_NO_SUCHFILE, LOAD_FAILED,
         "missing.bin", NULL);
  /* item 24: the same from a buffer (the .bin "deleted") */
  size_t size;
  void* buf = read_all(model_path("ext_missing.onnx"), &size);
  expect(epctx_session_create_from_buffer(env, buf, size, o, &s), EPCTX_INVALID_GRAPH,
         EPCTX_NO_SUCHFILE, LOAD_FAILED, "missing.bin", NULL);
  free(buf);
  epctx_session_options_release(o);
  epctx_env_release(env);
}

static void buffer_without_context_file_path_names_the_key(void** state) {
  (void)state;
  size_t size;
  void* buf = read_all(model_path("two_inputs.onnx"), &size);
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  /* items 25 and 35: no key, and an empty key */
  expect(epctx_session_create_from_buffer(env, buf, size, NULL, &s), EPCTX_INVALID_GRAPH,
         EPCTX_INVALID_ARGUMENT, LOAD_FAILED, "Please specify a valid ep.context_file_path",
         "add2.bin", NULL);
  epctx_session_options* o = opts("ep.context_file_path", "", NULL);
  expect(epctx_session_create_from_buffer(env, buf, size, o, &s), EPCTX_INVALID_GRAPH,
         EPCTX_INVALID_ARGUMENT, "Please specify a valid ep.context_file_path", NULL);
  epctx_session_options_release(o);
  assert_int_equal(tqnn_record_get()->loads, 0);
  epctx_env_release(env);
  free(buf);
}

/* two_inputs.onnx's context binary, add2.bin, and a run of it: y = x1 + x2. */
static const char kAdd2[] = "TQNN\nadd2 2 1 1 4\n";

static void run_two_inputs(epctx_env* env, epctx_session* s) {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  int64_t dims[2] = {1, 4};
  epctx_tensor *ta, *tb, *out = NULL;
  ok(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, a, sizeof a, &ta));
  ok(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, b, sizeof b, &tb));
  const char* names[2] = {"x1", "x2"};
  const epctx_tensor* ins[2] = {ta, tb};
  ok(epctx_session_run(s, names, ins, 2, NULL, &out, 1));
  const float* y = epctx_tensor_data(out);
  assert_true(y[0] == 11 && y[3] == 44);
  epctx_tensor_release(ta);
  epctx_tensor_release(tb);
  epctx_tensor_release(out);
}

static void buffer_with_context_file_path_loads_and_runs_two_inputs(void** state) {
  (void)state;
  size_t size;
  void* buf = read_all(model_path("two_inputs.onnx"), &size);
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  char ctx[4096];
  snprintf(ctx, sizeof ctx, "%s", model_path("two_inputs.onnx"));
  epctx_session_options* o = opts("ep.context_file_path", ctx, NULL);
  epctx_session* s;
  ok(epctx_session_create_from_buffer(env, buf, size, o, &s)); /* items 23, 29 */
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->blob_size[0], strlen(kAdd2));
  assert_memory_equal(r->blob_copy[0], kAdd2, r->blob_size[0]);
  run_two_inputs(env, s);
  epctx_session_release(s);
  epctx_session_options_release(o);
  epctx_env_release(env);
  free(buf);
}

/* Android APK assets and downloaded packages: the context binary from the
 * app's memory, zero-copy, with no ep.context_file_path. */
static void external_buffer_stands_in_for_the_file_zero_copy(void** state) {
  (void)state;
  size_t size;
  void* buf = read_all(model_path("two_inputs.onnx"), &size);
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session_options* o = NULL;
  ok(epctx_session_options_create(&o));
  static char blob[sizeof kAdd2];
  memcpy(blob, kAdd2, sizeof kAdd2);
  ok(epctx_session_options_add_external_buffer(o, "add2.bin", blob, strlen(kAdd2)));
  epctx_session* s = NULL;
  ok(epctx_session_create_from_buffer(env, buf, size, o, &s));
  epctx_session_options_release(o); /* the session keeps nothing of the options */
  tqnn_record* r = tqnn_record_get();
  assert_int_equal(r->loads, 1);
  assert_ptr_equal(r->blob_data[0], (const uint8_t*)blob); /* handed over in place */
  assert_int_equal(r->blob_size[0], strlen(kAdd2));
  run_two_inputs(env, s);
  epctx_session_release(s);
  epctx_env_release(env);
  free(buf);
}

static void external_fd_range_is_mapped_or_read(void** state) {
  (void)state;
  char path[4200];
  snprintf(path, sizeof path, "%s/asset_pack.bin", g_dir);
  /* The binary sits at an offset inside a bigger file, off any page
   * boundary, as an asset does inside an APK. */
  const long offset = 4099;
  FILE* f = fopen(path, "wb");
  assert_non_null(f);
  for (long i = 0; i < offset; ++i) fputc('x', f);
  fputs(kAdd2, f);
  fputs("trailing bytes", f);
  fclose(f);
  size_t size;
  void* buf = read_all(model_path("two_inputs.onnx"), &size);
  const char* modes[2] = {"mmap", "read"};
  for (int m = 0; m < 2; ++m) {
    tqnn_reset();
    epctx_env* env = env_with(1, 0);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    epctx_session_options* o = opts("epctx.load_mode", modes[m], NULL);
    ok(epctx_session_options_add_external_fd(o, "add2.bin", fd, (uint64_t)offset, strlen(kAdd2)));
    epctx_session* s = NULL;
    ok(epctx_session_create_from_buffer(env, buf, size, o, &s));
    close(fd); /* the app may close it once the session exists */
    epctx_session_options_release(o);
    tqnn_record* r = tqnn_record_get();
    assert_int_equal(r->blob_size[0], strlen(kAdd2));
    assert_memory_equal(r->blob_copy[0], kAdd2, strlen(kAdd2));
    run_two_inputs(env, s);
    epctx_session_release(s);
    epctx_env_release(env);
  }
  /* A range past the end of the file: the node, the name and the range. */
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  int fd = open(path, O_RDONLY);
  epctx_session_options* o = NULL;
  ok(epctx_session_options_create(&o));
  ok(epctx_session_options_add_external_fd(o, "add2.bin", fd, 5000, 100000));
  epctx_session* s = NULL;
  expect(epctx_session_create_from_buffer(env, buf, size, o, &s), EPCTX_INVALID_GRAPH,
         EPCTX_INVALID_ARGUMENT, LOAD_FAILED, "external file 'add2.bin'",
         "range [5000, +100000) is not inside the file", NULL);
  assert_null(s);
  assert_int_equal(tqnn_record_get()->loads, 0);
  close(fd);
  epctx_session_options_release(o);
  epctx_env_release(env);
  free(buf);
  unlink(path);
}

static void external_files_are_matched_by_exact_name_and_checked(void** state) {
  (void)state;
  epctx_session_options* o = NULL;
  ok(epctx_session_options_create(&o));
  char b = 0;
  expect(epctx_session_options_add_external_buffer(o, "", &b, 1), EPCTX_INVALID_ARGUMENT,
         EPCTX_INVALID_ARGUMENT, "name of 0 bytes", NULL);
  expect(epctx_session_options_add_external_buffer(o, "/abs/add2.bin", &b, 1),
         EPCTX_INVALID_ARGUMENT, EPCTX_INVALID_ARGUMENT, "'/abs/add2.bin': absolute name", NULL);
  expect(epctx_session_options_add_external_buffer(o, "x.bin", NULL, 4), EPCTX_INVALID_ARGUMENT,
         EPCTX_INVALID_ARGUMENT, "'x.bin': data is NULL with size 4", NULL);
  expect(epctx_session_options_add_external_fd(o, "x.bin", -1, 0, 1), EPCTX_INVALID_ARGUMENT,
         EPCTX_INVALID_ARGUMENT, "descriptor -1 is not valid", NULL);
  char name[24];
  for (int i = 0; i < 8; ++i) {
    snprintf(name, sizeof name, "f%d.bin", i);
    ok(epctx_session_options_add_external_buffer(o, name, &b, 1));
  }
  expect(epctx_session_options_add_external_buffer(o, "f0.bin", &b, 1), EPCTX_INVALID_ARGUMENT,
         EPCTX_INVALID_ARGUMENT, "'f0.bin': given twice", NULL);
  expect(epctx_session_options_add_external_buffer(o, "f8.bin", &b, 1), EPCTX_INVALID_ARGUMENT,
         EPCTX_INVALID_ARGUMENT, "8 external files are set already", NULL);
  /* None of them is add2.bin: the model's file is looked up as usual, and a
   * buffer model without ep.context_file_path says so. */
  size_t size;
  void* buf = read_all(model_path("two_inputs.onnx"), &size);
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s = NULL;
  expect(epctx_session_create_from_buffer(env, buf, size, o, &s), EPCTX_INVALID_GRAPH,
         EPCTX_INVALID_ARGUMENT, "Please specify a valid ep.context_file_path", "add2.bin", NULL);
  epctx_session_options_release(o);
  epctx_env_release(env);
  free(buf);
}

static void context_file_path_must_not_name_a_folder(void** state) {
  (void)state;
  /* items 16, 17 */
  const char* bad[] = {"./dir/", "./dir/invalid_file", "dir/.."};
  for (int i = 0; i < 3; ++i) {
    epctx_session_options* o = NULL;
    ok(epctx_session_options_create(&o));
    expect(epctx_session_options_set(o, "ep.context_file_path", bad[i]), EPCTX_INVALID_ARGUMENT,
           EPCTX_INVALID_ARGUMENT, "context_file_path should not point to a folder", bad[i], NULL);
    epctx_session_options_release(o);
  }
}

static int count_entries(const char* dir) {
  DIR* d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  while (readdir(d)) ++n;
  closedir(d);
  return n;
}

static void loading_never_writes_files(void** state) {
  (void)state;
  /* item 18's "no overwrite" and item 11: the runtime never generates; with
   * the generation keys set, loading leaves the folder untouched. */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/m", g_dir);
  struct stat before, after;
  assert_int_equal(stat(model_path("ctx_a.bin"), &before), 0);
  int n = count_entries(dir);
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session_options* o = opts("ep.context_enable", "1", "ep.context_embed_mode", "0", NULL);
  epctx_session* s;
  ok(load(env, "two_primaries_external.onnx", o, &s));
  epctx_session_release(s);
  assert_int_equal(count_entries(dir), n);
  assert_int_equal(stat(model_path("ctx_a.bin"), &after), 0);
  assert_true(before.st_mtime == after.st_mtime && before.st_size == after.st_size);
  epctx_session_options_release(o);
  epctx_env_release(env);
}

static void truncated_container_is_invalid_graph(void** state) {
  (void)state;
  tqnn_reset();
  epctx_env* env = env_with(1, 0);
  epctx_session* s;
  expect(load(env, "cx_truncated.onnx", NULL, &s), EPCTX_INVALID_GRAPH, EPCTX_INVALID_CONTAINER,
         LOAD_FAILED, "truncated", NULL);
  assert_int_equal(tqnn_record_get()->loads, 0);
  epctx_env_release(env);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(embedded_payload_is_used_in_place),
    cmocka_unit_test(external_files_load_from_subfolders_and_odd_names),
    cmocka_unit_test(containment_rejects_with_path_rejected),
    cmocka_unit_test(missing_file_is_invalid_graph_caused_by_no_such_file),
    cmocka_unit_test(buffer_without_context_file_path_names_the_key),
    cmocka_unit_test(buffer_with_context_file_path_loads_and_runs_two_inputs),
    cmocka_unit_test(external_buffer_stands_in_for_the_file_zero_copy),
    cmocka_unit_test(external_fd_range_is_mapped_or_read),
    cmocka_unit_test(external_files_are_matched_by_exact_name_and_checked),
    cmocka_unit_test(context_file_path_must_not_name_a_folder),
    cmocka_unit_test(loading_never_writes_files),
    cmocka_unit_test(truncated_container_is_invalid_graph),
};

LOADING_MAIN(tests)
