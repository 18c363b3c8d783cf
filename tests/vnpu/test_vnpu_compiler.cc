// SPDX-License-Identifier: Apache-2.0
// vnpu compiler half end to end: ONNX graphs built in C++ -> Supports() ->
// Compile() -> the driver loads the stream and its numbers match reference
// loops written from the ONNX operator definitions.
#include <cmath>
#include <cstring>
#include <deque>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <algorithm>

#include <epctx/epctx.h>
#include <epctx/vnpu.h>

#include "vnpu_backend.h"
#include "vnpu_generated.h"

// Last: cmocka's macros (fail, ...) collide with libstdc++ names.
extern "C" {
#include <cmocka.h>
}

using namespace epctx::host;

namespace {

struct Model {
  onnx::GraphProto graph;
  GraphInfo info;
  std::deque<onnx::TensorProto> consts;
  Partition part;

  Model(int64_t opset = 13) {
    info.graph = &graph;
    info.opset = opset;
    part.name = "vnpu_0";
  }
  void Value(const std::string& name, std::vector<int64_t> dims,
             int32_t dtype = onnx::TensorProto::FLOAT) {
    ValueType t;
    t.known = true;
    t.dtype = dtype;
    t.dims = dims;
    info.types[name] = t;
  }
  // A constant of any dtype from its raw bytes.
  void Raw(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
           const std::string& bytes) {
    consts.emplace_back();
    onnx::TensorProto& t = consts.back();
    t.set_name(name);
    t.set_data_type(dtype);
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(bytes);
    info.constants[name] = &t;
    Value(name, dims, dtype);
  }
  void Const(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
    consts.emplace_back();
    onnx::TensorProto& t = consts.back();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    info.constants[name] = &t;
    Value(name, dims);
  }
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out) {
    onnx::NodeProto* n = graph.add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(graph.node_size()));
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
  }
  void Finish(std::vector<std::string> in, std::vector<std::string> out) {
    part.nodes.clear();
    for (const auto& n : graph.node()) part.nodes.push_back(&n);
    part.inputs = in;
    part.outputs = out;
  }
};

