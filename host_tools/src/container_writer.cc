// SPDX-License-Identifier: Apache-2.0
// Packs compiled graphs and weights into the context-binary container.
#include "epctx_host/container_writer.h"

#include <cstring>
#include <stdexcept>

#include "container_generated.h"
#include "container_header.h"

namespace epctx {
namespace host {
namespace {

constexpr const char* kProducer = "epctx-compile";
constexpr uint32_t kProducerVersion[3] = {0, 1, 0};

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

fb::Version ToFb(const Version& v) { return fb::Version(v.major, v.minor, v.patch); }

struct Layout {
  fb::Segment weights{0, 0};
  std::vector<fb::Segment> payloads;
};

flatbuffers::DetachedBuffer BuildMetadata(const Backend& backend,
                                          const std::vector<CompiledGraph>& graphs,
                                          const Layout& layout) {
  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::Graph>> fb_graphs;
  for (size_t i = 0; i < graphs.size(); ++i) {
    auto name = b.CreateString(graphs[i].name);
    fb::GraphBuilder gb(b);
    gb.add_name(name);
    gb.add_payload(&layout.payloads[i]);
    fb_graphs.push_back(gb.Finish());
  }
  auto graphs_vec = b.CreateVector(fb_graphs);
  auto source = b.CreateString(backend.source_key());
  auto producer = b.CreateString(kProducer);
  auto hw = b.CreateString(backend.hardware_architecture());
  fb::Version producer_version(kProducerVersion[0], kProducerVersion[1], kProducerVersion[2]);
  fb::Version sdk = ToFb(backend.sdk_version());
  fb::Version driver = ToFb(backend.min_driver_version());
  fb::ContainerBuilder cb(b);
  cb.add_source(source);
  cb.add_producer(producer);
  cb.add_producer_version(&producer_version);
  cb.add_sdk_version(&sdk);
  cb.add_hardware_architecture(hw);
  cb.add_min_driver_version(&driver);
  cb.add_weights(&layout.weights);
  cb.add_graphs(graphs_vec);
  fb::FinishContainerBuffer(b, cb.Finish());
  return b.Release();
}

template <typename T>
void PutLE(std::vector<uint8_t>& out, size_t off, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

std::vector<uint8_t> PackContainer(const Backend& backend, const WeightStore& weights,
                                   const std::vector<CompiledGraph>& graphs,
                                   ContainerStats* stats) {
  const uint64_t align = EPCTX_CONTAINER_DEFAULT_ALIGNMENT;
  const uint64_t meta_off = EPCTX_CONTAINER_HEADER_SIZE;
  // Segment offsets are fixed-size structs, so the metadata size does not
  // depend on their values: size it with zeros, then lay out and rebuild.
  Layout layout;
  layout.payloads.assign(graphs.size(), fb::Segment(0, 0));
  const size_t meta_size = BuildMetadata(backend, graphs, layout).size();

  uint64_t end = AlignUp(meta_off + meta_size, align);
  layout.weights = fb::Segment(end, weights.bytes().size());
  end += weights.bytes().size();
  uint64_t payload_bytes = 0;
  for (size_t i = 0; i < graphs.size(); ++i) {
    uint64_t off = AlignUp(end, align);
    layout.payloads[i] = fb::Segment(off, graphs[i].payload.size());
    end = off + graphs[i].payload.size();
    payload_bytes += graphs[i].payload.size();
  }
  flatbuffers::DetachedBuffer meta = BuildMetadata(backend, graphs, layout);
  if (meta.size() != meta_size) throw std::logic_error("container metadata size changed");

  std::vector<uint8_t> out(end, 0);
  std::memcpy(out.data(), EPCTX_CONTAINER_MAGIC, EPCTX_CONTAINER_MAGIC_SIZE);
  PutLE<uint16_t>(out, EPCTX_CONTAINER_OFF_FORMAT_MAJOR, EPCTX_CONTAINER_FORMAT_MAJOR);
  PutLE<uint16_t>(out, EPCTX_CONTAINER_OFF_FORMAT_MINOR, EPCTX_CONTAINER_FORMAT_MINOR);
  PutLE<uint32_t>(out, EPCTX_CONTAINER_OFF_HEADER_SIZE, EPCTX_CONTAINER_HEADER_SIZE);
  PutLE<uint64_t>(out, EPCTX_CONTAINER_OFF_TOTAL_SIZE, end);
  PutLE<uint64_t>(out, EPCTX_CONTAINER_OFF_METADATA_OFFSET, meta_off);
  PutLE<uint64_t>(out, EPCTX_CONTAINER_OFF_METADATA_SIZE, meta.size());
  PutLE<uint32_t>(out, EPCTX_CONTAINER_OFF_SEGMENT_ALIGNMENT, static_cast<uint32_t>(align));
  PutLE<uint32_t>(out, EPCTX_CONTAINER_OFF_FLAGS, 0);
  std::memcpy(out.data() + meta_off, meta.data(), meta.size());
  if (!weights.bytes().empty())
    std::memcpy(out.data() + layout.weights.offset(), weights.bytes().data(),
                weights.bytes().size());
  for (size_t i = 0; i < graphs.size(); ++i)
    if (!graphs[i].payload.empty())
      std::memcpy(out.data() + layout.payloads[i].offset(), graphs[i].payload.data(),
                  graphs[i].payload.size());
  if (stats) {
    stats->payload_bytes = payload_bytes;
    stats->weight_bytes = weights.bytes().size();
  }
  return out;
}

}  // namespace host
}  // namespace epctx
