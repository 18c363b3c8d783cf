// SPDX-License-Identifier: Apache-2.0
// MAC counts (epctx_host/macs.h) against an independent count: each case
// walks the loop nest of a naive implementation of the op and counts its
// multiply-adds, then compares with NodeMacs on a generated graph after
// specialisation. The compile report adds them up per partition and for
// the CPU, and counts the nodes whose shapes stayed unknown.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "epctx_host/compile_api.h"
#include "epctx_host/macs.h"
#include "epctx_host/specialize.h"
#include "model_builder.h"

// cmocka last: its fail() macro clashes with <ios>.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace epctx::host;
using testutil::ModelBuilder;
using testutil::SetIntsAttr;

namespace {

void IntAttr(onnx::NodeProto& n, const char* name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void StringAttr(onnx::NodeProto& n, const char* name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// NodeMacs of the node writing `output`, after Specialize.
MacCount MacsOf(onnx::ModelProto m, const std::string& output) {
  Specialize(m, SpecializeOptions(), "m.onnx", Progress());
  const GraphInfo info = BuildGraphInfo(m);
  for (const auto& n : m.graph().node())
    if (n.output(0) == output) return NodeMacs(n, info);
  fail_msg("no node writes %s", output.c_str());
  return MacCount();
}

uint64_t KnownMacsOf(const onnx::ModelProto& m, const std::string& output) {
  const MacCount c = MacsOf(m, output);
  assert_true(c.known);
  return c.macs;
}

void batched_matmul_with_broadcast_counts_every_batch(void**) {
  // A [2,1,3,4] x B [5,4,6] (both activations): batch broadcasts to [2,5].
  uint64_t naive = 0;
  for (int b0 = 0; b0 < 2; ++b0)
    for (int b1 = 0; b1 < 5; ++b1)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j)
          for (int k = 0; k < 4; ++k) ++naive;
  ModelBuilder b;
  b.Input("a", {2, 1, 3, 4}).Input("b", {5, 4, 6}).Output("y", {2, 5, 3, 6});
  b.Node("MatMul", {"a", "b"}, {"y"});
  assert_int_equal(KnownMacsOf(b.model(), "y"), naive);

  // A 1-D A is a row vector: [4] x [3,4,6] -> [3,6].
  naive = 0;
  for (int b0 = 0; b0 < 3; ++b0)
    for (int j = 0; j < 6; ++j)
      for (int k = 0; k < 4; ++k) ++naive;
  ModelBuilder v;
  v.Input("a", {4}).Input("b", {3, 4, 6}).Output("y", {3, 6});
  v.Node("MatMul", {"a", "b"}, {"y"});
  assert_int_equal(KnownMacsOf(v.model(), "y"), naive);
}

void gemm_honours_trans_a_and_trans_b(void**) {
  // A^T: [5,3] -> M 3, K 5; B^T: [7,5] -> N 7.
  uint64_t naive = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 7; ++j)
      for (int k = 0; k < 5; ++k) ++naive;
  ModelBuilder b;
  b.Input("a", {5, 3}).Init("w", {7, 5}).Init("c", {7}).Output("y", {3, 7});
  auto& n = b.Node("Gemm", {"a", "w", "c"}, {"y"});
  IntAttr(n, "transA", 1);
  IntAttr(n, "transB", 1);
  assert_int_equal(KnownMacsOf(b.model(), "y"), naive);
}

void grouped_conv_counts_its_group_channels_only(void**) {
  // x [1,4,6,6], 6 filters of 2 channels (group 2), 3x3, stride 2, pad 1.
  const int C = 4, H = 6, M = 6, G = 2, K = 3, S = 2, P = 1;
  const int OH = (H + 2 * P - K) / S + 1;
  uint64_t naive = 0;
  for (int m = 0; m < M; ++m)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OH; ++ow)
        for (int c = 0; c < C / G; ++c)
          for (int kh = 0; kh < K; ++kh)
            for (int kw = 0; kw < K; ++kw) ++naive;
  ModelBuilder b;
  b.Input("x", {1, C, H, H}).Init("w", {M, C / G, K, K}).Output("y", {1, M, OH, OH});
  auto& n = b.Node("Conv", {"x", "w"}, {"y"});
  IntAttr(n, "group", G);
  SetIntsAttr(n, "strides", {S, S});
  SetIntsAttr(n, "pads", {P, P, P, P});
  assert_int_equal(KnownMacsOf(b.model(), "y"), naive);
}

void conv_transpose_spreads_each_input_over_its_group(void**) {
  // x [1,4,3,3], group 2, 2 output channels per group, 3x3, stride 2.
  const int C = 4, H = 3, G = 2, MG = 2, K = 3;
  uint64_t naive = 0;
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < H; ++w)
        for (int m = 0; m < MG; ++m)
          for (int kh = 0; kh < K; ++kh)
            for (int kw = 0; kw < K; ++kw) ++naive;
  ModelBuilder b;
  b.Input("x", {1, C, H, H}).Init("w", {C, MG, K, K}).Output("y", {1, G * MG, 7, 7});
  auto& n = b.Node("ConvTranspose", {"x", "w"}, {"y"});
  IntAttr(n, "group", G);
  SetIntsAttr(n, "strides", {2, 2});
  assert_int_equal(KnownMacsOf(b.model(), "y"), naive);
}

