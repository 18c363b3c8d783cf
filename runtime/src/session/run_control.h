/* SPDX-License-Identifier: Apache-2.0 */
// What may stop a run early: the caller's terminate flag (set from any
// thread) and a deadline. A run checks both before every step of every
// graph it runs, subgraphs included, so a run stops within one step (one
// kernel or one driver execute) of the request; a step is never cut short,
// which keeps driver state and the run memory consistent.
#ifndef EPCTX_SESSION_RUN_CONTROL_H
#define EPCTX_SESSION_RUN_CONTROL_H

#include <atomic>
#include <cstdint>

#include <epctx/pal.h>

#include "core/status.h"

namespace epctx {

// The state behind an epctx_run_options handle. terminate is read with
// relaxed loads: it orders nothing, it only asks the run to stop.
struct RunOptions {
  std::atomic<uint32_t> terminate{0};
  uint64_t timeout_ns = 0;  // 0: no deadline
};

struct RunControl {
  const std::atomic<uint32_t>* terminate = nullptr;
  uint64_t deadline_ns = 0;  // absolute, epctx_pal_now_ns(); 0: none
  uint64_t timeout_ns = 0;   // for the message

  // From the options at the start of a run (nullptr: nothing to check).
  static RunControl From(const RunOptions* o) {
    RunControl c;
    if (!o) return c;
    c.terminate = &o->terminate;
    c.timeout_ns = o->timeout_ns;
    if (o->timeout_ns) c.deadline_ns = epctx_pal_now_ns() + o->timeout_ns;
    return c;
  }
  bool active() const { return terminate || deadline_ns; }

  // Ok, or the status that stops the run before step `step` of `label`.
  // The test is inline (it runs before every step); the message is not.
  Status Check(const char* label, uint32_t step) const {
    const bool terminated = terminate && terminate->load(std::memory_order_relaxed);
    if (terminated || (deadline_ns && epctx_pal_now_ns() >= deadline_ns))
      return Stop(terminated, label, step);
    return Status::Ok();
  }
  Status Stop(bool terminated, const char* label, uint32_t step) const;  // run_control.cc
};

}  // namespace epctx

#endif