void IntAttr(onnx::NodeProto* n, const char* name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void FloatAttr(onnx::NodeProto* n, const char* name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void IntsAttr(onnx::NodeProto* n, const char* name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

std::vector<float> Ramp(size_t n, float scale, float phase = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(float(i) * 0.61f + phase) * scale;
  return v;
}

void* Alloc(void*, size_t size, size_t align) {
  if (align < sizeof(void*)) align = sizeof(void*);
  return aligned_alloc(align, (size + align - 1) / align * align);
}
void Free(void*, void* p) { free(p); }

// Reference binary16 conversions, written from the format's definition
// (independent of the driver's bit manipulation): round to nearest even
// through nearbyint, overflow to infinity.
float RefFloat(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float sign = (h & 0x8000) ? -1.f : 1.f;
  if (e == 31) return m ? NAN : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(float(m), -24);
  return sign * std::ldexp(float(1024 + m), e - 25);
}
uint16_t RefHalf(float v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(double(v));
  if (std::isnan(v)) return 0x7e00;
  if (a < std::ldexp(1.0, -14))
    return uint16_t(sign | uint16_t(std::nearbyint(a * std::ldexp(1.0, 24))));
  int exp2;
  std::frexp(a, &exp2);  // a = f * 2^exp2, f in [0.5, 1)
  int e = exp2 - 1;
  double q = std::nearbyint(std::ldexp(a, 10 - e));
  if (q >= 2048) {
    q = 1024;
    ++e;
  }
  if (e + 15 >= 31) return uint16_t(sign | 0x7c00);
  return uint16_t(sign | ((e + 15) << 10) | (int(q) - 1024));
}

// Compiles the model's partition, loads it in the driver, runs it once.
std::vector<std::vector<float>> CompileAndRun(Model& m, std::vector<std::vector<float>> inputs,
                                              uint64_t* arena = nullptr,
                                              uint32_t* num_ops = nullptr,
                                              uint32_t* stream_minor = nullptr) {
  auto backend = CreateVnpuBackend();
  for (const auto* n : m.part.nodes) {
    Support s = backend->Supports(*n, m.info);
    if (!s.supported) print_error("%s: %s\n", n->op_type().c_str(), s.reason.c_str());
    assert_true(s.supported);
  }
  WeightStore ws;
  CompiledGraph cg = backend->Compile(m.part, m.info, ws);
  if (num_ops) *num_ops = epctx::vnpu::fb::GetGraph(cg.payload.data())->ops()->size();
  if (stream_minor) *stream_minor = epctx::vnpu::fb::GetGraph(cg.payload.data())->version_minor();
  // The container gives weights 64-byte aligned; so does this copy.
  size_t wsize = ws.bytes().size();
  uint8_t* weights = static_cast<uint8_t*>(Alloc(nullptr, wsize + 64, 64));
  if (wsize) memcpy(weights, ws.bytes().data(), wsize);
  epctx_hal_graph_blob gb = {cg.name.c_str(), cg.payload.data(), cg.payload.size()};
  epctx_hal_blob blob = {sizeof(epctx_hal_blob), nullptr, 0, 1, weights, wsize, &gb, 1};
  epctx_hal_host host = {sizeof(epctx_hal_host), nullptr, Alloc, Free, nullptr};
  const epctx_hal_driver* d = epctx_vnpu_driver();
  epctx_hal_context* ctx = nullptr;
  char msg[512];
  int rc = d->load_context(d, &blob, &host, &ctx, msg, sizeof msg);
  if (rc) print_error("load: %s\n", msg);
  assert_int_equal(rc, 0);
  epctx_hal_graph* g;
  epctx_hal_graph_info info;
  assert_int_equal(d->get_graph(d, ctx, cg.name.c_str(), &g, &info, msg, sizeof msg), 0);
  if (arena) *arena = info.scratch_bytes;
  std::vector<epctx_hal_tensor> ti, to;
  std::vector<std::vector<float>> outs(info.num_outputs);
  assert_int_equal(info.num_inputs, inputs.size());
  // Float16 edges travel as half bits; the caller sees floats either way.
  std::vector<std::vector<uint16_t>> halves_in(info.num_inputs), halves_out(info.num_outputs);
  for (uint32_t i = 0; i < info.num_inputs; ++i) {
    if (info.inputs[i].dtype == EPCTX_DTYPE_FLOAT16) {
      for (float v : inputs[i]) halves_in[i].push_back(RefHalf(v));
      ti.push_back({EPCTX_DTYPE_FLOAT16, info.inputs[i].rank, info.inputs[i].dims,
                    halves_in[i].data(), halves_in[i].size() * 2});
      continue;
    }
    ti.push_back({EPCTX_DTYPE_FLOAT, info.inputs[i].rank, info.inputs[i].dims, inputs[i].data(),
                  inputs[i].size() * 4});
  }
  for (uint32_t i = 0; i < info.num_outputs; ++i) {
    size_t n = 1;
    for (uint32_t k = 0; k < info.outputs[i].rank; ++k) n *= size_t(info.outputs[i].dims[k]);
    outs[i].resize(n);
    if (info.outputs[i].dtype == EPCTX_DTYPE_FLOAT16) {
      halves_out[i].resize(n);
      to.push_back({EPCTX_DTYPE_FLOAT16, info.outputs[i].rank, info.outputs[i].dims,
                    halves_out[i].data(), n * 2});
      continue;
    }
    to.push_back(
        {EPCTX_DTYPE_FLOAT, info.outputs[i].rank, info.outputs[i].dims, outs[i].data(), n * 4});
  }
  std::vector<uint8_t> scratch(info.scratch_bytes + 64);
  // One byte short of the scratch get_graph asked for (arena and workspace):
  // refused before anything runs.
  if (info.scratch_bytes > 0)
    assert_int_equal(d->execute(d, g, ti.data(), uint32_t(ti.size()), to.data(),
                                uint32_t(to.size()), scratch.data(), info.scratch_bytes - 1, msg,
                                sizeof msg),
                     EPCTX_INVALID_ARGUMENT);
  rc = d->execute(d, g, ti.data(), uint32_t(ti.size()), to.data(), uint32_t(to.size()),
                  scratch.data(), info.scratch_bytes, msg, sizeof msg);
  if (rc) print_error("execute: %s\n", msg);
  assert_int_equal(rc, 0);
  for (uint32_t i = 0; i < info.num_outputs; ++i)
    for (size_t k = 0; k < halves_out[i].size(); ++k) outs[i][k] = RefFloat(halves_out[i][k]);
  d->release_context(d, ctx);
  free(weights);
  return outs;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  assert_int_equal(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-4f * (1.f + std::fabs(want[i]))) {
      print_error("element %zu: got %g want %g\n", i, double(got[i]), double(want[i]));
      fail();
    }
}

// Conv 3x3 pad 1 -> BatchNorm -> Relu -> MaxPool 2x2 -> Flatten -> Gemm(transB)
// -> Softmax: exercises BN folding, activation fusion, aliasing and GEMM.
void conv_bn_relu_pool_gemm_softmax_matches_reference(void**) {
  const int C = 3, H = 6, W = 6, CO = 4, P = 3, Q = 3, F = CO * P * Q, N = 5;
  Model m;
  auto x = Ramp(size_t(C) * H * W, 1.f);
  auto w = Ramp(size_t(CO) * C * 9, 0.4f, 1.f), b = Ramp(CO, 0.1f, 2.f);
  auto gamma = Ramp(CO, 0.5f, 3.f), beta = Ramp(CO, 0.2f, 4.f), mean = Ramp(CO, 0.3f, 5.f);
  std::vector<float> var = {0.5f, 1.f, 1.5f, 2.f};
  auto gw = Ramp(size_t(N) * F, 0.3f, 6.f), gc = Ramp(N, 0.1f, 7.f);
  m.Value("x", {1, C, H, W});
  m.Const("w", {CO, C, 3, 3}, w);
  m.Const("b", {CO}, b);
  for (auto& p : std::vector<std::pair<const char*, std::vector<float>*>>{
           {"gamma", &gamma}, {"beta", &beta}, {"mean", &mean}, {"var", &var}})
    m.Const(p.first, {CO}, *p.second);
  m.Const("gw", {N, F}, gw);
  m.Const("gc", {N}, gc);
  m.Value("c", {1, CO, H, W});
  m.Value("bn", {1, CO, H, W});
  m.Value("r", {1, CO, H, W});
  m.Value("p", {1, CO, P, Q});
  m.Value("f", {1, F});
  m.Value("g", {1, N});
  m.Value("y", {1, N});
  IntsAttr(m.Node("Conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
  m.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"});
  m.Node("Relu", {"bn"}, {"r"});
  auto* pool = m.Node("MaxPool", {"r"}, {"p"});
  IntsAttr(pool, "kernel_shape", {2, 2});
  IntsAttr(pool, "strides", {2, 2});
  m.Node("Flatten", {"p"}, {"f"});
  IntAttr(m.Node("Gemm", {"f", "gw", "gc"}, {"g"}), "transB", 1);
  m.Node("Softmax", {"g"}, {"y"});
  m.Finish({"x"}, {"y"});
  uint32_t ops = 0;
  auto out = CompileAndRun(m, {x}, nullptr, &ops);
  // BN and Relu fold into the conv, Flatten is an alias: CONV2D POOL GEMM SOFTMAX.
  assert_int_equal(ops, 4);

  std::vector<float> r(size_t(CO) * H * W), p(F), y(N);
  for (int o = 0; o < CO; ++o) {
    float sc = gamma[o] / std::sqrt(var[o] + 1e-5f);
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < W; ++j) {
        double acc = b[o];
        for (int c = 0; c < C; ++c)
          for (int u = 0; u < 3; ++u)
            for (int v = 0; v < 3; ++v) {
              int ii = i + u - 1, jj = j + v - 1;
              if (ii >= 0 && ii < H && jj >= 0 && jj < W)
                acc += double(x[(c * H + ii) * W + jj]) * w[((o * C + c) * 3 + u) * 3 + v];
            }
        float bnv = float((acc - mean[o]) * sc + beta[o]);
        r[(o * H + i) * W + j] = bnv > 0 ? bnv : 0;
      }
  }
  for (int o = 0; o < CO; ++o)
    for (int i = 0; i < P; ++i)
      for (int j = 0; j < Q; ++j) {
        float mx = -1e30f;
        for (int u = 0; u < 2; ++u)
          for (int v = 0; v < 2; ++v) mx = std::max(mx, r[(o * H + 2 * i + u) * W + 2 * j + v]);
        p[(o * P + i) * Q + j] = mx;
      }
  double sum = 0;
  for (int n = 0; n < N; ++n) {
    double acc = gc[n];
    for (int k = 0; k < F; ++k) acc += double(p[k]) * gw[n * F + k];
    y[n] = float(acc);
  }
  float mx = *std::max_element(y.begin(), y.end());
  for (float& v : y) sum += std::exp(double(v - mx));
  for (float& v : y) v = float(std::exp(double(v - mx)) / sum);
  ExpectNear(out[0], y);
}

struct ConvCase {
  int64_t C, H, W, CO, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr, group;
  int act;  // 0 none, 1 Relu (fused as a clamp), 2 LeakyRelu 0.1 (run after the tile)
};

// One Conv (+ Relu) through the vnpu driver against a double reference.
void RunConvCase(const ConvCase& k) {
  const int64_t OH = (k.H + k.pt + k.pb - (k.KH - 1) * k.dh - 1) / k.sh + 1;
  const int64_t OW = (k.W + k.pl + k.pr - (k.KW - 1) * k.dw - 1) / k.sw + 1;
  const int64_t cig = k.C / k.group, cog = k.CO / k.group;
  Model m;
  auto x = Ramp(size_t(k.C * k.H * k.W), 1.f);
  auto w = Ramp(size_t(k.CO * cig * k.KH * k.KW), 0.4f, 1.f), b = Ramp(size_t(k.CO), 0.3f, 2.f);
  m.Value("x", {1, k.C, k.H, k.W});
  m.Const("w", {k.CO, cig, k.KH, k.KW}, w);
  m.Const("b", {k.CO}, b);
  m.Value("c", {1, k.CO, OH, OW});
  auto* conv = m.Node("Conv", {"x", "w", "b"}, {"c"});
  IntsAttr(conv, "pads", {k.pt, k.pl, k.pb, k.pr});
  IntsAttr(conv, "strides", {k.sh, k.sw});
  IntsAttr(conv, "dilations", {k.dh, k.dw});
  IntAttr(conv, "group", k.group);
  if (k.act == 1) {
    m.Value("y", {1, k.CO, OH, OW});
    m.Node("Relu", {"c"}, {"y"});
  } else if (k.act == 2) {
    m.Value("y", {1, k.CO, OH, OW});
    FloatAttr(m.Node("LeakyRelu", {"c"}, {"y"}), "alpha", 0.1f);
  }
  m.Finish({"x"}, {k.act ? "y" : "c"});
  auto out = CompileAndRun(m, {x});
  std::vector<float> want(size_t(k.CO * OH * OW));
  for (int64_t o = 0; o < k.CO; ++o)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        double acc = b[size_t(o)];
        const int64_t g = o / cog;
        for (int64_t c = 0; c < cig; ++c)
          for (int64_t u = 0; u < k.KH; ++u)
            for (int64_t v = 0; v < k.KW; ++v) {
              const int64_t ii = i * k.sh - k.pt + u * k.dh, jj = j * k.sw - k.pl + v * k.dw;
              if (ii >= 0 && ii < k.H && jj >= 0 && jj < k.W)
                acc += double(x[size_t(((g * cig + c) * k.H + ii) * k.W + jj)]) *
                       w[size_t(((o * cig + c) * k.KH + u) * k.KW + v)];
            }
        if (k.act == 1 && acc < 0) acc = 0;
        if (k.act == 2 && acc < 0) acc *= 0.1;
        want[size_t((o * OH + i) * OW + j)] = float(acc);
      }
  ExpectNear(out[0], want);
}

// The CONV2D unit's paths on sizes that are not multiples of its tiles:
// im2col chunks with padding, stride and dilation; a 1x1 read in place;
// and the transposed path of one-channel 1-D convolutions with few output
// pixels (an STFT as a convolution), with groups, a partial last channel
// tile and one pixel row of a tile; 3x1 convolutions as shifted 1x1 taps
// with an overlapping last block; depthwise rows whose interior runs 16
// and 4 columns at a time next to edge columns, and padded depthwise rows;
// the transposed path (pixels as tile rows, output channels as columns)
// with strides, dilation, groups, padded edges and all-padding rows; 1xK
// convolutions as row shifts with their edge columns redone, in both weight
// layouts; stride-2 im2col rows; im2col of maps a few columns wide;
// depthwise rows at column stride 2, in bands and in the ring for wide rows;
// im2col by output row blocks (split rows at column stride 2); 1x1 on
// planes 4 KiB apart through copied rows.
void conv_paths_match_reference_on_odd_sizes(void**) {
  const ConvCase cases[] = {
      // C  H   W  CO KH KW sh sw dh dw pt pl pb pr grp act
      {5, 9, 11, 13, 3, 3, 2, 1, 1, 2, 1, 2, 0, 1, 1, true},        // im2col, tap runs cut
      {3, 7, 30, 10, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, false},       // 1x3 pad 1 (embedding_model)
      {6, 4, 8, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, false},         // grouped 1x1 in place
      {1, 1, 1030, 37, 1, 130, 1, 160, 1, 1, 0, 0, 0, 0, 1, true},  // STFT-like, 6 frames
      {2, 1, 61, 18, 1, 9, 1, 3, 1, 2, 0, 0, 0, 0, 2, false},       // transposed, groups, dilation
      {1, 1, 20, 8, 1, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, false},       // transposed, one pixel
      {5, 6, 37, 5, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 5, true},         // depthwise: 16, 4, edges
      {7, 9, 5, 11, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true},         // 3x1 shifted taps, overlap
      {6, 12, 4, 10, 3, 1, 1, 1, 2, 1, 0, 0, 0, 0, 2, false},       // 3x1 dilated, grouped
      {3, 5, 23, 3, 5, 5, 1, 1, 2, 2, 2, 3, 2, 1, 3, false},        // depthwise, dilated
      {2, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, false},         // depthwise, all edge
      {4, 7, 19, 4, 5, 5, 1, 1, 1, 2, 2, 4, 2, 4, 4, 2},            // depthwise padded rows, leaky
      {8, 6, 9, 8, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 8, 0},             // depthwise padded, row stride
      {3, 120, 150, 3, 3, 3, 2, 1, 2, 1, 1, 1, 2, 1, 3,
       true},  // depthwise: 3 bands, row stride, row dilation
      {2, 4, 200, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2,
       true},                                              // depthwise rows over 192: edge columns
      {4, 40, 40, 4, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 4, 1},  // depthwise 5x5 on 40 columns (ocr_det)
      // transposed: >= 16 input channels, <= 24 output channels, taps read in place
      {16, 7, 30, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},  // 3x3 pad 1
      {32, 5, 40, 9, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, false},  // 1x3 pad 1 (embedding_model)
      {16, 9, 34, 6, 3, 3, 2, 1, 2, 2, 2, 2, 1, 3, 1, true},   // row stride 2, dilated, pads
      {32, 4, 30, 8, 2, 3, 1, 1, 1, 1, 3, 1, 3, 1, 2, false},  // grouped; rows all padding
      {144, 3, 9, 8, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, false},  // column stride 2, edge chunks
      {24, 6, 13, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2},     // 24 channels, 1-pixel tail, leaky
      {96, 8, 10, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},     // the ocr_det head's 96 -> 24
      {16, 6, 9, 8, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0},       // 3x1 padded: blocked weights
      // im2col of K = 1152 rows: a 1024-row workspace chunk, then 128
      {128, 4, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      // 1x1 convolutions read in place, several block groups, leaky after the tile
      {16, 20, 21, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2},
      // row shifts: 1xK taps over the flattened plane, edge columns redone
      {24, 5, 32, 24, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 2},     // CONV2D_TAPS weights, leaky
      {48, 4, 16, 40, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, true},  // blocked weights, relu
      {8, 3, 36, 10, 1, 5, 1, 1, 1, 2, 0, 3, 0, 5, 1, false},  // dilated, pads 3 / 5
      {16, 3, 16, 16, 1, 3, 1, 1, 1, 1, 0, 2, 0, 0, 2, 2},     // grouped, left pads only
      // stride-2 im2col rows gathered 4 at a time (ocr_det's first conv)
      {3, 9, 40, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true},
      // im2col of maps a few columns wide: each tap's offsets gathered
      {8, 6, 5, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2},      // 3x3 on 5 columns, leaky
      {6, 9, 7, 10, 3, 3, 2, 2, 2, 1, 2, 1, 1, 0, 1, false},  // strided, dilated, uneven pads
      {16, 5, 2, 40, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, true},  // 1x3 on 2 columns (embedding_model)
      // depthwise at column stride 2: rows split into even and odd halves
      {8, 9, 40, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, 2},       // padded, leaky
      {6, 7, 33, 6, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 6, 0},       // 5x5, odd width
      {4, 6, 20, 4, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 4, 1},       // padded right and bottom only
      {3, 120, 150, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, 2},    // 3 bands of split rows
      {2, 30, 50, 2, 3, 3, 2, 2, 2, 1, 2, 1, 2, 1, 2, false},  // split rows, row dilation 2
      {2, 5, 200, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, true},   // rows over 192: the KH-row ring
      // im2col a row block (up to 192 pixels of one output row) at a time
      {3, 9, 450, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true},  // split rows, 192 + 33 columns
      {2, 11, 130, 10, 5, 5, 2, 2, 2, 1, 2, 2, 1, 3, 1, 2},    // split rows: 5x5, row dilation
      {3, 7, 120, 8, 3, 3, 2, 2, 1, 2, 1, 2, 1, 2, 1, false},  // column stride 2, dilation 2
      {5, 6, 60, 13, 3, 3, 1, 1, 1, 2, 1, 2, 0, 1, 1, false},  // stride 1, dilated, uneven pads
      {4, 5, 100, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1},      // grouped
      // 1x1 on planes a multiple of 4 KiB apart: rows copied per block group
      {24, 32, 64, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2},     // leaky after the tile
      {16, 32, 32, 10, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, true},  // grouped, overlapping last block
  };
  for (const ConvCase& k : cases) RunConvCase(k);
}

// The compiler writes CONV2D_TAPS (stream 1.4, taps-major weights) for a
// conv of at most 24 output channels from at least 16 inputs with a window
// wider than one column, and CONV2D (blocked) otherwise; both run.
void few_output_channels_compile_to_conv2d_taps(void**) {
  for (int64_t co : {16, 32}) {
    Model m;
    const int64_t C = 32, H = 5, W = 9;
    auto x = Ramp(size_t(C * H * W), 1.f);
    m.Value("x", {1, C, H, W});
    m.Const("w", {co, C, 3, 3}, Ramp(size_t(co * C * 9), 0.4f, 1.f));
    m.Value("y", {1, co, H, W});
    auto* conv = m.Node("Conv", {"x", "w"}, {"y"});
    IntsAttr(conv, "pads", {1, 1, 1, 1});
    m.Finish({"x"}, {"y"});
    uint32_t minor = 99;
    auto out = CompileAndRun(m, {x}, nullptr, nullptr, &minor);
    assert_int_equal(out[0].size(), size_t(co * H * W));
    assert_int_equal(minor, co <= 24 ? 4 : 0);
  }
}

// A MatMul by a constant compiles to GEMM_BLOCKED (stream 1.6, 48-column
// blocks) from 8 rows of A and to GEMM (8-column strips) below; both match
// a double reference with 53 columns (a 5-column tail block).
// y = x [M, K] x w [K, N] against a double reference.
void ExpectMatMul(const std::vector<float>& x, const std::vector<float>& w,
                  const std::vector<float>& y, int64_t M, int64_t K, int64_t N) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[size_t(i * K + k)]) * w[size_t(k * N + j)];
      const double got = y[size_t(i * N + j)];
      if (std::fabs(got - acc) > 1e-4 * (1 + std::fabs(acc)))
        fail_msg("M %lld: y[%lld][%lld] = %g, want %g", (long long)M, (long long)i, (long long)j,
                 got, acc);
    }
}

void matmul_rows_choose_gemm_blocked_from_eight(void**) {
  for (int64_t M : {1, 7, 8, 20}) {
    Model m;
    const int64_t K = 37, N = 53;
    auto x = Ramp(size_t(M * K), 1.f);
    auto w = Ramp(size_t(K * N), 0.4f, 1.f);
    m.Value("x", {M, K});
    m.Const("w", {K, N}, w);
    m.Value("y", {M, N});
    m.Node("MatMul", {"x", "w"}, {"y"});
    m.Finish({"x"}, {"y"});
    uint32_t minor = 99;
    auto out = CompileAndRun(m, {x}, nullptr, nullptr, &minor);
    assert_int_equal(minor, M >= 8 ? 6 : 0);
    assert_int_equal(out[0].size(), size_t(M * N));
    ExpectMatMul(x, w, out[0], M, K, N);
  }
}

// MaxPool with 2-wide windows at column stride 2 (the vector path, four
// outputs at a time, then the scalar tail and clipped edges), 2x2 and 1x2,
// with and without padding, against a reference; a NaN input is skipped as
// the scalar loop skips it.
void maxpool_stride2_windows_match_reference(void**) {
  struct Case {
    int64_t H, W, KH, sh, pt, pl, pb, pr;
  };
  const Case cases[] = {{6, 19, 2, 2, 0, 0, 0, 0},
                        {5, 38, 1, 1, 0, 0, 0, 0},
                        {7, 21, 2, 2, 1, 1, 1, 1},
                        {4, 9, 2, 1, 0, 1, 0, 0}};
  for (const Case& k : cases) {
    const int64_t C = 3;
    const int64_t OH = (k.H + k.pt + k.pb - k.KH) / k.sh + 1;
    const int64_t OW = (k.W + k.pl + k.pr - 2) / 2 + 1;
    Model m;
    auto x = Ramp(size_t(C * k.H * k.W), 1.f);
    x[size_t(k.W + 3)] = __builtin_nanf("");
    m.Value("x", {1, C, k.H, k.W});
    m.Value("y", {1, C, OH, OW});
    auto* pool = m.Node("MaxPool", {"x"}, {"y"});
    IntsAttr(pool, "kernel_shape", {k.KH, 2});
    IntsAttr(pool, "strides", {k.sh, 2});
    IntsAttr(pool, "pads", {k.pt, k.pl, k.pb, k.pr});
    m.Finish({"x"}, {"y"});
    auto out = CompileAndRun(m, {x});
    std::vector<float> want(size_t(C * OH * OW));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          float acc = -__builtin_inff();
          for (int64_t u = 0; u < k.KH; ++u)
            for (int64_t v = 0; v < 2; ++v) {
              const int64_t ii = i * k.sh - k.pt + u, jj = j * 2 - k.pl + v;
              if (ii < 0 || ii >= k.H || jj < 0 || jj >= k.W) continue;
              const float e = x[size_t((c * k.H + ii) * k.W + jj)];
              acc = e > acc ? e : acc;
            }
          want[size_t((c * OH + i) * OW + j)] = acc;
        }
    ExpectNear(out[0], want);
  }
}

