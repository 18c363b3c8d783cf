/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the trust tests: building signed packages with the real CLIs
 * (epctx-compile, epctx-sign) and loading them through the C API. */
#ifndef EPCTX_TESTS_TRUST_UTIL_H
#define EPCTX_TESTS_TRUST_UTIL_H

#include <stddef.h>

#include <epctx/epctx.h>

typedef struct trust_paths {
  const char* compile; /* epctx-compile */
  const char* sign;    /* epctx-sign */
  const char* models;  /* generated test models (tests/models) */
  const char* ext;     /* the external-data package (gen_trust_models.py) */
  const char* work;    /* scratch folder */
} trust_paths;

/* Runs a CLI (NULL-terminated argv); fails the test unless it exits 0. */
void tr_run_ok(const char* const* argv, const char* scratch);
/* epctx-sign sign --key key --counter counter --model-id id --chunk-log2 12
 * model (sign_tool is epctx-sign); fails the test unless it exits 0. */
void tr_sign(const char* sign_tool, const char* model, const char* key, const char* counter,
             const char* id, const char* scratch);
/* Copies src to dst (whole file). */
void tr_copy(const char* src, const char* dst);
/* XORs byte `off` of `path` with `mask`. */
void tr_xor_byte(const char* path, size_t off, unsigned char mask);
/* The size of path (stat); fails the test when it does not exist. */
size_t tr_file_size(const char* path);
/* Appends `n` bytes of 0x5a, or (n < 0) truncates by -n bytes. */
void tr_resize(const char* path, long n);

/* Copies gen_trust_models.py's external-data package (ext_dir/model.onnx
 * and weights.bin) into the clean folder dir and writes its input,
 * dir/x.npy (float32 [4, 1024]). */
void tr_stage_ext(const char* ext_dir, const char* dir);

typedef struct tr_load_opts {
  const char* policy;      /* epctx.signature_policy, NULL: default */
  const char* load_mode;   /* epctx.load_mode, NULL: default */
  const char* key_path;    /* trusted public key PEM, NULL: none */
  const char* store;       /* rollback store folder, NULL: none */
  const char* expected_id; /* epctx_session_options_set_expected_model_id, NULL: none */
  const char* second_key;  /* another trusted public key PEM, NULL: none */
} tr_load_opts;

/* Creates a session for `model` and releases it; returns the status code
 * and copies its message into msg. */
int tr_load(const char* model, const tr_load_opts* o, char* msg, size_t cap);

#endif
