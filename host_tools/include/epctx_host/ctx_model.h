/* SPDX-License-Identifier: Apache-2.0 */
// Stage 6 of epctx-compile: the _ctx.onnx model.
//
// BuildCtxModel copies the source model's header (ir_version, opsets plus
// com.microsoft 1, producer, metadata, doc strings, graph name, inputs and
// outputs in source order), keeps CPU nodes with the initializers they still
// reference, and replaces each partition by one EPContext node. All
// partitions share one context binary: the first EPContext node has
// main_context=1 and ep_cache_context, the others main_context=0 and bind to
// their graph by partition_name. SerializeCtxModel produces the file bytes;
// in embed mode it pads so the embedded container starts at a multiple of 64.
#ifndef EPCTX_HOST_CTX_MODEL_H
#define EPCTX_HOST_CTX_MODEL_H

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "epctx_host/backend.h"

namespace epctx {
namespace host {

// String attribute placed before ep_cache_context whose length aligns the
// embedded payload.
constexpr const char* kPadAttribute = "epctx_pad";
constexpr size_t kEmbedAlignment = 64;

struct CtxModelOptions {
  int embed_mode = 0;
  std::string bin_file_name;                        // embed_mode 0: ep_cache_context
  const std::vector<uint8_t>* container = nullptr;  // embed_mode 1: the bytes
  std::string onnx_model_filename;                  // source model file name
  const Backend* backend = nullptr;                 // source key, versions
  // The partition whose EPContext node gets main_context=1 (the first
  // top-level one; the first body one when the top level has none).
  std::string main_partition;
};

// The graph part of BuildCtxModel, for the main graph or a body: `sg` with
// each partition (pointing into sg) replaced by its EPContext node, nodes
// re-sorted, unreferenced initializers dropped, static types on the
// EPContext boundaries. Outer-scope names a body reads count as available.
void RewriteGraph(const onnx::GraphProto& sg, const GraphInfo& info,
                  const std::vector<Partition>& partitions, const CtxModelOptions& options,
                  onnx::GraphProto* out);

// `source` is the folded model, `info` describes it, `partitions` point into
// its graph.
onnx::ModelProto BuildCtxModel(const onnx::ModelProto& source, const GraphInfo& info,
                               const std::vector<Partition>& partitions,
                               const CtxModelOptions& options);

// Serialises; with embed_mode 1 adjusts the pad attribute until the
// container bytes start at a multiple of kEmbedAlignment. `payload_offset`
// (optional) receives that offset.
std::string SerializeCtxModel(onnx::ModelProto& model, const CtxModelOptions& options,
                              size_t* payload_offset = nullptr);

}  // namespace host
}  // namespace epctx

#endif