// ConvTranspose whose kernel equals its stride runs as a GEMM whose last
// pixel block overlaps the one before (2x2: blocks inside one input row
// interleave their two kernel columns, blocks across rows scatter); a padded
// one takes the scatter path. Both against a double reference, with groups,
// bias and a fused Relu, or a Sigmoid run after the GEMM.
void conv_transpose_matches_reference(void**) {
  struct T {
    int64_t C, H, W, CO, K, S, pad, group;
    bool sigmoid, affine;
  };
  // affine: the bias comes as an Add of a [CO, 1, 1] constant, then a
  // BatchNormalization, as a detection head's upsampling is exported; both
  // fold into the weights and bias (one op).
  const T cases[] = {
      {6, 5, 7, 4, 2, 2, 0, 2, false, false}, {3, 4, 9, 5, 3, 3, 0, 1, false, false},
      {3, 4, 6, 4, 3, 2, 1, 1, false, false}, {5, 3, 50, 3, 2, 2, 0, 1, false, false},
      {4, 2, 37, 1, 2, 2, 0, 1, true, false}, {6, 5, 30, 4, 2, 2, 0, 2, false, true},
      {4, 2, 37, 2, 2, 2, 0, 1, true, true}};
  for (const T& k : cases) {
    const int64_t OH = (k.H - 1) * k.S + k.K - 2 * k.pad, OW = (k.W - 1) * k.S + k.K - 2 * k.pad;
    const int64_t cig = k.C / k.group, cog = k.CO / k.group;
    Model m;
    auto x = Ramp(size_t(k.C * k.H * k.W), 1.f);
    auto w = Ramp(size_t(k.C * cog * k.K * k.K), 0.4f, 1.f), b = Ramp(size_t(k.CO), 0.3f, 2.f);
    auto bn_scale = Ramp(size_t(k.CO), 0.5f, 0.8f), bn_b = Ramp(size_t(k.CO), 0.2f, -0.3f);
    auto bn_mean = Ramp(size_t(k.CO), 0.1f, 0.05f), bn_var = Ramp(size_t(k.CO), 0.3f, 0.9f);
    m.Value("x", {1, k.C, k.H, k.W});
    m.Const("w", {k.C, cog, k.K, k.K}, w);
    m.Value("c", {1, k.CO, OH, OW});
    m.Value("y", {1, k.CO, OH, OW});
    std::string last = "c";
    onnx::NodeProto* ct = nullptr;
    if (k.affine) {
      m.Const("b", {k.CO, 1, 1}, b);
      m.Const("sc", {k.CO}, bn_scale);
      m.Const("bb", {k.CO}, bn_b);
      m.Const("mean", {k.CO}, bn_mean);
      m.Const("var", {k.CO}, bn_var);
      m.Value("a", {1, k.CO, OH, OW});
      m.Value("n", {1, k.CO, OH, OW});
      ct = m.Node("ConvTranspose", {"x", "w"}, {"c"});
      m.Node("Add", {"c", "b"}, {"a"});
      m.Node("BatchNormalization", {"a", "sc", "bb", "mean", "var"}, {"n"});
      last = "n";
    } else {
      m.Const("b", {k.CO}, b);
      ct = m.Node("ConvTranspose", {"x", "w", "b"}, {"c"});
    }
    IntsAttr(ct, "kernel_shape", {k.K, k.K});
    IntsAttr(ct, "strides", {k.S, k.S});
    IntsAttr(ct, "pads", {k.pad, k.pad, k.pad, k.pad});
    IntAttr(ct, "group", k.group);
    m.Node(k.sigmoid ? "Sigmoid" : "Relu", {last}, {"y"});
    m.Finish({"x"}, {"y"});
    uint32_t ops = 0;
    auto out = CompileAndRun(m, {x}, nullptr, &ops);
    assert_int_equal(ops, 1);
    std::vector<double> acc(size_t(k.CO * OH * OW));
    for (int64_t o = 0; o < k.CO; ++o)
      for (int64_t i = 0; i < OH * OW; ++i) acc[size_t(o * OH * OW + i)] = b[size_t(o)];
    for (int64_t ci = 0; ci < k.C; ++ci)
      for (int64_t oc = 0; oc < cog; ++oc)
        for (int64_t ih = 0; ih < k.H; ++ih)
          for (int64_t iw = 0; iw < k.W; ++iw)
            for (int64_t u = 0; u < k.K; ++u)
              for (int64_t v = 0; v < k.K; ++v) {
                const int64_t oh = ih * k.S - k.pad + u, ow = iw * k.S - k.pad + v;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                const int64_t o = ci / cig * cog + oc;
                acc[size_t((o * OH + oh) * OW + ow)] +=
                    double(x[size_t((ci * k.H + ih) * k.W + iw)]) *
                    w[size_t(((ci * cog + oc) * k.K + u) * k.K + v)];
              }
    if (k.affine)
      for (int64_t o = 0; o < k.CO; ++o)
        for (int64_t i = 0; i < OH * OW; ++i) {
          double& a = acc[size_t(o * OH * OW + i)];
          a = (a - bn_mean[size_t(o)]) / std::sqrt(double(bn_var[size_t(o)]) + 1e-5) *
                  bn_scale[size_t(o)] +
              bn_b[size_t(o)];
        }
    std::vector<float> want(acc.size());
    for (size_t i = 0; i < acc.size(); ++i)
      want[i] = k.sigmoid ? float(1.0 / (1.0 + std::exp(-acc[i]))) : float(acc[i] < 0 ? 0 : acc[i]);
    ExpectNear(out[0], want);
  }
}

