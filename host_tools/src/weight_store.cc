// SPDX-License-Identifier: Apache-2.0
// WeightStore::Add: appends weights to the context binary's weight segment,
// each at a multiple of the store's alignment, and stores identical bytes
// once. Identity is decided by an FNV-1a 64 content hash and confirmed with
// memcmp, so a hash collision can never merge different weights.
#include <cstring>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

namespace {
uint64_t Fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}
}  // namespace

uint64_t WeightStore::Add(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  added_ += size;
  const uint64_t h = Fnv1a64(p, size);
  auto range = by_hash_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    const uint64_t off = it->second.first, sz = it->second.second;
    if (sz == size && (size == 0 || std::memcmp(bytes_.data() + off, p, size) == 0)) return off;
  }
  const uint64_t off = (bytes_.size() + alignment_ - 1) / alignment_ * alignment_;
  bytes_.resize(off + size);
  unique_ += size;
  if (size) std::memcpy(bytes_.data() + off, p, size);
  by_hash_.emplace(h, std::make_pair(off, uint64_t(size)));
  return off;
}

}  // namespace host
}  // namespace epctx
