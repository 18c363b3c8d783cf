/* SPDX-License-Identifier: Apache-2.0 */
/* Every session-config key epctx knows, with its values and default.
 *
 * Set with epctx_session_options_set() at inference and with
 * `-C key=value` (or ORT's `key|value`) on every epctx tool. Keys carry ONNX
 * Runtime's exact names where ORT has the key (onnxruntime's
 * onnxruntime_session_options_config_keys.h); epctx's own begin with
 * "epctx.". The runtime accepts every key below (generation-only keys are
 * accepted and ignored, so one options set can serve epctx-compile and the
 * device) and refuses any other with INVALID_ARGUMENT naming the key.
 * Values are checked when set. tests/runtime/test_config_keys.cc checks this
 * list against the runtime's.
 *
 * Scope: RUN = read when a session is created; GEN = read by epctx-compile
 * (host_tools/include/epctx_host/compile_api.h); BOTH = read by both. */
#ifndef EPCTX_SESSION_CONFIG_KEYS_H
#define EPCTX_SESSION_CONFIG_KEYS_H

/* ---- ONNX Runtime's keys ---- */

/* BOTH. RUN: the path of the EPContext model; relative context binaries
 * resolve against its folder (also for a model loaded from a path, as QNN
 * does), and "<value>.sig" is the manifest of a model loaded from a buffer.
 * Must name a file, never a folder. GEN: the output model.
 * Default: unset (RUN: the model's own folder; GEN: <model>_ctx.onnx). */
#define EPCTX_CONFIG_EP_CONTEXT_FILE_PATH "ep.context_file_path"

/* BOTH. The folder of external initializer data files. Default: the
 * model's folder (RUN: required for a buffer whose initializers have
 * external data). */
#define EPCTX_CONFIG_EXTERNAL_INITIALIZERS_FOLDER \
  "session.model_external_initializers_file_folder_path"

/* GEN. "1" (compiling always generates; "0" is refused by epctx-compile).
 * Default: 1. */
#define EPCTX_CONFIG_EP_CONTEXT_ENABLE "ep.context_enable"

/* GEN. "0": the context binary goes to [model]_[ep].bin beside the output;
 * "1": inside the model. Default: 0. */
#define EPCTX_CONFIG_EP_CONTEXT_EMBED_MODE "ep.context_embed_mode"

/* GEN. Prefix of every EPContext node name, partition_name and graph name
 * in the binary. Default: none. */
#define EPCTX_CONFIG_EP_CONTEXT_NODE_NAME_PREFIX "ep.context_node_name_prefix"

/* GEN. A file (beside the output) for every CPU-fallback initializer.
 * Default: initializers stay inside the model. */
#define EPCTX_CONFIG_EP_CONTEXT_EXTERNAL_INITIALIZERS_FILE \
  "ep.context_model_external_initializers_file_name"

/* BOTH, "0" | "1". RUN: sessions share loaded context binaries through a
 * group the env owns (epctx_context_group). GEN: models compiled in a row
 * share one context binary. Default: 0. */
#define EPCTX_CONFIG_SHARE_EP_CONTEXTS "ep.share_ep_contexts"

/* BOTH, "0" | "1". RUN: contexts loaded so far become invisible to later
 * sessions. GEN: the last model of a sharing group. Default: 0. */
#define EPCTX_CONFIG_STOP_SHARE_EP_CONTEXTS "ep.stop_share_ep_contexts"

/* RUN, "0" | "1". "1": a model compiled for an older minor version of the
 * device (PREFER_RECOMPILATION) fails to load instead of loading with a
 * warning. Default: 0. */
#define EPCTX_CONFIG_FAIL_ON_SUBOPTIMAL "session.fail_on_suboptimal_compiled_model"

/* ---- epctx's own keys ---- */

/* RUN, "mmap" | "read". mmap maps files in place (zero-copy, shared with
 * the page cache); read copies them into private memory, so bytes that were
 * verified cannot change afterwards (runtime/SECURITY.md). Default:
 * mmap. */
#define EPCTX_CONFIG_LOAD_MODE "epctx.load_mode"

/* RUN, "none" | "willneed". willneed asks the OS to read the weights and
 * payloads of the graphs a session binds in the background while it
 * loads. Default: none. */
#define EPCTX_CONFIG_ADVISE "epctx.advise"

/* RUN, "required" | "if_signed" | "off". required: load only packages whose
 * manifest verifies; if_signed: verify a manifest when there is one; off:
 * ignore manifests. Default: if_signed (a build with
 * EPCTX_REQUIRE_SIGNATURES allows only required). */
#define EPCTX_CONFIG_SIGNATURE_POLICY "epctx.signature_policy"