// Two exact 2x2 stride-2 ConvTransposes in a row (a detection head's
// upsampling to full resolution: 24 -> 24, Relu, 24 -> 1, Sigmoid) run
// interleaved, a band of 8 of the first's input rows then the second's rows
// of it: 19 rows are bands of 8, 8 and 3; against a double reference.
void chained_conv_transposes_run_in_bands(void**) {
  const int64_t C = 4, H = 19, W = 30, M = 6, CO = 2;
  Model m;
  auto x = Ramp(size_t(C * H * W), 1.f);
  auto w1 = Ramp(size_t(C * M * 4), 0.4f, 1.f), b1 = Ramp(size_t(M), 0.3f, -0.5f);
  auto w2 = Ramp(size_t(M * CO * 4), 0.3f, 0.7f), b2 = Ramp(size_t(CO), 0.2f, 0.1f);
  m.Value("x", {1, C, H, W});
  m.Const("w1", {C, M, 2, 2}, w1);
  m.Const("b1", {M}, b1);
  m.Const("w2", {M, CO, 2, 2}, w2);
  m.Const("b2", {CO}, b2);
  m.Value("r0", {1, C, H, W});
  m.Value("c1", {1, M, 2 * H, 2 * W});
  m.Value("r1", {1, M, 2 * H, 2 * W});
  m.Value("c2", {1, CO, 4 * H, 4 * W});
  m.Value("y", {1, CO, 4 * H, 4 * W});
  // The Relu in front puts the first one's input in the arena (a graph
  // input and output could be one caller buffer: not interleaved).
  m.Node("Relu", {"x"}, {"r0"});
  for (auto* ct :
       {m.Node("ConvTranspose", {"r0", "w1", "b1"}, {"c1"}), m.Node("Relu", {"c1"}, {"r1"}),
        m.Node("ConvTranspose", {"r1", "w2", "b2"}, {"c2"})}) {
    if (ct->op_type() != "ConvTranspose") continue;
    IntsAttr(ct, "kernel_shape", {2, 2});
    IntsAttr(ct, "strides", {2, 2});
  }
  m.Node("Sigmoid", {"c2"}, {"y"});
  m.Finish({"x"}, {"y"});
  uint32_t ops = 0;
  auto out = CompileAndRun(m, {x}, nullptr, &ops);
  assert_int_equal(ops, 3);
  // Exact 2x2 stride 2: output (2i + u, 2j + v) from input (i, j), tap (u, v).
  auto deconv = [](const std::vector<double>& in, int64_t ci, int64_t h, int64_t w,
                   const std::vector<float>& wt, const std::vector<float>& bias, int64_t co) {
    std::vector<double> o(size_t(co * 4 * h * w));
    for (int64_t c = 0; c < co; ++c)
      for (int64_t i = 0; i < 2 * h; ++i)
        for (int64_t j = 0; j < 2 * w; ++j) {
          double a = bias[size_t(c)];
          for (int64_t k = 0; k < ci; ++k)
            a += in[size_t((k * h + i / 2) * w + j / 2)] *
                 wt[size_t(((k * co + c) * 2 + i % 2) * 2 + j % 2)];
          o[size_t((c * 2 * h + i) * 2 * w + j)] = a;
        }
    return o;
  };
  std::vector<double> xd(x.begin(), x.end());
  for (double& v : xd) v = v < 0 ? 0 : v;
  auto mid = deconv(xd, C, H, W, w1, b1, M);
  for (double& v : mid) v = v < 0 ? 0 : v;
  auto fin = deconv(mid, M, 2 * H, 2 * W, w2, b2, CO);
  std::vector<float> want(fin.size());
  for (size_t i = 0; i < fin.size(); ++i) want[i] = float(1.0 / (1.0 + std::exp(-fin[i])));
  ExpectNear(out[0], want);
}

