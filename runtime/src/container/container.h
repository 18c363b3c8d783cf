/* SPDX-License-Identifier: Apache-2.0 */
// Reading an epctx context-binary container (runtime/schema/container.fbs,
// container_header.h) from untrusted bytes.
//
// ParseContainer checks the fixed header (magic, a supported format major,
// sizes), runs the flatbuffers Verifier over the metadata, and checks every
// segment against the container size and the declared alignment before
// anything uses it. The resulting view points into `blob`, which must
// outlive it; graph and weight arrays live in the given Arena.
#ifndef EPCTX_CONTAINER_CONTAINER_H
#define EPCTX_CONTAINER_CONTAINER_H

#include <cstdint>

#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"

namespace epctx {

// Container formats this runtime reads, by major: a minor version only adds
// optional fields, so a reader of M.x reads every M.y (fields it does not
// know are skipped by flatbuffers). A new major goes here once read.
constexpr uint16_t kSupportedContainerMajors[] = {1};

struct ContainerVersion {
  uint32_t major = 0, minor = 0, patch = 0;
};

struct ContainerGraph {
  const char* name = nullptr;  // NUL-terminated, inside the blob
  size_t name_size = 0;        // up to the first NUL
  Bytes payload;
};

struct ContainerView {
  uint16_t format_major = 0, format_minor = 0;
  uint32_t segment_alignment = 0;
  const char* source = "";
  const char* producer = "";
  ContainerVersion producer_version;
  ContainerVersion sdk_version;
  const char* hardware_architecture = "";
  ContainerVersion min_driver_version;
  Bytes weights;
  const ContainerGraph* graphs = nullptr;
  uint32_t num_graphs = 0;
  // Indices of graphs sorted by name (names are unique), for Find.
  const uint32_t* by_name = nullptr;

  // The index of the graph with that name, or -1. O(log n).
  int64_t Find(StrView name) const;
};

// True when `blob` starts with the container magic.
bool LooksLikeContainer(Bytes blob);

// INVALID_CONTAINER naming `label` and the field on any inconsistency;
// NOT_IMPLEMENTED for a format major this runtime does not read (naming the
// found and supported versions).
Status ParseContainer(Bytes blob, const char* label, Arena& arena, ContainerView* out);

}  // namespace epctx

#endif