void recurrent_ops_count_gates_steps_and_directions(void**) {
  const int T = 5, B = 2, I = 3, H = 4;
  struct Case {
    const char* op;
    int gates, dirs;
  } cases[] = {{"LSTM", 4, 2}, {"GRU", 3, 1}, {"RNN", 1, 1}};
  for (const Case& c : cases) {
    // Per step, batch row and direction, each gate row reads x and h.
    uint64_t naive = 0;
    for (int t = 0; t < T; ++t)
      for (int b = 0; b < B; ++b)
        for (int d = 0; d < c.dirs; ++d)
          for (int row = 0; row < c.gates * H; ++row)
            for (int k = 0; k < I + H; ++k) ++naive;
    ModelBuilder b;
    b.Input("x", {T, B, I}).Output("y", {T, c.dirs, B, H});
    b.Init("W", {c.dirs, c.gates * H, I}).Init("R", {c.dirs, c.gates * H, H});
    auto& n = b.Node(c.op, {"x", "W", "R"}, {"y"});
    IntAttr(n, "hidden_size", H);
    if (c.dirs == 2) StringAttr(n, "direction", "bidirectional");
    assert_int_equal(KnownMacsOf(b.model(), "y"), naive);
  }
}

void einsum_counts_every_label_combination(void**) {
  // bij,bjk->bik on [2,3,4] x [2,4,5].
  uint64_t naive = 0;
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k)
        for (int j = 0; j < 4; ++j) ++naive;
  ModelBuilder b;
  b.Input("a", {2, 3, 4}).Input("b", {2, 4, 5}).Output("y", {2, 3, 5});
  StringAttr(b.Node("Einsum", {"a", "b"}, {"y"}), "equation", "bij,bjk->bik");
  assert_int_equal(KnownMacsOf(b.model(), "y"), naive);

  // An ellipsis stands for the leading dims: ...ij,jk on [3,2,4] x [4,6].
  ModelBuilder e;
  e.Input("a", {3, 2, 4}).Init("w", {4, 6}).Output("y", {3, 2, 6});
  StringAttr(e.Node("Einsum", {"a", "w"}, {"y"}), "equation", "...ij, jk -> ...ik");
  assert_int_equal(KnownMacsOf(e.model(), "y"), 3u * 2 * 6 * 4);
}

void unknown_shapes_are_reported_not_counted_as_zero(void**) {
  // The batch dim stays symbolic: the MatMul's MACs are unknown.
  ModelBuilder b;
  b.Input("x", {-1, 4}).Init("w", {4, 5}).Output("y", {-1, 5});
  b.Node("MatMul", {"x", "w"}, {"y"});
  assert_false(MacsOf(b.model(), "y").known);
  // An op without MACs is known to have none.
  ModelBuilder r;
  r.Input("x", {-1, 4}).Output("y", {-1, 4});
  r.Node("Relu", {"x"}, {"y"});
  const MacCount relu = MacsOf(r.model(), "y");
  assert_true(relu.known);
  assert_int_equal(relu.macs, 0);

  CompileSettings s;
  s.ep = "none";
  s.output_to_memory = true;
  s.config.emplace_back("ep.context_embed_mode", "1");
  CompileResult res = CompileModel(ModelInput::FromBuffer(b.model().SerializeAsString(), "u"), s);
  assert_true(res.ok());
  assert_int_equal(res.models.at(0).macs_unknown_nodes, 1);
  assert_int_equal(res.models[0].macs_total, 0);
  assert_false(res.models[0].cpu_nodes.at(0).macs_known);
  assert_non_null(strstr(FormatResult(res, "none").c_str(), "(1 node with unknown MACs)"));
  assert_non_null(strstr(FormatResultJson(res, "none").c_str(), "\"macs_unknown_nodes\": 1"));
}

void report_splits_macs_between_partitions_and_cpu(void**) {
  // Conv on vnpu; the activation x activation MatMul kept on the CPU.
  ModelBuilder b;
  b.Input("x", {1, 2, 4, 4}).Init("w", {2, 2, 3, 3}).Output("y", {1, 2, 4, 4});
  SetIntsAttr(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("MatMul", {"c", "c"}, {"y"});
  const uint64_t conv = 1u * 2 * 4 * 4 * (2 * 3 * 3), matmul = 1u * 2 * 4 * 4 * 4;
  CompileSettings s;
  s.ep = "vnpu";
  s.backend_options.emplace_back("disable_ops", "MatMul");
  s.output_to_memory = true;
  s.config.emplace_back("ep.context_embed_mode", "1");
  CompileResult res = CompileModel(ModelInput::FromBuffer(b.model().SerializeAsString(), "r"), s);
  if (!res.ok()) fail_msg("%s", res.status.message.c_str());
  const ModelReport& m = res.models.at(0);
  assert_int_equal(m.macs_total, conv + matmul);
  assert_int_equal(m.macs_npu, conv);
  assert_int_equal(m.macs_cpu, matmul);
  assert_int_equal(m.macs_unknown_nodes, 0);
  assert_int_equal(m.partition_reports.size(), 1);
  assert_int_equal(m.partition_reports[0].macs, conv);
  const std::string json = FormatResultJson(res, "vnpu");
  assert_non_null(strstr(json.c_str(), ("\"macs\": " + std::to_string(conv)).c_str()));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(batched_matmul_with_broadcast_counts_every_batch),
      cmocka_unit_test(gemm_honours_trans_a_and_trans_b),
      cmocka_unit_test(grouped_conv_counts_its_group_channels_only),
      cmocka_unit_test(conv_transpose_spreads_each_input_over_its_group),
      cmocka_unit_test(recurrent_ops_count_gates_steps_and_directions),
      cmocka_unit_test(einsum_counts_every_label_combination),
      cmocka_unit_test(unknown_shapes_are_reported_not_counted_as_zero),
      cmocka_unit_test(report_splits_macs_between_partitions_and_cpu),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
