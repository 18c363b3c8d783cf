// SPDX-License-Identifier: Apache-2.0
// Partitioner, container writer and _ctx.onnx writer, with a fake backend.
#include <cstring>

#include <onnx/checker.h>

#include "container_generated.h"
#include "container_header.h"
#include "epctx_host/container_writer.h"
#include "epctx_host/ctx_model.h"
#include "epctx_host/partition.h"
#include "epctx_host/specialize.h"
#include "fake_backend.h"
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
using testutil::FakeBackend;
using testutil::ModelBuilder;

namespace {

// x -> Conv -> Relu -> Sqrt -> Conv -> y
onnx::ModelProto ChainModel() {
  ModelBuilder b;
  b.Input("x", {1, 3, 4, 4}).Output("y", {1, 3, 4, 4});
  b.Init("w1", {3, 3, 1, 1}).Init("w2", {3, 3, 1, 1});
  b.Node("Conv", {"x", "w1"}, {"c1"});
  b.Node("Relu", {"c1"}, {"r1"});
  b.Node("Sqrt", {"r1"}, {"s1"});
  b.Node("Conv", {"s1", "w2"}, {"y"});
  return b.model();
}

// a -> {b (CPU), c} -> d: d cannot join {a, c}.
onnx::ModelProto DiamondModel() {
  ModelBuilder b;
  b.Input("x", {1, 8}).Output("y", {1, 8});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Sqrt", {"a"}, {"b"});
  b.Node("Relu", {"a"}, {"c"});
  b.Node("Add", {"b", "c"}, {"y"});
  return b.model();
}

void chain_gives_two_partitions_with_sqrt_on_cpu(void**) {
  onnx::ModelProto m = ChainModel();
  FakeBackend be({"Conv", "Relu"});
  GraphInfo info = BuildGraphInfo(m);
  PartitionPlan plan = PlanPartitions(info, &be);
  assert_int_equal(plan.groups.size(), 2);
  assert_int_equal(plan.groups[0].size(), 2);
  assert_int_equal(plan.groups[0][0], 0);
  assert_int_equal(plan.groups[0][1], 1);
  assert_int_equal(plan.groups[1].size(), 1);
  assert_int_equal(plan.groups[1][0], 3);
  assert_false(plan.support[2].supported);
  assert_string_equal(plan.support[2].reason.c_str(), "op not supported");

  std::vector<Partition> parts = MakePartitions(info, plan, "m_vnpu");
  assert_string_equal(parts[0].name.c_str(), "m_vnpu_0");
  assert_string_equal(parts[1].name.c_str(), "m_vnpu_1");
  // Constants (w1) are not inputs; r1 leaves partition 0 for the Sqrt.
  assert_int_equal(parts[0].inputs.size(), 1);
  assert_string_equal(parts[0].inputs[0].c_str(), "x");
  assert_int_equal(parts[0].outputs.size(), 1);
  assert_string_equal(parts[0].outputs[0].c_str(), "r1");
  assert_string_equal(parts[1].inputs[0].c_str(), "s1");
  assert_string_equal(parts[1].outputs[0].c_str(), "y");
}

void diamond_is_split_where_merging_would_cycle(void**) {
  onnx::ModelProto m = DiamondModel();
  FakeBackend be({"Relu", "Add"});
  GraphInfo info = BuildGraphInfo(m);
  PartitionPlan plan = PlanPartitions(info, &be);
  assert_int_equal(plan.groups.size(), 2);
  assert_int_equal(plan.groups[0].size(), 2);  // a, c
  assert_int_equal(plan.groups[0][0], 0);
  assert_int_equal(plan.groups[0][1], 2);
  assert_int_equal(plan.groups[1].size(), 1);  // d
  assert_int_equal(plan.groups[1][0], 3);
  std::vector<Partition> parts = MakePartitions(info, plan, "m_vnpu");
  // a feeds the CPU Sqrt, c feeds d: both leave partition 0.
  assert_int_equal(parts[0].outputs.size(), 2);
  assert_string_equal(parts[0].outputs[0].c_str(), "a");
  assert_string_equal(parts[0].outputs[1].c_str(), "c");
  assert_int_equal(parts[1].inputs.size(), 2);
  assert_string_equal(parts[1].inputs[0].c_str(), "b");
  assert_string_equal(parts[1].inputs[1].c_str(), "c");
}

void diamond_fully_supported_is_one_partition(void**) {
  onnx::ModelProto m = DiamondModel();
  FakeBackend be({"Relu", "Add", "Sqrt"});
  GraphInfo info = BuildGraphInfo(m);
  PartitionPlan plan = PlanPartitions(info, &be);
  assert_int_equal(plan.groups.size(), 1);
  assert_int_equal(plan.groups[0].size(), 4);
}

void cycle_through_a_third_group_is_refused(void**) {
  // g1 -> cpu -> g2 and g1 -> g2 directly, with g2 -> z: merging g1 and g2
  // would go around the CPU node.
  ModelBuilder b;
  b.Input("x", {4}).Output("y", {4});
  b.Node("Relu", {"x"}, {"p"});
  b.Node("Sqrt", {"p"}, {"q"});
  b.Node("Add", {"p", "q"}, {"y"});
  FakeBackend be({"Relu", "Add"});
  GraphInfo info = BuildGraphInfo(b.model());
  PartitionPlan plan = PlanPartitions(info, &be);
  assert_int_equal(plan.groups.size(), 2);
}

void no_backend_means_no_partitions(void**) {
  onnx::ModelProto m = ChainModel();
  GraphInfo info = BuildGraphInfo(m);
  PartitionPlan plan = PlanPartitions(info, nullptr);
  assert_int_equal(plan.groups.size(), 0);
  assert_false(plan.support[0].supported);
}

bool ChecksOk(const onnx::ModelProto& m) {
  try {
    onnx::checker::check_model(m);
    return true;
  } catch (const std::exception& e) {
    print_error("check_model: %s\n", e.what());
    return false;
  }
}

uint64_t LE64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void container_has_magic_aligned_segments_and_verifies(void**) {
  FakeBackend be({});
  WeightStore weights;
  std::vector<uint8_t> w(1000, 7);
  weights.Add(w.data(), w.size());
  std::vector<CompiledGraph> graphs(2);
  graphs[0].name = "m_vnpu_0";
  graphs[0].payload.assign(5000, 1);
  graphs[1].name = "m_vnpu_1";
  graphs[1].payload.assign(10, 2);
  ContainerStats stats;
  std::vector<uint8_t> c = PackContainer(be, weights, graphs, &stats);
  assert_memory_equal(c.data(), "EPCTXBIN", 8);
  assert_int_equal(c[8], EPCTX_CONTAINER_FORMAT_MAJOR);
  assert_int_equal(LE64(&c[16]), c.size());
  assert_int_equal(LE64(&c[24]), 64);
  uint64_t meta_size = LE64(&c[32]);
  assert_int_equal(c[40] | (c[41] << 8), 4096);
  flatbuffers::Verifier v(c.data() + 64, meta_size);
  assert_true(epctx::fb::VerifyContainerBuffer(v));
  const epctx::fb::Container* root = epctx::fb::GetContainer(c.data() + 64);
  assert_string_equal(root->source()->c_str(), "vnpu");
  assert_string_equal(root->producer()->c_str(), "epctx-compile");
  assert_int_equal(root->producer_version()->minor(), 1);
  assert_int_equal(root->sdk_version()->patch(), 3);
  assert_string_equal(root->hardware_architecture()->c_str(), "vnpu-1.0");
  assert_int_equal(root->weights()->offset() % 4096, 0);
  assert_true(root->weights()->size() >= 1000);
  assert_int_equal(root->graphs()->size(), 2);
  for (unsigned i = 0; i < 2; ++i) {
    const auto* seg = root->graphs()->Get(i)->payload();
    assert_int_equal(seg->offset() % 4096, 0);
    assert_int_equal(seg->size(), graphs[i].payload.size());
    assert_memory_equal(c.data() + seg->offset(), graphs[i].payload.data(), seg->size());
  }
  assert_string_equal(root->graphs()->Get(1)->name()->c_str(), "m_vnpu_1");
  assert_int_equal(stats.payload_bytes, 5010);
}

struct Built {
  onnx::ModelProto source;
  std::vector<uint8_t> container;
  onnx::ModelProto ctx;
  std::string bytes;
  size_t offset = 0;
};

void BuildCtx(Built& b, int embed_mode, const std::string& graph_name) {
  b.source = ChainModel();
  b.source.mutable_graph()->set_name(graph_name);
  InferShapes(b.source, "chain.onnx");
  FakeBackend be({"Conv", "Relu"});
  GraphInfo info = BuildGraphInfo(b.source);
  PartitionPlan plan = PlanPartitions(info, &be);
  std::vector<Partition> parts = MakePartitions(info, plan, "chain_vnpu");
  WeightStore weights;
  std::vector<CompiledGraph> graphs;
  for (const auto& p : parts) graphs.push_back(be.Compile(p, info, weights));
  b.container = PackContainer(be, weights, graphs);
  CtxModelOptions o;
  o.embed_mode = embed_mode;
  o.backend = &be;
  o.container = &b.container;
  o.bin_file_name = "chain_vnpu.bin";
  o.onnx_model_filename = "chain.onnx";
  b.ctx = BuildCtxModel(b.source, info, parts, o);
  b.bytes = SerializeCtxModel(b.ctx, o, &b.offset);
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

void ctx_model_has_main_context_only_on_first_node(void**) {
  Built b;
  BuildCtx(b, 0, "g");
  const onnx::GraphProto& g = b.ctx.graph();
  assert_int_equal(g.node_size(), 3);
  assert_string_equal(g.node(0).op_type().c_str(), "EPContext");
  assert_string_equal(g.node(0).domain().c_str(), "com.microsoft");
  assert_string_equal(g.node(0).name().c_str(), "chain_vnpu_0");
  assert_string_equal(g.node(1).op_type().c_str(), "Sqrt");
  assert_string_equal(g.node(2).name().c_str(), "chain_vnpu_1");
  assert_int_equal(Attr(g.node(0), "main_context")->i(), 1);
  assert_string_equal(Attr(g.node(0), "ep_cache_context")->s().c_str(), "chain_vnpu.bin");
  assert_int_equal(Attr(g.node(2), "main_context")->i(), 0);
  assert_null(Attr(g.node(2), "ep_cache_context"));
  assert_string_equal(Attr(g.node(2), "partition_name")->s().c_str(), "chain_vnpu_1");
  assert_string_equal(Attr(g.node(2), "source")->s().c_str(), "vnpu");
  assert_string_equal(Attr(g.node(2), "ep_sdk_version")->s().c_str(), "1.2.3");
  assert_string_equal(Attr(g.node(0), "onnx_model_filename")->s().c_str(), "chain.onnx");
  assert_string_equal(Attr(g.node(0), "hardware_architecture")->s().c_str(), "vnpu-1.0");
  // Weights are inside the binary: no initializer is referenced any more.
  assert_int_equal(g.initializer_size(), 0);
  bool has_ms = false;
  for (const auto& op : b.ctx.opset_import())
    has_ms |= op.domain() == "com.microsoft" && op.version() == 1;
  assert_true(has_ms);
  // Boundary values carry the static types from shape inference.
  bool r1_typed = false;
  for (const auto& vi : g.value_info())
    if (vi.name() == "r1") {
      const auto& shape = vi.type().tensor_type().shape();
      r1_typed =
          shape.dim_size() == 4 && shape.dim(1).dim_value() == 3 && shape.dim(3).dim_value() == 4;
    }
  assert_true(r1_typed);
  assert_true(ChecksOk(b.ctx));
}

void embedded_payload_starts_at_multiple_of_64(void**) {
  // Different graph names shift everything before the payload.
  for (const char* name : {"g", "graph_name_of_some_length", "x123456789012345678901234567890"}) {
    Built b;
    BuildCtx(b, 1, name);
    assert_int_equal(b.offset % 64, 0);
    assert_memory_equal(b.bytes.data() + b.offset, b.container.data(), b.container.size());
    onnx::ModelProto back;
    assert_true(back.ParseFromString(b.bytes));
    const onnx::NodeProto& main = back.graph().node(0);
    assert_int_equal(Attr(main, "embed_mode")->i(), 1);
    assert_int_equal(Attr(main, "ep_cache_context")->s().size(), b.container.size());
    assert_non_null(Attr(main, kPadAttribute));
    assert_true(ChecksOk(back));
  }
}

void epcontext_node_moves_after_late_cpu_inputs(void**) {
  // p (Relu) and its consumer Add are in one partition; Add also needs q
  // from a CPU node listed between them: the EPContext node must come after.
  ModelBuilder b;
  b.Input("x", {4}).Input("z", {4}).Output("y", {4});
  b.Node("Relu", {"x"}, {"p"});
  b.Node("Sqrt", {"z"}, {"q"});
  b.Node("Add", {"p", "q"}, {"y"});
  FakeBackend be({"Relu", "Add"});
  GraphInfo info = BuildGraphInfo(b.model());
  PartitionPlan plan = PlanPartitions(info, &be);
  assert_int_equal(plan.groups.size(), 1);
  std::vector<Partition> parts = MakePartitions(info, plan, "m_vnpu");
  std::vector<uint8_t> container(128, 0);
  CtxModelOptions o;
  o.backend = &be;
  o.bin_file_name = "m_vnpu.bin";
  onnx::ModelProto ctx = BuildCtxModel(b.model(), info, parts, o);
  assert_string_equal(ctx.graph().node(0).op_type().c_str(), "Sqrt");
  assert_string_equal(ctx.graph().node(1).op_type().c_str(), "EPContext");
  assert_true(ChecksOk(ctx));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chain_gives_two_partitions_with_sqrt_on_cpu),
      cmocka_unit_test(diamond_is_split_where_merging_would_cycle),
      cmocka_unit_test(diamond_fully_supported_is_one_partition),
      cmocka_unit_test(cycle_through_a_third_group_is_refused),
      cmocka_unit_test(no_backend_means_no_partitions),
      cmocka_unit_test(container_has_magic_aligned_segments_and_verifies),
      cmocka_unit_test(ctx_model_has_main_context_only_on_first_node),
      cmocka_unit_test(embedded_payload_starts_at_multiple_of_64),
      cmocka_unit_test(epcontext_node_moves_after_late_cpu_inputs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
