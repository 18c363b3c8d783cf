// SPDX-License-Identifier: Apache-2.0
// Prepare functions (kernel.h): Conv, Gemm and MatMul with constant weights
// give the same bits with their prepared state as without it, at 1 and 2
// threads, on shapes off every packing edge; a prepared Run never reads the
// weights again (so it does not pack them again); a prepare without a
// constant, or with weights the kernel refuses, leaves nothing and the
// kernel behaves as before.
#include <cmath>
#include <cstring>

#include "core/thread_pool.h"
#include "test_util.h"

namespace {

using epctx::ThreadPool;

std::vector<float> Copy(const TensorRef* t) { return kt::ToVec(t); }

void ExpectSameBits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  assert_int_equal(a.size(), b.size());
  if (memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0)
    fail_msg("%s: prepared and unprepared outputs differ", what);
}

// Runs `node` on `inputs` (input `weight` is the constant) unprepared, then
// prepared, at 1 and 2 threads, and checks the bits agree. Then overwrites
// the weights with NaN: a prepared Run that still gives the same bits never
// read them. `expect_state`: whether prepare should leave one.
#ifdef EPCTX_TEST_THREADS
constexpr int kMaxThreads = 2;
#else
constexpr int kMaxThreads = 1;  // qemu-user hangs creating threads
#endif

void CheckPrepared(kt::Host& host, kt::Node& node, int64_t opset, std::vector<TensorRef*> inputs,
                   uint32_t weight, bool expect_state, const char* what) {
  ThreadPool* pool = kMaxThreads > 1 ? ThreadPool::Create(epctx::Allocator::Default(), 2) : nullptr;
  std::vector<float> want[2];
  for (int threads = 1; threads <= kMaxThreads; ++threads) {
    host.SetPool(threads == 2 ? pool : nullptr);
    host.ClearPrepared();
    EXPECT_OK(host.Run(node, opset, inputs));
    want[threads - 1] = Copy(host.out(0));
    std::vector<TensorRef*> constants(inputs.size(), nullptr);
    constants[weight] = inputs[weight];
    EXPECT_OK(host.Prepare(node, opset, constants));
    assert_int_equal(host.prepared() != nullptr, expect_state);
    EXPECT_OK(host.Run(node, opset, inputs));
    ExpectSameBits(Copy(host.out(0)), want[threads - 1], what);
  }
  // The thread split never changes the bits either.
  if (kMaxThreads > 1) ExpectSameBits(want[1], want[0], what);
  if (expect_state) {
    TensorRef* w = inputs[weight];
    float* p = static_cast<float*>(w->data);
    for (uint64_t i = 0; i < w->elements(); ++i) p[i] = NAN;
    for (int threads = 1; threads <= kMaxThreads; ++threads) {
      host.SetPool(threads == 2 ? pool : nullptr);
      EXPECT_OK(host.Run(node, opset, inputs));
      ExpectSameBits(Copy(host.out(0)), want[0], what);
    }
  }
  host.SetPool(nullptr);
  ThreadPool::Destroy(pool);
}

struct ConvShape {
  int64_t n, c, h, w, m, kh, kw, stride, pad, group;
  bool one_d;
};

void conv_prepared_weights_give_the_same_bits(void**) {
  const ConvShape shapes[] = {
      {1, 5, 13, 11, 7, 3, 3, 1, 1, 1, false},    // odd everything
      {1, 16, 40, 40, 24, 3, 3, 1, 1, 1, false},  // splits across threads
      {2, 16, 20, 21, 80, 1, 1, 1, 0, 1, false},  // pointwise, 80 rows: panel edge
      {1, 8, 9, 9, 12, 3, 3, 2, 1, 2, false},     // grouped, strided
      {1, 300, 6, 6, 9, 1, 1, 1, 0, 1, false},    // K past one 256 slice
      {2, 3, 1, 50, 5, 1, 4, 2, 0, 1, true},      // 1-D
      {1, 64, 14, 14, 64, 3, 3, 1, 1, 4, false},  // 16 -> 16 per group: lanes (AVX-512)
      {1, 32, 9, 70, 32, 3, 3, 1, 1, 2, false},   // the same, too wide for them: GEMM
  };
  uint32_t seed = 1;
  for (const ConvShape& s : shapes) {
    kt::Host host;
    TensorRef* x =
        s.one_d ? host.Random({s.n, s.c, s.w}, seed++) : host.Random({s.n, s.c, s.h, s.w}, seed++);
    TensorRef* w = s.one_d ? host.Random({s.m, s.c / s.group, s.kw}, seed++)
                           : host.Random({s.m, s.c / s.group, s.kh, s.kw}, seed++);
    TensorRef* b = host.Random({s.m}, seed++);
    kt::Node node("Conv", "conv0");
    node.Int("group", s.group);
    if (s.one_d) {
      node.Ints("strides", {s.stride}).Ints("pads", {s.pad, s.pad});
    } else {
      node.Ints("strides", {s.stride, s.stride}).Ints("pads", {s.pad, s.pad, s.pad, s.pad});
    }
    CheckPrepared(host, node, 13, {x, w, b}, 1, true, "Conv");
    assert_true(host.prepared_bytes() >= uint64_t(s.m * s.c / s.group * s.kh * s.kw * 4));
  }
}