// x + x * s with s a per-channel gate (a squeeze-and-excitation block that
// adds its input back) compiles to s + 1 on the gate, then one MUL over x:
// no full-size intermediate in the arena. With z + x * s (z another input)
// it stays MUL, ADD with the product in the arena.
void self_gated_residual_is_one_multiply(void**) {
  for (bool same : {true, false}) {
    const int64_t C = 4, H = 5, W = 6;
    Model m;
    auto x = Ramp(size_t(C * H * W), 1.f), z = Ramp(size_t(C * H * W), 0.3f, -2.f);
    auto g = Ramp(size_t(C), 0.25f, 0.1f);
    m.Value("x", {1, C, H, W});
    m.Value("z", {1, C, H, W});
    m.Value("s", {1, C, 1, 1});
    m.Value("m", {1, C, H, W});
    m.Value("y", {1, C, H, W});
    m.Node("Mul", {"x", "s"}, {"m"});
    m.Node("Add", {"m", same ? "x" : "z"}, {"y"});
    m.Finish({"x", "z", "s"}, {"y"});
    uint32_t ops = 0;
    uint64_t arena = 0;
    auto out = CompileAndRun(m, {x, z, g}, &arena, &ops);
    assert_int_equal(ops, 2);
    if (same) assert_true(arena < uint64_t(C * H * W * 4));
    else assert_true(arena >= uint64_t(C * H * W * 4));
    std::vector<float> want(x.size());
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < H * W; ++i) {
        const size_t k = size_t(c * H * W + i);
        want[k] = x[k] * g[size_t(c)] + (same ? x[k] : z[k]);
      }
    ExpectNear(out[0], want);
  }
}

// Conv -> Mul(s, y) -> Add(y, scalar) -> Relu folds into one CONV2D
// (weights and bias scaled, bias shifted, activation fused) when s is a
// scalar or one value per channel ([CO, 1, 1]); an s of shape [CO, 1] scales
// rows (H = CO here), not channels, and stays a separate op.
void conv_channel_affine_folds_into_weights(void**) {
  for (int kind : {0, 1, 2}) {  // scalar, per channel, per row
    const int64_t C = 2, H = 3, W = 6, CO = 3;
    Model m;
    auto x = Ramp(size_t(C * H * W), 1.f);
    auto w = Ramp(size_t(CO * C * 9), 0.4f, 1.f), b = Ramp(size_t(CO), 0.3f, 2.f);
    const std::vector<float> sv =
        kind ? std::vector<float>{1.5f, -0.5f, 2.f} : std::vector<float>{-1.25f};
    m.Value("x", {1, C, H, W});
    m.Const("w", {CO, C, 3, 3}, w);
    m.Const("b", {CO}, b);
    m.Const("s",
            kind == 0 ? std::vector<int64_t>{1}
                      : (kind == 1 ? std::vector<int64_t>{CO, 1, 1} : std::vector<int64_t>{CO, 1}),
            sv);
    m.Const("t", {1}, {0.75f});
    for (const char* v : {"c", "m", "a", "y"}) m.Value(v, {1, CO, H, W});
    IntsAttr(m.Node("Conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
    m.Node("Mul", {"s", "c"}, {"m"});
    m.Node("Add", {"m", "t"}, {"a"});
    m.Node("Relu", {"a"}, {"y"});
    m.Finish({"x"}, {"y"});
    uint32_t ops = 0;
    auto out = CompileAndRun(m, {x}, nullptr, &ops);
    assert_int_equal(ops, kind == 2 ? 4 : 1);  // unfolded: CONV2D, MUL, ADD, RELU
    std::vector<float> want(size_t(CO * H * W));
    for (int64_t o = 0; o < CO; ++o)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          double acc = b[size_t(o)];
          for (int64_t c = 0; c < C; ++c)
            for (int64_t u = 0; u < 3; ++u)
              for (int64_t v = 0; v < 3; ++v) {
                const int64_t ii = i + u - 1, jj = j + v - 1;
                if (ii >= 0 && ii < H && jj >= 0 && jj < W)
                  acc += double(x[size_t((c * H + ii) * W + jj)]) *
                         w[size_t(((o * C + c) * 3 + u) * 3 + v)];
              }
          acc = acc * sv[size_t(kind == 0 ? 0 : (kind == 1 ? o : i))] + 0.75;
          want[size_t((o * H + i) * W + j)] = float(acc < 0 ? 0 : acc);
        }
    ExpectNear(out[0], want);
  }
}

// Conv -> Sigmoid -> Mul(conv, sigmoid), SiLU as torch exports it (either
// operand order), fuses into one CONV2D with SWISH in a 1.7 stream, within
// rounding of x / (1 + exp(-x)). When the Sigmoid's output is also a graph
// output, or the Mul takes another operand, the three ops stay.
void conv_swish_fuses_into_the_conv(void**) {
  for (int form = 0; form < 3; ++form) {
    const int64_t C = 3, H = 5, W = 6, CO = 4;
    Model m;
    auto x = Ramp(size_t(C * H * W), 1.f);
    auto w = Ramp(size_t(CO * C * 9), 0.7f, 1.f);
    m.Value("x", {1, C, H, W});
    m.Const("w", {CO, C, 3, 3}, w);
    for (const char* v : {"c", "s", "y"}) m.Value(v, {1, CO, H, W});
    IntsAttr(m.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
    m.Node("Sigmoid", {"c"}, {"s"});
    if (form == 2) {
      m.Value("z", {1, CO, H, W});
      m.Node("Mul", {"s", "s"}, {"z"});
      m.Node("Add", {"z", "c"}, {"y"});
    } else {
      m.Node("Mul",
             form == 0 ? std::vector<std::string>{"c", "s"} : std::vector<std::string>{"s", "c"},
             {"y"});
    }
    m.Finish({"x"}, {"y"});
    uint32_t ops = 0, minor = 0;
    auto out = CompileAndRun(m, {x}, nullptr, &ops, &minor);
    assert_int_equal(ops, form == 2 ? 4 : 1);
    assert_int_equal(minor, form == 2 ? 0 : 7);
    std::vector<float> want(size_t(CO * H * W));
    for (int64_t o = 0; o < CO; ++o)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t u = 0; u < 3; ++u)
              for (int64_t v = 0; v < 3; ++v) {
                const int64_t ii = i + u - 1, jj = j + v - 1;
                if (ii >= 0 && ii < H && jj >= 0 && jj < W)
                  acc += double(x[size_t((c * H + ii) * W + jj)]) *
                         w[size_t(((o * C + c) * 3 + u) * 3 + v)];
              }
          const double s = 1.0 / (1.0 + std::exp(-acc));
          want[size_t((o * H + i) * W + j)] = float(form == 2 ? s * s + acc : acc * s);
        }
    ExpectNear(out[0], want);
  }
}

