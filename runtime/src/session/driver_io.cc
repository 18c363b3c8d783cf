// SPDX-License-Identifier: Apache-2.0
#include "session/driver_io.h"

#include <cstring>

namespace epctx {

IoStaging::~IoStaging() {
  for (uint32_t i = 0; i < n_; ++i) d_.fns.free_io(d_.driver, g_, e_[i].staged);
}

int64_t IoStaging::Stage(epctx_hal_tensor* t, uint32_t n, bool input) {
  const epctx_hal_driver& f = d_.fns;
  if (!f.alloc_io) return -1;
  for (uint32_t i = 0; i < n; ++i) {
    if (!t[i].data || !t[i].bytes) continue;
    if (f.is_device_visible && f.is_device_visible(d_.driver, g_, t[i].data, t[i].bytes)) continue;
    if (n_ == cap_ || t[i].bytes > SIZE_MAX) return i;
    void* p = f.alloc_io(d_.driver, g_, t[i].bytes, 64);
    if (!p) return i;
    e_[n_++] = Entry{p, t[i].data, t[i].bytes, !input};
    if (input) memcpy(p, t[i].data, static_cast<size_t>(t[i].bytes));
    t[i].data = p;
  }
  return -1;
}

void IoStaging::CopyOut() {
  for (uint32_t i = 0; i < n_; ++i)
    if (e_[i].output) memcpy(e_[i].orig, e_[i].staged, static_cast<size_t>(e_[i].bytes));
}

}  // namespace epctx
