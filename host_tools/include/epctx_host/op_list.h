/* SPDX-License-Identifier: Apache-2.0 */
// The CPU ops models need: what `epctx-compile --emit-op-list FILE` writes
// and a selective runtime build reads (CMake EPCTX_CPU_OPS, see
// runtime/cpu_ops.cmake). One op a line, sorted: "Op" for the default ONNX
// domain, "domain:Op" for another.
#ifndef EPCTX_HOST_OP_LIST_H
#define EPCTX_HOST_OP_LIST_H

#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "epctx_host/compile_api.h"

namespace epctx {
namespace host {

// Adds the op of every node of `model` that is not an EPContext node,
// subgraphs included, to `ops`. Throws ToolError naming `name`, the node and
// the op when epctx has no CPU kernel for it (runtime/src/kernels/ops.inc).
void CollectCpuOps(const onnx::ModelProto& model, const std::string& name,
                   std::set<std::string>* ops);

// The CPU ops of each model as the runtime will load it: compiled alone with
// `settings` (its backend, options and input shapes; nothing is written), or
// as it is when it already holds EPContext nodes. Throws ToolError.
std::set<std::string> CpuOpsOfModels(const std::vector<std::string>& paths,
                                     const CompileSettings& settings);

// The list file: one op a line.
std::string FormatOpList(const std::set<std::string>& ops);

}  // namespace host
}  // namespace epctx

#endif