// LayerNorm as exporters decompose it (ReduceMean, Sub, Pow 2, ReduceMean,
// Add eps, Sqrt, Div, Mul scale, Add bias), then MatMul + bias Add, then
// exact GELU (Div sqrt 2, Erf, Add 1, Mul x, Mul 0.5): one LAYER_NORM and
// one GEMM with the bias and GELU fused, in a 1.8 stream, with the unfused
// graph's numbers.
void layer_norm_matmul_gelu_fuse_to_two_ops(void**) {
  const int64_t S = 5, D = 12, N = 10;
  Model m;
  auto x = Ramp(size_t(S * D), 2.f, 0.3f);
  for (float& v : x) v += 1.5f;
  auto g = Ramp(size_t(D), 1.f, 1.f), b = Ramp(size_t(D), 0.5f, 2.f);
  auto w = Ramp(size_t(D * N), 0.4f, 3.f), bias = Ramp(size_t(N), 0.3f, 4.f);
  m.Value("x", {S, D});
  m.Const("two", {}, {2.f});
  m.Const("eps", {}, {1e-5f});
  m.Const("g", {D}, g);
  m.Const("b", {D}, b);
  m.Const("w", {D, N}, w);
  m.Const("bias", {N}, bias);
  m.Const("rt2", {}, {1.4142135f});
  m.Const("one", {}, {1.f});
  m.Const("half", {}, {0.5f});
  for (const char* v : {"mean", "var", "ve", "sd"}) m.Value(v, {S, 1});
  for (const char* v : {"d", "sq", "nrm", "sc", "ln"}) m.Value(v, {S, D});
  for (const char* v : {"mm", "h", "u", "e", "p", "q", "y"}) m.Value(v, {S, N});
  IntsAttr(m.Node("ReduceMean", {"x"}, {"mean"}), "axes", {-1});
  m.Node("Sub", {"x", "mean"}, {"d"});
  m.Node("Pow", {"d", "two"}, {"sq"});
  IntsAttr(m.Node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  m.Node("Add", {"var", "eps"}, {"ve"});
  m.Node("Sqrt", {"ve"}, {"sd"});
  m.Node("Div", {"d", "sd"}, {"nrm"});
  m.Node("Mul", {"nrm", "g"}, {"sc"});
  m.Node("Add", {"sc", "b"}, {"ln"});
  m.Node("MatMul", {"ln", "w"}, {"mm"});
  m.Node("Add", {"bias", "mm"}, {"h"});
  m.Node("Div", {"h", "rt2"}, {"u"});
  m.Node("Erf", {"u"}, {"e"});
  m.Node("Add", {"e", "one"}, {"p"});
  m.Node("Mul", {"h", "p"}, {"q"});
  m.Node("Mul", {"q", "half"}, {"y"});
  m.Finish({"x"}, {"y"});
  uint32_t ops = 0, minor = 0;
  auto out = CompileAndRun(m, {x}, nullptr, &ops, &minor);
  assert_int_equal(ops, 2);
  assert_int_equal(minor, 8);
  std::vector<float> want(size_t(S * N));
  for (int64_t i = 0; i < S; ++i) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < D; ++k) mean += x[size_t(i * D + k)];
    mean /= double(D);
    for (int64_t k = 0; k < D; ++k) var += std::pow(x[size_t(i * D + k)] - mean, 2);
    var /= double(D);
    std::vector<double> ln(static_cast<size_t>(D));
    for (int64_t k = 0; k < D; ++k)
      ln[size_t(k)] =
          (x[size_t(i * D + k)] - mean) / std::sqrt(var + 1e-5) * g[size_t(k)] + b[size_t(k)];
    for (int64_t j = 0; j < N; ++j) {
      double h = bias[size_t(j)];
      for (int64_t k = 0; k < D; ++k) h += ln[size_t(k)] * w[size_t(k * N + j)];
      want[size_t(i * N + j)] = float(h * (std::erf(h / std::sqrt(2.0)) + 1) * 0.5);
    }
  }
  ExpectNear(out[0], want);
}

// Attention as torch exports it: q, k, v [S, H, dh] -> Transposes (heads
// first; K^T) -> Div(q, sqrt(dh)) -> MatMul -> Softmax -> MatMul with v.
// The Transposes and the Div fold into two BATCH_MATMULs' strides and
// alpha: three ops, the numbers of the literal graph.
void attention_transposes_fold_into_batch_matmul(void**) {
  const int64_t S = 7, H = 3, dh = 4;
  Model m;
  auto q = Ramp(size_t(S * H * dh), 1.f, 0.1f), k = Ramp(size_t(S * H * dh), 1.f, 0.7f),
       v = Ramp(size_t(S * H * dh), 1.f, 1.3f);
  for (const char* n : {"q", "k", "v"}) m.Value(n, {S, H, dh});
  m.Const("scale", {}, {2.f});
  m.Value("qt", {H, S, dh});
  m.Value("qs", {H, S, dh});
  m.Value("kt", {H, dh, S});
  m.Value("vt", {H, S, dh});
  m.Value("s", {H, S, S});
  m.Value("p", {H, S, S});
  m.Value("o", {H, S, dh});
  IntsAttr(m.Node("Transpose", {"q"}, {"qt"}), "perm", {1, 0, 2});
  m.Node("Div", {"qt", "scale"}, {"qs"});
  IntsAttr(m.Node("Transpose", {"k"}, {"kt"}), "perm", {1, 2, 0});
  IntsAttr(m.Node("Transpose", {"v"}, {"vt"}), "perm", {1, 0, 2});
  m.Node("MatMul", {"qs", "kt"}, {"s"});
  IntAttr(m.Node("Softmax", {"s"}, {"p"}), "axis", -1);
  m.Node("MatMul", {"p", "vt"}, {"o"});
  m.Finish({"q", "k", "v"}, {"o"});
  uint32_t ops = 0;
  auto out = CompileAndRun(m, {q, k, v}, nullptr, &ops);
  assert_int_equal(ops, 3);
  std::vector<float> want(size_t(H * S * dh));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < S; ++i) {
      std::vector<double> sc(static_cast<size_t>(S));
      double mx = -1e30, sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < dh; ++c)
          acc += q[size_t((i * H + h) * dh + c)] / 2.0 * k[size_t((j * H + h) * dh + c)];
        sc[size_t(j)] = acc;
        mx = std::max(mx, acc);
      }
      for (double& e : sc) sum += (e = std::exp(e - mx));
      for (int64_t c = 0; c < dh; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j)
          acc += sc[size_t(j)] / sum * v[size_t((j * H + h) * dh + c)];
        want[size_t((h * S + i) * dh + c)] = float(acc);
      }
    }
  ExpectNear(out[0], want);
}

// Conv -> x * clip(x + 3, 0, 6) / 6 -> Mul(s) -> Add(t), as ocr_det writes
// hard-swish, fuses into one CONV2D with HARD_SWISH (alpha s, beta t) in a
// 1.3 stream, with the unfused ops' results (the driver does their
// operations in their order). With 5 in place of 6 it is not hard-swish: 7
// ops stay.
void conv_hard_swish_fuses_into_the_conv(void**) {
  for (float six : {6.f, 5.f}) {
    const int64_t C = 2, H = 4, W = 7, CO = 3;
    Model m;
    auto x = Ramp(size_t(C * H * W), 1.f);
    auto w = Ramp(size_t(CO * C), 0.9f, 1.f);
    m.Value("x", {1, C, H, W});
    m.Const("w", {CO, C, 1, 1}, w);
    m.Const("three", {1}, {3.f});
    m.Const("zero", {}, {0.f});
    m.Const("six", {}, {six});
    m.Const("d", {1}, {six});
    m.Const("s", {1}, {-1.25f});
    m.Const("t", {1}, {0.5f});
    for (const char* v : {"c", "p", "k", "q", "h", "m", "y"}) m.Value(v, {1, CO, H, W});
    m.Node("Conv", {"x", "w"}, {"c"});
    m.Node("Add", {"c", "three"}, {"p"});
    m.Node("Clip", {"p", "zero", "six"}, {"k"});
    m.Node("Mul", {"c", "k"}, {"q"});
    m.Node("Div", {"q", "d"}, {"h"});
    m.Node("Mul", {"s", "h"}, {"m"});
    m.Node("Add", {"m", "t"}, {"y"});
    m.Finish({"x"}, {"y"});
    uint32_t ops = 0, minor = 0;
    auto out = CompileAndRun(m, {x}, nullptr, &ops, &minor);
    assert_int_equal(ops, six == 6.f ? 1 : 7);
    assert_int_equal(minor, six == 6.f ? 3 : 0);
    std::vector<float> want(size_t(CO * H * W));
    for (int64_t o = 0; o < CO; ++o)
      for (int64_t p = 0; p < H * W; ++p) {
        float acc = 0.f;
        for (int64_t c = 0; c < C; ++c) acc += x[size_t(c * H * W + p)] * w[size_t(o * C + c)];
        float k = acc + 3.f;
        k = k < 0.f ? 0.f : (k > six ? six : k);
        const float q = acc * k, hs = q / six, mm = -1.25f * hs;
        want[size_t(o * H * W + p)] = mm + 0.5f;
      }
    ExpectNear(out[0], want);
  }
}

