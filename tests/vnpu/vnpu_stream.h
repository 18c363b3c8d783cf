/* SPDX-License-Identifier: Apache-2.0 */
// Test helpers: build vnpu command streams and pack weights the way the
// README specifies, then load them through the driver's function table.
// Test code only (exceptions and std containers are fine here).
#ifndef EPCTX_TESTS_VNPU_STREAM_H
#define EPCTX_TESTS_VNPU_STREAM_H

#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include <epctx/epctx.h>
#include <epctx/vnpu.h>

#include "vnpu_generated.h"

namespace vt {

namespace fb = epctx::vnpu::fb;

struct Stream {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  std::vector<flatbuffers::Offset<fb::Op>> ops;

  uint32_t Tensor(const char* name, std::vector<int64_t> shape, fb::Location loc,
                  uint64_t offset_or_index) {
    uint64_t n = 1;
    for (int64_t d : shape) n *= uint64_t(d);
    bool io = loc == fb::Location::INPUT || loc == fb::Location::OUTPUT;
    tensors.push_back(fb::CreateTensorDirect(fbb, name, fb::DType::FLOAT32, &shape, loc,
                                             io ? uint32_t(offset_or_index) : 0,
                                             io ? 0 : offset_or_index, n * 4));
    return uint32_t(tensors.size() - 1);
  }
  // A tensor with a raw size (for hostile streams).
  uint32_t RawTensor(std::vector<int64_t> shape, fb::Location loc, uint64_t offset, uint64_t size) {
    tensors.push_back(
        fb::CreateTensorDirect(fbb, "raw", fb::DType::FLOAT32, &shape, loc, 0, offset, size));
    return uint32_t(tensors.size() - 1);
  }
  // The op kind of each params table (flatc writes no traits for a union
  // with an alias: Conv2DTaps is a second kind of the Conv2D table).
  template <typename T>
  static fb::OpParams KindOf() {
// clang-format off
#define EPCTX_KIND(T_)                                    \
  if constexpr (std::is_same<T, fb::T_>::value) return fb::OpParams::T_;
    EPCTX_KIND(Conv2D) EPCTX_KIND(Gemm) EPCTX_KIND(Binary) EPCTX_KIND(Unary) EPCTX_KIND(Pool)
    EPCTX_KIND(Softmax) EPCTX_KIND(Transpose) EPCTX_KIND(Concat) EPCTX_KIND(Copy)
    EPCTX_KIND(ScaleShift) EPCTX_KIND(Convert) EPCTX_KIND(ConvTranspose2D) EPCTX_KIND(Quantize)
    EPCTX_KIND(Dequantize) EPCTX_KIND(DynamicQuantize) EPCTX_KIND(QConv2D) EPCTX_KIND(QGemm)
    EPCTX_KIND(QBinary) EPCTX_KIND(QLut) EPCTX_KIND(QMaxPool) EPCTX_KIND(QConcat)
    EPCTX_KIND(Reduce) EPCTX_KIND(LayerNorm) EPCTX_KIND(BatchMatMul) EPCTX_KIND(StridedCopy)
    EPCTX_KIND(Resize) EPCTX_KIND(Pad) EPCTX_KIND(Recurrent)
#undef EPCTX_KIND
        // clang-format on
        return fb::OpParams::NONE;
  }
  template <typename T>
  void Op(flatbuffers::Offset<T> params) {
    ops.push_back(fb::CreateOp(fbb, KindOf<T>(), params.Union()));
  }
  // An op of an explicit kind (Conv2DTaps with a Conv2D table).
  template <typename T>
  void Op(fb::OpParams kind, flatbuffers::Offset<T> params) {
    ops.push_back(fb::CreateOp(fbb, kind, params.Union()));
  }
  std::vector<uint8_t> Finish(uint64_t arena, const char* name = "g", uint16_t minor = 0) {
    auto g = fb::CreateGraphDirect(fbb, 1, minor, name, &tensors, arena, &ops);
    fb::FinishGraphBuffer(fbb, g);
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  }
};

// w: [Cout][Cin/G][KH][KW] -> [G][ceil(Cout_g/8)][Cin_g][KH][KW][8].
inline std::vector<float> PackConv(const std::vector<float>& w, int cout, int cig, int kh, int kw,
                                   int groups) {
  int cog = cout / groups, nb = (cog + 7) / 8, ks = kh * kw;
  std::vector<float> out(size_t(groups) * nb * cig * ks * 8, 0.f);
  for (int o = 0; o < cout; ++o) {
    int g = o / cog, ol = o % cog, b = ol / 8, j = ol % 8;
    for (int i = 0; i < cig; ++i)
      for (int k = 0; k < ks; ++k)
        out[((size_t(g * nb + b) * cig + i) * ks + k) * 8 + j] = w[(size_t(o) * cig + i) * ks + k];
  }
  return out;
}

// b: [K][N] -> [ceil(N/8)][K][8].
inline std::vector<float> PackGemm(const std::vector<float>& b, int k, int n) {
  int nb = (n + 7) / 8;
  std::vector<float> out(size_t(nb) * k * 8, 0.f);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j) out[(size_t(j / 8) * k + i) * 8 + j % 8] = b[size_t(i) * n + j];
  return out;
}

