// SPDX-License-Identifier: Apache-2.0
#include "session/run_control.h"

namespace epctx {

Status RunControl::Stop(bool terminated, const char* label, uint32_t step) const {
  if (terminated)
    return Status::Error(EPCTX_RUN_TERMINATED, "%s: run terminated by the caller before step %u",
                         label, step);
  return Status::Error(EPCTX_RUN_DEADLINE_EXCEEDED,
                       "%s: run exceeded its deadline of %llu us before step %u", label,
                       (unsigned long long)(timeout_ns / 1000), step);
}

}  // namespace epctx