// Depthwise reads W as it is: nothing to prepare, same results.
void conv_depthwise_prepares_nothing(void**) {
  kt::Host host;
  TensorRef* x = host.Random({1, 6, 10, 10}, 5);
  TensorRef* w = host.Random({12, 1, 3, 3}, 6);
  kt::Node node("Conv", "dw");
  node.Int("group", 6).Ints("pads", {1, 1, 1, 1});
  CheckPrepared(host, node, 13, {x, w, nullptr}, 1, false, "depthwise Conv");
  assert_int_equal(host.prepared_bytes(), 0);
}

struct GemmShape {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
};

void gemm_prepared_weights_give_the_same_bits(void**) {
  const GemmShape shapes[] = {
      {1, 1000, 300, false, true, 1.0f, 1.0f},  // a batch-1 layer, B transposed
      {70, 400, 300, false, false, 0.5f, 1.0f},
      {5, 385, 257, true, true, 1.0f, 0.0f},  // one column past a block
      {33, 7, 3, false, false, 2.0f, 0.5f},
      {200, 49, 64, false, true, 1.0f, 1.0f},  // rows split across threads
  };
  uint32_t seed = 100;
  for (const GemmShape& s : shapes) {
    kt::Host host;
    TensorRef* a = s.ta ? host.Random({s.K, s.M}, seed++) : host.Random({s.M, s.K}, seed++);
    TensorRef* b = s.tb ? host.Random({s.N, s.K}, seed++) : host.Random({s.K, s.N}, seed++);
    TensorRef* c = host.Random({s.N}, seed++);
    kt::Node node("Gemm", "fc");
    node.Int("transA", s.ta).Int("transB", s.tb).Float("alpha", s.alpha).Float("beta", s.beta);
    CheckPrepared(host, node, 13, {a, b, c}, 1, true, "Gemm");
  }
}

void matmul_prepared_weights_give_the_same_bits(void**) {
  const kt::Dims shapes[][2] = {
      {{2, 3, 33, 200}, {200, 530}},  // batches over one B: one tall product
      {{200}, {200, 50}},             // a vector
      {{7, 64}, {64}},                // B a vector
      {{3, 5, 64}, {64, 97}},
      {{1, 384}, {384, 769}},  // two column blocks and one column
  };
  uint32_t seed = 200;
  for (const auto& s : shapes) {
    kt::Host host;
    TensorRef* a = host.Random(s[0], seed++);
    TensorRef* b = host.Random(s[1], seed++);
    kt::Node node("MatMul", "mm");
    CheckPrepared(host, node, 13, {a, b}, 1, true, "MatMul");
  }
}

// Weights that are not constants (graph inputs, node outputs) are unknown
// at prepare: nothing is left and the kernel runs as before.
void prepare_without_constant_weights_leaves_nothing(void**) {
  kt::Host host;
  TensorRef* a = host.Random({4, 8}, 1);
  TensorRef* b = host.Random({8, 5}, 2);
  kt::Node node("MatMul", "mm");
  EXPECT_OK(host.Prepare(node, 13, {a, nullptr}));
  assert_null(host.prepared());
  assert_int_equal(host.prepared_bytes(), 0);
  EXPECT_OK(host.Run(node, 13, {a, b}));
  EXPECT_SHAPE(host.out(0), 4, 5);
}

// Weights the kernel refuses are left for it to report at Run, as before.
void prepare_leaves_bad_weights_to_the_kernel(void**) {
  kt::Host host;
  TensorRef* x = host.Random({1, 2, 5, 5}, 1);
  TensorRef* w = host.Random({3, 2}, 2);  // rank 2
  kt::Node node("Conv", "bad");
  EXPECT_OK(host.Prepare(node, 13, {nullptr, w, nullptr}));
  assert_null(host.prepared());
  EXPECT_FAIL(host.Run(node, 13, {x, w}), EPCTX_INVALID_ARGUMENT, "weights W must have rank 4");
  kt::Node gemm("Gemm", "g");
  gemm.Str("transB", "yes");  // mistyped
  TensorRef* a = host.Random({2, 3}, 3);
  TensorRef* b = host.Random({3, 4}, 4);
  EXPECT_OK(host.Prepare(gemm, 13, {nullptr, b, nullptr}));
  assert_null(host.prepared());
  EXPECT_FAIL(host.Run(gemm, 13, {a, b}), EPCTX_INVALID_GRAPH, "transB");
}

// A state serves only the weights it packed: a Run with other weights
// (another buffer) computes from those.
void prepared_state_serves_only_its_weights(void**) {
  kt::Host host;
  TensorRef* a = host.Random({6, 40}, 1);
  TensorRef* b1 = host.Random({40, 30}, 2);
  TensorRef* b2 = host.Random({40, 30}, 3);
  kt::Node node("MatMul", "mm");
  EXPECT_OK(host.Run(node, 13, {a, b2}));
  const std::vector<float> want = Copy(host.out(0));
  EXPECT_OK(host.Prepare(node, 13, {nullptr, b1}));
  assert_non_null(host.prepared());
  EXPECT_OK(host.Run(node, 13, {a, b2}));
  ExpectSameBits(Copy(host.out(0)), want, "MatMul with other weights");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conv_prepared_weights_give_the_same_bits),
      cmocka_unit_test(conv_depthwise_prepares_nothing),
      cmocka_unit_test(gemm_prepared_weights_give_the_same_bits),
      cmocka_unit_test(matmul_prepared_weights_give_the_same_bits),
      cmocka_unit_test(prepare_without_constant_weights_leaves_nothing),
      cmocka_unit_test(prepare_leaves_bad_weights_to_the_kernel),
      cmocka_unit_test(prepared_state_serves_only_its_weights),
  };
  return cmocka_run_group_tests_name("kernels_prepare", tests, nullptr, nullptr);
}
