/* SPDX-License-Identifier: Apache-2.0 */
// Versions and compatibility: may this device's driver run a context?
//
// What a context was compiled for comes from two places: the EPContext
// node's attributes (ep_sdk_version "X.Y.Z", hardware_architecture
// "<family>-<major>.<minor>") and, for an epctx container, its header
// (sdk_version, hardware_architecture, min_driver_version). The device side
// is what the driver reports through the HAL (epctx_hal_driver_info).
//
// Rules (decided from names and versions alone, before any payload byte
// reaches a driver):
//   SDK       major equal and device minor >= compiled minor
//   hardware  family and major equal and device minor >= compiled minor
//             (the Ethos-U rule: newer hardware runs older programs)
//   driver    device driver version >= the container's min_driver_version
//   agreement node attributes, when present, equal the container header
// A device newer in minor than the compile target is PREFER_RECOMPILATION:
// it still runs, but a recompile could use the newer features. Any broken
// rule is UNSUPPORTED with cause INCOMPATIBLE_SDK / _HARDWARE / _DRIVER and a
// reason naming both versions. Absent versions are not checked (ORT's QNN
// files carry none).
#ifndef EPCTX_SESSION_COMPAT_H
#define EPCTX_SESSION_COMPAT_H

#include <cstdint>

#include "container/container.h"
#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"
#include "onnx/epcontext.h"
#include "session/env.h"

namespace epctx {

struct Version3 {
  uint32_t major = 0, minor = 0, patch = 0;
};

// "X.Y.Z" or "X.Y" (patch 0), decimal, each part < 2^32. False otherwise.
bool ParseVersion(StrView s, Version3* out);
// "<family>-<major>.<minor>" (the last '-' splits); *family views into s.
bool ParseArchitecture(StrView s, StrView* family, Version3* out);

enum CompatVerdict {
  kCompatOptimal = 0,
  kCompatPreferRecompilation = 1,
  kCompatUnsupported = 2,
};

// What one context says it was compiled for. Views must outlive the call.
struct CompiledFor {
  StrView node_name;
  StrView node_sdk;                          // ep_sdk_version; empty when absent
  StrView node_hw;                           // hardware_architecture; empty when absent
  const ContainerView* container = nullptr;  // nullptr: header not read
};

struct CompatResult {
  CompatVerdict verdict = kCompatOptimal;
  // INCOMPATIBLE_* of the deciding rule (for PREFER_RECOMPILATION: the first
  // dimension in which the device is newer); EPCTX_OK when optimal.
  int cause = EPCTX_OK;
  char reason[Status::kMaxMessage] = {0};  // "" when optimal
};

// Applies the rules above for driver `drv`.
void CheckCompiledFor(const DriverEntry& drv, const CompiledFor& c, CompatResult* out);

// The result as a load outcome: Ok for OPTIMAL, and for
// PREFER_RECOMPILATION unless fail_on_suboptimal (then an error with the
// result's cause whose message says "suboptimal"); the cause and reason for
// UNSUPPORTED.
Status CompatStatus(const CompatResult& r, bool fail_on_suboptimal);
// The verdict the load acts on: PREFER_RECOMPILATION counts as UNSUPPORTED
// when fail_on_suboptimal.
CompatVerdict EffectiveVerdict(const CompatResult& r, bool fail_on_suboptimal);

// The driver's own veto: check_compatibility for ep, from names and
// versions only (copied into `arena` as NUL-terminated strings). Returns the
// driver's code; on failure its message is in msg.
int DriverVeto(const DriverEntry& drv, const onnx::EpContextNode& ep, Arena& arena, char* msg,
               size_t msg_cap);

// The driver for an EPContext node: the first registered driver whose
// source keys accept the node's `source` (case-insensitive), or, for a node
// without `source`, the only registered driver if it opted in to unnamed
// nodes. NOT_IMPLEMENTED naming the node and source, or INVALID_GRAPH for a
// node without source; `label` prefixes the message.
Status ChooseDriver(const Env& env, const onnx::EpContextNode& ep, const char* label,
                    const DriverEntry** out);

}  // namespace epctx

#endif
