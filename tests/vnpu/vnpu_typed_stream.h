/* SPDX-License-Identifier: Apache-2.0 */
// Test helpers over vnpu_stream.h: streams with typed tensors (FLOAT32 and
// the int8 level's), run through the driver into typed buffers, or refused
// with a message naming a field. Test code only, with cmocka's checks.
#ifndef EPCTX_TESTS_VNPU_TYPED_STREAM_H
#define EPCTX_TESTS_VNPU_TYPED_STREAM_H

#include <cstring>

#include "vnpu_stream.h"

namespace vt {

using L = fb::Location;
using D = fb::DType;

inline size_t Esize(D d) { return d == D::INT8 || d == D::UINT8 ? 1 : 4; }

// A stream with typed tensors; weight blobs appended 4-byte aligned.
struct TStream {
  Stream s;
  std::vector<uint8_t> wbytes;
  uint32_t inputs = 0, outputs = 0;
  uint64_t arena = 0;
  uint32_t T(std::vector<int64_t> shape, D d, L loc, uint64_t off_or_index) {
    uint64_t n = 1;
    for (int64_t x : shape) n *= uint64_t(x);
    bool io = loc == L::INPUT || loc == L::OUTPUT;
    s.tensors.push_back(fb::CreateTensorDirect(s.fbb, "t", d, &shape, loc,
                                               io ? uint32_t(off_or_index) : 0,
                                               io ? 0 : off_or_index, n * Esize(d)));
    return uint32_t(s.tensors.size() - 1);
  }
  uint32_t In(std::vector<int64_t> shape, D d) { return T(shape, d, L::INPUT, inputs++); }
  uint32_t Out(std::vector<int64_t> shape, D d) { return T(shape, d, L::OUTPUT, outputs++); }
  uint32_t Arena(std::vector<int64_t> shape, D d) {
    uint64_t n = 1;
    for (int64_t x : shape) n *= uint64_t(x);
    uint32_t t = T(shape, d, L::ARENA, arena);
    arena += (n * Esize(d) + 63) / 64 * 64;
    return t;
  }
  template <typename V>
  uint32_t W(const std::vector<V>& v, std::vector<int64_t> shape, D d) {
    while (wbytes.size() % 4) wbytes.push_back(0);
    uint64_t off = wbytes.size();
    for (const V& x : v) {
      uint8_t b[4];
      if (Esize(d) == 1) {
        b[0] = uint8_t(int32_t(x));
      } else if (d == D::FLOAT32) {
        float f = float(x);
        memcpy(b, &f, 4);
      } else {
        int32_t i = int32_t(x);
        memcpy(b, &i, 4);
      }
      wbytes.insert(wbytes.end(), b, b + Esize(d));
    }
    return T(shape, d, L::WEIGHT, off);
  }
  std::vector<float> Weights() const {
    std::vector<float> w((wbytes.size() + 3) / 4 + 1, 0.f);
    if (!wbytes.empty()) memcpy(w.data(), wbytes.data(), wbytes.size());
    return w;
  }
  uint16_t minor = 2;  // the stream version the ops need
  std::vector<uint8_t> Finish() {
    auto g = fb::CreateGraphDirect(s.fbb, 1, minor, "g", &s.tensors, arena, &s.ops);
    fb::FinishGraphBuffer(s.fbb, g);
    return std::vector<uint8_t>(s.fbb.GetBufferPointer(),
                                s.fbb.GetBufferPointer() + s.fbb.GetSize());
  }
};

struct Buf {
  int32_t dtype;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

inline int Dt(D d) {
  switch (d) {
    case D::INT8: return EPCTX_DTYPE_INT8;
    case D::UINT8: return EPCTX_DTYPE_UINT8;
    case D::INT32: return EPCTX_DTYPE_INT32;
    default: return EPCTX_DTYPE_FLOAT;
  }
}

// Loads, binds and runs q; outputs sized from the graph's descriptors.
// A stand-in for the session's threads: parallel_for runs the chunks on
// this thread, last first, each as worker chunk % threads, so a driver
// that wrongly shares a worker's scratch or depends on the chunk order is
// caught.
struct ReverseThreads {
  static void ParallelFor(void* user, uint32_t chunks, epctx_hal_chunk_fn fn, void* arg) {
    const uint32_t threads = *static_cast<uint32_t*>(user);
    for (uint32_t c = chunks; c-- > 0;) fn(arg, c, c % threads);
  }
};

// Run with `threads` > 1 (execute_parallel through ReverseThreads), or
// plain execute.
inline std::vector<Buf> Run(TStream& q, std::vector<Buf> ins, uint32_t threads = 1) {
  Loaded l;
  Load(&l, {{"g", q.Finish()}}, q.Weights());
  assert_int_equal(l.rc, 0);
  epctx_hal_graph* g = nullptr;
  epctx_hal_graph_info info;
  if (Bind(&l, "g", &g, &info) != 0) fail_msg("bind: %s", l.msg.c_str());
  std::vector<epctx_hal_tensor> ti, to;
  for (auto& b : ins)
    ti.push_back({b.dtype, uint32_t(b.dims.size()), b.dims.data(), b.bytes.data(), b.bytes.size()});
  std::vector<Buf> outs(info.num_outputs);
  for (uint32_t i = 0; i < info.num_outputs; ++i) {
    const auto& d = info.outputs[i];
    size_t n = 1;
    for (uint32_t k = 0; k < d.rank; ++k) n *= size_t(d.dims[k]);
    size_t es = d.dtype == EPCTX_DTYPE_INT8 || d.dtype == EPCTX_DTYPE_UINT8 ? 1 : 4;
    outs[i] = {d.dtype, std::vector<int64_t>(d.dims, d.dims + d.rank),
               std::vector<uint8_t>(n * es)};
  }
  for (auto& b : outs)
    to.push_back({b.dtype, uint32_t(b.dims.size()), b.dims.data(), b.bytes.data(), b.bytes.size()});
  std::vector<uint8_t> scratch(info.scratch_bytes + 64);
  char msg[512];
  auto* d = epctx_vnpu_driver();
  int rc;
  if (threads > 1) {
    epctx_hal_parallel par{sizeof(epctx_hal_parallel), threads, &threads,
                           ReverseThreads::ParallelFor};
    rc = d->execute_parallel(d, g, ti.data(), uint32_t(ti.size()), to.data(), uint32_t(to.size()),
                             scratch.data(), info.scratch_bytes, &par, msg, sizeof msg);
  } else {
    rc = d->execute(d, g, ti.data(), uint32_t(ti.size()), to.data(), uint32_t(to.size()),
                    scratch.data(), info.scratch_bytes, msg, sizeof msg);
  }
  if (rc != 0) fail_msg("execute: %s", msg);
  return outs;
}

inline void ExpectRejected(TStream& q, const char* needle) {
  Loaded l;
  Load(&l, {{"g", q.Finish()}}, q.Weights());
  assert_int_equal(l.rc, 0);
  epctx_hal_graph* g = nullptr;
  epctx_hal_graph_info info;
  Bind(&l, "g", &g, &info);
  if (l.rc != EPCTX_INVALID_GRAPH || !strstr(l.msg.c_str(), needle))
    fail_msg("expected INVALID_GRAPH naming '%s', got %d: %s", needle, l.rc, l.msg.c_str());
}

template <typename V>
inline Buf Bytes(const std::vector<V>& v, std::vector<int64_t> dims, D d) {
  Buf b{Dt(d), dims, {}};
  for (const V& x : v) {
    if (Esize(d) == 1) {
      b.bytes.push_back(uint8_t(int32_t(x)));
    } else {
      uint8_t t[4];
      if (d == D::FLOAT32) {
        float f = float(x);
        memcpy(t, &f, 4);
      } else {
        int32_t i = int32_t(x);
        memcpy(t, &i, 4);
      }
      b.bytes.insert(b.bytes.end(), t, t + 4);
    }
  }
  return b;
}
inline int32_t At(const Buf& b, size_t i) {
  if (b.dtype == EPCTX_DTYPE_INT8) return int8_t(b.bytes[i]);
  if (b.dtype == EPCTX_DTYPE_UINT8) return b.bytes[i];
  int32_t v;
  memcpy(&v, b.bytes.data() + 4 * i, 4);
  return v;
}
inline float AtF(const Buf& b, size_t i) {
  float v;
  memcpy(&v, b.bytes.data() + 4 * i, 4);
  return v;
}

}  // namespace vt

#endif