/* RUN. The path of the package's signed manifest. Default: "<model>.sig",
 * for a buffer "<ep.context_file_path>.sig". */
#define EPCTX_CONFIG_SIGNATURE_PATH "epctx.signature_path"

/* RUN. The path of the package's key-wrap file (runtime/schema/keys_format.h:
 * data keys of encrypted context binaries wrapped for device keys; outside
 * the signature). Read only when the package has an encrypted context
 * binary; a missing file is NO_SUCHFILE when this key names it, and no
 * error otherwise. Not empty. Default: "<model>.keys", for a buffer
 * "<ep.context_file_path>.keys" (none without it). */
#define EPCTX_CONFIG_KEYS_PATH "epctx.keys_path"

/* RUN. The model id a signed package must carry (epctx-sign --model-id);
 * the package must then be signed and verify. Not empty; refused with
 * epctx.signature_policy=off. Default: unset (any id). */
#define EPCTX_CONFIG_EXPECTED_MODEL_ID "epctx.expected_model_id"

/* RUN, a byte count with an optional K, M or G suffix (powers of 1024). Caps
 * what one session allocates for its metadata and run memory (the arena,
 * intermediates, outputs it allocates): a request past it is refused with
 * OUT_OF_MEMORY naming the limit, before anything is allocated.
 * epctx_session_options_set_max_memory_bytes sets it. Default: unset (no
 * limit beyond what the input justifies). */
#define EPCTX_CONFIG_MAX_MEMORY_BYTES "epctx.max_memory_bytes"

/* RUN, "0".."256": threads one Run of the session uses for its CPU kernels
 * (GEMM, convolution, pooling, large elementwise ops), the caller included:
 * 1 runs on the caller only; N starts N - 1 pool threads at create; 0 means
 * the cores the process may use (builds whose tests run under qemu-user
 * default to 1, EPCTX_DEFAULT_INTRA_OP_THREADS). Results are identical at
 * any count. ORT's key. Default: 0. */
#define EPCTX_CONFIG_INTRA_OP_NUM_THREADS "session.intra_op_num_threads"

/* RUN, "0" or "1": "1" leaves constant weights of CPU kernels (Conv, Gemm,
 * MatMul) unpacked: each Run packs them again, as before prepare existed.
 * The packed copies cost about the weights' size in session memory (the
 * session-created log line counts them); a memory-tight device that runs
 * little on the CPU keeps that memory this way. ORT's key. Default: "0". */
#define EPCTX_CONFIG_DISABLE_PREPACKING "session.disable_prepacking"

/* The whole list, for tools and tests: X(key, scope, default), scope and
 * default as strings ("" for a default that is "unset"). */
#define EPCTX_SESSION_CONFIG_KEYS(X)                               \
  X(EPCTX_CONFIG_EP_CONTEXT_FILE_PATH, "BOTH", "")                 \
  X(EPCTX_CONFIG_EXTERNAL_INITIALIZERS_FOLDER, "BOTH", "")         \
  X(EPCTX_CONFIG_EP_CONTEXT_ENABLE, "GEN", "1")                    \
  X(EPCTX_CONFIG_EP_CONTEXT_EMBED_MODE, "GEN", "0")                \
  X(EPCTX_CONFIG_EP_CONTEXT_NODE_NAME_PREFIX, "GEN", "")           \
  X(EPCTX_CONFIG_EP_CONTEXT_EXTERNAL_INITIALIZERS_FILE, "GEN", "") \
  X(EPCTX_CONFIG_SHARE_EP_CONTEXTS, "BOTH", "0")                   \
  X(EPCTX_CONFIG_STOP_SHARE_EP_CONTEXTS, "BOTH", "0")              \
  X(EPCTX_CONFIG_FAIL_ON_SUBOPTIMAL, "RUN", "0")                   \
  X(EPCTX_CONFIG_LOAD_MODE, "RUN", "mmap")                         \
  X(EPCTX_CONFIG_ADVISE, "RUN", "none")                            \
  X(EPCTX_CONFIG_SIGNATURE_POLICY, "RUN", "if_signed")             \
  X(EPCTX_CONFIG_SIGNATURE_PATH, "RUN", "")                        \
  X(EPCTX_CONFIG_KEYS_PATH, "RUN", "")                             \
  X(EPCTX_CONFIG_EXPECTED_MODEL_ID, "RUN", "")                     \
  X(EPCTX_CONFIG_MAX_MEMORY_BYTES, "RUN", "")                      \
  X(EPCTX_CONFIG_INTRA_OP_NUM_THREADS, "RUN", "0")                 \
  X(EPCTX_CONFIG_DISABLE_PREPACKING, "RUN", "0")

#endif
