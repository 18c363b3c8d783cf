/* SPDX-License-Identifier: Apache-2.0 */
// Pre-flight: could this model run with the registered drivers? Answered
// from the model alone, without reading any context binary: external
// (embed_mode=0) files are never opened, and an embedded payload is only
// read as far as its epctx container header (which lies inside the model).
// The counterpart of ORT's GetModelCompatibilityForEpDevices.
//
// Per EPContext node: the driver its `source` routes to (or none), the
// version verdict of compat.h, and the driver's own check_compatibility
// veto. Model level: every other node needs a CPU kernel (otherwise the
// model requires compilation). Overall = the worst node verdict.
//
// Ownership: every string in the report lives in the Arena given to
// Preflight; nothing points into the model bytes.
#ifndef EPCTX_SESSION_PREFLIGHT_H
#define EPCTX_SESSION_PREFLIGHT_H

#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"
#include "session/compat.h"
#include "session/env.h"
#include "session/options.h"

namespace epctx {

struct PreflightNode {
  const char* name = "";
  const char* source = "";       // "" when absent
  const char* driver = nullptr;  // registered driver's name; nullptr: none
  int64_t main_context = 1;
  int64_t embed_mode = 1;
  CompatVerdict verdict = kCompatOptimal;
  int cause = EPCTX_OK;  // the code session creation would report as cause
  const char* reason = "";
  bool container_checked = false;  // an embedded container header was read
};

struct PreflightReport {
  CompatVerdict overall = kCompatOptimal;
  int cause = EPCTX_OK;     // of the first node or model-level problem deciding `overall`
  const char* reason = "";  // model-level reason (a node without a CPU kernel), or ""
  PreflightNode* nodes = nullptr;
  uint32_t num_nodes = 0;
};

// Fails only when the model cannot be parsed at all; everything else is an
// answer in *out. base_dir: folder for embed_mode=0 files (nullptr: unknown,
// as for a buffer without ep.context_file_path).
Status Preflight(const Env& env, Bytes model, const char* label, const char* base_dir,
                 const Options& options, Arena& arena, PreflightReport* out);

}  // namespace epctx

#endif
