/* SPDX-License-Identifier: Apache-2.0 */
// Staging a driver step's tensors through the driver's device-visible
// buffers (hal.h: alloc_io), for an NPU that cannot reach ordinary memory.
#ifndef EPCTX_SESSION_DRIVER_IO_H
#define EPCTX_SESSION_DRIVER_IO_H

#include <epctx/hal.h>

#include "session/env.h"

namespace epctx {

// One per execute, on the stack: every buffer it staged is freed when it
// goes, whatever path the step leaves by.
class IoStaging {
 public:
  IoStaging(const DriverEntry& d, epctx_hal_graph* g) : d_(d), g_(g) {}
  ~IoStaging();
  IoStaging(const IoStaging&) = delete;
  IoStaging& operator=(const IoStaging&) = delete;

  // Points each tensor the device cannot reach at a staged buffer (inputs:
  // copied in). Returns the index of the tensor alloc_io refused, or -1.
  int64_t Stage(epctx_hal_tensor* t, uint32_t n, bool input);
  // Copies the staged outputs back to where the run wants them.
  void CopyOut();

 private:
  struct Entry {
    void* staged;
    void* orig;
    uint64_t bytes;
    bool output;
  };
  static constexpr uint32_t kMax = 128;  // 64 inputs + 64 outputs (run.cc)
  const DriverEntry& d_;
  epctx_hal_graph* g_;
  Entry e_[kMax];
  uint32_t n_ = 0;
};

}  // namespace epctx

#endif
