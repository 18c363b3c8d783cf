/* SPDX-License-Identifier: Apache-2.0 */
// Staging a driver step's tensors through the driver's device-visible
// buffers (hal.h: alloc_io), for an NPU that cannot reach ordinary memory.
#ifndef EPCTX_SESSION_DRIVER_IO_H
#define EPCTX_SESSION_DRIVER_IO_H

#include <epctx/hal.h>

#include "session/env.h"

namespace epctx {

// One per execute: every buffer it staged is freed when it goes, whatever
// path the step leaves by. Its entries live in memory the caller gives
// (the step's scratch; room for every tensor of the step), not in the
// execute frame (which must stay under 4 KiB).
class IoStaging {
 public:
  struct Entry {
    void* staged;
    void* orig;
    uint64_t bytes;
    bool output;
  };
  IoStaging(const DriverEntry& d, epctx_hal_graph* g, Entry* entries, uint32_t capacity)
      : d_(d), g_(g), e_(entries), cap_(entries ? capacity : 0) {}
  ~IoStaging();
  IoStaging(const IoStaging&) = delete;
  IoStaging& operator=(const IoStaging&) = delete;

  // Points each tensor the device cannot reach at a staged buffer (inputs:
  // copied in). Returns the index of the tensor alloc_io refused, or -1.
  int64_t Stage(epctx_hal_tensor* t, uint32_t n, bool input);
  // Copies the staged outputs back to where the run wants them.
  void CopyOut();

 private:
  const DriverEntry& d_;
  epctx_hal_graph* g_;
  Entry* e_;
  uint32_t cap_;
  uint32_t n_ = 0;
};

}  // namespace epctx

#endif
