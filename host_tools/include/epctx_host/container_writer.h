/* SPDX-License-Identifier: Apache-2.0 */
// Stage 5 of epctx-compile: the context-binary container
// (runtime/schema/container_header.h + container.fbs).
//
// Layout written: the 64-byte header, the flatbuffer metadata at offset 64,
// then the weight segment and one payload segment per graph, each at a
// multiple of the segment alignment (4096). The result is a self-contained
// byte vector the caller owns.
#ifndef EPCTX_HOST_CONTAINER_WRITER_H
#define EPCTX_HOST_CONTAINER_WRITER_H

#include <cstdint>
#include <vector>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

struct ContainerStats {
  uint64_t payload_bytes = 0;
  uint64_t weight_bytes = 0;
};

std::vector<uint8_t> PackContainer(const Backend& backend, const WeightStore& weights,
                                   const std::vector<CompiledGraph>& graphs,
                                   ContainerStats* stats = nullptr);

}  // namespace host
}  // namespace epctx

#endif
