/* SPDX-License-Identifier: Apache-2.0 */
// Which graphs of a context container one session binds, and so which
// payloads it never reads.
//
// A multi-graph container (N models compiled with shared weights, or one
// model split into several partitions) is loaded whole, but a session binds
// only the graphs its EPContext nodes name. The driver reads a payload when
// get_graph binds it (hal.h), and a signed package is hashed only where the
// session reads: the payloads returned here are the skip ranges of
// PackageVerifier::VerifyFileExcept. Everything else (header, metadata,
// weights, bound payloads, padding) is still verified.
#ifndef EPCTX_SESSION_BOUND_GRAPHS_H
#define EPCTX_SESSION_BOUND_GRAPHS_H

#include <cstdint>

#include "container/container.h"
#include "core/memory.h"
#include "core/status.h"
#include "core/types.h"

namespace epctx {

// The graph names a session asks of a context: the primary EPContext node's
// (partition_name, else its node name) and those of every main_context=0
// node of the model (any of which may bind to this context). Views into the
// model, valid while the session lives.
struct GraphNames {
  StrView primary;
  const StrView* others = nullptr;
  uint32_t num_others = 0;
};

// The payloads of c's graphs that the session does not bind and that share
// no byte with a bound payload or the weight segment (a hostile container
// may overlap segments; such bytes are read, so they are never skipped).
// The array comes from `arena` and lives as long as it; *num may be 0.
Status UnboundPayloads(const ContainerView& c, const GraphNames& names, Arena& arena,
                       const Bytes** out, uint32_t* num);

}  // namespace epctx

#endif