// b: [k][n] -> GEMM_BLOCKED's [ceil(n/48)][k][w], w = min(48, ceil8(cols left)).
inline std::vector<float> PackGemmBlocked(const std::vector<float>& b, int k, int n) {
  const int n8 = (n + 7) / 8 * 8;
  std::vector<float> out(size_t(n8) * k, 0.f);
  for (int j0 = 0; j0 < n; j0 += 48) {
    const int w = n8 - j0 < 48 ? n8 - j0 : 48;
    for (int i = 0; i < k; ++i)
      for (int j = j0; j < n && j < j0 + w; ++j)
        out[size_t(j0) * k + size_t(i) * w + size_t(j - j0)] = b[size_t(i) * n + j];
  }
  return out;
}

inline void* HostAlloc(void*, size_t size, size_t align) {
  if (align < sizeof(void*)) align = sizeof(void*);
  return aligned_alloc(align, (size + align - 1) / align * align);
}
inline void HostFree(void*, void* p) { free(p); }
inline const epctx_hal_host* Host() {
  static epctx_hal_host h = {sizeof(epctx_hal_host), nullptr, HostAlloc, HostFree, nullptr};
  return &h;
}

struct Loaded {
  int rc = -1;
  std::string msg;
  epctx_hal_context* ctx = nullptr;
  // The driver keeps pointers into payloads and weights until release.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> graphs;
  std::vector<float> weights;
  ~Loaded() {
    if (ctx) epctx_vnpu_driver()->release_context(epctx_vnpu_driver(), ctx);
  }
};

// Loads graphs (name, payload) with a weight segment through the driver.
inline void Load(Loaded* out,
                 const std::vector<std::pair<std::string, std::vector<uint8_t>>>& graphs,
                 const std::vector<float>& weights) {
  out->graphs = graphs;
  out->weights = weights;
  std::vector<epctx_hal_graph_blob> blobs;
  for (auto& g : out->graphs) blobs.push_back({g.first.c_str(), g.second.data(), g.second.size()});
  epctx_hal_blob blob = {sizeof(epctx_hal_blob),
                         nullptr,
                         0,
                         1,
                         reinterpret_cast<const uint8_t*>(out->weights.data()),
                         out->weights.size() * 4,
                         blobs.data(),
                         uint32_t(blobs.size())};
  char msg[512];
  out->rc = epctx_vnpu_driver()->load_context(epctx_vnpu_driver(), &blob, Host(), &out->ctx, msg,
                                              sizeof msg);
  out->msg = msg;
}

// get_graph on a loaded context: where the driver verifies and validates a
// graph's payload (load_context reads none). rc and msg as in Loaded.
inline int Bind(Loaded* l, const char* name, epctx_hal_graph** g, epctx_hal_graph_info* info) {
  char msg[512];
  msg[0] = '\0';
  l->rc =
      epctx_vnpu_driver()->get_graph(epctx_vnpu_driver(), l->ctx, name, g, info, msg, sizeof msg);
  l->msg = msg;
  return l->rc;
}

}  // namespace vt

#endif