// Conv -> LeakyRelu -> Max(scalar constant), as the keyword embedding model
// writes it 19 times, fuses into one CONV2D with LEAKY_RELU_MAX in a 1.5
// stream, with the unfused ops' floats (NaN-free inputs here; the ukernels
// test covers NaN). A Max of two tensors, or a LeakyRelu with a second
// consumer, is not fused.
void conv_leaky_relu_max_fuses_into_the_conv(void**) {
  for (int variant = 0; variant < 3; ++variant) {
    const int64_t C = 2, H = 3, W = 9, CO = 5;
    Model m;
    auto x = Ramp(size_t(C * H * W), 1.f);
    auto w = Ramp(size_t(CO * C), 0.9f, 1.f);
    m.Value("x", {1, C, H, W});
    m.Const("w", {CO, C, 1, 1}, w);
    m.Const("floor", {1, 1, 1, 1}, {-0.4f});
    for (const char* v : {"c", "l", "y", "z"}) m.Value(v, {1, CO, H, W});
    m.Node("Conv", {"x", "w"}, {"c"});
    FloatAttr(m.Node("LeakyRelu", {"c"}, {"l"}), "alpha", 0.2f);
    m.Node("Max", {"l", variant == 1 ? "c" : "floor"}, {"y"});
    if (variant == 2) m.Node("Relu", {"l"}, {"z"});
    m.Finish({"x"},
             variant == 2 ? std::vector<std::string>{"y", "z"} : std::vector<std::string>{"y"});
    uint32_t ops = 0, minor = 0;
    auto out = CompileAndRun(m, {x}, nullptr, &ops, &minor);
    assert_int_equal(ops, variant == 0 ? 1 : 3);
    assert_int_equal(minor == 5, variant == 0);
    std::vector<float> want(size_t(CO * H * W));
    for (int64_t o = 0; o < CO; ++o)
      for (int64_t p = 0; p < H * W; ++p) {
        float acc = 0.f;
        for (int64_t c = 0; c < C; ++c) acc += x[size_t(c * H * W + p)] * w[size_t(o * C + c)];
        const float l = acc >= 0.f ? acc : acc * 0.2f;
        const float other = variant == 1 ? acc : -0.4f;
        want[size_t(o * H * W + p)] = l > other ? l : other;
      }
    ExpectNear(out[0], want);
  }
}

// Add with a broadcast constant, Sigmoid, Transpose and Concat, with a chain
// long enough that the planner must reuse arena space.
void elementwise_transpose_concat_and_arena_reuse(void**) {
  Model m;
  auto x = Ramp(24, 1.f);
  auto k = Ramp(4, 0.5f, 1.f);
  m.Value("x", {2, 3, 4});
  m.Const("k", {4}, k);
  const char* names[] = {"a", "s", "t", "u", "v"};
  for (const char* n : names) m.Value(n, {2, 3, 4});
  m.Value("tr", {4, 2, 3});
  m.Value("y", {2, 6, 4});
  m.Node("Add", {"x", "k"}, {"a"});
  m.Node("Sigmoid", {"a"}, {"s"});
  m.Node("Mul", {"s", "a"}, {"t"});
  m.Node("Tanh", {"t"}, {"u"});
  m.Node("Relu", {"u"}, {"v"});
  IntsAttr(m.Node("Transpose", {"v"}, {"tr"}), "perm", {2, 0, 1});
  IntAttr(m.Node("Concat", {"v", "x"}, {"y"}), "axis", 1);
  m.Finish({"x"}, {"y", "tr"});
  uint64_t arena = 0;
  auto out = CompileAndRun(m, {x}, &arena);
  std::vector<float> v(24), y(48), tr(24);
  for (int i = 0; i < 24; ++i) {
    float a = x[i] + k[i % 4], s = 1.f / (1.f + std::exp(-a)), u = std::tanh(s * a);
    v[i] = u > 0 ? u : 0;
  }
  for (int a = 0; a < 2; ++a)
    for (int j = 0; j < 12; ++j) {
      y[a * 24 + j] = v[a * 12 + j];
      y[a * 24 + 12 + j] = x[a * 12 + j];
    }
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int d = 0; d < 4; ++d) tr[(d * 2 + a) * 3 + b] = v[(a * 3 + b) * 4 + d];
  ExpectNear(out[0], y);
  ExpectNear(out[1], tr);
  // 5 intermediates of 96 bytes (128 aligned); at most 3 live at once.
  assert_true(arena <= 3 * 128);
}

void supports_gives_reasons(void**) {
  auto backend = CreateVnpuBackend();
  Model m;
  m.Value("x", {1, 3, 4, 4});
  m.Value("w", {2, 3, 3, 3});  // not a constant
  m.Value("y", {1, 2, 2, 2});
  m.Value("d", {});
  m.Value("x2", {2, 3});
  auto* sq = m.Node("Softsign", {"x"}, {"y"});
  auto* conv = m.Node("Conv", {"x", "w"}, {"y"});
  m.Const("B", {3, 2}, Ramp(6, 1.f));
  m.Value("g", {3, 2});
  auto* gemm = m.Node("Gemm", {"x2", "B"}, {"g"});
  IntAttr(gemm, "transA", 1);
  Support s = backend->Supports(*sq, m.info);
  assert_false(s.supported);
  assert_non_null(strstr(s.reason.c_str(), "Softsign"));
  s = backend->Supports(*conv, m.info);
  assert_false(s.supported);
  assert_non_null(strstr(s.reason.c_str(), "not a constant"));
  s = backend->Supports(*gemm, m.info);
  assert_false(s.supported);
  assert_non_null(strstr(s.reason.c_str(), "transA"));
  m.Value("dyn", {-1, 3});
  auto* relu = m.Node("Relu", {"dyn"}, {"x2"});
  s = backend->Supports(*relu, m.info);
  assert_false(s.supported);
  assert_non_null(strstr(s.reason.c_str(), "not static"));
}

// A float16 model: the edges stay float16 (CONVERT widens the input and
// narrows the output), the constant stays a float16 weight (stream 1.2, the
// driver widens it at bind), the Add runs in float32; narrowing rounds ties
// to even and overflows to infinity.
void float16_edges_round_to_nearest_even(void**) {
  Model m;
  m.Value("x", {6});
  m.info.types["x"].dtype = onnx::TensorProto::FLOAT16;
  m.consts.emplace_back();
  onnx::TensorProto& c = m.consts.back();
  c.set_name("c");
  c.set_data_type(onnx::TensorProto::FLOAT16);
  c.add_dims(6);
  std::string raw;
  for (float v : {1.f, 1.f, 16.f, 15.f, 0.5f, 0.25f}) {
    uint16_t h = RefHalf(v);
    raw.push_back(char(h & 0xff));
    raw.push_back(char(h >> 8));
  }
  c.set_raw_data(raw);
  m.info.constants["c"] = &c;
  m.Value("c", {6});
  m.info.types["c"].dtype = onnx::TensorProto::FLOAT16;
  m.Value("y", {6});
  m.info.types["y"].dtype = onnx::TensorProto::FLOAT16;
  m.Node("Add", {"x", "c"}, {"y"});
  m.Finish({"x"}, {"y"});
  uint32_t ops = 0;
  auto out = CompileAndRun(m, {{2048.f, 2050.f, 65504.f, 65504.f, 1.f, -3.f}}, nullptr, &ops);
  assert_int_equal(ops, 3);  // CONVERT, BINARY, CONVERT
  // 2049 ties to 2048 (even), 2051 to 2052, 65520 overflows, 65519 stays.
  const float want[6] = {2048.f, 2052.f, INFINITY, 65504.f, 1.5f, -2.75f};
  for (int i = 0; i < 6; ++i) assert_true(out[0][size_t(i)] == want[i]);

  WeightStore ws;
  CompiledGraph cg = CreateVnpuBackend()->Compile(m.part, m.info, ws);
  const auto* g = epctx::vnpu::fb::GetGraph(cg.payload.data());
  assert_int_equal(g->version_minor(), 2);
  int half_weights = 0;
  for (const auto* t : *g->tensors())
    if (t->location() == epctx::vnpu::fb::Location::WEIGHT) {
      assert_true(t->dtype() == epctx::vnpu::fb::DType::FLOAT16);
      assert_int_equal(t->size(), 12);
      ++half_weights;
    }
  assert_int_equal(half_weights, 1);
  assert_int_equal(ws.bytes_added(), 12);
}

// Float16 weights widened by a Cast that the compiler folded arrive as a
// float32 constant whose values are all float16 values: a tensor of at
// least 1024 such values is stored as float16 (half the bytes), one with a
// value float16 cannot hold stays float32.
void float16_valued_weights_store_as_float16(void**) {
  for (bool exact : {true, false}) {
    Model m;
    const int64_t M = 3, K = 64, N = 32;
    auto x = Ramp(size_t(M * K), 1.f);
    std::vector<float> w(size_t(K * N));
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 61) - 30) / 64.f;  // exact
    if (!exact) w[5] = 0.1f;
    m.Value("x", {M, K});
    m.Const("w", {K, N}, w);
    m.Value("y", {M, N});
    m.Node("MatMul", {"x", "w"}, {"y"});
    m.Finish({"x"}, {"y"});
    auto out = CompileAndRun(m, {x});
    ExpectMatMul(x, w, out[0], M, K, N);
    WeightStore ws;
    CompiledGraph cg = CreateVnpuBackend()->Compile(m.part, m.info, ws);
    const auto* g = epctx::vnpu::fb::GetGraph(cg.payload.data());
    size_t half = 0;
    for (const auto* t : *g->tensors())
      if (t->location() == epctx::vnpu::fb::Location::WEIGHT &&
          t->dtype() == epctx::vnpu::fb::DType::FLOAT16)
        ++half;
    assert_int_equal(half, exact ? 1 : 0);
    assert_int_equal(g->version_minor(), exact ? 2 : 0);
    assert_true(ws.bytes_added() >= size_t(K * N) * (exact ? 2 : 4));
    assert_true(ws.bytes_added() < size_t(K * N) * (exact ? 4 : 8));
  }
}

