// SPDX-License-Identifier: Apache-2.0
// MatMulInteger, QLinearMatMul and com.microsoft QGemm with a prepared B
// (kernels/qmatmul.h) give the reference loop's bits: random shapes off every edge of the int8
// tiles (K not a multiple of 4, one row, N not a multiple of 8 or 48, rows on both sides of the
// dot-product rule), every uint8/int8 pairing of A and B, per-tensor and per-column zero points and
// scales, at 1 and 2 threads; a prepared Run never reads B again; what the state does not serve
// stays on the reference loop.
#include <cstring>

#include "core/thread_pool.h"
#include "test_util.h"

namespace {

using epctx::ThreadPool;

#ifdef EPCTX_TEST_THREADS
constexpr int kMaxThreads = 2;
#else
constexpr int kMaxThreads = 1;  // qemu-user hangs creating threads
#endif

uint32_t Next(uint32_t* s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

TensorRef* Bytes(kt::Host& h, int32_t dtype, const kt::Dims& dims, uint32_t* seed) {
  uint64_t n = 1;
  for (int64_t d : dims) n *= uint64_t(d);
  std::vector<uint8_t> v(n ? n : 1);
  for (uint8_t& b : v) b = uint8_t(Next(seed));
  return h.Make(dtype, dims, v.data());
}

// Scales near 1/64 with a spread, so products land across the output range.
TensorRef* Scales(kt::Host& h, const kt::Dims& dims, uint32_t* seed) {
  uint64_t n = 1;
  for (int64_t d : dims) n *= uint64_t(d);
  std::vector<float> v(n);
  for (float& f : v) f = float(Next(seed) % 1000 + 50) / 20000.0f;
  return h.F(dims, v);
}

std::vector<uint8_t> Raw(const TensorRef* t) {
  const uint8_t* p = static_cast<const uint8_t*>(t->data);
  return std::vector<uint8_t>(p, p + t->bytes);
}

// Runs `node` unprepared, then prepared with the inputs `constant` marks,
// at 1 and 2 threads: the bytes agree, the state is left as expected, and
// (when the state serves these inputs: `served`) after B is overwritten the
// prepared Run still gives them.
void CheckSame(kt::Host& h, kt::Node& node, int64_t opset, const std::vector<TensorRef*>& inputs,
               const std::vector<bool>& constant, uint32_t b_index, bool expect_state,
               const char* what, bool served = true) {
  ThreadPool* pool = kMaxThreads > 1 ? ThreadPool::Create(epctx::Allocator::Default(), 2) : nullptr;
  std::vector<uint8_t> want;
  for (int threads = 1; threads <= kMaxThreads; ++threads) {
    h.SetPool(threads == 2 ? pool : nullptr);
    h.ClearPrepared();
    EXPECT_OK(h.Run(node, opset, inputs));
    const std::vector<uint8_t> ref = Raw(h.out(0));
    if (threads == 1) want = ref;
    if (ref != want) fail_msg("%s: the reference differs at 2 threads", what);
    std::vector<TensorRef*> constants(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (constant[i]) constants[i] = inputs[i];
    EXPECT_OK(h.Prepare(node, opset, constants));
    if ((h.prepared() != nullptr) != expect_state)
      fail_msg("%s: prepare %s a state", what, expect_state ? "left no" : "left");
    EXPECT_OK(h.Run(node, opset, inputs));
    if (Raw(h.out(0)) != want)
      fail_msg("%s: prepared output differs from the reference at %d thread(s)", what, threads);
  }
  if (expect_state && served) {
    TensorRef* b = inputs[b_index];
    memset(b->data, 0x5a, b->bytes);
    EXPECT_OK(h.Run(node, opset, inputs));
    if (Raw(h.out(0)) != want) fail_msg("%s: a prepared Run read B again", what);
  }
  h.SetPool(nullptr);
  ThreadPool::Destroy(pool);
}

struct Shape {
  kt::Dims a, b;
};

// M = rows of A (over all batches for a 2-D B); around kDotRows (8) and
// the 48-row panel.
const Shape kShapes[] = {
    {{1, 37}, {37, 50}},            // one row, K % 4 == 1
    {{37}, {37, 9}},                // A a vector
    {{3, 64}, {64, 97}},            // few rows: dots, N past a 64 chunk
    {{7, 130}, {130, 48}},          // last row count on dots
    {{8, 33}, {33, 49}},            // first on panels, N one past 48
    {{15, 130}, {130, 47}},         // a part panel, N one short of 48
    {{49, 255}, {255, 100}},        // one row past a panel
    {{2, 3, 17, 40}, {40, 57}},     // batches over one B: 102 rows
    {{130, 770}, {770, 200}},       // splits across threads, K % 4 == 2
    {{50, 3}, {3, 1}},              // K below one group, one column
    {{128, 64}, {64, 136}},         // N past one 128-row unit of B^T
    {{2, 5, 20}, {2, 20, 30}},      // batched B: dots per matrix
    {{3, 1, 50, 17}, {2, 17, 10}},  // batches broadcast both ways: panels
    {{50, 16}, {3, 16, 9}},         // one A over B's matrices
    {{2, 1, 9, 13}, {1, 13, 7}},    // B one matrix of rank 3: one product
};

const int32_t kQ8[] = {EPCTX_DTYPE_UINT8, EPCTX_DTYPE_INT8};

void matmul_integer_prepared_gives_the_reference_bits(void**) {
  uint32_t seed = 7;
  int zp_mode = 0;
  for (const Shape& s : kShapes)
    for (int32_t at : kQ8)
      for (int32_t bt : kQ8) {
        kt::Host h;
        TensorRef* a = Bytes(h, at, s.a, &seed);
        TensorRef* b = Bytes(h, bt, s.b, &seed);
        const int64_t N = s.b.back();
        // Zero points: none, per tensor, per column [N], per column [1, N].
        TensorRef *azp = nullptr, *bzp = nullptr;
        switch (zp_mode++ % 4) {
          case 0: break;
          case 1:
            azp = Bytes(h, at, {}, &seed);
            bzp = Bytes(h, bt, {}, &seed);
            break;
          case 2:
            azp = Bytes(h, at, {1}, &seed);
            bzp = Bytes(h, bt, {N}, &seed);
            break;
          default:  // [1, N] is a per-batch layout for a batched B
            bzp = Bytes(h, bt, s.b.size() == 2 ? kt::Dims{1, N} : kt::Dims{N}, &seed);
            break;
        }
        kt::Node node("MatMulInteger", "mi");
        CheckSame(h, node, 10, {a, b, azp, bzp}, {false, true, false, true}, 1, true,
                  "MatMulInteger");
      }
}

void qlinear_matmul_prepared_gives_the_reference_bits(void**) {
  uint32_t seed = 11;
  int mode = 0;
  for (const Shape& s : kShapes)
    for (int32_t at : kQ8)
      for (int32_t bt : kQ8) {
        const int m = mode++;
        kt::Host h;
        TensorRef* a = Bytes(h, at, s.a, &seed);
        TensorRef* b = Bytes(h, bt, s.b, &seed);
        const int64_t N = s.b.back();
        TensorRef* as = Scales(h, {}, &seed);
        TensorRef* azp = Bytes(h, at, {}, &seed);
        const bool per_col = m % 2 == 1;
        TensorRef* bs = Scales(h, per_col ? kt::Dims{N} : kt::Dims{}, &seed);
        TensorRef* bzp = Bytes(h, bt, per_col ? kt::Dims{N} : kt::Dims{}, &seed);
        TensorRef* ys = Scales(h, {}, &seed);
        TensorRef* yzp = Bytes(h, m % 3 ? EPCTX_DTYPE_INT8 : EPCTX_DTYPE_UINT8, {}, &seed);
        // Every other case leaves the scales to Run (a dynamic a_scale).
        const bool scales_const = m % 4 < 2;
        kt::Node node("QLinearMatMul", "qm");
        CheckSame(h, node, 10, {a, as, azp, b, bs, bzp, ys, yzp},
                  {false, scales_const, false, true, scales_const, true, scales_const, false}, 3,
                  true, "QLinearMatMul");
      }
}

// 70000 products of 255 * 127 leave int32: both paths wrap alike.
void matmul_integer_prepared_wraps_like_the_reference(void**) {
  const int64_t K = 70001;
  for (int64_t M : {1, 9}) {
    kt::Host h;
    std::vector<uint8_t> av(size_t(M * K), 255), bv(size_t(K * 3), 127);
    TensorRef* a = h.Make(EPCTX_DTYPE_UINT8, {M, K}, av.data());
    TensorRef* b = h.Make(EPCTX_DTYPE_INT8, {K, 3}, bv.data());
    kt::Node node("MatMulInteger", "mi");
    CheckSame(h, node, 10, {a, b}, {false, true}, 1, true, "wrapping MatMulInteger");
  }
}

// A per-row a_zero_point, or a b_zero_point that is not the constant the
// state was made for, runs the reference loop: same bits, same errors.
void unserved_operands_stay_on_the_reference(void**) {
  uint32_t seed = 3;
  kt::Host h;
  TensorRef* a = Bytes(h, EPCTX_DTYPE_UINT8, {20, 12}, &seed);
  TensorRef* b = Bytes(h, EPCTX_DTYPE_INT8, {12, 9}, &seed);
  TensorRef* azp_rows = Bytes(h, EPCTX_DTYPE_UINT8, {20}, &seed);
  TensorRef* bzp = Bytes(h, EPCTX_DTYPE_INT8, {9}, &seed);
  kt::Node node("MatMulInteger", "mi");
  CheckSame(h, node, 10, {a, b, azp_rows, bzp}, {false, true, false, true}, 1, true,
            "per-row a_zero_point", false);
  // Prepared without a constant zero point, run with one.
  TensorRef* b2 = Bytes(h, EPCTX_DTYPE_INT8, {12, 9}, &seed);
  h.ClearPrepared();
  EXPECT_OK(h.Run(node, 10, {a, b2, nullptr, bzp}));
  const std::vector<uint8_t> want = Raw(h.out(0));
  EXPECT_OK(h.Prepare(node, 10, {nullptr, b2, nullptr, nullptr}));
  assert_non_null(h.prepared());
  EXPECT_OK(h.Run(node, 10, {a, b2, nullptr, bzp}));
  assert_true(Raw(h.out(0)) == want);
  // A b_zero_point of the wrong dtype leaves nothing; Run reports it.
  h.ClearPrepared();
  TensorRef* bad = Bytes(h, EPCTX_DTYPE_UINT8, {}, &seed);
  EXPECT_OK(h.Prepare(node, 10, {nullptr, b2, nullptr, bad}));
  assert_null(h.prepared());
  EXPECT_FAIL(h.Run(node, 10, {a, b2, nullptr, bad}), EPCTX_INVALID_ARGUMENT,
              "b_zero_point has dtype uint8, expected B's int8");
  // Per-batch zero points of a batched B: nothing prepared; per-batch
  // scales with runtime multipliers: the reference loop.
  TensorRef* a3 = Bytes(h, EPCTX_DTYPE_UINT8, {2, 20, 12}, &seed);
  TensorRef* b3 = Bytes(h, EPCTX_DTYPE_INT8, {2, 12, 9}, &seed);
  h.ClearPrepared();
  EXPECT_OK(
      h.Prepare(node, 10, {nullptr, b3, nullptr, Bytes(h, EPCTX_DTYPE_INT8, {2, 1, 9}, &seed)}));
  assert_null(h.prepared());
  kt::Node qm("QLinearMatMul", "qm");
  CheckSame(h, qm, 10,
            {a3, Scales(h, {}, &seed), Bytes(h, EPCTX_DTYPE_UINT8, {}, &seed), b3,
             Scales(h, {2, 1, 9}, &seed), Bytes(h, EPCTX_DTYPE_INT8, {}, &seed),
             Scales(h, {}, &seed), Bytes(h, EPCTX_DTYPE_UINT8, {}, &seed)},
            {false, false, false, true, false, true, false, false}, 3, true, "per-batch b_scale",
            false);
  // B not a constant: nothing prepared.
  kt::Host fresh;
  EXPECT_OK(fresh.Prepare(node, 10, {a, nullptr, nullptr, nullptr}));
  assert_null(fresh.prepared());
  assert_int_equal(fresh.prepared_bytes(), 0);
}

// QGemm: 2-D shapes of kShapes, B as is and transposed, bias C none / per
// column / per tensor / per element (the reference loop), bytes and float
// output, alpha 1 and not.
void qgemm_prepared_gives_the_reference_bits(void**) {
  uint32_t seed = 19;
  int mode = 0;
  for (const Shape& s : kShapes) {
    if (s.a.size() != 2 || s.b.size() != 2) continue;
    for (int32_t at : kQ8)
      for (int32_t bt : kQ8)
        for (int64_t trans_b : {0, 1}) {
          const int m = mode++;
          kt::Host h;
          const int64_t M = s.a[0], K = s.a[1], N = s.b[1];
          TensorRef* a = Bytes(h, at, s.a, &seed);
          TensorRef* b = Bytes(h, bt, trans_b ? kt::Dims{N, K} : s.b, &seed);
          const bool per_col = m % 2 == 1;
          TensorRef* as = Scales(h, {}, &seed);
          TensorRef* azp = Bytes(h, at, {}, &seed);
          TensorRef* bs = Scales(h, per_col ? kt::Dims{N} : kt::Dims{}, &seed);
          TensorRef* bzp = Bytes(h, bt, per_col ? kt::Dims{N} : kt::Dims{}, &seed);
          const int bias_mode = m % 4;
          const kt::Dims cdims = bias_mode == 1   ? kt::Dims{N}
                                 : bias_mode == 2 ? kt::Dims{}
                                                  : kt::Dims{M, N};
          std::vector<int32_t> cv(size_t(bias_mode == 1 ? N : bias_mode == 2 ? 1 : M * N));
          for (int32_t& v : cv) v = int32_t(Next(&seed) % 20001) - 10000;
          TensorRef* c = bias_mode ? h.I32(cdims, cv) : nullptr;
          const bool float_out = m % 3 == 0;
          TensorRef* ys = float_out ? nullptr : Scales(h, {}, &seed);
          TensorRef* yzp = float_out
                               ? nullptr
                               : Bytes(h, m % 5 ? EPCTX_DTYPE_INT8 : EPCTX_DTYPE_UINT8, {}, &seed);
          kt::Node node("QGemm", "qg");
          node.Domain("com.microsoft").Int("transB", trans_b).Float("alpha", m % 7 ? 1.0f : 0.5f);
          CheckSame(h, node, 1, {a, as, azp, b, bs, bzp, c, ys, yzp},
                    {false, true, false, true, true, true, true, true, false}, 3, true, "QGemm",
                    bias_mode != 3);
        }
  }
}

// The reference loop itself: acc + C times alpha * a_scale * b_scale[n]
// (/ y_scale), against the arithmetic written out.
void qgemm_computes_the_integer_gemm(void**) {
  kt::Host h;
  const uint8_t av[] = {10, 20, 30, 40, 50, 60};  // A^T [3, 2]: A = [[10 30 50] [20 40 60]]
  const int8_t bv[] = {1, -2, 3, 4, -5, 6};       // B [3, 2]
  TensorRef* a = h.Make(EPCTX_DTYPE_UINT8, {3, 2}, av);
  TensorRef* b = h.Make(EPCTX_DTYPE_INT8, {3, 2}, bv);
  const uint8_t az = 10;
  const int8_t bz[] = {1, -1};
  TensorRef* azp = h.Make(EPCTX_DTYPE_UINT8, {}, &az);
  TensorRef* bzp = h.Make(EPCTX_DTYPE_INT8, {2}, bz);
  TensorRef* c = h.I32({2}, {100, -100});
  kt::Node node("QGemm", "qg");
  node.Domain("com.microsoft").Int("transA", 1).Float("alpha", 2.0f);
  EXPECT_OK(h.Run(
      node, 1, {a, h.F({}, {0.5f}), azp, b, h.F({2}, {0.25f, 0.125f}), bzp, c, nullptr, nullptr}));
  // acc[m][n] = sum_k (A[m][k] - 10) (B[k][n] - bz[n]) + C[n]
  const float* y = static_cast<const float*>(h.out(0)->data);
  assert_int_equal(h.out(0)->dtype, EPCTX_DTYPE_FLOAT);
  const float want[] = {(0 * 0 + 20 * 2 + 40 * -6 + 100) * 2 * 0.5f * 0.25f,
                        (0 * -1 + 20 * 5 + 40 * 7 - 100) * 2 * 0.5f * 0.125f,
                        (10 * 0 + 30 * 2 + 50 * -6 + 100) * 2 * 0.5f * 0.25f,
                        (10 * -1 + 30 * 5 + 50 * 7 - 100) * 2 * 0.5f * 0.125f};
  for (int i = 0; i < 4; ++i)
    if (y[i] != want[i]) fail_msg("y[%d] = %g, want %g", i, double(y[i]), double(want[i]));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matmul_integer_prepared_gives_the_reference_bits),
      cmocka_unit_test(qlinear_matmul_prepared_gives_the_reference_bits),
      cmocka_unit_test(matmul_integer_prepared_wraps_like_the_reference),
      cmocka_unit_test(unserved_operands_stay_on_the_reference),
      cmocka_unit_test(qgemm_prepared_gives_the_reference_bits),
      cmocka_unit_test(qgemm_computes_the_integer_gemm),
  };
  return cmocka_run_group_tests_name("kernels_qmatmul", tests, nullptr, nullptr);
}