void weight_store_dedupes_and_aligns(void**) {
  WeightStore ws;
  float a[3] = {1, 2, 3}, b[2] = {4, 5};
  assert_int_equal(ws.Add(a, sizeof a), 0);
  assert_int_equal(ws.Add(b, sizeof b), 64);
  assert_int_equal(ws.Add(a, sizeof a), 0);
  assert_int_equal(ws.bytes().size(), 72);
  assert_int_equal(ws.bytes_added(), 32);
}

// A QDQ convolution followed by Relu6 in its output's quantisation
// (DequantizeLinear -> Clip(0, 6) -> QuantizeLinear at the same scale, as
// torch exports MobileNet-V2): the lookup table is a clamp, so it becomes
// the QCONV2D's output range (QUANTIZE, QCONV2D, DEQUANTIZE). When the
// convolution's bytes are also read elsewhere (a second output) the table
// stays (four ops); both give the same values.
void qdq_conv_relu6_clamps_in_the_conv(void**) {
  const int64_t C = 3, H = 5, W = 6, CO = 4;
  const auto x = Ramp(size_t(C * H * W), 4.f);
  std::vector<float> got[2];
  for (int shared = 0; shared < 2; ++shared) {
    Model m;
    m.Value("x", {1, C, H, W});
    std::string wq;
    for (int64_t i = 0; i < CO * C * 9; ++i) wq.push_back(char(int8_t((i * 37) % 255 - 127)));
    m.Raw("w_q", onnx::TensorProto::INT8, {CO, C, 3, 3}, wq);
    m.Const("w_s", {}, {0.004f});
    m.Raw("w_z", onnx::TensorProto::INT8, {}, std::string(1, '\0'));
    m.Const("x_s", {}, {0.05f});
    m.Raw("x_z", onnx::TensorProto::UINT8, {}, std::string(1, char(128)));
    m.Const("y_s", {}, {0.03f});
    m.Raw("y_z", onnx::TensorProto::UINT8, {}, std::string(1, char(40)));
    m.Const("zero", {}, {0.f});
    m.Const("six", {}, {6.f});
    for (const char* v : {"xq", "cq", "kq"})
      m.Value(v, {1, v[0] == 'x' ? C : CO, H, W}, onnx::TensorProto::UINT8);
    m.Value("xd", {1, C, H, W});
    m.Value("wd", {CO, C, 3, 3});
    for (const char* v : {"c", "cd", "k", "y", "c_out"}) m.Value(v, {1, CO, H, W});
    m.Node("QuantizeLinear", {"x", "x_s", "x_z"}, {"xq"});
    m.Node("DequantizeLinear", {"xq", "x_s", "x_z"}, {"xd"});
    m.Node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"wd"});
    IntsAttr(m.Node("Conv", {"xd", "wd"}, {"c"}), "pads", {1, 1, 1, 1});
    m.Node("QuantizeLinear", {"c", "y_s", "y_z"}, {"cq"});
    m.Node("DequantizeLinear", {"cq", "y_s", "y_z"}, {"cd"});
    m.Node("Clip", {"cd", "zero", "six"}, {"k"});
    m.Node("QuantizeLinear", {"k", "y_s", "y_z"}, {"kq"});
    m.Node("DequantizeLinear", {"kq", "y_s", "y_z"}, {"y"});
    if (shared) m.Node("DequantizeLinear", {"cq", "y_s", "y_z"}, {"c_out"});
    m.Finish({"x"},
             shared ? std::vector<std::string>{"y", "c_out"} : std::vector<std::string>{"y"});
    uint32_t ops = 0;
    auto out = CompileAndRun(m, {x}, nullptr, &ops);
    assert_int_equal(ops, shared ? 5 : 3);
    got[shared] = out[0];
  }
  assert_int_equal(got[0].size(), got[1].size());
  int clamped = 0;
  for (size_t i = 0; i < got[0].size(); ++i) {
    assert_true(got[0][i] == got[1][i]);
    assert_true(got[0][i] >= 0.f && got[0][i] <= 6.f);
    clamped += got[0][i] == 0.f;
  }
  assert_true(clamped > 0);  // the clamp was exercised
}

// A residual block's Add then Relu between QDQ pairs: one QBINARY_CLAMPED
// (stream 1.10) instead of QBINARY and a clamp table; every output >= 0.
// Without the Relu: a plain QBINARY and no 1.10 stream.
void qdq_add_relu_is_one_clamped_qbinary(void**) {
  const int64_t C = 3, H = 4, W = 5;
  const auto x1 = Ramp(size_t(C * H * W), 3.f), x2 = Ramp(size_t(C * H * W), -2.f);
  for (int relu = 0; relu < 2; ++relu) {
    Model m;
    for (const char* v : {"a", "b"}) m.Value(v, {1, C, H, W});
    m.Const("s", {}, {0.04f});
    m.Raw("z", onnx::TensorProto::UINT8, {}, std::string(1, char(128)));
    m.Const("ys", {}, {0.05f});
    m.Raw("yz", onnx::TensorProto::UINT8, {}, std::string(1, char(100)));
    for (const char* v : {"aq", "bq", "sq"}) m.Value(v, {1, C, H, W}, onnx::TensorProto::UINT8);
    for (const char* v : {"ad", "bd", "sum", "r", "y"}) m.Value(v, {1, C, H, W});
    m.Node("QuantizeLinear", {"a", "s", "z"}, {"aq"});
    m.Node("DequantizeLinear", {"aq", "s", "z"}, {"ad"});
    m.Node("QuantizeLinear", {"b", "s", "z"}, {"bq"});
    m.Node("DequantizeLinear", {"bq", "s", "z"}, {"bd"});
    m.Node("Add", {"ad", "bd"}, {"sum"});
    if (relu) m.Node("Relu", {"sum"}, {"r"});
    m.Node("QuantizeLinear", {relu ? "r" : "sum", "ys", "yz"}, {"sq"});
    m.Node("DequantizeLinear", {"sq", "ys", "yz"}, {"y"});
    m.Finish({"a", "b"}, {"y"});
    uint32_t ops = 0, minor = 0;
    auto out = CompileAndRun(m, {x1, x2}, nullptr, &ops, &minor);
    assert_int_equal(ops, 4);  // QUANTIZE x2, QBINARY(_CLAMPED), DEQUANTIZE
    assert_int_equal(minor >= 10, relu);
    int zeros = 0, negative = 0;
    for (float v : out[0]) {
      zeros += v == 0.f;
      negative += v < 0.f;
    }
    if (relu) {
      assert_int_equal(negative, 0);
      assert_true(zeros > 0);  // the clamp was exercised
    } else {
      assert_true(negative > 0);
    }
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conv_bn_relu_pool_gemm_softmax_matches_reference),
      cmocka_unit_test(float16_valued_weights_store_as_float16),
      cmocka_unit_test(maxpool_stride2_windows_match_reference),
      cmocka_unit_test(few_output_channels_compile_to_conv2d_taps),
      cmocka_unit_test(conv_paths_match_reference_on_odd_sizes),
      cmocka_unit_test(conv_transpose_matches_reference),
      cmocka_unit_test(chained_conv_transposes_run_in_bands),
      cmocka_unit_test(conv_channel_affine_folds_into_weights),
      cmocka_unit_test(self_gated_residual_is_one_multiply),
      cmocka_unit_test(conv_hard_swish_fuses_into_the_conv),
      cmocka_unit_test(conv_swish_fuses_into_the_conv),
      cmocka_unit_test(conv_leaky_relu_max_fuses_into_the_conv),
      cmocka_unit_test(elementwise_transpose_concat_and_arena_reuse),
      cmocka_unit_test(supports_gives_reasons),
      cmocka_unit_test(matmul_rows_choose_gemm_blocked_from_eight),
      cmocka_unit_test(weight_store_dedupes_and_aligns),
      cmocka_unit_test(float16_edges_round_to_nearest_even),
      cmocka_unit_test(layer_norm_matmul_gelu_fuse_to_two_ops),
      cmocka_unit_test(attention_transposes_fold_into_batch_matmul),
      cmocka_unit_test(qdq_conv_relu6_clamps_in_the_conv),
      cmocka_unit_test(qdq_add_relu_is_one_clamped_qbinary),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
